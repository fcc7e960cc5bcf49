"""HTML: citation_* meta tags, h1-h3 as section headings; scripts, styles and navigation dropped."""
from __future__ import annotations

from typing import Iterator

from bs4 import BeautifulSoup

from .text import inline, split_list


_HTML_DROP = ["script", "style", "nav", "noscript", "aside", "form", "svg", "button", "template", "iframe",
              "figure", "table", "menu"]
_HTML_HEADINGS = ("h1", "h2", "h3")
_HTML_BLOCKS = ("p", "li", "pre", "blockquote", "dd", "dt", "h4", "h5", "h6")


def read_html(text: str, warn) -> Iterator[dict]:
    soup = BeautifulSoup(text, "lxml")
    metas: dict[str, list[str]] = {}
    for m in soup.find_all("meta"):
        key = (m.get("name") or m.get("property") or "").strip().lower()
        if key and m.get("content"):
            metas.setdefault(key, []).append(m["content"].strip())

    def meta(*keys):
        return next((metas[k][0] for k in keys if k in metas), None)

    def link(rel):
        el = soup.find("link", rel=rel)
        return el.get("href") if el else None

    h1 = soup.find("h1")
    title = meta("citation_title", "dc.title", "og:title") or (h1.get_text(" ", strip=True) if h1 else None) \
        or (soup.title.get_text(" ", strip=True) if soup.title else "")
    for tag in soup.find_all(_HTML_DROP):
        if not tag.decomposed:  # a parent may have taken it already
            tag.decompose()
    for tag in soup.find_all(["header", "footer"]):
        if not tag.find_parent(["article", "main"]):  # site chrome, not the article's own header
            tag.decompose()
    for sup in soup.find_all("sup"):  # 10<sup>19</sup> -> 10^19, kept in one string
        parent = sup.parent
        sup.replace_with("^" + sup.get_text())
        parent.smooth()
    root = soup.find("article") or soup.find("main") or soup.body or soup
    sections: list[list[str]] = [["", ""]]
    wanted = list(_HTML_HEADINGS + _HTML_BLOCKS)
    found = False
    for el in root.find_all(wanted):
        if el.find_parent(wanted) is not None:
            continue  # inside a block already taken whole
        found = True
        content = inline(el.get_text(" ", strip=True))
        if el.name in _HTML_HEADINGS:
            is_title = content.lower() == inline(title).lower()
            if not (el.name == "h1" and (is_title or len(sections) == 1 and not sections[0][1])):
                sections.append([content, ""])
        elif content:
            sections[-1][1] += content + "\n\n"
    if not found:
        sections = [["", root.get_text("\n\n", strip=True)]]
    yield {"format": "html", "extractor": "html/beautifulsoup4", "title": title,
           "sections": [s for s in sections if s[0] or s[1].strip()],
           "metadata": {
               "doi": meta("citation_doi", "prism.doi", "dc.identifier"),
               "journal": meta("citation_journal_title", "prism.publicationname"),
               "authors": metas.get("citation_author") or metas.get("dc.creator") or [],
               "year": meta("citation_publication_date", "citation_date", "dc.date", "article:published_time"),
               "license": meta("dc.rights") or link("license"),
               "url": link("canonical") or meta("og:url", "citation_fulltext_html_url"),
           },
           "keywords": [k for v in metas.get("citation_keywords", []) + metas.get("keywords", [])
                        for k in split_list(v)]}


