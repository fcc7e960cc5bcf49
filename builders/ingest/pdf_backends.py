"""The PDF reader's backends by name, and which one "auto" is on this machine (without importing any)."""

from __future__ import annotations

import importlib.metadata
import importlib.util

from sciqag_dataset.builders.ingest.errors import IngestError

#: layout: PyMuPDF's words and its layout model's blocks (the ``layout`` extra, AGPL-3.0); pdfplumber: pdfminer.six's
#: characters (MIT); pdfium: PDFium's (pypdfium2, Apache-2.0/BSD-3); the same rules read each
BACKENDS = ("layout", "pdfplumber", "pdfium")


def resolve(name: str | None) -> str:
    """The backend that reads for ``name``: "auto" (or none) is layout when PyMuPDF is installed, else pdfplumber."""
    if not name or name == "auto":
        return "layout" if _layout_installed() else "pdfplumber"
    if name not in BACKENDS:
        raise IngestError(f"unknown PDF backend {name!r}: one of auto, {', '.join(BACKENDS)}")
    return name


def _layout_installed() -> bool:
    """PyMuPDF 2 (whose wheel carries the layout model) is installed; an older PyMuPDF, which another package may
    have brought, has no layout model. Read from the package's metadata: importing it loads the model."""
    if importlib.util.find_spec("pymupdf") is None:
        return False
    try:
        return int(importlib.metadata.version("pymupdf").split(".")[0]) >= 2
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
