"""XML shared by the JATS and Elsevier readers: parsing, text of an element, citation markers."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from copy import deepcopy

from lxml import etree

from sciqag_dataset.builders.ingest.components import component
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.normalize import inline


def local_name(el) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def ns_kind(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    ns = tag[1:].split("}", 1)[0] if tag.startswith("{") else ""
    for key, kind in (
        ("elsevier.com/xml/common", "ce"),
        ("purl.org/dc/elements", "dc"),
        ("prismstandard.org", "prism"),
        ("purl.org/dc/terms", "dcterms"),
    ):
        if key in ns:
            return kind
    return ""


_XML_BLOCKS = {
    "p",
    "para",
    "simple-para",
    "list-item",
    "list",
    "disp-formula",
    "display",
    "title",
    "section-title",
    "label",
    "def-item",
    "disp-quote",
}


_CITE = "\x01"  # stands for a removed citation marker until drop_citations tidies around it
_CITES = re.compile(r"\s*[\[(]?\s*\x01(?:\s*[,;–-]?\s*\x01)*\s*[\])]?")


def xml_text(
    el, skip: Callable[[object], str | None], around: Callable[[object], tuple[str, str]] | None = None
) -> str:
    """Text of an element; ``skip(child)`` returns "drop" or "cite" to leave a child out (tails stay).
    Formulas become LaTeX (``$...$`` inline, ``$$...$$`` displayed, as a sentence of their own). ``around(child)``
    gives marks to put around a child's text, or where a dropped child stood (``components``)."""
    parts = [el.text or ""]
    for child in el:
        verdict = skip(child) if isinstance(child.tag, str) else "entity"
        local = local_name(child)
        before, after = around(child) if around and verdict != "entity" else ("", "")
        if verdict != "drop" and local in _FORMULAS:
            tex = formula_tex(child)
            shown = (f" {before}$${tex}$${after} " if _displayed(child) else f"{before}${tex}${after}") if tex else ""
            parts.append(shown or before + after)
        elif local in _SPACE:  # Elsevier's typeset spaces: "0.5<ce:hsp/>nm" is "0.5 nm"
            parts.append(" ")
        elif verdict == "entity":  # left unresolved (no DTD is loaded): &nbsp; -> U+00A0
            parts.append(html.unescape(child.text or ""))
        elif verdict == "cite":
            parts.append(_CITE)
        elif not verdict:
            sub = xml_text(child, skip, around)
            if local_name(child) == "sup" and sub.strip():
                sub = "^" + sub  # 10<sup>19</sup> -> 10^19, so numbers survive for numeric validation
            parts.append(f" {before}{sub}{after} " if local_name(child) in _XML_BLOCKS else before + sub + after)
        else:
            parts.append(before + after)
        parts.append(child.tail or "")
    return "".join(parts)


_FORMULAS = {"inline-formula", "disp-formula", "formula", "math"}
_SPACE = {"hsp", "vsp"}
_TEX_ANNOTATION = ("tex", "latex", "application/x-tex", "application/x-latex")


def _displayed(el) -> bool:
    parent = el.getparent()
    return (
        local_name(el) == "disp-formula"
        or (parent is not None and local_name(parent) == "display")
        or (local_name(el) == "math" and el.get("display") == "block")
    )


def formula_tex(el) -> str:
    """A formula as LaTeX: its ``tex-math`` or TeX annotation, else the MathML's ``alttext``, else the MathML
    written out as LaTeX-like text (``\\frac{a}{b}``, ``x^{2}``, ``E_{c}``)."""
    for node in el.iter():
        if not isinstance(node.tag, str):
            continue
        name = local_name(node)
        if name == "tex-math" or (name == "annotation" and (node.get("encoding") or "").lower() in _TEX_ANNOTATION):
            tex = (node.text or "").strip()
            tex = re.sub(r"^\\documentclass.*?\\begin\{document\}|\\end\{document\}$", "", tex, flags=re.S)
            return " ".join(tex.strip().strip("$").split())
    math = el if local_name(el) == "math" else next((n for n in el.iter() if local_name(n) == "math"), None)
    if math is None:  # a formula given as an image, or as plain text
        return " ".join("".join(t for t in el.itertext()).split())
    return " ".join((math.get("alttext") or _mathml(math)).split())


def _mathml(el) -> str:
    name = local_name(el)
    kids = [c for c in el if isinstance(c.tag, str) and local_name(c) not in ("annotation", "annotation-xml")]
    parts = [_mathml(c) for c in kids]
    if name in ("mi", "mn", "mo", "mtext", "ms"):
        return (el.text or "").strip()
    if name == "mspace":
        return " "
    if name == "semantics":
        return parts[0] if parts else ""
    if len(parts) >= 2 and name in ("mfrac", "msup", "msub", "mroot", "munder", "mover"):
        a, b = parts[0], parts[1]
        return {
            "mfrac": f"\\frac{{{a}}}{{{b}}}",
            "msup": f"{a}^{{{b}}}",
            "msub": f"{a}_{{{b}}}",
            "mroot": f"\\sqrt[{b}]{{{a}}}",
            "munder": f"{a}_{{{b}}}",
            "mover": f"{a}^{{{b}}}",
        }[name]
    if len(parts) >= 3 and name in ("msubsup", "munderover"):
        return f"{parts[0]}_{{{parts[1]}}}^{{{parts[2]}}}"
    if name == "msqrt":
        return f"\\sqrt{{{' '.join(parts)}}}"
    if name == "mfenced":
        return f"{el.get('open', '(')}{el.get('separators', ',').strip()[:1].join(parts)}{el.get('close', ')')}"
    if name == "mtable":
        return " \\\\ ".join(parts)
    if name == "mtr":
        return " & ".join(parts)
    return " ".join(p for p in parts if p)


def equation_content(el) -> tuple[str, str]:
    """An equation's LaTeX (``tex-math``, a TeX annotation), else its MathML as markup, else its text."""
    for node in el.iter():
        name = local_name(node)
        if name == "tex-math" or (name == "annotation" and (node.get("encoding") or "").lower() in _TEX_ANNOTATION):
            return formula_tex(el), "latex"
    math = next((n for n in el.iter() if local_name(n) == "math"), None)
    if math is not None:
        math = deepcopy(math)  # alone, with the namespaces it uses declared and no others
        etree.cleanup_namespaces(math)
        markup = etree.tostring(math, encoding="unicode", with_tail=False)
        return " ".join(markup.split()), "mathml"
    return formula_tex(el), "text"


def equation_label(label: str) -> str:
    """ "(3)" or "3" -> "Eq. (3)"; a label with its own word stays as printed."""
    bare = label.strip().strip("()").strip()
    return f"Eq. ({bare})" if bare and not re.search(r"[A-Za-z]{2,}", bare) else label


def float_component(el, kind: str, id_: str, text, *, word: str, cells, notes: tuple[str, ...]) -> dict:
    """A table, figure or displayed equation of an XML article as a component: its label (a bare "2" gets
    ``word``, what the journal's style prints before it), its caption, an equation's LaTeX or MathML, a table's
    cells (``cells(el)``: rows and header rows) with its footnotes (elements named in ``notes``) after them.
    ``text(el)``: an element's text, citations out."""
    label = next((c for c in el if local_name(c) == "label"), None)
    label = inline(text(label)) if label is not None else ""
    if kind == "equation":
        content, fmt = equation_content(el)
        return component(kind, id_, label=equation_label(label), content=content, content_format=fmt)
    if label and re.fullmatch(r"[A-Z]?\d+[a-z]?", label):
        label = f"{word} {label}"
    caption = next((c for c in el if local_name(c) == "caption"), None)
    caption = inline(text(caption)) if caption is not None else ""
    if kind == "figure":
        return component(kind, id_, label=label, caption=caption)
    rows, header = cells(el)
    made = component(kind, id_, label=label, caption=caption, cells=rows, header_rows=header)
    found = [n for n in (inline(text(f)) for f in el.iter() if local_name(f) in notes) if n]
    if found:  # the table's footnotes explain its marks and abbreviations: they go with its content
        made["content"] = "\n\n".join(filter(None, [made["content"], *found]))
        made["content_format"] = made["content_format"] or "text"
    return made


def drop_citations(text: str) -> str:
    """ "water [1], yet" -> "water, yet": the marker, its brackets and separators go."""
    return _CITES.sub("", text) if _CITE in text else text


def parse_xml(data: bytes, warn) -> tuple[object, str | None]:
    """(root, None), or (root, why part of the text may be missing) for XML read in recovery mode."""

    def parser(recover: bool):
        return etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            recover=recover,
            remove_comments=True,
            remove_pis=True,
            huge_tree=True,
        )

    try:
        return etree.fromstring(data, parser(False)), None
    except etree.XMLSyntaxError as exc:
        root = etree.fromstring(data, parser(True))
        if root is None or not len(root):
            raise IngestError(f"invalid XML: {exc}") from None
        reason = f"malformed XML read in recovery mode ({exc}); some text may be missing"
        warn(reason)
        return root, reason


def attr(el, local: str):
    """An attribute by local name (``xlink:href`` -> ``href``)."""
    return next((v for k, v in el.attrib.items() if k.rsplit("}", 1)[-1] == local), None)


def paragraphs(container, locals_: tuple[str, ...], text) -> str:
    """Direct children paragraphs, one per line pair (an XML paragraph is one paragraph)."""
    return "\n\n".join(inline(text(c)) for c in container if local_name(c) in locals_)
