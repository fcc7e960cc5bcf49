"""A JATS article's components: every ``table-wrap``, ``fig`` and ``disp-formula``, and the marks that say where
the prose mentions them (``<xref rid="T2">``) and where they stand (``components``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sciqag_dataset.builders.ingest.components import component, mention_marks, place_marks, unique_id
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import equation_content, equation_label, local_name
from sciqag_dataset.builders.ingest.xml_tables import table_cells

KIND = {"table-wrap": "table", "fig": "figure", "disp-formula": "equation"}
_WORD = {"table": "Table", "figure": "Figure"}
_GROUPS = ("fig-group", "table-wrap-group", "disp-formula-group")


def jats_components(art, text: Callable[[object], str]) -> tuple[list[dict], Callable[[object], tuple[str, str]]]:
    """(the components of ``art`` in document order, ``around(el)``: the marks to put around an element's text,
    for ``xml_common.xml_text``). ``text(el)``: an element's text, citations out (captions and cells)."""
    found: list[dict] = []
    index: dict[object, int] = {}
    by_id: dict[str, list[int]] = {}  # an id -> the components it names (a fig-group's: each of its figs)
    taken: set[str] = set()
    groups = []
    for el in art.iter():
        local = local_name(el)
        if local in _GROUPS and el.get("id"):
            groups.append(el)
        kind = KIND.get(local)
        if kind is None:
            continue
        index[el] = len(found)
        if el.get("id"):
            by_id.setdefault(el.get("id"), [len(found)])
        found.append(_component(el, kind, unique_id(el.get("id"), kind, taken), text))
    for group in groups:
        by_id.setdefault(group.get("id"), [index[m] for m in group.iter() if m in index])

    def around(el) -> tuple[str, str]:
        if el in index:
            return place_marks(index[el])
        if local_name(el) == "xref":
            mentioned = [i for r in (el.get("rid") or "").split() for i in by_id.get(r, ())]
            return mention_marks(list(dict.fromkeys(mentioned)))
        return "", ""

    return found, around


def _component(el, kind: str, id_: str, text) -> dict:
    label = _child(el, "label")
    label = inline(text(label)) if label is not None else ""
    caption = _child(el, "caption")
    caption = inline(text(caption)) if caption is not None else ""
    if kind == "equation":
        content, fmt = equation_content(el)
        return component(kind, id_, label=equation_label(label), content=content, content_format=fmt)
    if label and re.fullmatch(r"[A-Z]?\d+[a-z]?", label):  # "2" printed after the word the style adds
        label = f"{_WORD[kind]} {label}"
    if kind == "figure":
        return component(kind, id_, label=label, caption=caption)
    rows, header = [], 0
    for table in (t for t in el.iter() if local_name(t) == "table"):
        cells, heads = table_cells(table, lambda cell: inline(text(cell)))
        header = header if rows else heads
        rows += cells
    made = component(kind, id_, label=label, caption=caption, cells=rows, header_rows=header)
    notes = [inline(text(f)) for f in el.iter() if local_name(f) == "table-wrap-foot"]
    notes = [n for n in notes if n]
    if notes:  # the table's footnotes explain its marks and abbreviations: they go with its content
        made["content"] = "\n\n".join(filter(None, [made["content"], *notes]))
        made["content_format"] = made["content_format"] or "text"
    return made


def _child(el, local: str):
    return next((c for c in el if local_name(c) == local), None)
