"""HTML: the article's main content by trafilatura (the extractor datatrove uses), with scholarly rules on top.

Before extraction (lxml): ``citation_*`` / ``dc.*`` meta tags give the metadata; ``html_clean.py`` takes the
abstract from its own element (else ``citation_abstract`` is used) and removes the reference list (counted),
figures, tables and captions (read first as components: ``html_components.py``), citation superscripts and site
chrome; subscripts join their formula ("Ni12P5") and other superscripts are written ``^x``. trafilatura then keeps
the article's paragraphs, whatever their tags (``div`` paragraphs, a first paragraph in a bare ``span``), and drops
navigation by link density; the article's paragraphs it left out are found again (``html_restore.py``). Headings
become sections. A page without a DOI meta tag gives the DOI it shows as its paper's (``html_doi.py``). A page with
no article metadata and no article body (a search result, a journal's home page) is refused."""

from __future__ import annotations

import codecs
import copy
import re
from collections.abc import Iterator

import lxml.etree
import lxml.html
import trafilatura

from sciqag_dataset.builders.ingest.decoding import decode
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.html_abstract import take_abstract
from sciqag_dataset.builders.ingest.html_clean import remove_non_paper
from sciqag_dataset.builders.ingest.html_components import html_components
from sciqag_dataset.builders.ingest.html_doi import DOI, shown_doi
from sciqag_dataset.builders.ingest.html_restore import dropped_paragraphs
from sciqag_dataset.builders.ingest.html_rules import (
    ARTICLE_LINK,
    CHROME,
    INLINE_NOTE,
    NOT_PAPER_HEADING,
    NUMBERING,
    REFERENCES_HEADING,
    SECTION_HEADING,
)
from sciqag_dataset.builders.ingest.html_tree import is_leaf
from sciqag_dataset.builders.ingest.normalize import capitalised, inline, plain_words, split_list
from sciqag_dataset.builders.ingest.registry import RawPaper, Source


def read(source: Source) -> Iterator[RawPaper]:
    yield read_html(source.data(), source.warn)  # the page's own charset (a Latin-1 page keeps its ° and ±)


def read_html(page: str | bytes, warn) -> RawPaper:
    """``page``: the file's bytes (lxml reads the page's own charset) or text."""
    if isinstance(page, bytes):  # the page's own charset, decoded here (lxml knows fewer names than Python)
        charset = _charset(page[:4096])
        page = page.decode(charset, "replace") if charset else decode(page, warn)  # none declared: UTF-8
    try:  # as UTF-8 bytes: an XHTML page declares its encoding, which lxml refuses on a str
        tree = lxml.html.document_fromstring(
            page.encode("utf-8", "surrogatepass"), parser=lxml.html.HTMLParser(encoding="utf-8")
        )
    except (lxml.etree.ParserError, ValueError) as exc:
        raise IngestError(f"invalid HTML: {exc}") from None
    metas = _metas(tree)

    def meta(*keys):
        return next((metas[k][0] for k in keys if k in metas), None)

    h1s = [h for h in tree.iter("h1") if h.text_content().strip()]  # not an empty one (a logo's)
    h1 = h1s[0] if h1s else None
    for note in [n for n in h1.iter() if INLINE_NOTE.search(n.get("class") or "")] if h1 is not None else ():
        note.drop_tree()  # a note on the title ("\thanks"), set inside it
    for br in h1.iter("br") if h1 is not None else ():
        br.tail = " " + (br.tail or "")  # a title's line break is a space between its words
    articles = list(tree.iter("article"))
    heading = re.sub(r"\s*[*∗†‡§¶]+$", "", inline(h1.text_content())) if h1 is not None else ""  # its footnote mark
    # the <title> element: RASH's is "title -- subtitle", and a "subtitle" naming an address (the version of
    # record's) is a note, no part of the title
    page_title = inline(tree.findtext(".//title"))
    before, _, note = page_title.rpartition(" -- ")
    noted = DOI.search(note) if before else None
    page_title = before if noted or before and "://" in note else page_title
    # a section's heading is no title ("Abstract", "References"): the title is elsewhere; nor is the first of
    # three <h1>s or more that a <title> of a few words, naming no site ("Blog | 6 min read"), does not name
    # (pandoc's pages set their sections as <h1>s)
    sections_h1 = (
        len(h1s) > 2
        and len(page_title.split()) >= 4
        and not _SITE_IN_TITLE.search(page_title)
        and plain_words(heading) not in plain_words(page_title)
    )
    if SECTION_HEADING.fullmatch(heading) or REFERENCES_HEADING.match(heading) or sections_h1:
        heading = ""
    title = (  # a site's own "title" meta tag is often its name or a slogan: after the page's heading
        _text_of(meta("citation_title", "dc.title", "og:title")) or heading or _text_of(meta("title")) or page_title
    )
    if heading and title != heading and "".join(title.split()) == "".join(heading.split()):
        title = heading  # the metadata spaced what the heading sets as a subscript ("TiO 2" for TiO<sub>2</sub>)
    doi = next(  # a DOI meta value, else the version of record <title> names, else the DOI the page shows
        (v for k in ("citation_doi", "prism.doi", "dc.identifier") for v in metas.get(k, []) if DOI.search(v)),
        None,
    ) or (noted[1] if noted else shown_doi(tree))
    components = html_components(tree)  # tables and figures, before they are taken out of the text
    references = remove_non_paper(tree)
    abstract = take_abstract(tree) or meta("citation_abstract", "dc.description")
    links = [a for a in tree.iter("a") if ARTICLE_LINK.search(a.get("href") or "")]  # a listing's, before
    linked = sum(len(a.text_content().split()) for a in links)  # the prose's links become text
    _unwrap_prose_links(tree)
    sections = _sections(_extract(tree), title)
    container = _body_container(tree)
    if container is not None:  # trafilatura on the article's own container, unless that loses text
        inner = _sections(_extract(container), title)
        if sum(len(t.split()) for _, t in inner) >= 0.9 * sum(len(t.split()) for _, t in sections):
            sections = inner
    dropped = dropped_paragraphs(tree, sections)
    if dropped:  # placed on the page by _structure, or else kept at the end
        sections = [*sections, ["", "\n\n".join(dropped)]]
    structured = _structure(tree, sections, title)
    if len(structured) > len(sections):  # trafilatura's text, in the page's own sections
        sections = structured
    sections = [sec for sec in sections if not NOT_PAPER_HEADING.match(sec[0])]
    if len(sections) > 1 and not sections[0][0]:  # the article's notes and authors, above its first paragraph
        paras = sections[0][1].split("\n\n")
        first = next((k for k, p in enumerate(paras) if len(p.split()) >= 40 and capitalised(p) < 0.6), len(paras))
        sections = ([["", "\n\n".join(paras[first:])]] if paras[first:] else []) + sections[1:]
    if abstract:  # the abstract's own text; paragraphs the extractor set under its heading that are not the
        # abstract's (an introduction with no heading of its own) stay, where they stood
        told = plain_words(abstract)
        rest = [
            [heading, "\n\n".join(p for p in text.split("\n\n") if not _same_text(plain_words(p), told))]
            if heading.lower() == "abstract"
            else [heading, text]
            for heading, text in sections
        ]
        rest = [["" if h.lower() == "abstract" else h, t] for h, t in rest if t.strip()]
        sections = [["Abstract", inline(abstract)], *rest]
    words = sum(len(s[1].split()) for s in sections)
    paragraphs = [p for s in sections for p in s[1].split("\n\n") if p.strip()]
    listing = len({a.get("href") for a in links}) >= 5 and linked > 0.3 * max(1, len(tree.text_content().split()))
    scholarly = any(k.startswith(("citation_", "dc.", "prism.")) for k in metas) or (
        len(articles) == 1 and words >= 15
    )  # one <article>: a page of its own (a list has one per item)
    prose = words >= 150 and sum(len(p.split()) >= 20 for p in paragraphs) >= 2
    # an article's body beside lists of links (most read, related): paragraphs no search result's snippet has
    body = words >= 500 and sum(len(p.split()) >= 40 for p in paragraphs) >= 5
    if not scholarly and (not prose or listing and not body):
        raise IngestError(
            "not an article page: no citation_/dc. metadata and no article body (a search result, "
            "an index or a home page?)"
        )
    if re.search(
        r"mediawiki|wiki\b|encyclop", " ".join(metas.get("generator", []) + metas.get("og:site_name", [])), re.I
    ):
        warn("a wiki or encyclopedia page, not a scholarly article: read, but check that it belongs in the set")
    if not prose:
        warn(f"little article text on the page ({words} words): a landing page with the full text elsewhere?")
    return {
        "format": "html",
        "extractor": "html/trafilatura",
        "title": title,
        "sections": sections,
        "components": components,
        "has_abstract": bool(abstract),
        "references_dropped": references,
        "metadata": {
            "doi": doi,
            "journal": meta("citation_journal_title", "prism.publicationname"),
            # the generators' pages (pandoc, Quarto) name their authors and date in plain meta tags
            "authors": next(
                (metas[k] for k in ("citation_author", "dc.creator", "dcterms.creator", "author") if k in metas), []
            ),
            "year": meta(
                "citation_publication_date", "citation_date", "dc.date", "article:published_time", "dcterms.date"
            ),
            "license": meta("dc.rights") or _link(tree, "license"),
            "url": _link(tree, "canonical") or meta("og:url", "citation_fulltext_html_url"),
        },
        "keywords": [k for v in metas.get("citation_keywords", []) + metas.get("keywords", []) for k in split_list(v)],
    }


def _charset(head: bytes) -> str | None:
    """The charset a page declares in a meta tag, or in the XML declaration that opens an XHTML page (libxml2's
    HTML parser reads neither reliably), when Python knows it. An "encoding=" elsewhere (an SVG in a script)
    declares nothing."""
    m = re.search(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", head, re.I) or re.match(
        rb"(?:\xef\xbb\xbf)?\s*<\?xml[^>]+encoding\s*=\s*[\"']([\w.:-]+)", head, re.I
    )
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
    return trafilatura.extract(
        page,
        output_format="xml",
        include_tables=False,
        include_images=False,
        include_links=False,
        include_comments=False,
        include_formatting=True,
        favor_recall=True,
    )


def _unwrap_prose_links(tree) -> None:
    """The links of a paragraph of prose become its text: trafilatura reads a paragraph with two short links or
    more as a list of links and leaves it out ("Figure 1 shows ..., and Table 2 lists ...", the cross-references
    of LaTeXML's pages). A paragraph whose words are mostly its links' (a menu, a list of articles) keeps them."""
    for p in tree.iter("p", "div"):
        links = list(p.iter("a")) if p.tag == "p" or is_leaf(p) else []
        words = len(p.text_content().split())
        if len(links) >= 2 and words >= 12 and sum(len(a.text_content().split()) for a in links) <= words / 3:
            for a in links:
                a.drop_tag()


def _body_container(tree):
    """The innermost element holding 90 % of the page's paragraph text: the article body, whatever the site
    calls it. trafilatura, given a whole page, sometimes keeps a few sections of a long article and drops the
    others; given this element it has only the article to read. None when that is the whole page."""
    words: dict = {}
    total = 0
    for el in tree.iter("p", "div"):
        if is_leaf(el):
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


def _same_text(one: str, other: str) -> bool:
    """Two texts (as ``_words``) the same, or one a part of the other or opening as the other does (a copy cut
    short, as a metadata abstract may be)."""
    return bool(one and other) and (one in other or other in one or one.split()[:8] == other.split()[:8])


def _same(heading: str, title: str) -> bool:
    """The title repeated as a heading (marks and spacing aside: "Large-scale topologies*")."""
    return plain_words(heading) == plain_words(title)


def _sections(xml: str | None, title: str) -> list[list[str]]:
    if not xml:
        return []
    main = lxml.etree.fromstring(xml.encode()).find("main")
    for lb in main.iter("lb") if main is not None else []:  # "one line<br>next line": two words, not one
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


def _text_of(value: str | None) -> str | None:
    """A meta value's text: publishers write markup into ``citation_title`` (``<i>Zea mays</i>``), read as HTML."""
    if not value or "<" not in value:
        return value
    value = re.sub(r"<br\s*/?>", " ", value, flags=re.I)  # a line break is a space between words
    return inline(lxml.html.fragment_fromstring(value, create_parent="span").text_content()) or value


_SITE_IN_TITLE = re.compile(r" [|–—-] ")  # "Title | Journal", "Site - Title"
