"""An HTML page's components: its tables (``<table>``) and figures (``<figure>``, or a publisher's figure
markup, ``div.figure`` with an image), read from the page before ``html_clean`` takes them out of the text, and
its displayed equations (a publisher's equation markup, ``<math display="block">``, MathJax's display scripts)
where the page gives them as MathML or TeX (not as an image); the text keeps its own copy of an equation.

trafilatura drops the private-use marks the other readers leave in their text (``components``), so a component
here says instead how the text refers to it (``mentioned_as``: "Table 2", "Fig. 2", from its label) and how the
paragraph before it begins (``follows``), and ``components.resolve`` finds both in the record's text."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.components import component, mentioned_as, unique_id
from sciqag_dataset.builders.ingest.html_rules import CAPTION_START, REF_CONTAINER
from sciqag_dataset.builders.ingest.normalize import CAPTION_LABEL, inline
from sciqag_dataset.builders.ingest.xml_common import equation_content, equation_label
from sciqag_dataset.builders.ingest.xml_tables import table_cells

# a publisher's own wrapper of one figure or table ("figure", "fig", "table-wrap", "tbl")
_WRAPPER = re.compile(r"(?:^|[\s_-])(?:fig(?:ure)?|table-wrap|figure-wrap|tbl|table-container)(?:$|[\s_-])", re.I)
_CAPTION_CLASS = re.compile(r"caption|title|label|legend", re.I)
_OUTSIDE = ("nav", "header", "footer", "aside", "form", "script", "style", "noscript", "template")
_IMAGE = ("img", "svg", "picture", "canvas", "object")
_FOLLOWS_WORDS = 6  # the start of the paragraph before a component, as the record's text has it


def html_components(tree) -> list[dict]:
    """The components of a page (its ``lxml.html`` tree, before anything is removed), in page order: those
    inside navigation, headers, footers, asides, forms and reference lists left out, a table of fewer than two
    cells (layout) too, a figure with neither an image nor a caption, and an equation given only as an image."""
    found: list[dict] = []
    taken: set[str] = set()
    roots: list = []
    for el in tree.iter():
        if not isinstance(el.tag, str) or any(r in roots for r in el.iterancestors()):
            continue
        equation = _is_equation(el)
        if not (equation or _is_root(el)):
            continue
        if any(a.tag in _OUTSIDE or REF_CONTAINER.search(_classes(a)) for a in el.iterancestors()):
            continue
        made = _equation(el, taken) if equation else _component(el, taken)
        if made:
            roots.append(el)
            found.append(made)
    return found


# a publisher's wrapper of one displayed equation (NLM's "disp-formula", Springer's, arXiv's LaTeXML)
# (LaTeXML sets a group of equations, align or eqnarray, as a table of ``ltx_equation`` rows: each row is one)
_EQUATION_CLASSES = {"disp-formula", "display-formula", "c-article-equation", "ltx_equation"}
_TYPESET = re.compile(r"^(?:MathJax|MJX|mjx)", re.I)  # what MathJax wrote beside the equation's own script
_EQUATION_NUMBER = re.compile(r"[(\[]?\s*([A-Z]?\d+(?:\.\d+)?[a-z]?)\s*[)\]]?")  # "(3)", "[3]", "3"
_NUMBER_CLASS = re.compile(r"label|number|tag", re.I)
_TEX_SCRIPT = re.compile(r"math/tex", re.I)


def _is_equation(el) -> bool:
    if el.tag == "math":
        return el.get("display") == "block" and not any(
            _TYPESET.match(c) for a in el.iterancestors() for c in (a.get("class") or "").split()
        )
    if el.tag == "script":
        kind = el.get("type") or ""
        return bool(_TEX_SCRIPT.search(kind)) and "mode=display" in kind
    return bool(_EQUATION_CLASSES & set((el.get("class") or "").split())) and el.tag != "a"


def _equation(root, taken: set[str]) -> dict | None:
    """A displayed equation: its TeX (a MathJax script, a TeX annotation, ``$$...$$`` text), else its MathML
    (markup, or MathML a page shows as code for MathJax); None where the page has only its image."""
    content, fmt = _equation_source(root)
    if not content:
        return None
    number = _equation_number(root, content)
    ids = [e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")]
    made = component(
        "equation",
        unique_id(ids[0] if ids else None, "equation", taken),
        label=equation_label(number) if number else "",
        content=content,
        content_format=fmt,
    )
    if number:
        made["mentioned_as"] = mentioned_as("equation", number)
    follows = _paragraph_before(root)
    if follows:
        made["follows"] = follows
    return made


def _equation_source(root) -> tuple[str, str]:
    for script in root.iter("script"):
        kind = script.get("type") or ""
        if _TEX_SCRIPT.search(kind) and (script.text or "").strip():
            return _tex(script.text), "latex"
        if "math/mml" in kind and (script.text or "").strip():
            return " ".join(script.text.split()), "mathml"
    maths = [root] if root.tag == "math" else list(root.iter("math"))
    if maths:  # a row set in cells ("a", "= b + c") has a formula per cell: the equation is all of them
        # LaTeXML and MathJax keep the TeX source in ``alttext``
        parts = [(_tex(m.get("alttext")), "latex") if m.get("alttext") else equation_content(m) for m in maths]
        fmt = parts[0][1] if len({f for _, f in parts}) == 1 else "text"
        return " ".join(c for c, _ in parts if c), fmt
    for code in root.iter("code"):  # MathML the page shows as text for MathJax to typeset
        text = (code.text_content() or "").strip()
        if re.match(r"<(?:mml:)?math\b", text):
            return " ".join(text.split()), "mathml"
    shown = " ".join((root.text_content() or "").split())
    tex = re.search(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]", shown)
    return (_tex(tex[1] or tex[2]), "latex") if tex else ("", "")


def _tex(text: str) -> str:
    return " ".join(text.split()).strip().strip("$").strip()


def _equation_number(root, content: str) -> str | None:
    """The equation's number: an element of the wrapper whose class says label, number or tag, else "(3)" at the
    end of its text, else a TeX ``\\tag{3}``."""
    for el in root.iter():
        if isinstance(el.tag, str) and el is not root and _NUMBER_CLASS.search(el.get("class") or ""):
            found = _EQUATION_NUMBER.fullmatch(_text(el))
            if found:
                return found[1]
    shown = re.sub(r"\s+", " ", "".join(t for t in _own_text(root))).strip()
    found = re.search(r"[(\[]\s*([A-Z]?\d+(?:\.\d+)?[a-z]?)\s*[)\]]$", shown)
    if found:
        return found[1]
    tag = re.search(r"\\tag\s*\{\s*([A-Z]?\d+(?:\.\d+)?[a-z]?)\s*\}", content)
    return tag[1] if tag else None


def _own_text(root):
    """The text of an equation's wrapper outside its math and scripts (where a number is printed)."""
    if root.tag in ("math", "script"):
        return
    yield root.text or ""
    for child in root:
        if isinstance(child.tag, str) and child.tag not in ("math", "script", "code", "annotation", "noscript"):
            yield from _own_text(child)
        yield child.tail or ""


def _is_root(el) -> bool:
    if el.tag == "table":
        return "ltx_eqn_table" not in (el.get("class") or "").split()  # LaTeXML's layout of equations
    if el.tag == "figure":
        return True
    if el.tag not in ("div", "section") or not _WRAPPER.search(_classes(el)):
        return False
    tables = sum(1 for _ in el.iter("table"))
    return tables <= 1 and not any(d.tag == "figure" or _WRAPPER.search(_classes(d)) for d in el.iterdescendants())


def _component(root, taken: set[str]) -> dict | None:
    table = root if root.tag == "table" else next(root.iter("table"), None)
    caption = _caption(root, table)
    label = CAPTION_LABEL.match(caption)
    if label:
        caption = caption[label.end() :].lstrip(" .:|")
        label = label[0]
    kind = "table" if table is not None else "figure"
    if not label and root.tag in ("table", "figure") and (caption or kind == "table"):
        outer = _outer_caption(root)  # the label (or the whole caption) in a publisher's wrapper around it
        if found := CAPTION_LABEL.match(outer):
            label, caption = found[0], caption or outer[found.end() :].lstrip(" .:|")
    ids = [e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")]
    if kind == "table":
        if any(True for _ in table.iterdescendants("table")):
            return None  # a layout table holding others
        rows, header = table_cells(table, _text)
        if sum(bool(c) for r in rows for c in r) < 2:
            return None
        if not label and (equation := _equation_row(root, rows, taken)):
            return equation
        made = component("table", unique_id(ids[0] if ids else None, kind, taken), cells=rows, header_rows=header)
    else:
        if not caption and next((d for d in root.iter(*_IMAGE)), None) is None:
            return None
        made = component("figure", unique_id(ids[0] if ids else None, kind, taken))
    made.update(label=label or "", caption=caption)
    number = re.search(r"S?\d+[a-z]?", label or "")
    if number:
        made["mentioned_as"] = mentioned_as(kind, number[0])
    follows = _paragraph_before(root)
    if follows:
        made["follows"] = follows
    return made


_BRACKETED_NUMBER = re.compile(r"\(\s*([A-Z]?\d+(?:\.\d+)?[a-z]?)\s*\)")


def _equation_row(root, rows: list[list[str]], taken: set[str]) -> dict | None:
    """A displayed equation set as a table of one row, the formula and its number "(3)" (RSC's pages): an
    equation whose content is the formula's text; None for any other table."""
    filled = [[c for c in row if c] for row in rows]
    filled = [row for row in filled if row]
    if len(filled) != 1 or len(filled[0]) != 2 or not (number := _BRACKETED_NUMBER.fullmatch(filled[0][1])):
        return None
    ids = [e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")]
    made = component(
        "equation",
        unique_id(ids[0] if ids else None, "equation", taken),
        label=equation_label(number[1]),
        content=filled[0][0],
        content_format="text",
    )
    made["mentioned_as"] = mentioned_as("equation", number[1])
    follows = _paragraph_before(root)
    if follows:
        made["follows"] = follows
    return made


def _caption(root, table) -> str:
    """A ``<caption>``, a ``<figcaption>``, the wrapper's caption or title elements, else a paragraph just
    before it that starts "Table 2." (how some publishers set a caption)."""
    if table is not None:
        own = next(table.iter("caption"), None)
        if own is not None and _text(own):
            return _text(own)
    parts = [
        _text(e)
        for e in root.iter()
        if isinstance(e.tag, str)
        and (e.tag == "figcaption" or _CAPTION_CLASS.search(_classes(e)))
        and not any(a.tag in ("figcaption", "table") or _CAPTION_CLASS.search(_classes(a)) for a in _up_to(e, root))
        and e is not root
    ]
    if any(parts):
        return " ".join(p for p in parts if p)
    before = root.getprevious()
    if before is not None and CAPTION_START.match(_text(before)):
        return _text(before)
    return ""


_LABEL_ALONE = re.compile(CAPTION_LABEL.pattern + r"\.?$", re.I)  # "Figure 3" in a header above the figure
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _outer_caption(root) -> str:
    """A caption that a wrapper up to three levels above ``root`` holds outside it ("Table 1 Amount of ..." in
    the publisher's caption element, or "Figure 3" alone in a header above the figure), where the wrapper holds
    no other table or figure and no heading; a paragraph's text or a link ("see Table 1") is never one."""
    inside = set(root.iter())
    wrapper = root
    for _ in range(3):
        wrapper = wrapper.getparent()
        if wrapper is None or wrapper.tag in ("body", "html", "article", "main", "section"):
            return ""
        others = [el for el in wrapper.iter() if el not in inside and isinstance(el.tag, str)]
        if any(el.tag in ("table", "figure", *_HEADINGS) for el in others) or any(
            _is_root(el) and next(el.iter("table", *_IMAGE), None) is not None for el in others
        ):
            return ""
        alone = ""
        for el in wrapper.iter():
            if el in inside or not isinstance(el.tag, str) or el.tag in ("p", "a"):
                continue
            if any(a.tag in ("p", "a") for a in _up_to(el, wrapper)):
                continue
            text = _text(el)
            captioned = el.tag == "figcaption" or _CAPTION_CLASS.search(_classes(el))
            if captioned and _LABEL_ALONE.match(text):  # "Table 1" in its own span: the caption goes on after it
                parent = el.getparent()
                more = _text(parent) if parent is not wrapper and parent not in root.iterancestors() else ""
                if more.startswith(text) and len(more) > len(text):
                    return f"{text} {more[len(text) :].lstrip(' .:|')}"
            if captioned and CAPTION_LABEL.match(text):
                return text
            if not alone and _LABEL_ALONE.match(text):
                alone = text
        if alone:
            return alone
    return ""


def _paragraph_before(root) -> str | None:
    """The first words of the paragraph the component stands after on the page."""
    el = root
    for _ in range(4):  # its own container, then the ones above it
        for sib in el.itersiblings(preceding=True):
            if not isinstance(sib.tag, str) or sib.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                continue
            paras = [p for p in sib.iter("p", "div", "span") if len(_text(p).split()) >= _FOLLOWS_WORDS]
            text = _text(paras[-1]) if paras else _text(sib)
            if len(text.split()) >= _FOLLOWS_WORDS and not CAPTION_START.match(text):
                return " ".join(text.split()[:_FOLLOWS_WORDS])
        el = el.getparent()
        if el is None or el.tag in ("body", "html"):
            return None
    return None


def _text(el) -> str:
    """An element's text as the reader writes it: a superscript ``^x`` (``cm^-2``), one line."""

    def walk(node) -> str:
        parts = [node.text or ""] if isinstance(node.tag, str) else []
        for child in node if isinstance(node.tag, str) else ():
            inner = walk(child)
            parts.append("^" + inner if child.tag == "sup" and inner.strip() else inner)
            parts.append(child.tail or "")
        return "".join(parts)

    return inline(walk(el))


def _up_to(el, root):
    up = el.getparent()
    while up is not None and up is not root:
        yield up
        up = up.getparent()


def _classes(el) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''}" if isinstance(el.tag, str) else ""
