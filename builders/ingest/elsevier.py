"""Elsevier full-text XML (``ce:``/``dc:``/``prism:`` elements)."""

from __future__ import annotations

from sciqag_dataset.builders.ingest.components import keep_marks
from sciqag_dataset.builders.ingest.elsevier_components import elsevier_components
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import drop_citations, local_name, ns_kind, paragraphs, xml_text

_ELS_SKIP = {"float-anchor", "display", "figure", "table", "footnote", "bibliography"}
_ELS_PARAS = ("para", "simple-para")


def read_elsevier(root, warn) -> dict:
    # Elsevier mixes namespaces whose versions vary; index by (namespace kind, local name)
    idx: dict[tuple[str, str], list] = {}
    for el in root.iter():
        if isinstance(el.tag, str):
            idx.setdefault((ns_kind(el), local_name(el)), []).append(el)
    bib_ids = {el.get("id") for el in idx.get(("ce", "bib-reference"), []) if el.get("id")}

    def skip(el) -> str | None:
        if local_name(el) == "display" and any(local_name(c) == "formula" for c in el):
            return None  # a displayed equation: kept in place, as LaTeX
        if local_name(el) in _ELS_SKIP:
            return "drop"
        if local_name(el) in ("cross-ref", "cross-refs"):  # citation markers only
            ids = (el.get("refid") or "").split()
            if ids and all(i in bib_ids for i in ids):
                return "cite"
        return None

    def text(el) -> str:
        return drop_citations(xml_text(el, skip)) if el is not None else ""

    components, around = elsevier_components(root, text)

    def prose(el) -> str:  # the text of a paragraph, marked where it mentions a component and where one stands
        return keep_marks(xml_text(el, skip, around), drop_citations) if el is not None else ""

    def first(kind, local, pred=lambda el: True):
        return next((el for el in idx.get((kind, local), []) if pred(el)), None)

    def first_of(*keys):  # lxml elements without children are falsy: no `a or b`
        return next((el for el in (first(k, n) for k, n in keys) if el is not None), None)

    def any_ns(local):
        return next((els[0] for (_, name), els in idx.items() if name == local), None)

    scidir = first("", "link", lambda el: el.get("rel") == "scidir")
    meta = {
        "doi": text(first_of(("prism", "doi"), ("ce", "doi"))),
        "journal": text(first("prism", "publicationName")),
        "year": text(first_of(("prism", "coverDate"), ("prism", "coverDisplayDate"))),
        "license": text(any_ns("openaccessUserLicense")),
        "url": scidir.get("href") if scidir is not None else None,
    }
    creators = idx.get(("dc", "creator"), [])
    if creators:  # "Surname, Given" in the coredata block
        meta["authors"] = [" ".join(reversed([p.strip() for p in inline(text(c)).split(",", 1)])) for c in creators]
    else:
        meta["authors"] = [
            inline(f"{text(a.find('{*}given-name'))} {text(a.find('{*}surname'))}")
            for a in idx.get(("ce", "author"), [])
        ]

    sections: list[list[str]] = []
    abstract = first("ce", "abstract", lambda el: el.get("class") in (None, "author"))  # not graphical/highlights
    if abstract is not None:
        paras = [inline(prose(p)) for p in abstract.iter() if local_name(p) in _ELS_PARAS]
        sections.append(["Abstract", "\n\n".join(paras)])
    if first("ce", "sections") is not None:
        _elsevier_sections(first("ce", "sections"), "", text, prose, sections)
    elif any_ns("rawtext") is not None:  # some API views carry only unstructured text
        sections.append(["", text(any_ns("rawtext"))])
    for appendices in idx.get(("ce", "appendices"), []):
        found: list[list[str]] = []
        _elsevier_sections(appendices, "", text, prose, found)
        sections += [[f"Appendix: {h}" if h else "Appendix", body] for h, body in found]
    keywords = [
        inline(text(k.find("{*}text") if k.find("{*}text") is not None else k)) for k in idx.get(("ce", "keyword"), [])
    ]
    keywords = keywords or [inline(text(k)) for k in idx.get(("dcterms", "subject"), [])]
    return {
        "format": "elsevier",
        "extractor": "elsevier/lxml",
        "title": text(first_of(("dc", "title"), ("ce", "title"))),
        "sections": sections,
        "components": components,
        "metadata": meta,
        "keywords": keywords,
    }


def _elsevier_sections(container, heading: str, text, prose, out: list[list[str]]) -> None:
    paras = paragraphs(container, _ELS_PARAS, prose)
    if paras:
        out.append([heading, paras])
    for sec in container:
        if local_name(sec) == "section":
            title = next((c for c in sec if local_name(c) == "section-title"), None)
            _elsevier_sections(sec, inline(text(title)) if title is not None else "", text, prose, out)
