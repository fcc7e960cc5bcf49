"""The DOI an HTML page shows as its paper's, where no meta tag gives one: a "DOI: 10..." line or a doi.org link,
not a cited work's, a data set's, the paper's software's, nor a part's (a figure's, the abstract's)."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.html_clean import in_references, names_references
from sciqag_dataset.builders.ingest.html_rules import RESOURCE_DOI
from sciqag_dataset.builders.ingest.html_tree import BLOCK_TAGS
from sciqag_dataset.builders.ingest.normalize import inline

DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")


def shown_doi(tree) -> str | None:
    """A page with no DOI meta tag: the DOI it prints, as a "DOI: 10..." line or a doi.org link whose text is the
    DOI or its address. Not the paper's: one in the reference list, a link under another text (a cited work),
    one its sentence gives for the paper's data, code or software, one in a paragraph of prose that does not name
    the paper ("This study is published in ... at" does), nor a part's: eLife's abstract and figures,
    "10.7554/eLife.45107.001", ".002", beside each other."""
    shown = []
    for a in tree.iter("a"):
        href = a.get("href") or ""
        if "doi.org/10." in href and DOI.search(a.text_content()) and not in_references(a):
            block = next((b for b in a.iterancestors() if b.tag in _BLOCKS), a)
            text, shown_as = _own_text(block), inline(a.text_content())
            if not _anothers(text, text.find(shown_as), shown_as):
                shown.append(DOI.search(href)[1])
    for block in tree.iter(*_BLOCKS):
        if names_references(block) or in_references(block):
            continue
        text = _own_text(block)  # each block's lines apart from the page's others (not a title's words)
        for m in re.finditer(r"\bDOI\s*:?\s*(?:https?://(?:dx\.)?doi\.org/)?" + DOI.pattern[2:], text, re.I):
            if not _anothers(text, m.start(), m[0]):
                shown.append(m[1])
    return next((d for d in shown if d not in _parts(shown)), None)


def _anothers(text: str, at: int, shown_as: str) -> bool:
    """The DOI shown at ``at`` in its block's ``text`` is another work's: the sentence before it gives it for the
    paper's data, code or software, or the block is prose (a dozen words besides) that does not name the paper."""
    before = re.sub(r"https?://\S+|\b10\.\d{4,9}/\S+", "LINK", text[: max(at, 0)])
    sentence = _SENTENCES.split(before)[-1]
    if RESOURCE_DOI.search(sentence) and not _THE_PAPER.search(before):
        return True
    rest = text.replace(shown_as, " ")
    own = sentence + " " + _SENTENCES.split(text[max(at, 0) + len(shown_as) :])[0]  # the DOI's own sentence
    prose = len(re.sub(r"https?://\S+|\bdoi\b\s*:?", " ", rest, flags=re.I).split()) >= 12
    return prose and not (_THE_PAPER.search(rest) or _NAMES_THE_PAPER.search(own))


def _own_text(block) -> str:
    """The block's text without the blocks inside it."""
    parts = [block.text or ""]
    for child in block:
        if isinstance(child.tag, str) and child.tag not in _BLOCKS:
            parts.append(child.text_content())
        parts.append(child.tail or "")
    return inline(" ".join(parts))


def _parts(dois: list[str]) -> set[str]:
    """DOIs numbered as parts of another (".001", ".g001"): two or more of one stem, the first part among them
    (a Cell DOI's month and number, "2031.05.032" beside "2031.05.040", are no parts)."""
    numbered: dict[str, list[str]] = {}
    for d in set(dois):
        if m := _PART.search(d):
            numbered.setdefault(d[: m.start()], []).append(d)
    return {
        d for group in numbered.values() if len(group) > 1 and any(x.endswith("001") for x in group) for d in group
    }


_BLOCKS = (*BLOCK_TAGS, "td", "th", "header", "footer", "figure", "figcaption")
_PART = re.compile(r"\.[a-z]?\d{3}$", re.I)  # a part's number after its paper's DOI: ".001", ".g001"
_THE_PAPER = re.compile(
    r"\bcite (?:this|as)\b|\bcitation\b|(?:^|[.!?]\s+)(?:this|the) (?:article|paper|manuscript|study)\b", re.I
)
# prose that gives the paper's own DOI: "A DOI-citable version of this manuscript is available at", "This study is
# published in GigaScience at", "the version of record"
_NAMES_THE_PAPER = re.compile(
    r"\bthis (?:article|paper|manuscript|study|preprint|work)\b|\bversion of record\b|\bpublished version\b", re.I
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
