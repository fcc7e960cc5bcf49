"""A page's columns: where the gap between two columns stands (the page's middle, or off it where a journal sets a
margin column), a layout model's block that runs across both columns split at that gap, and a reference list set
under both columns with no full-width line above it."""

from __future__ import annotations

import statistics

import numpy as np

from sciqag_dataset.builders.ingest.pdf_line import REFERENCES

_COLUMN_KINDS = frozenset({"text", "list-item", "section-header"})  # the model's classes of a column's blocks


def gutter_of(words: list[dict], width: float) -> float | None:
    """The x of the gap between a page's two columns: within the middle two fifths of the page, the one stretch of
    points (gaps under 15 pt apart are one: a list's numbers stand in it) that under one word in a hundred cross,
    a fifth of the words on either side; the middle of its widest part that fewest cross. None for a page of one
    column, or of three (two such stretches). A page with a margin column (the Lancet's) has its gutter off the
    page's middle."""
    if len(words) < 40:
        return None
    x0 = np.array([w["x0"] for w in words])
    x1 = np.array([w["x1"] for w in words])
    xs = np.arange(0.3 * width, 0.7 * width, 1.0)
    crossing = ((x0[:, None] < xs) & (x1[:, None] > xs)).sum(0)
    left = (x1[:, None] <= xs).sum(0)
    right = (x0[:, None] >= xs).sum(0)
    gaps = []
    for a, b in _runs((crossing <= 0.01 * len(words)) & (left > 0.2 * len(words)) & (right > 0.2 * len(words))):
        if gaps and a - gaps[-1][1] < 15:
            gaps[-1] = (gaps[-1][0], b)
        else:
            gaps.append((a, b))
    if len(gaps) != 1:
        return None
    a, b = gaps[0]
    fewest = crossing[a : b + 1] == crossing[a : b + 1].min()
    c, d = max(_runs(fewest), key=lambda r: r[1] - r[0])
    return float((xs[a + c] + xs[a + d]) / 2)


def two_columns(boxes: list[tuple], gutter: float, width: float) -> bool:
    """Whether the model's text blocks on either side of ``gutter`` start in one column there: the left edges of
    those wider than a fifth of the page within a seventh of it of each other (three columns have more; a margin
    column's notes are narrower)."""
    text = [b for b in boxes if b[4] in _COLUMN_KINDS and not b[0] < gutter < b[2] and b[2] - b[0] > width / 5]
    for side in ([b[0] for b in text if b[2] <= gutter], [b[0] for b in text if b[0] >= gutter]):
        if side and max(side) - min(side) > width / 7:
            return False
    return True


def _runs(flags) -> list[tuple[int, int]]:
    """(first, last) index of each run of true flags."""
    runs, start = [], None
    for k, good in enumerate([*flags, False]):
        if good and start is None:
            start = k
        elif not good and start is not None:
            runs.append((start, k - 1))
            start = None
    return runs


def split_at_gutter(boxes: list[tuple], groups: list[list[dict]], gutter: float):
    """A text or list block across the gutter whose words lie on either side of it, in two rows or more on each
    (two columns' paragraphs read as one block), split in two, each side a block of its own where its words are.
    A table or picture across the gutter stays whole."""
    out_boxes, out_groups = [], []
    for box, ws in zip(boxes, groups, strict=True):
        left = [w for w in ws if w["x1"] <= gutter]
        right = [w for w in ws if w["x0"] >= gutter]
        rows = [len({round(w["bottom"]) for w in part}) for part in (left, right)]
        prose = box[4] in ("text", "list-item")
        if prose and box[0] < gutter < box[2] and len(left) + len(right) == len(ws) and min(rows) > 1:
            out_boxes += [
                (
                    min(w["x0"] for w in part),
                    min(w["top"] for w in part),
                    max(w["x1"] for w in part),
                    max(w["bottom"] for w in part),
                    box[4],
                )
                for part in (left, right)
            ]
            out_groups += [left, right]
        else:
            out_boxes.append(box)
            out_groups.append(ws)
    return out_boxes, out_groups


def under_both_columns(items: list[tuple[float, float, int, float, str]]) -> set[int]:
    """Of a page's lines or blocks as (top, bottom, column, size, text), those that head a reference list set under
    both columns with no full-width line above it: a references heading in one column, the other column blank
    just above it and set smaller below it than the page above it (its entries). The columns above are read
    before the list (a last page's closing sections beside the heading's column)."""
    cuts = set()
    for k, (top, _, side, size, text) in enumerate(items):
        if side == 0 or not REFERENCES.match(text.strip()):
            continue
        other = [it for it in items if it[2] == 3 - side and it[3]]
        above = [it[3] for it in items if it[2] and it[3] and it[1] <= top]
        below = [it[3] for it in other if it[0] >= top]
        blank = not any(it[0] < top and it[1] > top - 1.5 * size for it in other)
        if blank and above and below and statistics.median(below) < 0.95 * statistics.median(above):
            cuts.add(k)
    return cuts
