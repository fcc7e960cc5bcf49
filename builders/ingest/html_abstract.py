"""The abstract of an HTML page, taken out of it so that it is read once: the element a class or id names (or a
``<summary>`` of no ``<details>``), else what a heading "Abstract" opens, else a lead paragraph."""

from __future__ import annotations

import copy
import re

from sciqag_dataset.builders.ingest.html_rules import ABSTRACT, FIRST_PARAGRAPH, LEAD, NOT_ABSTRACT
from sciqag_dataset.builders.ingest.html_tree import BLOCK_TAGS, HEADINGS, classes, drop, is_leaf
from sciqag_dataset.builders.ingest.normalize import inline

ABSTRACT_TAGS = ("div", "section", "p", "blockquote", "summary")  # the elements that may be the abstract


def names_abstract(el) -> bool:
    """The page names the element its abstract (by class or id), or sets it as a ``<summary>`` of no
    ``<details>`` (a template's abstract); and it holds more than a heading."""
    named = ABSTRACT.search(classes(el)) and not NOT_ABSTRACT.search(classes(el))
    summary = el.tag == "summary" and el.getparent() is not None and el.getparent().tag != "details"
    return bool(named or summary) and len(el.text_content().split()) >= 10


def take_abstract(tree) -> str | None:
    """The abstract's paragraphs, taken out of the page (so it is not read twice): the element a class or id
    names, else what a heading "Abstract" opens: its own section, or, on a flat page, the elements after it up
    to the next heading. A structured abstract keeps its parts' labels ("Background: ...")."""
    found = next((el for el in tree.iter(*ABSTRACT_TAGS) if names_abstract(el)), None)
    elements = [found] if found is not None else []
    head = (
        None
        if found is not None
        else next(
            (h for h in tree.iter(*HEADINGS[:4]) if inline(h.text_content()).lower() in ("abstract", "summary")),
            None,
        )
    )
    if found is None and head is None:
        lead = _lead(tree)
        elements = [lead] if lead is not None else []
    if head is not None and head.getparent() is not None:
        siblings = list(head.getparent())
        after = siblings[siblings.index(head) + 1 :]
        # up to the next heading, or the next section (an element holding one: "<h1>Abstract</h1><p>...</p>
        # <section><h1>Introduction</h1>")
        end = next((k for k, el in enumerate(after) if isinstance(el.tag, str) and _has_heading(el)), len(after))
        # no heading beside it: its parent is its section (a structured abstract's parts sit deeper)
        elements = [head.getparent()] if end == len(after) else [head, *after[:end]]
    own = _own_text(found) if found is not None and not is_leaf(found) else ""
    parts, label = [own] if len(own.split()) >= 10 else [], ""
    for el in (d for e in elements for d in e.iter()):
        if not isinstance(el.tag, str) or el.tag not in BLOCK_TAGS or not is_leaf(el) and el.tag[0] != "h":
            continue  # paragraphs (not the spans inside them) and headings
        if el.tag[0] != "h" and _all_links(el):
            continue  # the paper's other versions ("PDF", "Preprint") beside its abstract
        text = inline(el.text_content())
        if el.tag in ("h2", "h3", "h4", "h5"):
            label = "" if text.lower() in ("abstract", "summary") else text.rstrip(":")
        elif text:
            parts.append(f"{label}: {text}" if label else text)
            label = ""
    text = " ".join(parts) or " ".join(inline(e.text_content()) for e in elements)
    if len(text.split()) < 10:
        return None
    for el in elements:
        drop(el)
    return re.sub(r"^(?:abstract|summary)\s*[:.]?\s*", "", text, flags=re.I)


def _has_heading(el) -> bool:
    return el.tag in HEADINGS or el.tag in ("section", "article") and next(el.iter(*HEADINGS), None) is not None


def _own_text(el) -> str:
    """The element's text outside its blocks (an abstract set as bare text, its links to versions beside it)."""
    bare = copy.deepcopy(el)
    for block in [d for d in bare.iterdescendants() if isinstance(d.tag, str) and d.tag in BLOCK_TAGS]:
        if block.getparent() is not None:
            drop(block)
    return inline(bare.text_content()).lstrip(":.;,–— ")  # "<h2>Abstract</h2><b>:</b> text" (MDPI)


def _all_links(el) -> bool:
    words = len(el.text_content().split())
    return words > 0 and sum(len(a.text_content().split()) for a in el.iter("a")) == words


def _lead(tree):
    """The element the page names as its article's first paragraph, wherever the page's other headings stand; else
    a lead paragraph ("standfirst") before the first section heading (one below it leads a section, not the
    article)."""
    first = next((el for el in tree.iter("div", "p") if FIRST_PARAGRAPH.search(classes(el))), None)
    if first is not None and len(first.text_content().split()) >= 20:
        return first
    for el in tree.iter():
        if el.tag in ("h2", "h3"):
            return None
        if el.tag in ("p", "div", "section") and LEAD.search(classes(el)) and len(el.text_content().split()) >= 20:
            return el
    return None
