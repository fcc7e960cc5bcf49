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


def test_the_layout_backend_without_pymupdf_names_the_extra(monkeypatch):
    """pdf_backend: layout with PyMuPDF missing is a one-line error naming the 'layout' extra."""
    import builtins

    import pytest

    from sciqag_dataset.builders.ingest import pdf_mupdf
    from sciqag_dataset.builders.ingest.errors import IngestError

    real = builtins.__import__

    def no_pymupdf(name, *a, **k):
        if name.startswith("pymupdf"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pymupdf)
    with pytest.raises(IngestError) as err:
        pdf_mupdf._pymupdf()
    assert "[layout]" in str(err.value) and "\n" not in str(err.value)


def test_a_journal_masthead_larger_than_the_title_is_not_the_title(tmp_path):
    """A 28 pt journal name above a 17 pt title: the title is the 17 pt line."""
    from pdf_pages import LEFT, body_lines, column, draw
    from test_pdf_classes import _read

    page = [
        (LEFT, 70, "Times-Roman", 28, "Journal of Imaginary Statistics"),
        (LEFT, 130, "Times-Bold", 17, "Sampling Quiet Lakes for Drifting Pebbles"),
        (LEFT, 160, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 190, body_lines(40), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "masthead.pdf", [page]))
    assert rec["title"] == "Sampling Quiet Lakes for Drifting Pebbles"
