"""PDF: pypdf text per page; the title from the metadata or the first line."""
from __future__ import annotations

import re
from typing import Iterator

from pypdf import PdfReader

from .text import MAX_TITLE_CHARS, IngestError, inline, parse_authors


def read_pdf(path: str, warn) -> Iterator[dict]:
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError("encrypted PDF (a password is needed)")
        pages = []
        for n, page in enumerate(reader.pages, 1):
            try:
                pages.append(page.extract_text() or "")
            except Exception as exc:  # one bad page must not lose the others
                warn(f"page {n}: no text extracted ({type(exc).__name__}: {exc})")
        info = reader.metadata or {}
    except IngestError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged files
        raise IngestError(f"invalid PDF: {type(exc).__name__}: {exc}") from None
    body = "\n\n".join(p for p in pages if p.strip())
    if not body.strip():
        raise IngestError("PDF has no extractable text (scanned? run OCR first)")
    title = inline(info.get("/Title"))
    if not title or re.search(r"\.(docx?|pdf|tex|dvi|indd)$|^Microsoft Word|^untitled$", title, re.I):
        first = next((ln.strip() for ln in body.split("\n") if ln.strip()), "")
        title = first if len(first) <= MAX_TITLE_CHARS else ""
    yield {"format": "pdf", "extractor": "pdf/pypdf", "title": title, "text": body,
           "metadata": {"doi": info.get("/doi") or info.get("/DOI"), "authors": parse_authors(info.get("/Author"))},
           "doi_in_text": pages[0][:3000] if pages else ""}


