"""The built-in readers' content checks (``formats.py`` registers them): a file's head -> is it this format.
Light on purpose: no reader's library is imported, so a format whose library is missing is still recognised
(and its files fail with what to install)."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.registry import HEAD_BYTES, Head

_MD_HEADING = re.compile(r"^#{1,6}\s+\S", re.M)
_WORD = re.compile(r"^[\"'(\[]*[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*[)\]\"'.,;:!?]*$")


def pdf_header(head: Head) -> bool:
    """``%PDF-`` opens the file (or, in a file named .pdf, comes within its first KB)."""
    return head.data.startswith(b"%PDF-") or (head.ext == ".pdf" and b"%PDF-" in head.data[:1024])


def source_archive(head: Head) -> bool:
    """A gzip or tar file: an arXiv source archive."""
    return head.data[:2] == b"\x1f\x8b" or head.data[257:262] == b"ustar"


def json(head: Head) -> bool:
    return head.text.lstrip()[:1] in "[{"


def html(head: Head) -> bool:
    low = head.text.lstrip()[:2000].lower()
    return low.startswith("<!doctype html") or "<html" in low


def xml(head: Head) -> str | None:
    """The flavour of an XML file (jats, elsevier, or html for XHTML), "xml" when it has none; None when the
    content is not XML (for a file named .xml: read as XML, flavour decided on parsing)."""
    text = head.text.lstrip()
    if text[:1] != "<":
        return None
    return xml_flavour(text[:HEAD_BYTES]) or "xml"


def xml_flavour(head: str) -> str | None:
    if re.search(r"<(?:ce|xocs|ja):|elsevier\.com/xml|<full-text-retrieval-response", head):
        return "elsevier"
    if re.search(r"<article[\s>]|JATS|NLM//DTD|<pmc-articleset", head):
        return "jats"
    if re.search(r"<html[\s>]", head, re.I):
        return "html"
    return None


def latex(head: Head) -> bool:
    return "\\documentclass" in head.text.lstrip()[:HEAD_BYTES]


def markdown(head: Head) -> bool:
    text = head.text.lstrip()
    return text.startswith("---\n") or bool(_MD_HEADING.match(text))


def prose(head: Head) -> bool:
    """Mostly words: plain text, whatever the file is called."""
    tokens = head.text.split()
    words = sum(1 for t in tokens if _WORD.match(t))
    return len(tokens) >= 5 and words >= 0.6 * len(tokens)
