"""The reader of each format; a format whose library is not installed fails its files with what to install,
and every other format is still read."""
from __future__ import annotations

from .text import IngestError

EXTRA = "pip install 'sciqag-hf[ingest]'"


def _missing(fmt: str, exc: ImportError):
    package = (exc.name or str(exc)).split(".")[0]

    def reader(*args, **kwargs):
        raise IngestError(f"reading {fmt} needs the `{package}` package, which is not installed: {EXTRA}")
    return reader


try:
    from .pdf import read_pdf
except ImportError as exc:
    read_pdf = _missing("PDF", exc)
try:
    from .html import read_html
except ImportError as exc:
    read_html = _missing("HTML", exc)
try:
    from .xml_reader import read_xml
except ImportError as exc:
    read_xml = _missing("XML", exc)
try:
    from .grobid import read_grobid
except ImportError as exc:
    read_grobid = _missing("PDF through GROBID", exc)
try:
    from .latex import read_latex
except ImportError as exc:
    read_latex = _missing("LaTeX", exc)

__all__ = ["read_grobid", "read_html", "read_latex", "read_pdf", "read_xml"]
