"""Paragraphs of an article that the extractor (trafilatura) left out, found again on the page: those standing
beside the kept ones, in boxes of the kind that holds them, or making a short last section."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.html_rules import BACK_MATTER_HEADING
from sciqag_dataset.builders.ingest.html_tree import is_leaf
from sciqag_dataset.builders.ingest.normalize import inline, plain_words


def dropped_paragraphs(tree, sections: list[list[str]]) -> list[str]:
    """The article's paragraphs trafilatura left out: each a paragraph element (a ``p``, or a ``div`` holding no
    other block, as ACS sets them) of 25 words or more, not in the kept text, standing beside kept ones (its parent
    or the parent's parent holds one) in a parent of the same kind as theirs (tag and class: a related-articles or
    comments box differs) or in a subsection of such a parent, when they are a tenth or more of the words of the
    article's paragraphs, or when they make a short last section (``_last_section``); else none (what trafilatura
    judged the page's chrome stays out)."""
    kept = plain_words(" ".join(text for _, text in sections))
    paragraphs = [p for p in tree.iter("p", "div") if is_leaf(p) and len(p.text_content().split()) >= 25]
    found = {p: " ".join(plain_words(p.text_content()).split()[3:13]) in kept for p in paragraphs}
    near = {a for p, ok in found.items() if ok for a in (p.getparent(), p.getparent().getparent())}
    # a level higher for paragraphs under a heading of their own (a section beside the kept ones' sections)
    wide = near | {a.getparent() for a in near if a is not None and a.getparent() is not None}
    kinds = {_kind(p.getparent()) for p, ok in found.items() if ok}
    lost = [
        p
        for p, ok in found.items()
        if not ok and (_beside(p.getparent(), near, kinds) or _in_subsection(p, wide, kinds))
    ]
    total = sum(len(p.text_content().split()) for p in paragraphs if _kind(p.getparent()) in kinds)
    if sum(len(p.text_content().split()) for p in lost) < 0.1 * total:
        lost = _last_section(lost, {p.getparent() for p, ok in found.items() if ok})
    return [inline(p.text_content()) for p in lost]


def _beside(parent, near: set, kinds: set) -> bool:
    """A parent of the kind of the kept paragraphs' parents, that holds kept ones or stands beside them."""
    return bool({parent, parent.getparent()} & near) and _kind(parent) in kinds


def _in_subsection(p, near: set, kinds: set) -> bool:
    """``p`` is in a subsection (a ``div`` or ``section``, its heading above ``p``) of an element of the kind
    that holds kept paragraphs, one that stands beside them (F1000's sections, each a body element of its own
    with its subsections), or in such a section itself (R Markdown's "section level1" beside the kept
    paragraphs' "section level2"s); a box without a heading of its own (related articles, comments) is none."""
    sub = p.getparent()
    outer = sub.getparent()
    children = [c for c in sub if isinstance(c.tag, str)]
    heading = next((k for k, c in enumerate(children) if c.tag in ("h1", "h2", "h3", "h4", "h5")), None)
    return (
        outer is not None
        and sub.tag in ("div", "section")
        and heading is not None
        and heading < children.index(p)
        and (_beside(outer, near, kinds) or _beside(sub, near, kinds))
    )


def _last_section(lost: list, kept_sections: set) -> list:
    """The paragraphs of a short section left out after the kept ones: a section element beside kept sections
    under one parent and after the last of them, with a heading that is the paper's (not its back matter) and at
    most three paragraphs."""
    out = []
    for section in dict.fromkeys(p.getparent() for p in lost):
        parent = section.getparent()
        mine = [p for p in lost if p.getparent() is section]
        siblings = list(parent) if parent is not None else []
        kept_here = [siblings.index(s) for s in kept_sections if s.getparent() is parent]
        heading = next(section.iter("h2", "h3", "h4"), None)
        if (
            kept_here
            and len(mine) <= 3
            and siblings.index(section) > max(kept_here)
            and heading is not None
            and not BACK_MATTER_HEADING.match(inline(heading.text_content()))
        ):
            out += mine
    return out


def _kind(element) -> tuple[str, str]:
    """Tag and class, a section's depth aside (pandoc's "section level2", "level3")."""
    return element.tag, re.sub(r"\blevel\d\b", "level", element.get("class") or "")
