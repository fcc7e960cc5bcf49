"""A page's words and its layout from MuPDF (PyMuPDF with its layout model, AGPL-3.0): characters with their
boxes, font size and font name from MuPDF's text page, grouped into words as ``pdf_pdfium.py`` groups them
(the dict shape of pdfplumber's ``extract_words``), so that the layout pass (``pdf_layout.py``) runs on them; and
the blocks PyMuPDF's layout model finds on the page (an ONNX graph network shipped in the wheel, run on the CPU,
nothing downloaded): title, section header, text, list item, caption, footnote, page header and footer, table,
picture, formula. ``page_lines`` reads the lines block by block, each with its block's class.
Glyphs without a Unicode map are kept as marks (``pdf_glyphs.mark``, from the glyph's id, which MuPDF gives)."""

from __future__ import annotations

import logging
import re
import statistics
from typing import TYPE_CHECKING

from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.pdf_columns import gutter_of, split_at_gutter, two_columns, under_both_columns
from sciqag_dataset.builders.ingest.pdf_glyphs import digit_names, mark
from sciqag_dataset.builders.ingest.pdf_layout import GAP, line_numbers
from sciqag_dataset.builders.ingest.pdf_layout import page_lines as rule_lines
from sciqag_dataset.builders.ingest.pdf_line import Line

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)
X_TOLERANCE = 1.5
_FLAGS = 1 | 2 | 64  # TEXT_PRESERVE_LIGATURES | TEXT_PRESERVE_WHITESPACE | TEXT_MEDIABOX_CLIP
_ACCURATE_BBOXES = 512  # TEXT_ACCURATE_BBOXES: glyph boxes from their outlines, not the font's ascent and descent
_UNMAPPED = 0xFFFD
_FILLED, _STROKED = 16, 32  # a span's char_flags: its glyphs are filled, stroked
_WHITE = 0xFFFFFF


def page_words(page: pymupdf.Page) -> tuple[list[dict], int]:
    """The page's words, top-down coordinates in points, and how many glyphs had no Unicode map. MuPDF puts a
    space where the gap between two glyphs is a word space; a gap wider than ``GAP`` of the size (at most
    ``X_TOLERANCE``) than the line's letter spacing ends a word too (text set without space characters). A word
    after a space character is ``spaced`` (not a space drawn over the glyph before it): it stays a word of its
    own however close it stands (slanted glyphs' boxes touch across a narrow space)."""
    # a CID font with no ToUnicode map: MuPDF guesses letters from the glyph ids, which are no text
    guessed = {
        _base(f[3])
        for f in page.get_fonts(full=True)
        if f[5].startswith("Identity") and page.parent.xref_get_key(f[0], "ToUnicode")[0] == "null"
    }
    # the glyph ids of unmapped characters, by where they stand: the text trace has them, the text page does not
    glyphs = {
        (round(c[2][0], 1), round(c[2][1], 1)): c[1]
        for span in page.get_texttrace()
        for c in span["chars"]
        if c[0] == _UNMAPPED or _base(span["font"]) in guessed
    }
    digits = digit_names(page)
    words: list[dict] = []
    unmapped = 0
    blocks = page.get_text("rawdict", flags=_FLAGS)["blocks"]
    spans = [span for block in blocks for line in block.get("lines", ()) for span in line["spans"]]
    if any(span["size"] < _TINY and span["chars"] for span in spans):
        _type3_sizes(page, spans)
    # text drawn neither filled nor stroked (render mode 3) over a page of visible text: a hidden copy, not the
    # page's words; a page whose text is (nearly) all invisible is a scan's OCR layer (a stamp on it may show)
    shown = sum(len(s["chars"]) for s in spans if _shown(s))
    hidden = 0 < shown and 3 * shown >= sum(len(s["chars"]) for s in spans)
    white = _white_on_text(spans)
    for block in blocks:
        for line in block.get("lines", ()):
            upright = abs(line["dir"][1]) < 0.01 and line["dir"][0] > 0
            tracking = _tracking(line)
            cur: dict | None = None
            spaced = False  # a space character stands before the next word
            lean = 0.0  # the gap between the current word's last two glyphs (slanted boxes overlap: below 0)
            for span in line["spans"]:
                if hidden and not _shown(span) or id(span) in white:
                    cur = None
                    continue
                font = _base(span["font"])
                size = round(span["size"], 2)
                descent = min(span["descender"], 0.0) * span["size"]
                unmapped_font = _base(span["font"]) in guessed
                named = digits.get(span["font"]) or digits.get(font) or {}
                for c in span["chars"]:
                    ch = named.get(c["c"], c["c"])
                    if ch == "\ufffd" or unmapped_font and not ch.isspace():
                        unmapped += 1
                        ch = mark(font, glyphs.get((round(c["origin"][0], 1), round(c["origin"][1], 1)), 0))
                    elif ch.isspace():
                        # a space drawn over the glyph before it (after a ligature, "infl ammation") is
                        # no word space; slanted glyphs' boxes overlap the space as they overlap each other
                        spaced = cur is None or c["bbox"][0] >= cur["x1"] + min(lean, 0.0) - 0.5
                        cur = None
                        continue
                    # one size high from the font's descent under the baseline, as pdfminer's boxes are: the
                    # font's full ascent and descent overlap the next line, whose words would read as scripts
                    x0, _, x1, _ = c["bbox"]
                    bottom = c["origin"][1] - descent
                    top = bottom - size
                    if (
                        cur is not None
                        and cur["size"] == size  # a change of size or font ends a word, as pdfplumber's do: the
                        and cur["fontname"] == font  # layout pass joins scripts back by their size and place
                        and x0 - cur["x1"] <= tracking + min(X_TOLERANCE, GAP * size)
                        and x0 >= cur["x0"] - 0.5
                        and abs(bottom - cur["bottom"]) < 0.5 * size
                    ):
                        cur["text"] += ch
                        lean = x0 - cur["x1"]
                        cur["x1"] = max(cur["x1"], x1)
                        cur["top"], cur["bottom"] = min(cur["top"], top), max(cur["bottom"], bottom)
                        continue
                    cur = {"text": ch, "x0": x0, "x1": x1, "top": top, "bottom": bottom, "size": size}
                    cur.update(fontname=font, upright=upright, spaced=spaced)
                    spaced, lean = False, 0.0
                    words.append(cur)
    return words, unmapped


def _tracking(line: dict) -> float:
    """The line's letter spacing: the median gap between neighbouring glyphs of one span, none for text set
    tight. A title set with tracking keeps its words whole; text set without spaces has its letters touching."""
    gaps = [
        b["bbox"][0] - a["bbox"][2]
        for span in line["spans"]
        for a, b in zip(span["chars"], span["chars"][1:])
        if not a["c"].isspace() and not b["c"].isspace()
    ]
    return max(statistics.median(gaps), 0.0) if len(gaps) >= 4 else 0.0


def _white_on_text(spans: list[dict]) -> set[int]:
    """Spans in white drawn over (or under) the page's dark text: not seen on the white page (a PMC copy's
    metadata, its journal name, ISSN and DOI, stacked under the title). White text on a dark box has no dark text
    beneath it."""

    def text(span: dict) -> str:
        return "".join(c["c"] for c in span["chars"]).strip()

    def box(span: dict) -> tuple[float, float, float, float]:
        # from the baseline, not the span's box: a line's box may reach far into the next line's (a tall leading)
        base, size = span["chars"][0]["origin"][1], span["size"]
        return span["bbox"][0], base - 0.75 * size, span["bbox"][2], base + 0.2 * size

    dark = [box(s) for s in spans if s.get("color", 0) != _WHITE and text(s)]
    out = set()
    for s in spans:
        if s.get("color") == _WHITE and text(s):
            x0, y0, x1, y1 = box(s)
            area = max((x1 - x0) * (y1 - y0), 1e-6)
            for a0, b0, a1, b1 in dark:
                w, h = min(x1, a1) - max(x0, a0), min(y1, b1) - max(y0, b0)
                if w > 0 and h > 0 and w * h >= 0.3 * area:
                    out.add(id(s))
                    break
    return out


def _shown(span: dict) -> bool:
    """The span's glyphs are painted: filled or stroked, not fully transparent (MuPDF's style flags, where it
    gives them)."""
    return span.get("alpha", 255) > 0 and bool(span.get("char_flags", _FILLED) & (_FILLED | _STROKED))


# a span size no text is set in: a Type 3 font (dvips' bitmap fonts) whose matrix MuPDF reads as a size of 0.24
_TINY = 1.0


def _type3_sizes(page: pymupdf.Page, spans: list[dict]) -> None:
    """Sizes for the spans whose font reports a size no text is set in (``_TINY``): each such font's tallest
    glyph on the page, from the glyphs' drawn outlines (a bracket's or a "j"'s height is about the font's size),
    so that headings stand out, lines do not overlap and words of one size stay one word."""
    accurate = page.get_text("rawdict", flags=_FLAGS | _ACCURATE_BBOXES)["blocks"]
    tallest: dict[str, float] = {}
    for block in accurate:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                for c in span["chars"]:
                    height = c["bbox"][3] - c["bbox"][1]
                    tallest[span["font"]] = max(tallest.get(span["font"], 0.0), height)
    for span in spans:
        if span["size"] < _TINY and tallest.get(span["font"], 0.0) >= _TINY:
            span["size"] = tallest[span["font"]]


def _base(font: str) -> str:
    """A font's name without its subset tag ("ABCDEF+") and MuPDF's number for fonts of one name ("Times~18")."""
    return re.sub(r"~\d+$", "", font.split("+")[-1])


class Page:
    """What the layout pass asks of a page (pdfplumber's names): size, words and images; and ``boxes``, the layout
    model's blocks as (x0, top, x1, bottom, class). Plain data: it crosses from the reading process."""

    curves: list = []  # figures are the model's pictures, not found from drawn shapes
    rects: list = []

    def __init__(self, width: float, height: float, words: list[dict], unmapped: int, images: list, boxes: list):
        self.width, self.height, self._words, self.unmapped = width, height, words, unmapped
        self.images, self.boxes = images, boxes

    def extract_words(self, **_) -> list[dict]:
        return self._words

    def close(self) -> None:
        pass


def _page(page: pymupdf.Page) -> Page:
    words, unmapped = page_words(page)
    images = [
        {"x0": b[0], "top": b[1], "x1": b[2], "bottom": b[3]} for b in (i["bbox"] for i in page.get_image_info())
    ]
    try:
        page.get_layout()
        boxes = [tuple(b[:5]) for b in (page.layout_information or [])]
    except Exception:  # the model failed on this page: the rules read it whole, as the other backends do
        log.warning("the layout model failed on page %d: the page is read by the rules alone", page.number + 1)
        boxes = []
    return Page(page.rect.width, page.rect.height, words, unmapped, images, boxes)


def _pymupdf():
    """PyMuPDF with its layout model, imported when a PDF is first read with it (about a second, the model loaded):
    not by every command that loads the readers."""
    try:
        import pymupdf
        import pymupdf.layout  # noqa: F401  (puts the layout model behind Page.get_layout)
    except ImportError as exc:
        raise IngestError(f"the layout PDF backend needs PyMuPDF: pip install 'sciqag-hf[layout]' ({exc})") from None
    return pymupdf


def read_document(path: str, password: str = "") -> tuple[dict, list[Page | str]]:
    """(metadata, pages) of the PDF, each page a ``Page`` or, where it could not be read, why."""
    pymupdf = _pymupdf()
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise IngestError(f"invalid PDF: {exc}") from None
    with doc:
        if doc.needs_pass and not doc.authenticate(password):
            raise IngestError(
                "encrypted PDF: decrypt it first with its password (qpdf --decrypt --password=... in.pdf out.pdf)"
            )
        if doc.page_count == 0 and doc.is_repaired:
            raise IngestError("invalid PDF: no page could be read (a damaged file?)")
        info = {k.capitalize(): v for k, v in (doc.metadata or {}).items() if v}
        info["links"] = [
            (page.number + 1, link["uri"])
            for page in doc.pages(0, min(2, doc.page_count))
            for link in page.get_links()
            if link.get("uri")
        ]
        pages: list[Page | str] = []
        for page in doc:
            try:
                pages.append(_page(page))
            except Exception as exc:  # one bad page must not lose the others
                pages.append(f"{type(exc).__name__}: {exc}")
        return info, pages


def page_lines(page: Page, n: int) -> tuple[list[Line], int]:
    """The page's lines block by block, each with its block's class and number (``1000 * n`` on); within a block,
    lines as the layout pass makes them from its words (scripts joined). A word belongs to the smallest block that
    holds it. A block wholly on one side of the page's gutter (``pdf_columns.py``) is that column's (a paragraph
    runs on across a column break)."""
    words = page.extract_words()
    numbers = line_numbers(words)
    words = [w for w in words if id(w) not in numbers]
    boxes = list(page.boxes)
    gutter = gutter_of(words, page.width)
    if gutter and not two_columns(boxes, gutter, page.width):
        gutter = None
    mid = gutter or page.width / 2
    groups: list[list[dict]] = [[] for _ in boxes]
    loose: list[dict] = []  # words in no block: read by the rules, after the page's blocks
    by_area = sorted(range(len(boxes)), key=lambda k: (boxes[k][2] - boxes[k][0]) * (boxes[k][3] - boxes[k][1]))
    for w in words:  # a block inside another (a paragraph in a list) is the more precise: the smallest holds it
        x, y = (w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2
        k = next(
            (
                k
                for k in by_area
                if boxes[k][0] - 2 <= x <= boxes[k][2] + 2 and boxes[k][1] - 2 <= y <= boxes[k][3] + 2
            ),
            None,
        )
        (loose if k is None else groups[k]).append(w)
    if gutter:
        boxes, groups = split_at_gutter(boxes, groups, gutter)
    lines: list[Line] = []
    items = [
        (b[1], b[3], _side(b, mid), statistics.median(w["size"] for w in ws) if ws else 0.0, _text(ws))
        for b, ws in zip(boxes, groups, strict=True)
    ]
    for k in _reading_order(boxes, mid, under_both_columns(items)):
        kind = boxes[k][4]
        if not groups[k]:
            continue
        column = _side(boxes[k], mid)
        words, cap = _drop_capital(groups[k])
        got = rule_lines(_Words(words, page.width, page.height), n)[0]
        beside = [ln for ln in got if cap and ln.x0 >= cap["x1"] - 1 and ln.bottom >= cap["top"]]
        if beside:  # the paragraph's first line: its first word lacks the capital
            first = min(beside, key=lambda ln: ln.top)
            first.text = cap["text"] + first.text
            first.words[0] = {**first.words[0], "text": cap["text"] + first.words[0]["text"]}
        for ln in got:
            ln.kind, ln.box, ln.column = kind, 1000 * n + k, column
            lines.append(ln)
    _caption_notes(lines)
    if loose:
        lines += rule_lines(_Words(loose, page.width, page.height), n)[0]
    return lines, page.unmapped


def _caption_notes(lines: list[Line]) -> None:
    """A text block of one or two lines right under a caption, in the caption's size and at its line spacing, is
    the caption's note ("(A color version of this figure is available in the online journal.)"): it joins the
    caption's block."""
    blocks: dict[int, list[Line]] = {}
    for ln in lines:
        blocks.setdefault(ln.box, []).append(ln)
    captions = [b[-1] for b in blocks.values() if b[0].kind == "caption"]
    for block in blocks.values():
        first = block[0]
        if first.kind != "text" or len(block) > 2 or len(" ".join(ln.text for ln in block).split()) > 25:
            continue
        above = next(
            (
                c
                for c in captions
                if abs(c.size - first.size) < 0.3
                and 0 <= first.top - c.bottom < 0.8 * first.size
                and first.x0 < c.x0 + 0.9 * (max(w["x1"] for w in c.words) - c.x0)
                and max(w["x1"] for w in block[-1].words) > c.x0
            ),
            None,
        )
        for ln in block if above else ():
            ln.kind, ln.box = "caption", above.box


def _drop_capital(words: list[dict]) -> tuple[list[dict], dict | None]:
    """A block's words without its drop capital (a letter or two set two or more times the block's size, its
    paragraph's first letter), and that capital; else the words as they are and None."""
    if len(words) < 4:
        return words, None
    size = sorted(w["size"] for w in words)[len(words) // 2]
    cap = next((w for w in words if len(w["text"]) <= 2 and w["text"].isalpha() and w["size"] >= 2 * size), None)
    return ([w for w in words if w is not cap], cap) if cap else (words, None)


def _side(box: tuple, mid: float) -> int:
    return 1 if box[2] <= mid + 2 else 2 if box[0] >= mid - 2 else 0


def _text(words: list[dict]) -> str:
    return " ".join(w["text"] for w in sorted(words, key=lambda w: (round(w["top"]), w["x0"])))


def _reading_order(boxes: list[tuple], mid: float, cuts: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """The blocks' order as the rules read a page: full-width blocks, and the blocks in ``cuts`` (a reference
    list's heading set under both columns), cut it into bands, and in each band the left column's blocks come
    before the right column's, each top-down (the model's own order mixes columns)."""
    out: list[int] = []
    band: list[int] = []
    side = {k: _side(b, mid) for k, b in enumerate(boxes)}
    for k in _top_down(boxes):
        if side[k] == 0 or k in cuts:
            out += sorted(band, key=lambda j: (side[j], boxes[j][1]))
            band = []
        if side[k] == 0:
            out.append(k)
        else:
            band.append(k)
    return out + sorted(band, key=lambda j: (side[j], boxes[j][1]))


def _top_down(boxes: list[tuple]) -> list[int]:
    """The blocks' indexes top-down; of two pieces of one line (on one row within 3 pt, under 15 pt apart), the
    left one first: a title the model split in two boxes, the right one a hair higher. (Two columns' blocks so
    close are put left first too, as the bands of ``_reading_order`` read them anyway.)"""
    order = sorted(range(len(boxes)), key=lambda k: boxes[k][1])
    for i in range(len(order) - 1):
        a, b = boxes[order[i]], boxes[order[i + 1]]
        if abs(a[1] - b[1]) < 3 and b[2] <= a[0] + 1 and a[0] - b[2] < 15:
            order[i], order[i + 1] = order[i + 1], order[i]
    return order


class _Words:
    """Some of a page's words as a page of their own, for the layout pass."""

    def __init__(self, words: list[dict], width: float, height: float):
        self._words, self.width, self.height = words, width, height
        self.curves, self.rects, self.images = [], [], []

    def extract_words(self, **_) -> list[dict]:
        return self._words
