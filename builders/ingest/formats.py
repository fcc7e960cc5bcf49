"""The built-in readers, registered in the order content is sniffed (JSON before HTML before XML before LaTeX
before Markdown; plain text last). A reader module whose library is missing is imported here into its
ImportError: the reader is still registered, and its files fail with the extra to install."""

from __future__ import annotations

from sciqag_dataset.builders.ingest import sniff
from sciqag_dataset.builders.ingest.json_papers import read as read_json
from sciqag_dataset.builders.ingest.markdown import read as read_md
from sciqag_dataset.builders.ingest.plain_text import read as read_txt
from sciqag_dataset.builders.ingest.registry import Reader, register

try:
    from sciqag_dataset.builders.ingest.html import read as read_html
except ImportError as exc:
    read_html = exc
try:
    from sciqag_dataset.builders.ingest.xml_reader import read as read_xml
except ImportError as exc:
    read_xml = exc
try:
    from sciqag_dataset.builders.ingest.latex import read as read_latex
except ImportError as exc:
    read_latex = exc
try:
    from sciqag_dataset.builders.ingest.pdf import read as read_pdf
except ImportError as exc:
    read_pdf = exc
try:
    from sciqag_dataset.builders.ingest.grobid import read as read_grobid
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
        about="a paper object (title, text | abstract + body | sections, doi, ...), a list of them (streamed), "
        "or JSON Lines (also when the file is called .json). The SciQAG authors' release (objects with doi, "
        "txt, journal, keywords, Q&A; source_format sciqag-json): their pairs are kept as existing_qa "
        '(origin "released")',
    ),
    Reader(
        "html",
        read_html,
        extensions=(".html", ".htm", ".xhtml"),
        sniff=sniff.html,
        extra="ingest",
        label="HTML",
        about="the article's main content (trafilatura), citation_* metadata and the abstract; references, "
        "navigation, figures and the site's notices removed; tables and figures as components",
    ),
    Reader(
        "xml",
        read_xml,
        extensions=(".xml", ".nxml"),
        sniff=sniff.xml,
        extra="ingest",
        label="XML",
        about="JATS/NLM <article> XML (source_format jats) and Elsevier full-text XML (ce:/dc:/prism: elements, "
        "source_format elsevier): sections, abstract and metadata; JATS tables, figures and display formulas as "
        "components",
    ),
    Reader(
        "latex",
        read_latex,
        extensions=(".tex", ".ltx", ".gz", ".tgz", ".tar"),
        sniff=sniff.latex,
        signature=sniff.source_archive,
        extra="ingest",
        label="LaTeX",
        about="a .tex file or an arXiv source archive (tar.gz, tgz, tar, one gzipped file): the main file found "
        "by \\documentclass, inputs and argument-less macros expanded; the text through pylatexenc with the "
        "math kept verbatim as LaTeX; bibliography removed; tables, figures and display equations as components; "
        "cross-references as the numbers LaTeX prints, textual citations written out",
    ),
    Reader(
        "md",
        read_md,
        extensions=(".md", ".markdown"),
        sniff=sniff.markdown,
        label="Markdown",
        about="# Title, ##/### sections, optional YAML front matter, Key: value header lines",
    ),
    Reader(
        "txt",
        read_txt,
        extensions=(".txt", ".text"),
        sniff=sniff.prose,
        label="plain text",
        last_resort=True,
        about="the first non-empty short line is the title; Key: value header lines (Authors, "
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
        about="blocks from PyMuPDF's layout model (the layout extra; --pdf-backend auto picks it when installed), "
        "else pdfplumber's words with their size and position, under the same rules: columns in reading order, "
        "title, headings and abstract found; running heads, figures, tables, references, captions, footnotes and "
        "page furniture removed",
    ),
    Reader(
        "pdf",
        read_grobid,
        selected_by="grobid_url",
        extra="ingest",
        label="PDF through GROBID",
        about="PDFs posted to a GROBID server (--pdf-backend grobid --grobid-url URL), its TEI read into sections",
    ),
)

for _reader in BUILTIN:
    register(_reader)
