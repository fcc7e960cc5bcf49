"""The built-in readers, registered in the order content is sniffed (JSON before HTML before XML before LaTeX
before Markdown; plain text last). A reader module whose library is missing is imported here into its
ImportError: the reader is still registered, and its files fail with the extra to install."""

from __future__ import annotations

from . import sniff
from .json_papers import read as read_json
from .markdown import read as read_md
from .plain_text import read as read_txt
from .registry import Reader, register

try:
    from .html import read as read_html
except ImportError as exc:
    read_html = exc
try:
    from .xml_reader import read as read_xml
except ImportError as exc:
    read_xml = exc
try:
    from .latex import read as read_latex
except ImportError as exc:
    read_latex = exc
try:
    from .pdf import read as read_pdf
except ImportError as exc:
    read_pdf = exc
try:
    from .grobid import read as read_grobid
except ImportError as exc:
    read_grobid = exc

BUILTIN = (
    Reader(
        "json",
        read_json,
        extensions=(".json", ".jsonl", ".ndjson"),
        sniff=sniff.json,
        label="JSON",
        many=True,
        about="``json_papers.py``: a paper dict (title, text | abstract + body | sections, doi, ...), a list of "
        "them (streamed), or JSON Lines (also when the file is called .json). The SciQAG authors' release "
        "(dicts with doi, txt, journal, keywords, Q&A; source_format sciqag-json): their pairs go to "
        'existing_qa (origin "released")',
    ),
    Reader(
        "html",
        read_html,
        extensions=(".html", ".htm", ".xhtml"),
        sniff=sniff.html,
        extra="ingest",
        label="HTML",
        about="``html.py``: trafilatura main content + citation_* metadata, abstract, references removed "
        "(``html_clean.py``: what a page holds besides the paper, with the patterns of ``html_rules.py``)",
    ),
    Reader(
        "xml",
        read_xml,
        extensions=(".xml", ".nxml"),
        sniff=sniff.xml,
        extra="ingest",
        label="XML",
        about="``xml_reader.py``: JATS/NLM <article> XML (``jats.py``, source_format jats) and Elsevier "
        "full-text XML (``elsevier.py``, ce:/dc:/prism: elements, source_format elsevier)",
    ),
    Reader(
        "latex",
        read_latex,
        extensions=(".tex", ".ltx", ".gz", ".tgz", ".tar"),
        sniff=sniff.latex,
        signature=sniff.source_archive,
        extra="ingest",
        label="LaTeX",
        about="``latex.py``: a .tex file or an arXiv source archive (tar.gz, tgz, tar, one gzipped file): "
        "``latex_source.py`` finds the main file by \\documentclass, expands inputs and argument-less "
        "macros; pylatexenc text with the math kept verbatim as LaTeX; bibliography, figures and tables "
        "removed; ``latex_refs.py`` numbers cross-references, ``latex_cites.py`` writes out textual citations",
    ),
    Reader(
        "md",
        read_md,
        extensions=(".md", ".markdown"),
        sniff=sniff.markdown,
        label="Markdown",
        about="``markdown.py``: # Title, ##/### sections, optional YAML front matter, header lines",
    ),
    Reader(
        "txt",
        read_txt,
        extensions=(".txt", ".text"),
        sniff=sniff.prose,
        label="plain text",
        last_resort=True,
        about="``plain_text.py``: first non-empty short line is the title; Key: value header lines (Authors, "
        "Journal, DOI, License, Year, Keywords, URL) become metadata; a lone short line such as "
        "Introduction starts a section. Also any file of prose whose extension names no format (noted)",
    ),
    Reader(
        "pdf",
        read_pdf,
        extensions=(".pdf",),
        signature=sniff.pdf_header,
        no_signature="no %PDF- header",
        extra="ingest",
        label="PDF",
        about="``pdf.py``: pdfplumber words with size and position (``pdf_layout.py``: lines, columns, "
        "running heads, figure regions; ``pdf_blocks.py``: headings, abstract, references, furniture, "
        "footnotes)",
    ),
    Reader(
        "pdf",
        read_grobid,
        selected_by="grobid_url",
        extra="ingest",
        label="PDF through GROBID",
        about="``grobid.py``: PDFs posted to a GROBID server (--pdf-backend grobid --grobid-url URL), its TEI "
        "read into sections",
    ),
)

for _reader in BUILTIN:
    register(_reader)
