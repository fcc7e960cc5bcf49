"""An Elsevier full-text article's components: every ``ce:table``, ``ce:figure`` and displayed ``ce:formula``, and
the marks that say where the prose mentions them (``<ce:cross-ref refid="tbl2">``) and where they stand (a
``ce:float-anchor``, or the formula's own place): see ``components``."""

from __future__ import annotations

from collections.abc import Callable

from sciqag_dataset.builders.ingest.components import mention_marks, place_marks, unique_id
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import float_component, local_name, ns_kind
from sciqag_dataset.builders.ingest.xml_tables import cals_cells

KIND = {"table": "table", "figure": "figure", "formula": "equation"}
_WORD = {"table": "Table", "figure": "Fig."}
# supplementary files, boxed asides and a graphical abstract: not the paper's own floats
_SKIPPED_IN = ("e-component", "textbox", "abstract")
# where a cross-reference is not the prose's (the text leaves these out)
_NOT_PROSE = ("table", "figure", "caption", "table-footnote", "legend", "footnote", "bibliography", "e-component")


def elsevier_components(root, text: Callable[[object], str]) -> tuple[list[dict], Callable[[object], tuple[str, str]]]:
    """(the components of ``root`` in document order, ``around(el)``: the marks to put around an element's text,
    for ``xml_common.xml_text``). ``text(el)``: an element's text, citations out (captions and cells). A formula
    is a component where it is displayed (inside ``ce:display``); inline math stays the prose's."""
    found: list[dict] = []
    index: dict[object, int] = {}
    by_id: dict[str, int] = {}
    taken: set[str] = set()
    mentioned: set[str] = set()  # the ids a cross-reference in the prose names
    for el in root.iter():
        if local_name(el) in ("cross-ref", "cross-refs") and not _inside(el, _NOT_PROSE) and not _aside(el):
            mentioned.update((el.get("refid") or "").split())
        kind = KIND.get(local_name(el))
        if kind is None or ns_kind(el) != "ce" or _inside(el, _SKIPPED_IN):
            continue
        if kind == "equation" and local_name(el.getparent()) != "display":
            continue
        index[el] = len(found)
        if el.get("id"):
            by_id.setdefault(el.get("id"), len(found))
        found.append(_component(el, kind, unique_id(el.get("id"), kind, taken), text))

    def around(el) -> tuple[str, str]:
        if el in index:
            return place_marks(index[el])
        local = local_name(el)
        if local == "float-anchor" and el.get("refid") in by_id and el.get("refid") not in mentioned:
            # an anchor stands inside a paragraph: a float the text mentions goes after the paragraph of its
            # first mention instead (``components.resolve``), as a typesetter places it
            return place_marks(by_id[el.get("refid")])
        if local == "display":  # a float set in the text, where a formula would be
            inner = next((index[c] for c in el if c in index and local_name(c) != "formula"), None)
            return place_marks(inner) if inner is not None else ("", "")
        if local in ("cross-ref", "cross-refs"):
            named = [by_id[r] for r in (el.get("refid") or "").split() if r in by_id]
            return mention_marks(list(dict.fromkeys(named)))
        return "", ""

    return found, around


def _component(el, kind: str, id_: str, text) -> dict:
    return float_component(
        el,
        kind,
        id_,
        text,
        word=_WORD.get(kind, ""),
        cells=lambda table: cals_cells(table, lambda cell: inline(text(cell))),
        notes=("table-footnote", "legend"),
    )


def _aside(el) -> bool:
    """Inside a graphical abstract, highlights or a text box (the text leaves them out)."""
    return any(
        local_name(a) == "textbox" or (local_name(a) == "abstract" and a.get("class") not in (None, "author"))
        for a in el.iterancestors()
    )


def _inside(el, locals_: tuple[str, ...]) -> bool:
    up = el.getparent()
    while up is not None:
        if local_name(up) in locals_:
            return True
        up = up.getparent()
    return False
