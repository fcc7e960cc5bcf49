"""JATS / NLM ``<article>`` XML."""

from __future__ import annotations

from sciqag_dataset.builders.ingest.components import keep_marks
from sciqag_dataset.builders.ingest.jats_components import KIND, jats_components
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.xml_common import attr, drop_citations, formula_tex, local_name, xml_text

_JATS_SKIP = {"fig", "table-wrap", "fn-group", "supplementary-material", "ref-list", "graphic", "media"}
_JATS_PARAS = ("p", "list", "disp-quote", "statement")


def read_jats(art, warn) -> dict:
    idx: dict[str, list] = {}
    for el in art.iter():
        if isinstance(el.tag, str):
            idx.setdefault(local_name(el), []).append(el)
    ref_ids = {r.get("id") for r in idx.get("ref", []) if r.get("id")}

    def skip(el) -> str | None:
        if local_name(el) in _JATS_SKIP:
            return "drop"
        if local_name(el) == "xref":  # citation markers go, "Fig. 2"-style cross-references stay
            rids = (el.get("rid") or "").split()
            if el.get("ref-type") == "bibr" or (rids and all(r in ref_ids for r in rids)):
                return "cite"
        return None

    def text(el) -> str:
        return drop_citations(xml_text(el, skip)) if el is not None else ""

    components, around = jats_components(art, text)

    def prose(el) -> str:  # the text of a paragraph, marked where it mentions a component and where one stands
        return keep_marks(xml_text(el, skip, around), drop_citations) if el is not None else ""

    def first(local, pred=lambda el: True):
        return next((el for el in idx.get(local, []) if pred(el)), None)

    lic = first("license")
    pub = first("pub-date")
    self_uri = first("self-uri")
    meta = {
        "doi": text(first("article-id", lambda el: el.get("pub-id-type") == "doi")),
        "journal": text(first("journal-title")),
        "license": None if lic is None else (attr(lic, "href") or text(first("license_ref")) or text(lic)),
        "year": None if pub is None else text(next((el for el in pub if local_name(el) == "year"), None)),
        "url": None if self_uri is None else attr(self_uri, "href"),
        "authors": [],
    }
    for contrib in idx.get("contrib", []):
        if contrib.get("contrib-type", "author") != "author":
            continue
        parts = {
            k: " ".join(inline(text(el)) for el in contrib.iter() if local_name(el) == k)
            for k in ("given-names", "surname", "string-name", "collab")
        }
        name = inline(f"{parts['given-names']} {parts['surname']}") or parts["string-name"] or parts["collab"]
        if name:
            meta["authors"].append(name)

    sections: list[list[str]] = []
    abstract = first("abstract", lambda el: el.get("abstract-type") not in ("graphical", "teaser", "toc"))
    if abstract is not None:
        paras = [inline(prose(p)) for p in abstract.iter() if local_name(p) == "p"] or [prose(abstract)]
        sections.append(["Abstract", "\n\n".join(paras)])
    if first("body") is not None:
        _jats_sections(first("body"), "", prose, around, sections)
    for app in idx.get("app", []):  # appendices, in <back>
        found: list[list[str]] = []
        title = next((c for c in app if local_name(c) == "title"), None)
        _jats_sections(app, inline(text(title)) if title is not None else "", prose, around, found)
        sections += [[f"Appendix: {h}" if h else "Appendix", body] for h, body in found]
    return {
        "format": "jats",
        "extractor": "jats/lxml",
        "title": text(first("article-title")),
        "sections": sections,
        "components": components,
        "metadata": meta,
        "keywords": [inline(text(k)) for k in idx.get("kwd", [])],
    }


def _jats_sections(container, heading: str, text, around, out: list[list[str]]) -> None:
    """Flatten ``sec`` nesting in document order: [heading, paragraphs] per run of paragraphs. A table or figure
    between paragraphs leaves only its marks (``around``) where it stood."""
    paras: list[str] = []
    for child in container:
        local = local_name(child)
        if local in _JATS_PARAS:
            paras.append(inline(text(child)))
        elif local == "disp-formula":  # an equation between paragraphs: a paragraph of its own
            before, after = around(child)
            paras.append(f"{before}$${formula_tex(child)}$${after}")
        elif local == "sec":
            if paras:
                out.append([heading, "\n\n".join(paras)])
                paras = []
            title = next((c for c in child if local_name(c) == "title"), None)
            _jats_sections(child, inline(text(title)) if title is not None else "", text, around, out)
        else:  # a table-wrap, a fig, a group of them: where they stand
            paras += ["".join(around(el)) for el in child.iter() if local_name(el) in KIND]
    if paras:
        out.append([heading, "\n\n".join(paras)])
