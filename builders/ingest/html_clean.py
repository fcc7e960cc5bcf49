"""What an HTML page holds besides the paper, taken out before extraction (lxml): the reference list (its
entries counted), figures, tables and captions, citation links and superscripts, site chrome, menus, notices,
hidden parts and forms; subscripts joined to their formula ("Ni12P5"), other superscripts written ``^x``. The
abstract is taken from its own element by ``html_abstract.py``. The patterns are ``html_rules.py``'s."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.html_abstract import ABSTRACT_TAGS, names_abstract
from sciqag_dataset.builders.ingest.html_rules import (
    ABOUT,
    CAPTION_START,
    CHROME,
    CITATION_LINK,
    DROP_TAGS,
    ENTRY_AUTHOR,
    FIGURE_LIKE,
    FRONT_HEADING_CLASS,
    HIDDEN,
    HIDDEN_CLASS,
    INLINE_NOTE,
    NAV_CLASS,
    NOTES_ROLE,
    NOTICE,
    REF_CONTAINER,
    REFERENCES_HEADING,
    TITLE_BLOCK,
)
from sciqag_dataset.builders.ingest.html_tree import HEADINGS, classes, drop, is_leaf
from sciqag_dataset.builders.ingest.normalize import CAPTION_LABEL, EMPTY_BRACKETS, YEAR, inline

_NOT_A_LIST = {"a", "sup", "span", "body", "html", "h1", "h2", "h3", "h4", "h5", "h6"}


def names_references(el) -> bool:
    """The page names the element its reference list: by class or id ("references", "ref-list", "bibliography";
    not a link, a span or the page itself, whose classes may name a site's category, nor the list's heading, an
    ``<h2 id="references">`` that the list follows), or by its role."""
    return el.get("role") == "doc-bibliography" or (
        bool(REF_CONTAINER.search(classes(el))) and el.tag not in _NOT_A_LIST
    )


def in_references(el) -> bool:
    """Inside the page's reference list: an element the page names so, or one under a heading "References"
    beside it, before the next heading (Manubot's ``<h2>References</h2><div id="refs">``)."""
    return any(names_references(a) or _under_references_heading(a) for a in el.iterancestors())


def _under_references_heading(el) -> bool:
    """The nearest heading before the element among its siblings is "References"."""
    heading = next((s for s in el.itersiblings(preceding=True) if isinstance(s.tag, str) and s.tag in HEADINGS), None)
    return heading is not None and _references_heading(heading)


def _references_heading(el) -> bool:
    return el.tag in HEADINGS[:4] and bool(REFERENCES_HEADING.match(el.text_content() or ""))


def remove_non_paper(tree) -> int:
    """Remove what is not the paper's prose; return the reference entries removed."""
    references = 0
    ref_ids = set()
    for a in list(tree.iter("a")):  # a heading's permalink (Sphinx's "¶", "#" or "§" elsewhere)
        if a.text_content().strip() in ("¶", "#", "§", "🔗") and any(h.tag in HEADINGS for h in a.iterancestors()):
            drop(a)
    for h in list(tree.iter(*HEADINGS)):  # pandoc's title block: <div id="header"><h2 class="author">
        parent = h.getparent()
        if FRONT_HEADING_CLASS.search(h.get("class") or "") and TITLE_BLOCK.search(classes(parent)):
            drop(h)
    for el in list(tree.iter()):
        if not isinstance(el.tag, str) or el.getparent() is None:
            continue
        if NOTES_ROLE.match(el.get("role") or "") or INLINE_NOTE.search(el.get("class") or ""):
            drop(el)
            continue
        if names_references(el):
            entries = el.findall(".//li") or [c for c in el if isinstance(c.tag, str)]
            references += len(entries)
            ref_ids |= {e.get("id") for e in el.iter() if isinstance(e.tag, str) and e.get("id")}
            drop(el)
    for head in [h for h in tree.iter("h2", "h3", "h4") if REFERENCES_HEADING.match(h.text_content() or "")]:
        while (
            head.getparent() is not None
            and head.getparent().tag in ("span", "div", "header")
            and inline(head.getparent().text_content()) == inline(head.text_content())
        ):
            head = head.getparent()  # <span><h2>References</h2></span><ol>...: the list follows the wrapper
        parent, seen = head.getparent(), False  # "References" and what follows it in its section
        if parent is None:
            continue
        for sib in list(parent):
            seen = seen or sib is head
            if seen:
                entries = sib.findall(".//li")
                references += len(entries)
                ref_ids |= {e.get("id") for e in sib.iter() if isinstance(e.tag, str) and e.get("id")}
                drop(sib)
    for sup in list(tree.iter("sup")):  # citation markers: links to the reference list
        links = sup.findall(".//a")
        targets = [(a.get("href") or "").lstrip("#") for a in links]
        rest = "".join(sup.itertext())
        for a in links:
            rest = rest.replace(a.text_content(), "", 1)
        rest = re.sub(r"[\s,–—\-\[\]()]", "", rest)
        if links and not rest and all(t in ref_ids or re.match(r"(?:ref|cit|bib|cr|b)\d", t, re.I) for t in targets):
            drop(sup)
    cited = set()  # the elements that held a citation link
    for a in list(tree.iter("a")):  # citation links in the text: "[12]", "(3–5)"
        to_ref = (a.get("href") or "").lstrip("#") in ref_ids or CITATION_LINK.search(
            f"{classes(a)} {a.get('onclick') or ''}"
        )
        if to_ref and re.fullmatch(r"[\[(]?\d+(?:\s*[–,-]\s*\d+)*[\])]?", (a.text_content() or "").strip()):
            cited.add(a.getparent())
            drop(a)
    for el in cited:  # "station [<a>3</a>] and": the brackets were the paragraph's text, and go too
        if el.text:
            el.text = EMPTY_BRACKETS.sub("", el.text)
        for child in el:
            if child.tail:
                child.tail = EMPTY_BRACKETS.sub("", child.tail)
        if el.tag == "cite" and not el.text_content().strip():  # LaTeXML's "basin <cite>[<a>1</a>]</cite>."
            _drop_with_space_before(el)
    references += _entry_lists(tree)
    _captions(tree)
    for el in list(tree.iter(*(tag for tag in DROP_TAGS if tag != "table"))):
        if el.getparent() is not None:
            drop(el)
    page_words = len(tree.text_content().split())  # without scripts and styles
    for el in list(tree.iter("table")):
        if el.getparent() is not None and not _lays_out_article(el, page_words):
            drop(el)
    page_words = len(tree.text_content().split())
    for el in list(tree.iter("div", "ul", "section", "span")):
        if (
            el.getparent() is not None
            and any(NAV_CLASS.match(t) for t in classes(el).split())
            and next(el.iter("article", "main"), None) is None
            and len(el.text_content().split()) < min(1000, 0.3 * page_words)
        ):  # never the article's container
            drop(el)
    for el in list(tree.iter("ul", "ol")):  # a jump menu to the page's own sections, repeated in each section
        links = [a for a in el.iter("a") if a.text_content().strip()]
        if (
            el.getparent() is not None
            and len(links) >= 3
            and all((a.get("href") or "").lower().startswith(("#", "javascript:")) for a in links)
            and sum(len(a.text_content().split()) for a in links) >= 0.9 * len(el.text_content().split())
        ):
            drop(el)
    for el in list(tree.iter("p", "div", "li")):
        text = inline(el.text_content()) if el.getparent() is not None and is_leaf(el) else ""
        if ABOUT.match(text) or NOTICE.search(text) and len(text.split()) < 80:
            drop(el)
    for el in list(tree.iter()):  # what the reader never sees (menus folded away), as Readability does
        if isinstance(el.tag, str) and el.getparent() is not None and _hidden(el):
            drop(el)
    for form in list(tree.iter("form")):  # a search box goes; an ASP.NET page wraps its whole body in a form
        if form.getparent() is not None and not any(True for _ in form.iter("p", "article", "main", "h2")):
            drop(form)
    abstracts = [el for el in tree.iter(*ABSTRACT_TAGS) if names_abstract(el)]
    for el in list(tree.iter("header", "footer")):
        inside = any(a.tag in ("article", "main") for a in el.iterancestors())
        if not inside and el.getparent() is not None:
            held = [a for a in abstracts if el in a.iterancestors()]
            if el.tag == "header" and held and len(held) == len(abstracts):  # the paper's own header
                el.addnext(held[0])  # (ScholarMarkdown's): its abstract stays, its title, authors and
            drop(el)  # affiliations go as a site's header does; a teaser beside the abstract goes too
    for el in list(tree.iter()):
        if (
            isinstance(el.tag, str)
            and el.getparent() is not None
            and el.tag in ("div", "section", "h3", "h4", "p")
            and FIGURE_LIKE.search(classes(el))
            and not _holds_article(el, page_words)  # a layout's cell named "article_content-table"
        ):
            drop(el)
    for el in list(tree.iter("a", "span", "div", "li")):
        if el.getparent() is not None and CHROME.match(inline(el.text_content())):
            drop(el)
    for span in list(tree.iter("span")):  # a paragraph set as a bare <span> between headings (RSC)
        parent = span.getparent()
        if (
            parent is not None
            and parent.tag in ("div", "section", "article", "main", "body")
            and len(span.text_content().split()) >= 15
            and is_leaf(span)
        ):
            span.tag = "p"
    for sub in list(tree.iter("sub")):  # Ni<sub>12</sub>P<sub>5</sub> -> Ni12P5, one word
        _inline(sub, "")
    for sup in list(tree.iter("sup")):  # cm<sup>-2</sup> -> cm^-2, as the XML readers write it
        _inline(sup, "^")
    for el in list(tree.iter("i", "b", "em", "strong", "u", "small", "font", "tt", "var")):
        if el.getparent() is not None and not any(isinstance(c.tag, str) for c in el):
            _inline(el, "", strip=False)  # plain text: trafilatura splits paragraphs at inline formatting
    return references


def _inline(el, prefix: str, strip: bool = True) -> None:
    inner = "".join(el.itertext())
    text = prefix + (inner.strip() if strip else inner) if inner.strip() else inner
    el.tail = text + (el.tail or "")
    drop(el)


def _hidden(el) -> bool:
    """Hidden from the reader: by its ``hidden`` or ``aria-hidden`` attribute, its style, or a class that hides
    (a class alone: only small things, a body revealed by a script is not one)."""
    return (
        el.get("hidden") is not None
        or el.get("aria-hidden") == "true"
        or bool(HIDDEN.search(el.get("style") or ""))
        or bool(HIDDEN_CLASS.search(el.get("class") or ""))
        and len(el.text_content().split()) < 300
    )


def _shown_text(el) -> str:
    """An element's text without what its hidden elements hold (a citation's pop-up with its reference entry)."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and not _hidden(child):
            parts.append(_shown_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _is_entry(text: str) -> bool:
    """A reference entry: a year and an author with initials, in an entry's length (a section's text holds both
    and is not one)."""
    return len(text.split()) <= 150 and bool(YEAR.search(text) and ENTRY_AUTHOR.search(text))


def _entry_lists(tree) -> int:
    """Reference lists under containers no rule names: a list (or a run of paragraphs) of three or more items,
    most of them reference entries (a year and an author with initials, in the text a reader sees). Returns the
    entries removed; a short heading left alone before the list goes with it."""
    removed = 0
    for el in list(tree.iter("ol", "ul", "div", "section")):
        if el.getparent() is None:
            continue
        items = [c for c in el if isinstance(c.tag, str) and c.tag in ("li", "p", "div")]
        if el.tag in ("div", "section") and any(isinstance(c.tag, str) and c.tag in ("ol", "ul") for c in el):
            continue  # its list is judged on its own
        if len(items) < 3 or sum(_is_entry(inline(_shown_text(i))) for i in items) < 0.6 * len(items):
            continue
        head = el.getprevious()
        parent = el.getparent()
        if head is not None and head.tag in ("h2", "h3", "h4") and len(inline(head.text_content()).split()) <= 4:
            if parent is not None and [c for c in parent if isinstance(c.tag, str)] == [head, el]:
                drop(head)
        removed += len(items)
        drop(el)
    return removed


def _drop_with_space_before(el) -> None:
    """Remove an element left empty, and the space before it where a mark of punctuation follows it."""
    if (el.tail or "")[:1] in (".", ",", ";", ":", ")"):
        prev, parent = el.getprevious(), el.getparent()
        if prev is not None:
            prev.tail = (prev.tail or "").rstrip()
        else:
            parent.text = (parent.text or "").rstrip()
    drop(el)


def _captions(tree) -> None:
    """Captions in a publisher's own figure markup: a paragraph that starts "Figure 2." / "Table 1 |", or with
    a label (not followed by a sentence's lower-case word) when an image or a table stands beside it (in its
    container or the one above); the label alone ("Fig. 1.") opening a box of its own beside the image's takes
    the next paragraph, the caption's words, along."""
    for el in list(tree.iter("p", "div", "span")):
        parent = el.getparent()
        if parent is None or not is_leaf(el):
            continue
        text = inline(el.text_content())
        label = CAPTION_LABEL.match(text)
        if not CAPTION_START.match(text) and not (label and not text[label.end() :].lstrip()[:1].islower()):
            continue  # "Figure 3d shows ...": a paragraph of the body that opens with a figure's mention
        near = [parent, parent.getparent()]
        beside = any(a is not None and next(a.iter("img", "table", "svg", "picture"), None) is not None for a in near)
        if not (CAPTION_START.match(text) or beside):
            continue
        after = el.getnext()
        if beside and _label_box(el, text) and after is not None and after.tag == "p" and is_leaf(after):
            drop(after)
        drop(el)


def _label_box(label, text: str) -> bool:
    """``label`` is a caption's label alone ("Fig. 1.") opening a small box of paragraphs without a heading, the
    image in a box beside it (not in its own): the caption's words are in the paragraph after it."""
    box, outer = label.getparent(), label.getparent().getparent()
    paragraphs = box.findall("p")
    return (
        CAPTION_LABEL.fullmatch(text.rstrip(" .:|"))
        and outer is not None
        and paragraphs[:1] == [label]
        and len(paragraphs) <= 4
        and not any(isinstance(c.tag, str) and c.tag in ("h2", "h3", "h4", "h5") for c in box)
        and next(box.iter("img", "svg", "picture"), None) is None
        and any(next(s.iter("img", "svg", "picture"), None) is not None for s in outer if s is not box)
    ) is True


def _lays_out_article(table, page_words: int) -> bool:
    """A table that lays out the page (an older site's frame), not a table of data: it holds a third of the
    page's words or more, and one of its cells three paragraphs of 25 words or more (a table of data with
    paragraphs in its cells has one or so in each)."""
    if len(table.text_content().split()) < 0.3 * page_words:
        return False
    return any(sum(len(p.text_content().split()) >= 25 for p in cell.iter("p")) >= 3 for cell in table.iter("td"))


def _holds_article(el, page_words: int) -> bool:
    """The element holds the article: a third of the page's words or more, under section headings."""
    return len(el.text_content().split()) >= 0.3 * page_words and next(el.iter("h2"), None) is not None
