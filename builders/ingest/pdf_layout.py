"""PDF layout (pdfplumber): a page's words become lines with their font size, weight and column, in reading
order; superscripts and subscripts cut off at a size change are joined back to their words (``pdf_scripts.py``);
glyphs without a Unicode map are counted, and kept as marks inside words (a ligature, for ``pdf_glyphs.py`` to
name) or left out; the labels of drawn figures are dropped; running headers and footers are found by their repetition
across pages."""

from __future__ import annotations

import difflib
import re
import statistics
from collections import Counter

from sciqag_dataset.builders.ingest.pdf_columns import under_both_columns
from sciqag_dataset.builders.ingest.pdf_glyphs import MARK, alone, mark
from sciqag_dataset.builders.ingest.pdf_line import Line
from sciqag_dataset.builders.ingest.pdf_scripts import join_scripts

BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi(?:um)?\b|-Medi|\.B$|,Bold|-B$", re.I)
GAP = 0.1  # a gap between glyphs wider than this share of their size ends a word
EDGE = 0.08  # the top and bottom share of a page where running headers and footers live


def page_lines(page, n: int) -> tuple[list[Line], int]:
    """The page's lines in reading order, and how many glyphs had no Unicode mapping (left out)."""
    # a tenth of the size: tightly justified text has word gaps under pdfplumber's default 3 pt tolerance, and
    # text set without space characters has only the gap (an eighth of an em and less)
    words = page.extract_words(
        x_tolerance=1.5,
        x_tolerance_ratio=GAP,
        extra_attrs=["size", "fontname"],
        keep_blank_chars=False,
        use_text_flow=False,
    )
    unmapped = getattr(page, "unmapped", 0)  # counted by the PDFium reader, which marks such glyphs itself
    for w in words:  # a font without a ToUnicode map: pdfminer prints "(cid:13)", which is no text at all; inside a
        # word it may be a ligature, kept as a mark for the paper's words to name (pdf_glyphs.py)
        w["text"], k = _UNMAPPED.subn(lambda m, f=w["fontname"]: mark(f, int(m[1])), w["text"])
        unmapped += k
        if alone(w["text"]):
            w["text"] = MARK.sub("", w["text"])
    words = join_scripts([w for w in words if w["text"] and w.get("upright", True)])  # not rotated (arXiv's)
    numbers = line_numbers(words)
    words = [w for w in words if id(w) not in numbers]
    if not words:
        return [], unmapped
    mid = page.width / 2
    # two columns: plenty of words on either side of the middle, and few that cross it
    two = (
        sum(w["x1"] <= mid for w in words) > 0.2 * len(words)
        and sum(w["x0"] >= mid for w in words) > 0.2 * len(words)
        and sum(w["x0"] < mid < w["x1"] for w in words) < 0.05 * len(words)
    )
    rows: dict[int, list[dict]] = {}
    for w in words:
        bottom = round(w["bottom"])
        near = next((b for b in (bottom - 1, bottom + 1, bottom - 2) if b in rows), None)  # a point apart: one row
        if near is None:  # a run in a second font (an italic name in a roman title) sits by its own ascent and
            # descent: the nearest row within a sixth of the size whose words are in another font
            near = next(
                (
                    b
                    for b in sorted(rows, key=lambda b: abs(b - w["bottom"]))
                    if abs(b - w["bottom"]) <= w["size"] / 6
                    and all(v.get("fontname") != w.get("fontname") for v in rows[b])
                ),
                bottom,
            )
        rows.setdefault(near, []).append(w)
    lines = []
    for ws in rows.values():
        ws.sort(key=lambda w: w["x0"])
        parts = [(0, ws)]
        if two:  # a row splits at the gutter: a gap wider than a word space across the middle
            cut = next(
                (
                    k
                    for k in range(1, len(ws))
                    if ws[k - 1]["x1"] <= mid + 2
                    and ws[k]["x0"] >= mid - 2
                    and ws[k]["x0"] - ws[k - 1]["x1"] > max(6.0, ws[k]["size"] * 0.9)
                ),
                None,
            )
            if cut is not None:
                parts = [(1, ws[:cut]), (2, ws[cut:])]
            elif ws[-1]["x1"] <= mid + 2:
                parts = [(1, ws)]
            elif ws[0]["x0"] >= mid - 2:
                parts = [(2, ws)]
        for column, part in parts:
            lines.append(
                Line(
                    " ".join(w["text"] for w in part),
                    statistics.median(w["size"] for w in part),
                    sum(bool(BOLD.search(w["fontname"])) for w in part) > len(part) / 2,
                    min(w["top"] for w in part),
                    max(w["bottom"] for w in part),
                    part[0]["x0"],
                    n,
                    column,
                    part,
                )
            )
    # the labels, axes and legends of a drawn figure are not the paper's sentences; a long line in a box is
    figures = _figure_cells(page)
    lines = [
        ln
        for ln in lines
        if len(ln.words) > 12
        or (int((ln.x0 + ln.words[-1]["x1"]) / 2 // _CELL), int((ln.top + ln.bottom) / 2 // _CELL)) not in figures
    ]
    return _reading_order(lines, page.height), unmapped


def article_info_box(lines: list[Line]) -> list[Line]:
    """A front page's "article info | abstract" box (Elsevier's): a header row naming both, the article's history
    and keywords in a narrow left column, the abstract on the right. Read as rows, the two columns' lines run into
    each other; here the box's lines are split at the abstract's left edge, the article info (dates, keywords) left
    out, and the abstract's lines kept under an "Abstract" heading, for the rules to read (no model class: a model
    may call the box a table). The box is the header's model block, or the rows under the header up to a line with
    a word across that edge or a gap of two lines."""
    head = next((ln for ln in lines if _INFO_ABSTRACT.fullmatch("".join(ln.text.split()))), None)
    if head is None:
        return lines
    k, letters = len(head.words), ""  # the header's last words, whose letters spell "abstract"
    while k > 0 and len(letters) < len("abstract"):
        k -= 1
        letters = head.words[k]["text"] + letters
    if letters.lower() != "abstract":
        return lines
    edge = head.words[k]["x0"] - 2
    out: list[Line] = []
    last = None  # the box's last row so far, while in it
    for ln in lines:
        if ln is head:
            out.append(Line("Abstract", ln.size, True, ln.top, ln.bottom, edge + 2, ln.page, 0, head.words[k:]))
            last = ln
            continue
        if last is not None and (
            ln.box != head.box
            if head.box >= 0
            else any(w["x0"] < edge < w["x1"] for w in ln.words) or ln.top - last.bottom > 2 * ln.size
        ):
            last = None
        if last is None:
            out.append(ln)
            continue
        last = ln
        right = [w for w in ln.words if w["x0"] >= edge]
        if right and not _RIGHTS.search(ln.text):  # the box's copyright line: not the abstract's
            text = " ".join(w["text"] for w in right)
            size = statistics.median(w["size"] for w in right)
            out.append(Line(text, size, ln.bold, ln.top, ln.bottom, right[0]["x0"], ln.page, 0, right))
    return out


_RIGHTS = re.compile(r"©|\ball rights reserved\b", re.I)
_INFO_ABSTRACT = re.compile(r"articleinfo(?:rmation)?abstract", re.I)  # the header row alone, spaced or not


def line_numbers(words: list[dict]) -> set[int]:
    """The ``id``s of the words that number the lines in a margin (a manuscript's, a preprint's): five or more
    numbers aligned in a column left of the text's left edge (where all but a twentieth of its words start) or
    right of all of it, counting up top-down."""
    numbers = [w for w in words if _NUMBER.match(w["text"])]
    if len(numbers) < 5:
        return set()
    text = sorted(w["x0"] for w in words if not _NUMBER.match(w["text"]))
    if not text:
        return set()
    left, right = text[len(text) // 20], max(w["x1"] for w in words if not _NUMBER.match(w["text"]))
    out: set[int] = set()
    for edge, beside in (("x1", lambda w: w["x1"] < left - 2), ("x0", lambda w: w["x0"] > right + 2)):
        aligned: dict[int, list[dict]] = {}
        for w in filter(beside, numbers):
            aligned.setdefault(round(w[edge] / 2), []).append(w)  # within about a point
        for col in aligned.values():
            col.sort(key=lambda w: w["top"])
            values = [int(w["text"]) for w in col]
            if len(col) >= 5 and sum(b > a for a, b in zip(values, values[1:])) >= 0.8 * (len(col) - 1):
                out |= {id(w) for w in col}
    return out


_NUMBER = re.compile(r"\d{1,4}$")
_CELL = 8.0  # points: the grid figures are found on
_UNMAPPED = re.compile(r"\(cid:(\d+)\)")


def _figure_cells(page) -> set[tuple[int, int]]:
    """The grid cells of the page's figures: images, and clusters of drawn shapes (curves, filled boxes; not
    rules or underlines, which tables and links have). A cluster of a few shapes is a frame or a box around
    text, not a figure; one that covers most of the page is a background."""
    area = page.width * page.height
    shapes = [
        o
        for o in (*page.curves, *page.rects)
        if o["x1"] - o["x0"] > 1.5
        and o["bottom"] - o["top"] > 1.5
        and (o["x1"] - o["x0"]) * (o["bottom"] - o["top"]) < 0.5 * area
    ]
    images = [
        o
        for o in page.images
        if o["x1"] - o["x0"] > 4
        and o["bottom"] - o["top"] > 4  # not rules drawn
        and (o["x1"] - o["x0"]) * (o["bottom"] - o["top"]) < 0.4 * area
    ]  # not a scan under an OCR layer
    marked: set[tuple[int, int]] = set()
    first_cells = []  # one cell of each shape: which region it is in
    for o in (*shapes, *images):
        cells = [
            (x, y)
            for x in range(int(max(o["x0"], 0) // _CELL), int(o["x1"] // _CELL) + 1)
            for y in range(int(max(o["top"], 0) // _CELL), int(o["bottom"] // _CELL) + 1)
        ]
        marked.update(cells)
        first_cells.append(cells[0] if cells else None)
    region_of: dict[tuple[int, int], int] = {}
    regions: list[list[tuple[int, int]]] = []
    for start in marked:  # connected regions of marked cells
        if start in region_of:
            continue
        region_of[start] = len(regions)
        region, stack = [], [start]
        while stack:
            c = stack.pop()
            region.append(c)
            for d in ((c[0] + 1, c[1]), (c[0] - 1, c[1]), (c[0], c[1] + 1), (c[0], c[1] - 1)):
                if d in marked and d not in region_of:
                    region_of[d] = len(regions)
                    stack.append(d)
        regions.append(region)
    members = Counter(region_of[c] for c in first_cells if c is not None)
    with_image = {region_of[c] for c in first_cells[len(shapes) :] if c is not None}
    figures: set[tuple[int, int]] = set()
    for k, region in enumerate(regions):
        size = len(region) * _CELL * _CELL
        if k in with_image and size > 0.005 * area or members[k] >= 6 and size > 0.01 * area:
            figures.update(region)
    return figures


def _reading_order(lines: list[Line], height: float) -> list[Line]:
    """Full-width lines cut the page into bands; in each band the left column comes before the right. A reference
    list set under both columns starts a band of its own (``under_both_columns``)."""
    lines.sort(key=lambda ln: ln.top)
    cuts = under_both_columns([(ln.top, ln.bottom, ln.column, ln.size, ln.text) for ln in lines])
    out, band = [], []
    for k, ln in enumerate(lines):
        if ln.column == 0 or k in cuts:
            out += sorted(band, key=lambda b: (b.column, b.top))
            band = []
        if ln.column == 0:
            out.append(ln)
        else:
            band.append(ln)
    return out + sorted(band, key=lambda b: (b.column, b.top))


def running_furniture(pages: list[list[Line]], heights: dict[int, float] | None = None) -> set[tuple[int, float]]:
    """Lines near the top or bottom edge whose text (digits aside) repeats on many pages: running heads, feet. And
    the same citation line printed elsewhere on a page, as it is in the first page's front matter ("New Phytologist
    (2016) 210: 196-207" by the keywords): word for word a running foot, with its numbers."""
    if len(pages) < 2:
        return set()
    edge = {}  # (page, top) -> (text with digits masked, size): a running head keeps its size on every page
    for lines in pages:
        if not lines:
            continue
        lo, hi = min(ln.top for ln in lines), max(ln.bottom for ln in lines)
        span = max(hi - lo, 1)
        for ln in lines:
            if ln.top - lo < EDGE * span or hi - ln.bottom < EDGE * span:
                edge[(ln.page, ln.top)] = (re.sub(r"\d+", "#", ln.text.lower()).strip(), round(ln.size))
    # the pages each text is on, counting near copies (an OCR'd running head is misread a little on every page);
    # only at the same size: a journal's head repeats the title's first words small, and the title, set large on
    # page 1, is not furniture
    letters = {k: re.sub(r"[^a-z]", "", k[0]) for k in set(edge.values())}
    pages_of: dict[tuple[str, int], set[int]] = {}
    for (page, _), k in edge.items():
        pages_of.setdefault(k, set()).add(page)
    on = {k: set(p) for k, p in pages_of.items()}
    keys = sorted((k for k in pages_of if len(letters[k]) >= 8), key=lambda k: len(letters[k]))
    for i, a in enumerate(keys):  # near copies have near lengths: a window, not every pair (a long thesis)
        for b in keys[i + 1 : i + 41]:
            if len(letters[b]) > 1.2 * len(letters[a]):
                break
            if a[1] == b[1] and _near(letters[a], letters[b]):
                on[a] |= pages_of[b]
                on[b] |= pages_of[a]
    # a quarter of the pages: odd and even pages often carry different heads (the title, the authors)
    need = max(2, int(0.25 * len(pages)))
    numbers = re.compile(r"(?:page\s*)?#(?:\s*of\s*#)?")
    found = {pos for pos, k in edge.items() if len(on[k]) >= need or numbers.fullmatch(k[0])}
    lines = [ln for page in pages for ln in page]
    cited = {  # a citation line's numbers, a year, a volume, pages ("h2oGPT", "COVID-19" are none), at its size
        (ln.text.strip().lower(), round(ln.size))
        for ln in lines
        if (ln.page, ln.top) in found and len(re.findall(r"(?<![\w.-])\d+(?![\w.-])", ln.text)) >= 2
    }
    return found | {(ln.page, ln.top) for ln in lines if (ln.text.strip().lower(), round(ln.size)) in cited}


def _near(a: str, b: str) -> bool:
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return m.real_quick_ratio() >= 0.85 and m.quick_ratio() >= 0.85 and m.ratio() >= 0.85
