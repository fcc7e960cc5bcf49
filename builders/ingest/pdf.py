"""PDF, layout-aware: words with their font size and position from one of three backends (``pdf_backends.py``):
PyMuPDF, whose layout model also gives each block a class (title, section header, text, list item, caption,
footnote, page header or footer, table, picture, formula; ``pdf_mupdf.py``), pdfplumber (pdfminer.six) or PDFium.
Lines are read block by block (the model's) or column by column (the rules'), and running headers and footers
removed by their repetition across pages (``pdf_layout.py``); paragraphs from the model's blocks or line spacing,
headings from its class or from font size, weight and numbering, the abstract found, the reference list and
figure/table captions removed (``pdf_blocks.py``); here the title from the model's title block or page 1's largest
text, the DOI from the front matter (``pdf_doi.py``), and ligatures, loose accents and line-end hyphens repaired.
Pages without a text layer are named in a warning and make the paper partial; a paper that is mostly such pages
fails with "run OCR first"."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext

import pdfplumber
from pdfplumber.utils.exceptions import PdfminerException

from sciqag_dataset.builders.ingest import pdf_backends, pdf_mupdf, pdf_pdfium, pdf_worker
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.normalize import MAX_TITLE_CHARS, inline, parse_authors
from sciqag_dataset.builders.ingest.pdf_blocks import (
    font_family,
    is_caption,
    line_blocks,
    paper_sections,
)
from sciqag_dataset.builders.ingest.pdf_components import pdf_components
from sciqag_dataset.builders.ingest.pdf_doi import links, paper_doi
from sciqag_dataset.builders.ingest.pdf_glyphs import spell
from sciqag_dataset.builders.ingest.pdf_layout import article_info_box, page_lines, running_furniture
from sciqag_dataset.builders.ingest.pdf_line import ASIDE, Block, Line
from sciqag_dataset.builders.ingest.pdf_title import INSTITUTION, opening_block, plausible_title, title_of
from sciqag_dataset.builders.ingest.registry import RawPaper, Source

_SPACING_ACCENTS = {
    "\u02c6": "\u0302",
    "\u00a8": "\u0308",
    "\u00b4": "\u0301",
    "`": "\u0300",
    "\u02dc": "\u0303",
    "\u00b8": "\u0327",
    "\u02c7": "\u030c",
    "\u02da": "\u030a",
    "\u02d8": "\u0306",
    "\u00af": "\u0304",
}
_LOOSE_ACCENT = re.compile("([" + "".join(_SPACING_ACCENTS) + r"])\s?([A-Za-z\u0131\u0237])")
# numbered citations; not Miller indices ("[001]", "[110]": a leading zero or three digits of 0-2)
_CITE_NUMBER = r"(?!0)(?![0-2]{3}\b)\d{1,3}"
# not a chemical name's bracket ("[60]fullerene", "[5]helicene"): a letter right after it
_BRACKET_CITE = re.compile(rf"\s?\[{_CITE_NUMBER}(?:\s*[,–-]\s*{_CITE_NUMBER})*\](?![A-Za-z])")
# a running head's citation: a year in brackets, or volume and page ("103, 033110", "15 (2007) 119–123")
_CITATION_LINE = re.compile(r"\((?:1[89]|20)\d\d\)|\b\d+,\s*\d{3,}\b")
_NUMBERED_HEADING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.)\s+[A-Z][A-Za-z]+")
# a repository's cover sheet (eScholarship's "Permalink", White Rose's "This is a repository copy of", HAL's "To
# cite this version:" and "HAL Id:", DSpace's and DASH's "Citable link")
_COVER_SHEET = re.compile(
    r"\s*(?:permalink\b|this is a repository copy of\b|to cite this version\s*:|hal id\s*:|citable link\b|"
    r"copyright and moral rights for the publications made accessible)",  # the cover sheet of Pure portals
    re.I,
)
_LIGATURE_GAP = re.compile(r"\b(\w*(?:ff|fi|fl))\s([a-z]+)\b")  # "eff ect": a gap after a ligature read as a space
_TITLE_MARK = re.compile(r"\s*\^?[*∗†‡§¶]+$")  # a footnote's mark after the title, raised or not


_ABSTRACT_OPENING = re.compile(r"(?:ABSTRACT|Abstract|SUMMARY|Summary)\b\s*[:.—–-]?")


def read(source: Source) -> Iterator[RawPaper]:
    warn = source.warn
    partial: list[str] = []  # why part of the paper is missing: pages without text

    def lost(reason: str) -> None:
        warn(reason)
        partial.append(reason)

    backend = pdf_backends.resolve(source.options.get("pdf_backend") or BACKEND)
    try:
        info, pages_in, opened, backend = _open(source.path, backend, warn)
        with opened:
            pages, empty, unmapped = [], [], 0
            for n, page in enumerate(pages_in, 1):
                try:
                    # a layout model's blocks, when it read the page; else the rules' columns
                    read_page = pdf_mupdf.page_lines if isinstance(page, pdf_mupdf.Page) else page_lines
                    lines, missing = read_page(page, n)
                    lines = article_info_box(lines) if n <= 2 else lines
                    unmapped += missing
                    # an image and (almost) no text: a scanned page; a blank page or a drawing is not one
                    if sum(len(ln.text) for ln in lines) < 20 and page.images:
                        empty.append(n)
                except Exception as exc:  # one bad page must not lose the others
                    lost(f"page {n}: no text extracted ({type(exc).__name__}: {exc})")
                    lines = []
                finally:
                    page.close()  # pdfplumber keeps every parsed page otherwise: memory grows with the PDF
                pages.append(lines)
    except IngestError:
        raise
    except Exception as exc:  # pdfminer raises many types on damaged or encrypted files
        if isinstance(exc, PdfminerException) and exc.args and isinstance(exc.args[0], Exception):
            exc = exc.args[0]  # pdfplumber's wrapper: the name and reason are pdfminer's
        name = type(exc).__name__
        if "Password" in name or "Encrypt" in name:
            raise IngestError(
                "encrypted PDF: decrypt it first with its password (qpdf --decrypt --password=... in.pdf out.pdf)"
            ) from None
        raise IngestError(f"invalid PDF: {name}" + (f": {exc}" if str(exc) else "")) from None
    if not pages:
        raise IngestError("the PDF has no pages")
    if not any(pages) and unmapped:
        raise IngestError(
            f"the text is set in fonts without a Unicode map ({unmapped} glyphs): it cannot be read "
            "as text; run OCR first"
        )
    if not any(pages) or len(empty) > len(pages) / 2:
        raise IngestError(f"no text layer on {len(empty)} of {len(pages)} page(s) (scanned?): run OCR first")
    if empty:
        lost(f"page(s) {', '.join(map(str, empty))} have no text layer (scanned?): their text is missing")
    if unmapped:  # a few: symbols of a math font; many: a body font, and the text is not readable
        chars = sum(len(ln.text) for lines in pages for ln in lines)
        note = f"{unmapped} glyph(s) in fonts without a Unicode map left out (symbols or words may be missing)"
        (lost if unmapped > 0.05 * (chars + unmapped) else warn)(note)
    yield {**_paper(pages, info), "extractor": f"pdf/{backend}", "partial": partial}


# which library reads the characters and their boxes when the run's ``pdf_backend`` reading option names none:
# "layout" (PyMuPDF and its layout model's blocks), "pdfplumber" (pdfminer.six) or "pdfium" (pypdfium2), each
# under the same rules; bench/ingest.py measures them on the same files, bench/ingest_quality.py scores them
BACKEND = "auto"


def _open(path, backend: str, warn) -> tuple:
    """(metadata, pages, a context that closes the file, the backend that read) with the chosen backend; a file the
    layout backend's process crashes on is read by pdfplumber, with a warning."""
    if backend == "pdfium":
        info, _, pages = pdf_pdfium.open_pages(path)
        return info, pages, nullcontext(), backend
    if backend == "layout":
        try:
            info, pages = pdf_worker.read_document(str(path))
        except pdf_worker.Crashed as exc:
            warn(f"{exc}: read with pdfplumber instead")
        else:
            if not pages or any(isinstance(page, pdf_mupdf.Page) for page in pages):
                return (
                    info,
                    [p if isinstance(p, pdf_mupdf.Page) else _Unread(p) for p in pages],
                    nullcontext(),
                    backend,
                )
            warn(f"PyMuPDF read no page of this file ({pages[0]}): read with pdfplumber instead")
    pdf = pdfplumber.open(path, password="")
    return {**(pdf.metadata or {}), "links": links(pdf.pages[:2])}, pdf.pages, pdf, "pdfplumber"


class _Unread:
    """A page the reading process could not read: asked for its words, it says why."""

    def __init__(self, why: str):
        self.why = why

    def extract_words(self, **_):
        raise IngestError(self.why)

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- lines -> paper


def _paper(pages: list[list[Line]], info: dict) -> RawPaper:
    spell(pages)  # ligatures spelt out, glyphs without a Unicode map named by the paper's words
    furniture = running_furniture(pages)
    read = [ln for lines in pages for ln in lines if (ln.page, ln.top) not in furniture]
    badge = _badge(read)
    read = [ln for ln in read if id(ln) not in badge]
    lines = [ln for ln in read if ln.kind not in ASIDE]  # not the layout model's headers, footnotes, captions, ...
    sizes, families = Counter(), Counter()  # the body's size and font family: the most text, in the first half
    half = max(1, (len(pages) + 1) // 2)  # of the paper (references and tables at the end are set smaller and
    for ln in lines:  # can outweigh a short paper's body)
        if ln.page <= half:
            sizes[round(ln.size, 1)] += len(ln.text)
            families[font_family(ln)] += len(ln.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    _prose_in_figures([ln for ln in read if ln.kind == "picture"], body)
    _title_in_figure(read, body)
    _prose_in_tables(read)
    _abstract_in_captions(read)
    _text_at_the_edges(read, body)
    lines = [ln for ln in read if ln.kind not in ASIDE]
    cover = {ln.page for ln in lines if ln.page == 1 and _COVER_SHEET.match(ln.text)}
    if cover and any(ln.page > 1 for ln in lines):  # a repository's cover sheet before the paper: not its text
        lines = [ln for ln in lines if ln.page not in cover]
    family = families.most_common(1)[0][0] if families else None
    opening = min((ln.page for ln in lines), default=1)  # the first page with text (a scanned cover before it)
    foot = _front_foot([ln for ln in lines if ln.page == opening], body)
    lines = [ln for ln in lines if id(ln) not in foot]
    first = [ln for ln in lines if ln.page == opening]
    # a title set at the top of the page may be read as a page header by a layout model
    # (not a running head's citation line: "PHYSICAL REVIEW A 103, 033110 (2021)")
    top = [
        ln
        for ln in read
        if ln.page == opening
        and (ln.kind not in ASIDE or ln.kind == "page-header" and not _CITATION_LINE.search(ln.text))
    ]
    meta_title = inline(info.get("Title"))
    page = [ln for ln in read if ln.page == opening]
    title_lines = title_of(first, [ln for ln in top if id(ln) not in foot], top, body, meta_title, page)
    # its lines joined with the mark of a word broken at a line end ("-\x00", which inline() would drop): joined
    # below, where the paper's words are known
    title = " ".join(Block(title_lines).text.split()) if title_lines else ""
    if not title and meta_title and plausible_title(meta_title):
        title = meta_title
    # all one size: the first line (not a university's name), as a plain text file's title, with the rest of its
    # block (a title set no larger than its authors' line)
    named = [ln for ln in first if not INSTITUTION.fullmatch(ln.text)]
    opening_lines = next((run for run in (opening_block(named), named[:1]) if _short_line(Block(run).text)), [])
    if not title and opening_lines:
        title = " ".join(Block(opening_lines).text.split())
    heads = {id(ln) for ln in title_lines}
    blocks = line_blocks([ln for ln in lines if id(ln) not in heads], body)
    sections, references, has_abstract = paper_sections(blocks, body, opening, title, family)
    components = pdf_components(read, [b for b in blocks if is_caption(b, body, family)])
    # the paper's own words, without the halves of words broken at a line end or after a ligature ("eff ect")
    vocab = Counter(
        w.lower() for b in blocks for w in re.findall(r"[A-Za-z]{2,}", re.sub(r"\w+-\x00\w+", " ", b.text))
    ) - Counter(m[2].lower() for b in blocks for m in _LIGATURE_GAP.finditer(b.text))
    sections = [[h, "\n\n".join(_repair(p, vocab) for p in paras)] for h, paras in sections]
    title = _TITLE_MARK.sub("", inline(_accents(_join_broken(title, vocab))))
    for component in components:
        component["caption"] = inline(_join_broken(component["caption"], vocab))
    # the paper's own DOI is printed in its front matter or a running head (pdf_doi.py)
    heads = [ln for lines_ in pages[: opening + 1] for ln in lines_ if (ln.page, ln.top) in furniture]
    doi = paper_doi(info, read, heads, foot, blocks, body, opening, title)
    title = title if len(title) <= 1.5 * MAX_TITLE_CHARS else ""  # set in the largest type: longer than a guess
    return {
        "format": "pdf",
        "title": title,
        "sections": [s for s in sections if s[1].strip()],
        "components": components,
        "metadata": {"doi": doi, "authors": parse_authors(info.get("Author"))},
        "has_abstract": has_abstract,
        "references_dropped": references,
    }


def _short_line(text: str) -> bool:
    """Text that may be a title: a line's worth of words, not a sentence."""
    return bool(text) and len(text.split()) <= 20 and not text.endswith(".")


def _prose_in_figures(pictures: list[Line], body: float) -> None:
    """Blocks the layout model calls pictures that hold the body's paragraphs (a heading and text under a figure,
    taken in with it): two or more lines of six words or more at the body's size. Their lines at the body's size
    or larger go back to the rules (no class); the figure's labels, set smaller, stay out."""
    prose = Counter(ln.box for ln in pictures if abs(ln.size - body) < 0.6 and len(ln.words) >= 6)
    for ln in pictures:
        if prose[ln.box] >= 2 and ln.size > body - 0.6:
            ln.kind, ln.box = "", -1


def _title_in_figure(lines: list[Line], body: float) -> None:
    """The largest words of the first text page, a run of lines of one size at least half as large again as the
    body, in a picture block above all its text, where the model found no title (a title set under a badge, read
    as one picture with it): those lines go back to the rules (no class), which find the title among them."""
    pages = [ln.page for ln in lines if ln.kind not in ASIDE]
    if not pages:
        return
    page = min(pages)
    first = [ln for ln in lines if ln.page == page]
    if any(ln.kind == "title" for ln in first):
        return
    start = min(ln.top for ln in first if ln.kind not in ASIDE)
    above = [ln for ln in first if ln.kind == "picture" and ln.bottom <= start + 1 and ln.size >= 1.5 * body]
    if not above:
        return
    largest = max(above, key=lambda ln: ln.size)
    run = [ln for ln in above if ln.box == largest.box and abs(ln.size - largest.size) < 0.5]
    if sum(len(ln.words) for ln in run) >= 3 and largest.size > max(ln.size for ln in first if ln.kind not in ASIDE):
        for ln in run:
            ln.kind, ln.box = "", -1


def _prose_in_tables(lines: list[Line]) -> None:
    """Blocks the layout model calls tables that hold sentences go back to the rules (no class, no block): a block
    with three or more lines of six words or more, nearly all words, half its lines or more; and every table
    block of a page the model read mostly as tables when a third of those lines are such sentences (a page of
    prose, its title and authors too, read as tables). A table's rows are cells and numbers."""
    boxes: dict[int, list[Line]] = {}
    pages: dict[int, list[Line]] = {}
    for ln in lines:
        pages.setdefault(ln.page, []).append(ln)
        if ln.kind == "table":
            boxes.setdefault(ln.box, []).append(ln)
    prose = {box: sum(_sentence_like(ln.text.split()) for ln in box_lines) for box, box_lines in boxes.items()}
    for page in pages.values():
        tables = [ln for ln in page if ln.kind == "table"]
        whole = (
            len(tables) >= 0.6 * len(page)
            and sum(prose[ln.box] for ln in tables)
            and sum(_sentence_like(ln.text.split()) for ln in tables) >= len(tables) / 3
        )
        for ln in tables:
            n = prose[ln.box]
            if whole or n >= 3 and n >= len(boxes[ln.box]) / 2:
                ln.kind, ln.box = "", -1


def _abstract_in_captions(lines: list[Line]) -> None:
    """A block the layout model calls a caption that opens with "Abstract" (or "Summary"), as a boxed abstract
    set under a graphic reads to it: the abstract, given back to the rules. A caption opens with its label."""
    first: dict[int, Line] = {}
    for ln in lines:
        if ln.kind == "caption":
            first.setdefault(ln.box, ln)
    abstracts = {box for box, ln in first.items() if _ABSTRACT_OPENING.match(ln.text)}
    for ln in lines:
        if ln.kind == "caption" and ln.box in abstracts:
            ln.kind, ln.box = "", -1


def _sentence_like(words: list[str]) -> bool:
    return len(words) >= 6 and sum(bool(_WORDLIKE.fullmatch(w)) for w in words) >= 0.8 * len(words)


_WORDLIKE = re.compile(r"[(\"“‘]?[^\W\d_]+(?:[-'’][^\W\d_]+)*[)\"”’]?[.,;:]?")


def _text_at_the_edges(lines: list[Line], body: float) -> None:
    """A layout model's page heads and feet that are the page's text go back to the rules (no class): a sentence
    at the body's size (six words or more, a full stop: running heads are set smaller, repeat, or end without
    one), and those of a page with no other text, or inside the span of its text rather than above or below."""
    span: dict[int, tuple[float, float]] = {}
    for ln in lines:
        if ln.kind and ln.kind not in ASIDE:
            top, bottom = span.get(ln.page, (ln.top, ln.bottom))
            span[ln.page] = (min(top, ln.top), max(bottom, ln.bottom))
    edges = [ln for ln in lines if ln.kind in ("page-header", "page-footer")]
    printed = Counter(_masked(ln) for ln in edges)
    for ln in edges:
        top, bottom = span.get(ln.page, (ln.top, ln.bottom))
        words = len(ln.text.split())
        sentence = abs(ln.size - body) < 0.6 and words >= 6 and ln.text.rstrip().endswith((".", "?", "!"))
        # "III. COOLING STAGES" atop a page, printed once: a heading ("2 TIMP: ...", a page number and a running
        # head, repeats)
        numbered = bool(_NUMBERED_HEADING.match(ln.text)) and printed[_masked(ln)] == 1
        if sentence or numbered or ln.page not in span or top <= ln.top and ln.bottom <= bottom:
            ln.kind = ""


def _badge(lines: list[Line]) -> set[int]:
    """The lines of a "Check for updates" badge (Crossmark's, beside a title): whole on a line, or over two lines
    of one page, set apart from the rest (a block of its own to a layout model, so one heading: "updates")."""
    out = {id(ln) for ln in lines if _BADGE.fullmatch(ln.text)}
    halves = [ln for ln in lines if _BADGE_HALF.fullmatch(ln.text)]
    for a in halves:
        for b in halves:
            if a.page == b.page and a.text.lower().startswith("check") and 0 < b.top - a.top < 3 * a.size:
                out |= {id(a), id(b)}
    return out


_BADGE = re.compile(r"\s*check\s+for\s+updates\s*", re.I)
_BADGE_HALF = re.compile(r"\s*(?:check(?:\s+for)?|(?:for\s+)?updates)\s*", re.I)


def _masked(ln: Line) -> str:
    return re.sub(r"[\d\s]+", " ", ln.text).strip().lower()


def _front_foot(first: list[Line], body: float) -> dict[int, Line]:
    """The first page's foot: lines set smaller than the body below its last line of body text (the venue and
    copyright lines, a split by the column gutter does not matter). More such lines than the page has at the
    body's size are no foot: a first page of front matter (authors at the body's size, then affiliations and the
    abstract set smaller), the body starting on the next page."""
    at_body = [ln for ln in first if abs(ln.size - body) < 0.6]
    low = max((ln.bottom for ln in at_body), default=None)
    if low is None:
        return {}
    foot = {id(ln): ln for ln in first if ln.top > low and ln.size < 0.95 * body}
    return foot if len(foot) <= len(at_body) else {}


def _repair(text: str, vocab: Counter) -> str:
    """Loose accents, line-end hyphens (joined where the joined word is the paper's, or where
    neither half is a word of it), bracketed citation numbers."""
    return _BRACKET_CITE.sub("", _join_broken(_accents(text), vocab))


def _accents(text: str) -> str:
    """An accent set as a glyph of its own before its letter ("Sj¨ogren", TeX's fonts) joined to the letter."""
    return _LOOSE_ACCENT.sub(
        lambda m: unicodedata.normalize(
            "NFC", {"\u0131": "i", "\u0237": "j"}.get(m[2], m[2]) + _SPACING_ACCENTS[m[1]]
        ),
        text,
    )


def _join_broken(text: str, vocab: Counter) -> str:
    """Words broken at a line end ("-\\x00") joined where the joined word is the paper's, or where neither half
    is a word of it; else hyphenated. A word set apart after its ligature ("eff ect") is joined where the joined
    word is the paper's and the rest is not a word of it."""

    def ligature(m: re.Match) -> str:
        joined = (m[1] + m[2]).lower()
        return m[1] + m[2] if vocab[joined] and not vocab[m[2].lower()] else m[0]

    def hyphen(m: re.Match) -> str:
        head, tail = m[1], m[2]
        joined = (head + tail).lower()
        if vocab[joined] or (not vocab[tail.lower()] and not vocab[head.lower()]):
            return head + tail
        return f"{head}-{tail}"

    text = re.sub(r"(\w+)-\x00(\w+)", hyphen, text).replace("\x00", "")
    return _LIGATURE_GAP.sub(ligature, text)
