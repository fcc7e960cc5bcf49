"""A PDF's components: its tables, figures and displayed equations, from the captions the reader leaves out of the
text and, where a layout model read the pages, its table and formula blocks.

A caption labelled "Table 2" or "Figure 1" ("Fig. 1", "Scheme 1") is a component of that kind; a table's cells are
the words of the model's table block nearest its caption on the same page, a row per baseline, split into cells at
gaps wider than a word space (the rules alone, as pdfplumber's backend reads, give the caption without cells). A
formula block is an equation, labelled by the number printed beside it ("(3)"); its content is the block's text
(MuPDF's reading of the math, not LaTeX). The PDF's text carries no marks, so each component says how the prose
refers to it (``mentioned_as``) and ``components.resolve`` finds those mentions in the record's text."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.components import component, mentioned_as, unique_id
from sciqag_dataset.builders.ingest.normalize import CAPTION_LABEL
from sciqag_dataset.builders.ingest.pdf_line import Block, Line

_LABEL = re.compile(r"([A-Za-z]+)\.?\s*(S?\d+[a-z]?)", re.I)  # a caption label's word and number ("Fig. 1A")
# an equation's number, a word of its own: "(3)", "(12b)" (the block's text runs in MuPDF's order, not the page's)
_EQUATION_NUMBER = re.compile(r"(?:^|\s)\((\d{1,3}[a-z]?)\)(?=\s|$)")


def pdf_components(lines: list[Line], captions: list[Block]) -> list[dict]:
    """The components of a paper from its lines (all of them, with the layout model's classes where it read the
    pages) and the caption blocks the rules found among its text blocks."""
    model = [Block(box) for box in _boxes(ln for ln in lines if ln.kind == "caption")]
    captions = sorted([*model, *captions], key=lambda b: (b.lines[0].page, b.lines[0].column, b.lines[0].top))
    found: list[dict] = []
    taken: set[str] = set()
    labels: set[str] = set()
    tables = _boxes(ln for ln in lines if ln.kind == "table")
    for block in captions:
        text = " ".join(block.text.split())  # a word broken at a line end still marked ("-\\x00"): pdf.py joins it
        m = CAPTION_LABEL.match(text)
        if not m or m[0].lower() in labels:
            continue  # a caption continued on the next page, or a figure's label inside its own caption
        labels.add(m[0].lower())
        word, number = _LABEL.match(m[0]).groups()
        kind = "table" if word.lower().startswith("tab") else "figure"
        cells = _cells(_nearest(block.lines[0], tables)) if kind == "table" else []
        made = component(kind, unique_id(None, kind, taken), cells=cells, header_rows=1 if len(cells) > 1 else 0)
        made.update(label=m[0], caption=text[m.end() :].lstrip(" .:|—–-"))
        made["mentioned_as"] = mentioned_as("scheme" if word.lower().startswith("sch") else kind, number)
        found.append(made)
    for box in _boxes(ln for ln in lines if ln.kind == "formula"):
        text = " ".join(ln.text for ln in box)
        number = _EQUATION_NUMBER.search(text)
        made = component(
            "equation",
            unique_id(None, "equation", taken),
            content=" ".join((text[: number.start()] + text[number.end() :]).split()) if number else text,
            content_format="text",
        )
        if number:
            made["label"] = f"Eq. ({number[1]})"
            made["mentioned_as"] = mentioned_as("equation", number[1])
        found.append(made)
    return found


def _boxes(lines) -> list[list[Line]]:
    """Lines grouped by the layout model's block, in reading order."""
    groups: dict[int, list[Line]] = {}
    for ln in lines:
        groups.setdefault(ln.box, []).append(ln)
    return [sorted(g, key=lambda ln: ln.top) for g in groups.values()]


def _nearest(caption: Line, tables: list[list[Line]]) -> list[Line]:
    """The table block of the caption's page whose top or bottom is nearest the caption (above or below it), taken
    from ``tables``."""
    here = [t for t in tables if t[0].page == caption.page]
    if not here:
        return []
    nearest = min(here, key=lambda t: min(abs(t[0].top - caption.bottom), abs(caption.top - t[-1].bottom)))
    tables.remove(nearest)  # one table to a caption
    return nearest


def _cells(table: list[Line]) -> list[list[str]]:
    """A table block's rows: its words by baseline, top-down (a row the line pass split at a page's gutter is one
    row again), each row split into cells where the gap between two words is wider than a word space."""
    rows: dict[int, list[dict]] = {}
    for w in (w for ln in table for w in ln.words):
        bottom = round(w["bottom"])
        near = next((b for b in (bottom - 1, bottom + 1, bottom - 2, bottom + 2) if b in rows), bottom)
        rows.setdefault(near, []).append(w)
    out = []
    for _, words in sorted(rows.items()):
        words.sort(key=lambda w: w["x0"])
        cells, cell = [], [words[0]["text"]]
        for a, b in zip(words, words[1:]):
            if b["x0"] - a["x1"] > 0.8 * b.get("size", 10):
                cells.append(" ".join(cell))
                cell = []
            cell.append(b["text"])
        out.append([*cells, " ".join(cell)])
    return out
