"""Backend choice for the PDF reader: "auto" without PyMuPDF."""

import importlib.util

from sciqag_dataset.builders.ingest import pdf_backends


def test_auto_is_pdfplumber_without_pymupdf(monkeypatch):
    """auto reads with pdfplumber when PyMuPDF is not installed, and with layout when it is."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pymupdf" else real(name, *a))
    assert pdf_backends.resolve("auto") == "pdfplumber"
    assert pdf_backends.resolve(None) == "pdfplumber"
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: object() if n == "pymupdf" else real(n, *a))
    assert pdf_backends.resolve("auto") == "layout"
