"""Which format a file is in: by extension, checked against the content, or by content alone; decoding."""
from __future__ import annotations

import codecs
from pathlib import Path
from typing import Callable

import re
import os

from .text import EXTENSIONS, HEAD_BYTES, IngestError

_SURROGATES = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by surrogateescape

def looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    text = sample.decode("utf-8", "replace")
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\f"))
    return bad > 0.1 * max(len(text), 1)


def decode(data: bytes, warn: Callable[[str], None]) -> str:
    """UTF-8 (BOM tolerated; UTF-16 with a BOM); invalid bytes become U+FFFD with a warning."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    if looks_binary(data[:HEAD_BYTES]):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    return replace_invalid(data.decode("utf-8-sig", "surrogateescape"), warn)


def replace_invalid(text: str, warn: Callable[[str], None]) -> str:
    text, n = _SURROGATES.subn("\ufffd", text)
    if n:
        warn(f"not valid UTF-8: {n} undecodable byte(s) replaced with U+FFFD")
    return text


_MD_HEADING = re.compile(r"^#{1,6}\s+\S", re.M)
_WORD = re.compile(r"^[\"'(\[]*[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*[)\]\"'.,;:!?]*$")


def _looks_like_prose(text: str) -> bool:
    tokens = text.split()
    words = sum(1 for t in tokens if _WORD.match(t))
    return len(tokens) >= 5 and words >= 0.6 * len(tokens)


def _sniff(text: str) -> str | None:
    """Format from content alone, for files whose extension says nothing."""
    s = text.lstrip()
    low = s[:2000].lower()
    if s[:1] in "[{":
        return "json"
    if low.startswith("<!doctype html") or "<html" in low:
        return "html"
    if s[:1] == "<":
        return xml_flavour(s[:HEAD_BYTES]) or "xml"
    if "\\documentclass" in s[:HEAD_BYTES]:
        return "latex"
    if s.startswith("---\n") or _MD_HEADING.match(s):
        return "md"
    return None


def xml_flavour(head: str) -> str | None:
    if re.search(r"<(?:ce|xocs|ja):|elsevier\.com/xml|<full-text-retrieval-response", head):
        return "elsevier"
    if re.search(r"<article[\s>]|JATS|NLM//DTD|<pmc-articleset", head):
        return "jats"
    if re.search(r"<html[\s>]", head, re.I):
        return "html"
    return None


def format_of_name(path: str) -> str:
    """The format a file's extension names ("other" when none does): for counting files that failed."""
    return EXTENSIONS.get(Path(path).suffix.lower(), "other")


def detect_format(path: str | os.PathLike) -> str:
    """One of txt, md, json, jats, elsevier, xml (flavour decided on parsing), html, pdf, latex.

    Raises IngestError for empty, binary or unrecognisable files.
    """
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if not head.strip():
        raise IngestError("empty file")
    ext = Path(path).suffix.lower()
    if head.startswith(b"%PDF-") or (ext == ".pdf" and b"%PDF-" in head[:1024]):
        return "pdf"
    family = EXTENSIONS.get(ext)
    if family == "pdf":
        raise IngestError("not a PDF: no %PDF- header")
    if head[:2] == b"\x1f\x8b" or head[257:262] == b"ustar":  # gzip or tar: an arXiv source archive
        return "latex"
    if not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and looks_binary(head):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    text = head.decode("utf-16" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8-sig",
                       "replace")
    if family == "xml":
        return xml_flavour(text) or "xml"
    if family:
        return family
    sniffed = _sniff(text)
    if sniffed:
        return sniffed
    if _looks_like_prose(text):
        return "txt"
    what = f"unknown extension {ext!r}" if ext else "no extension"
    raise IngestError(f"unrecognised format: {what}, and the content is not PDF, JSON, XML, HTML, "
                      "Markdown or prose")


