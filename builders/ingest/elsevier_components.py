"""An Elsevier full-text article's components: every ``ce:table``, ``ce:figure`` and displayed ``ce:formula``, and
the marks that say where the prose mentions them (``<ce:cross-ref refid="tbl2">``) and where they stand (a
``ce:float-anchor``, or the formula's own place): see ``components``."""

from __future__ import annotations

import re
from collections.abc import Callable

from sciqag_dataset.builders.ingest.components import component, mention_marks, place_marks, unique_id
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import equation_content, equation_label, local_name, ns_kind
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
    label = _child(el, "label")
    label = inline(text(label)) if label is not None else ""
    if kind == "equation":
        content, fmt = equation_content(el)
        return component(kind, id_, label=equation_label(label), content=content, content_format=fmt)
    if label and re.fullmatch(r"[A-Z]?\d+[a-z]?", label):  # a bare number: the word the journal's style adds
        label = f"{_WORD[kind]} {label}"
    caption = _child(el, "caption")
    caption = inline(text(caption)) if caption is not None else ""
    if kind == "figure":
        return component(kind, id_, label=label, caption=caption)
    rows, header = cals_cells(el, lambda cell: inline(text(cell)))
    made = component(kind, id_, label=label, caption=caption, cells=rows, header_rows=header)
    notes = [inline(text(f)) for f in el.iter() if local_name(f) in ("table-footnote", "legend")]
    notes = [n for n in notes if n]
    if notes:  # the table's footnotes explain its marks and abbreviations: they go with its content
        made["content"] = "\n\n".join(filter(None, [made["content"], *notes]))
        made["content_format"] = made["content_format"] or "text"
    return made


def _child(el, local: str):
    return next((c for c in el if local_name(c) == local), None)


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
