"""The PDF reader's backends by name, and which one "auto" is on this machine (without importing any)."""

from __future__ import annotations

import importlib.util

from sciqag_dataset.builders.ingest.errors import IngestError

#: layout: PyMuPDF's words and its layout model's blocks (the ``layout`` extra, AGPL-3.0); pdfplumber: pdfminer.six's
#: characters (MIT); pdfium: PDFium's (pypdfium2, Apache-2.0/BSD-3); the same rules read each
BACKENDS = ("layout", "pdfplumber", "pdfium")


def resolve(name: str | None) -> str:
    """The backend that reads for ``name``: "auto" (or none) is layout when PyMuPDF is installed, else pdfplumber."""
    if not name or name == "auto":
        return "layout" if importlib.util.find_spec("pymupdf") is not None else "pdfplumber"
    if name not in BACKENDS:
        raise IngestError(f"unknown PDF backend {name!r}: one of auto, {', '.join(BACKENDS)}")
    return name
