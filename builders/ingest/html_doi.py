"""The DOI an HTML page shows as its paper's, where no meta tag gives one: a "DOI: 10..." line or a doi.org link,
not a cited work's, a data set's, the paper's software's, nor a part's (a figure's, the abstract's)."""

from __future__ import annotations

import re
from collections import Counter

from sciqag_dataset.builders.ingest.html_clean import in_references, text_outside_references
from sciqag_dataset.builders.ingest.html_rules import RESOURCE_DOI
from sciqag_dataset.builders.ingest.normalize import inline

DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")


def shown_doi(tree) -> str | None:
    """A page with no DOI meta tag: the DOI it prints, as a "DOI: 10..." line or a doi.org link whose text is the
    DOI or its address (a link under another text, such as a cited work, is not the page's own DOI, nor one in
    the reference list, nor one a sentence gives as the address of the paper's data or code, nor a part's: eLife's
    abstract and figures, "10.7554/eLife.45107.001", ".002", beside each other)."""
    shown = []
    for a in tree.iter("a"):
        href = a.get("href") or ""
        if "doi.org/10." in href and DOI.search(a.text_content()) and not in_references(a):
            block = next((b for b in a.iterancestors() if b.tag in ("p", "li", "div", "td")), a)
            if not _names_a_resource(inline(block.text_content()).split(inline(a.text_content()))[0]):
                shown.append(DOI.search(href)[1])
    text = " ".join(text_outside_references(tree))
    for m in re.finditer(r"\bDOI\s*:?\s*(?:https?://(?:dx\.)?doi\.org/)?" + DOI.pattern[2:], text, re.I):
        if not _names_a_resource(text[max(0, m.start() - 250) : m.start()]):
            shown.append(m[1])
    stems = Counter(m.string[: m.start()] for d in set(shown) if (m := _PART.search(d)))
    return next((d for d in shown if not ((m := _PART.search(d)) and stems[d[: m.start()]] >= 2)), None)


def _names_a_resource(before: str) -> bool:
    """The sentence before a DOI gives it as the address of the paper's data, code or software."""
    return bool(RESOURCE_DOI.search(re.sub(r"https?://\S+|\b10\.\d{4,9}/\S+", "LINK", before)))


_PART = re.compile(r"\.[a-z]?\d{3}$", re.I)  # a part's number after its paper's DOI: ".001", ".g001"
