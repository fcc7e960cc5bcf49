"""HTML: the article's main content by trafilatura (the extractor datatrove uses), with scholarly rules on top.

Before extraction (lxml): ``citation_*`` / ``dc.*`` meta tags give the metadata; the abstract is taken from its
own element (or ``citation_abstract``); the reference list (counted), figures, tables and captions, citation
superscripts and site chrome are removed; subscripts join their formula ("Ni12P5") and other superscripts are
written ``^x``. trafilatura then keeps the article's paragraphs, whatever their tags (``div`` paragraphs, a
first paragraph in a bare ``span``), and drops navigation by link density. Headings become sections. A page
with no article metadata and no article body (a search result, a journal's home page) is refused.
"""
from __future__ import annotations

import codecs
import copy
import re
from typing import Iterator

import lxml.etree
import lxml.html
import trafilatura

from .detect import decode
from .html_rules import (
    ABOUT,
    ABSTRACT,
    ARTICLE_LINK,
    CHROME,
    CITATION_LINK,
    DROP_TAGS,
    FIGURE_LIKE,
    HIDDEN,
    HIDDEN_CLASS,
    NAV_CLASS,
    NOT_ABSTRACT,
    NOT_PAPER_HEADING,
    NOTICE,
    NUMBERING,
    REF_CONTAINER,
    REFERENCES_HEADING,
)
from .text import IngestError, capitalised, inline, split_list


def read_html(page: str | bytes, warn) -> Iterator[dict]:
    """``page``: the file's bytes (lxml reads the page's own charset) or text."""
    if isinstance(page, bytes):  # the page's own charset, decoded here (lxml knows fewer names than Python)
        charset = _charset(page[:4096])
        page = page.decode(charset, "replace") if charset else decode(page, warn)  # none declared: UTF-8
    try:  # as UTF-8 bytes: an XHTML page declares its encoding, which lxml refuses on a str
        tree = lxml.html.document_fromstring(page.encode("utf-8", "surrogatepass"),
                                             parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (lxml.etree.ParserError, ValueError) as exc:
        raise IngestError(f"invalid HTML: {exc}") from None
    metas = _metas(tree)

    def meta(*keys):
        return next((metas[k][0] for k in keys if k in metas), None)

    h1 = next(iter(tree.iter("h1")), None)
    articles = list(tree.iter("article"))
    title = meta("citation_title", "dc.title", "og:title") or (inline(h1.text_content()) if h1 is not None else "") \
        or inline(tree.findtext(".//title"))
    references = _clean(tree)
    abstract = _abstract(tree) or meta("citation_abstract", "dc.description")
    sections = _sections(_extract(tree), title)
    container = _body_container(tree)
    if container is not None:  # trafilatura on the article's own container, unless that loses text
        inner = _sections(_extract(container), title)
        if sum(len(t.split()) for _, t in inner) >= 0.9 * sum(len(t.split()) for _, t in sections):
            sections = inner
    structured = _structure(tree, sections, title)
    if len(structured) > len(sections):  # trafilatura's text, in the page's own sections
        sections = structured
    sections = [sec for sec in sections if not NOT_PAPER_HEADING.match(sec[0])]
    if len(sections) > 1 and not sections[0][0]:  # the article's notes and authors, above its first paragraph
        paras = sections[0][1].split("\n\n")
        first = next((k for k, p in enumerate(paras) if len(p.split()) >= 40 and capitalised(p) < 0.6), len(paras))
        sections = ([["", "\n\n".join(paras[first:])]] if paras[first:] else []) + sections[1:]
    if abstract:
        sections = [["Abstract", inline(abstract)]] + [s for s in sections if s[0].lower() != "abstract"]
    words = sum(len(s[1].split()) for s in sections)
    paragraphs = [p for s in sections for p in s[1].split("\n\n") if p.strip()]
    links = [a for a in tree.iter("a") if ARTICLE_LINK.search(a.get("href") or "")]
    linked = sum(len(a.text_content().split()) for a in links)
    listing = len({a.get("href") for a in links}) >= 5 and linked > 0.3 * max(1, len(tree.text_content().split()))
    scholarly = any(k.startswith(("citation_", "dc.", "prism.")) for k in metas) or \
        (len(articles) == 1 and words >= 15)  # one <article>: a page of its own (a list has one per item)
    prose = words >= 150 and sum(len(p.split()) >= 20 for p in paragraphs) >= 2
    if not scholarly and (not prose or listing):
        raise IngestError("not an article page: no citation_/dc. metadata and no article body (a search result, "
                          "an index or a home page?)")
    if not prose:
        warn(f"little article text on the page ({words} words): a landing page with the full text elsewhere?")
    yield {"format": "html", "extractor": "html/trafilatura", "title": title, "sections": sections,
           "has_abstract": bool(abstract), "references_dropped": references,
           "metadata": {
               "doi": meta("citation_doi", "prism.doi", "dc.identifier"),
               "journal": meta("citation_journal_title", "prism.publicationname"),
               "authors": metas.get("citation_author") or metas.get("dc.creator") or [],
               "year": meta("citation_publication_date", "citation_date", "dc.date", "article:published_time"),
               "license": meta("dc.rights") or _link(tree, "license"),
               "url": _link(tree, "canonical") or meta("og:url", "citation_fulltext_html_url"),
           },
           "keywords": [k for v in metas.get("citation_keywords", []) + metas.get("keywords", [])
                        for k in split_list(v)]}


def _charset(head: bytes) -> str | None:
    """The charset a page declares in a meta tag, or in the XML declaration that opens an XHTML page (libxml2's
    HTML parser reads neither reliably), when Python knows it. An "encoding=" elsewhere (an SVG in a script)
    declares nothing."""
    m = re.search(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", head, re.I) or \
        re.match(rb"(?:\xef\xbb\xbf)?\s*<\?xml[^>]+encoding\s*=\s*[\"']([\w.:-]+)", head, re.I)
    if not m:
        return None
    try:
        return codecs.lookup(m[1].decode("ascii")).name
    except LookupError:
        return None


def _extract(el) -> str | None:
    page = lxml.html.tostring(el, encoding="unicode")
    if el.tag != "html":  # an element on its own: a page around it, which trafilatura reads as it reads pages
        page = f"<html><body>{page}</body></html>"
    return trafilatura.extract(page, output_format="xml",
                               include_tables=False, include_images=False, include_links=False,
                               include_comments=False, include_formatting=True, favor_recall=True)


def _body_container(tree):
    """The innermost element holding 90 % of the page's paragraph text: the article body, whatever the site
    calls it. trafilatura, given a whole page, sometimes keeps a few sections of a long article and drops the
    others; given this element it has only the article to read. None when that is the whole page."""
    words: dict = {}
    total = 0
    for el in tree.iter("p", "div"):
        if _leaf(el):
            n = len(el.text_content().split())
            if n >= 25:
                total += n
                for anc in el.iterancestors():
                    words[anc] = words.get(anc, 0) + n
    covering = [el for el, n in words.items() if n >= 0.9 * total and el.tag not in ("body", "html")]
    return max(covering, key=lambda el: sum(1 for _ in el.iterancestors()), default=None) if total else None


def _metas(tree) -> dict[str, list[str]]:
    metas: dict[str, list[str]] = {}
    for m in tree.iter("meta"):
        key = (m.get("name") or m.get("property") or "").strip().lower()
        if key and m.get("content"):
            metas.setdefault(key, []).append(m.get("content").strip())
    return metas


def _link(tree, rel: str) -> str | None:
    el = next((e for e in tree.iter("link") if rel in (e.get("rel") or "").split()), None)
    return el.get("href") if el is not None else None


def _classes(el) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''}"


def _drop(el) -> None:
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


def _clean(tree) -> int:
    """Remove what is not the paper's prose; return the reference entries removed."""
    references = 0
    ref_ids = set()
    for el in list(tree.iter()):
        if not isinstance(el.tag, str) or el.getparent() is None:
            continue
        if REF_CONTAINER.search(_classes(el)) and el.tag not in ("a", "sup", "span", "body", "html"):
            entries = el.findall(".//li") or [c for c in el if isinstance(c.tag, str)]
            references += len(entries)
            ref_ids |= {e.get("id") for e in el.iter() if isinstance(e.tag, str) and e.get("id")}
            _drop(el)
    for head in [h for h in tree.iter("h2", "h3", "h4") if REFERENCES_HEADING.match(h.text_content() or "")]:
        while head.getparent() is not None and head.getparent().tag in ("span", "div", "header") and \
                inline(head.getparent().text_content()) == inline(head.text_content()):
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
                _drop(sib)
    for sup in list(tree.iter("sup")):  # citation markers: links to the reference list
        links = sup.findall(".//a")
        targets = [(a.get("href") or "").lstrip("#") for a in links]
        rest = "".join(sup.itertext())
        for a in links:
            rest = rest.replace(a.text_content(), "", 1)
        rest = re.sub(r"[\s,–—\-\[\]()]", "", rest)
        if links and not rest and all(t in ref_ids or re.match(r"(?:ref|cit|bib|cr|b)\d", t, re.I) for t in targets):
            _drop(sup)
    for a in list(tree.iter("a")):  # citation links in the text: "[12]", "(3–5)"
        to_ref = (a.get("href") or "").lstrip("#") in ref_ids or CITATION_LINK.search(
            f"{_classes(a)} {a.get('onclick') or ''}")
        if to_ref and re.fullmatch(r"[\[(]?\d+(?:\s*[–,-]\s*\d+)*[\])]?", (a.text_content() or "").strip()):
            _drop(a)
    for el in list(tree.iter(*DROP_TAGS)):
        if el.getparent() is not None:
            _drop(el)
    page_words = len(tree.text_content().split())
    for el in list(tree.iter("div", "ul", "section", "span")):
        if el.getparent() is not None and any(NAV_CLASS.match(t) for t in _classes(el).split()) and \
                next(el.iter("article", "main"), None) is None and \
                len(el.text_content().split()) < min(1000, 0.3 * page_words):  # never the article's container
            _drop(el)
    for el in list(tree.iter("p", "div", "li")):
        text = inline(el.text_content()) if el.getparent() is not None and _leaf(el) else ""
        if ABOUT.match(text) or NOTICE.search(text) and len(text.split()) < 80:
            _drop(el)
    for el in list(tree.iter()):  # what the reader never sees (menus folded away), as Readability does
        if isinstance(el.tag, str) and el.getparent() is not None and (
                el.get("hidden") is not None or el.get("aria-hidden") == "true"
                or HIDDEN.search(el.get("style") or "")
                or HIDDEN_CLASS.search(el.get("class") or "") and len(el.text_content().split()) < 300):
            _drop(el)  # (a class alone: only small things, a body revealed by a script is not one)
    for form in list(tree.iter("form")):  # a search box goes; an ASP.NET page wraps its whole body in a form
        if form.getparent() is not None and not any(True for _ in form.iter("p", "article", "main", "h2")):
            _drop(form)
    for el in list(tree.iter("header", "footer")):
        inside = any(a.tag in ("article", "main") for a in el.iterancestors())
        if not inside and el.getparent() is not None:
            _drop(el)
    for el in list(tree.iter()):
        if isinstance(el.tag, str) and el.getparent() is not None and el.tag in ("div", "section", "h3", "h4", "p") \
                and FIGURE_LIKE.search(_classes(el)):
            _drop(el)
    for el in list(tree.iter("a", "span", "div", "li")):
        if el.getparent() is not None and CHROME.match(inline(el.text_content())):
            _drop(el)
    for span in list(tree.iter("span")):  # a paragraph set as a bare <span> between headings (RSC)
        parent = span.getparent()
        if parent is not None and parent.tag in ("div", "section", "article", "main", "body") and \
                len(span.text_content().split()) >= 15 and _leaf(span):
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
    _drop(el)


def _abstract(tree) -> str | None:
    """The abstract's paragraphs, taken out of the page (so it is not read twice): the element a class or id
    names, else what a heading "Abstract" opens: its own section, or, on a flat page, the elements after it up
    to the next heading. A structured abstract keeps its parts' labels ("Background: ...")."""
    found = next((el for el in tree.iter("div", "section", "p", "blockquote")
                  if ABSTRACT.search(_classes(el)) and not NOT_ABSTRACT.search(_classes(el))
                  and len(el.text_content().split()) >= 10), None)
    elements = [found] if found is not None else []
    head = None if found is not None else next(
        (h for h in tree.iter("h2", "h3", "h4") if inline(h.text_content()).lower() in ("abstract", "summary")), None)
    if head is not None and head.getparent() is not None:
        siblings = list(head.getparent())
        after = siblings[siblings.index(head) + 1:]
        end = next((k for k, el in enumerate(after) if el.tag in ("h1", "h2", "h3", "h4", "h5", "h6")), len(after))
        # no heading beside it: its parent is its section (a structured abstract's parts sit deeper)
        elements = [head.getparent()] if end == len(after) else [head, *after[:end]]
    parts, label = [], ""
    for el in (d for e in elements for d in e.iter()):
        if not isinstance(el.tag, str) or el.tag not in _BLOCK_TAGS or not _leaf(el) and el.tag[0] != "h":
            continue  # paragraphs (not the spans inside them) and headings
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
        _drop(el)
    return re.sub(r"^(?:abstract|summary)\s*[:.]?\s*", "", text, flags=re.I)


_BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "section", "article", "blockquote", "dd", "dl", "h1", "h2", "h3", "h4",
               "h5", "h6", "table", "main", "body"}


def _leaf(el) -> bool:
    return not any(isinstance(d.tag, str) and d.tag in _BLOCK_TAGS for d in el.iterdescendants())


def _structure(tree, sections: list[list[str]], title: str) -> list[list[str]]:
    """trafilatura's paragraphs under the page's own headings (h2-h4), where it dropped the headings:
    trafilatura decides what is the article's text, the page's markup how it is divided. Each paragraph goes
    under the last heading before the place it stands on the page; one not found there stays with the one
    before it, so nothing trafilatura kept is lost."""
    paragraphs = [p for _, text in sections for p in text.split("\n\n") if p.strip()]
    if not paragraphs:
        return []
    page = copy.deepcopy(tree)
    names = []
    for el in page.iter("h2", "h3", "h4"):
        heading = inline(el.text_content())
        if heading and not _same(heading, title) and not REFERENCES_HEADING.match(heading):
            for child in list(el):
                el.remove(child)
            el.text = f" \ue000{len(names)}\ue001 "  # where the heading stands in the page's text (private-use marks)
            names.append(NUMBERING.sub("", heading))
    text = inline(page.text_content())
    marks = [(m.start(), int(m[1])) for m in re.finditer("\ue000(\\d+)\ue001", text)]
    placed, pos = [], 0.0
    for k, para in enumerate(paragraphs):  # in the page's order; one not found right after the one before it
        key = " ".join(para.split()[:8])
        found = text.find(key, int(pos))
        found = found if found >= 0 else text.find(key)
        pos = found if found >= 0 else pos + 1e-6
        placed.append((pos, k, para))
    out: list[list] = [["", []]]
    for at, _, para in sorted(placed):
        before = [k for mark, k in marks if mark < at]
        heading = names[before[-1]] if before else ""
        if heading != out[-1][0]:
            out.append([heading, []])
        out[-1][1].append(para)
    return [[h, "\n\n".join(paras)] for h, paras in out if paras]


def _same(heading: str, title: str) -> bool:
    """The title repeated as a heading (marks and spacing aside: "Large-scale topologies*")."""
    return " ".join(re.findall(r"\w+", heading.lower())) == " ".join(re.findall(r"\w+", title.lower()))


def _sections(xml: str | None, title: str) -> list[list[str]]:
    if not xml:
        return []
    main = lxml.etree.fromstring(xml.encode()).find("main")
    for lb in (main.iter("lb") if main is not None else []):  # "one line<br>next line": two words, not one
        lb.tail = " " + (lb.tail or "")
    sections: list[list] = [["", []]]

    def walk(container) -> None:
        for el in container:
            text = inline("".join(el.itertext()))
            if el.tag == "head":
                if text and not _same(text, title) and not REFERENCES_HEADING.match(text):
                    sections.append([NUMBERING.sub("", text), []])
            elif el.tag in ("p", "list", "quote", "code", "item", "row", "cell", "hi", "lb", "ref"):
                if text and not CHROME.match(text):
                    sections[-1][1].append(text)
            else:  # a wrapper (div, section): its blocks, in order
                if inline(el.text):
                    sections[-1][1].append(inline(el.text))
                walk(el)
            tail = inline(el.tail)
            if tail and not CHROME.match(tail):  # text outside any paragraph: a first paragraph in a bare span
                sections[-1][1].append(tail)
    if main is not None:
        walk(main)
    return [[h, "\n\n".join(p for p in paras if p)] for h, paras in sections if paras]
