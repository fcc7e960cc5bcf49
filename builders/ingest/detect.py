"""Which reader reads a file, from the registry: by extension, checked against the content, or by content alone.

In order: a file named for a binary format (``no_signature``) must carry that format's signature; a reader's
``signature`` (a PDF header, a gzip or tar archive) decides whatever the name says; then the extension (a
reader's ``sniff`` may name the flavour: an ``.xml`` file is JATS or Elsevier); then, for a file whose extension
names no reader, each reader's ``sniff`` in registration order, the ``last_resort`` readers (plain text) last.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from sciqag_dataset.builders.ingest import registry
from sciqag_dataset.builders.ingest.decoding import BOM_UTF16, looks_binary
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.registry import HEAD_BYTES, Head, Reader


class Detected(NamedTuple):
    reader: Reader
    format: str  # the reader's name, or the flavour its sniff named
    guessed: bool  # read by a last-resort reader for its content alone


def detect(path: str | os.PathLike) -> Detected:
    """The reader of a file and its format; IngestError for empty, binary or unrecognisable files."""
    with open(path, "rb") as f:
        head = Head(f.read(HEAD_BYTES), Path(path).suffix)
    if not head.data.strip():
        raise IngestError("empty file")
    readers = registry.readers()
    named = registry.by_extension(head.ext)
    if named is not None and named.no_signature and named.signature is not None:
        if not named.signature(head):
            raise IngestError(f"not a {named.title}: {named.no_signature}")
        return Detected(named, named.name, False)
    for reader in readers:
        if reader.signature is not None and reader.signature(head):
            return Detected(reader, reader.name, False)
    if not head.data.startswith(BOM_UTF16) and looks_binary(head.data):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    if named is not None:
        return _flavour(named, named.sniff(head) if named.sniff else None, False)
    ordered = [r for r in readers if not r.last_resort] + [r for r in readers if r.last_resort]
    for reader in ordered:
        found = reader.sniff(head) if reader.sniff is not None else None
        if found:
            return _flavour(reader, found, reader.last_resort)
    what = f"unknown extension {head.ext!r}" if head.ext else "no extension"
    kinds = [r.title for r in ordered if r.sniff or r.signature]
    raise IngestError(
        f"unrecognised format: {what}, and the content is not {', '.join(kinds[:-1])} or {kinds[-1]}"
        if len(kinds) > 1
        else f"unrecognised format: {what}"
    )


def _flavour(reader: Reader, found, guessed: bool) -> Detected:
    """The format a sniff named: a flavour of the reader's own (jats), or another reader's (html in .xml)."""
    if isinstance(found, str):
        other = registry.named(found)
        return Detected(other or reader, found, guessed)
    return Detected(reader, reader.name, guessed)


def detect_format(path: str | os.PathLike) -> str:
    """The format of a file: a registered reader's name or a flavour (txt, md, json, jats, elsevier, xml, html,
    pdf, latex with the built-in readers). Raises IngestError for empty, binary or unrecognisable files."""
    return detect(path).format
