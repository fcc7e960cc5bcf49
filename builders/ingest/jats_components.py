"""A JATS article's components: every ``table-wrap``, ``fig`` and ``disp-formula``, and the marks that say where
the prose mentions them (``<xref rid="T2">``) and where they stand (``components``)."""

from __future__ import annotations

from collections.abc import Callable

from sciqag_dataset.builders.ingest.components import mention_marks, place_marks, unique_id
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import float_component, local_name
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
    return float_component(
        el,
        kind,
        id_,
        text,
        word=_WORD.get(kind, ""),
        cells=lambda wrap: _cells(wrap, text),
        notes=("table-wrap-foot",),
    )


def _cells(wrap, text) -> tuple[list[list[str]], int]:
    """The rows of every ``table`` in a ``table-wrap`` (one table split in parts), the first one's header rows."""
    rows, header = [], 0
    for table in (t for t in wrap.iter() if local_name(t) == "table"):
        cells, heads = table_cells(table, lambda cell: inline(text(cell)))
        header = header if rows else heads
        rows += cells
    return rows, header
