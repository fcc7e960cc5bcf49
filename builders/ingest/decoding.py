"""Bytes to text for the readers of text formats: UTF-8 (a BOM tolerated), UTF-16 with a BOM; binary refused;
bytes that are not UTF-8 replaced with U+FFFD and a note."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from sciqag_dataset.builders.ingest.errors import IngestError

BOM_UTF16 = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: Bytes looked at to tell binary from text.
SAMPLE_BYTES = 65536
_SURROGATES = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by surrogateescape


def looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    text = sample.decode("utf-8", "replace")
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\f"))
    return bad > 0.1 * max(len(text), 1)


def decode(data: bytes, warn: Callable[[str], None]) -> str:
    """UTF-8 (BOM tolerated; UTF-16 with a BOM); invalid bytes become U+FFFD with a warning."""
    if data.startswith(BOM_UTF16):
        return data.decode("utf-16", "replace")
    if looks_binary(data[:SAMPLE_BYTES]):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    return replace_invalid(data.decode("utf-8-sig", "surrogateescape"), warn)


def replace_invalid(text: str, warn: Callable[[str], None]) -> str:
    text, n = _SURROGATES.subn("\ufffd", text)
    if n:
        warn(f"not valid UTF-8: {n} undecodable byte(s) replaced with U+FFFD")
    return text
