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
    to the next heading or section of its level, else a ``<summary>`` of no ``<details>``, else a lead paragraph.
    A structured abstract keeps its parts' labels ("Background: ..."); an abstract set as bare text, beside a box
    of links, is its text."""
    found = next((el for el in tree.iter(*ABSTRACT_TAGS) if names_abstract(el) and el.tag != "summary"), None)
    head = None
    if found is None:
        head = next(
            (h for h in tree.iter(*HEADINGS[:4]) if inline(h.text_content()).lower() in ("abstract", "summary")), None
        )
    if found is None and head is None:
        found = next((el for el in tree.iter("summary") if names_abstract(el)), None)
    elements = [found] if found is not None else []
    if found is None and head is None:
        lead = _lead(tree)
        elements = [lead] if lead is not None else []
    if head is not None and head.getparent() is not None:
        siblings = list(head.getparent())
        after = siblings[siblings.index(head) + 1 :]
        level = int(head.tag[1])
        end = next((k for k, el in enumerate(after) if _opens_section(el, level)), len(after))
        # no heading beside it: its parent is its section (a structured abstract's parts sit deeper)
        elements = [head.getparent()] if end == len(after) else [head, *after[:end]]
    parts, label = [], ""
    for el in (d for e in elements for d in e.iter()):
        if not isinstance(el.tag, str) or el.tag not in BLOCK_TAGS or not is_leaf(el) and el.tag[0] != "h":
            continue  # paragraphs (not the spans inside them) and headings
        if el.tag[0] != "h" and _all_links(el):
            continue  # the paper's other versions ("PDF", "Preprint") beside its abstract
        text = inline(el.text_content())
        if el.tag in HEADINGS:
            label = "" if text.lower() in ("abstract", "summary") else text.rstrip(":")
        elif text:
            parts.append(f"{label}: {text}" if label else text)
            label = ""
    if not parts and found is not None and not is_leaf(found):
        parts = [_own_text(found)]
    text = " ".join(parts) or " ".join(inline(e.text_content()) for e in elements)
    if len(text.split()) < 10:
        return None
    for el in elements:
        drop(el)
    return re.sub(r"^(?:abstract|summary)\s*[:.]?\s*", "", text, flags=re.I)


def _opens_section(el, level: int) -> bool:
    """A heading (on a flat page the sections' may be lower than "Abstract"), or a section or ``div`` that opens
    with a heading of ``level`` or above ("<h1>Abstract</h1><p>...</p><div class="section level1"><h1>Introduction
    </h1>"); a structured abstract's parts sit in boxes under lower ones."""
    if not isinstance(el.tag, str):
        return False
    if el.tag in HEADINGS:
        return True
    first = next(el.iter(*HEADINGS), None) if el.tag in ("section", "article", "div") else None
    return first is not None and int(first.tag[1]) <= level


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
