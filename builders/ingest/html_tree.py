"""Small helpers over an lxml tree of an HTML page, shared by the cleaning and the abstract passes."""

from __future__ import annotations

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


BLOCK_TAGS = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "section",
    "article",
    "blockquote",
    "dd",
    "dl",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "main",
    "body",
}


def is_leaf(el) -> bool:
    """No block element inside it: a paragraph, not a box of them."""
    return not any(isinstance(d.tag, str) and d.tag in BLOCK_TAGS for d in el.iterdescendants())


def classes(el) -> str:
    """The element's classes and id, one string (the rules' patterns search both)."""
    return f"{el.get('class') or ''} {el.get('id') or ''}"


def drop(el) -> None:
    """Remove an element and keep its tail text."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail or ""
    prev = el.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail
    parent.remove(el)
