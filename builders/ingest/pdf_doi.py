"""A PDF's own DOI, from where a paper prints it: the metadata (a field of its Subject), the front matter above
the first heading, a running head, a "Cite this article as" line, the first page's foot, licence block and small
print, a line that is a DOI alone on the first page, a running head of the first page that opens with the DOI,
the Crossmark badge's link, the small print that says where the article is published, the lines of the paper's
dated history, or, last, a line of the last page's foot. Not the body, where a DOI is another work's (a dataset, a
cited paper) and would become this paper's id."""

from __future__ import annotations

import re
from urllib.parse import unquote

from sciqag_dataset.builders.ingest.normalize import DOI_IN_TEXT
from sciqag_dataset.builders.ingest.pdf_blocks import is_entry, is_heading, reference_run
from sciqag_dataset.builders.ingest.pdf_furniture import front_notes
from sciqag_dataset.builders.ingest.pdf_line import ASIDE, Block, Line
from sciqag_dataset.builders.ingest.pdf_title import AUTHOR_NAMES

# "doi:10.1088/...", "DOI: https://doi.org/10.1145/...", "https://dx.doi.org/10.1016/...", or the bare DOI
# a line that is a DOI, marked or not ("doi:", IEEE's "Digital Object Identifier")
_DOI_LINE = re.compile(
    r"\s*(?i:doi|digital\s+object\s+identi(?:fi|ﬁ)er)?\s*:?\s*(?:https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+?)[.,;]?\s*"
)
# a DOI marked as one: "doi:10.1088/...", "DOI https://doi.org/10.1145/...", "https://dx.doi.org/10.1016/..."
_MARKED_DOI = re.compile(
    r"\s*(?:doi\s*:?\s*(?:https?://(?:dx\.)?doi\.org/)?|https?://(?:dx\.)?doi\.org/)(10\.\d{4,9}/\S+?)[.,;]?\s*", re.I
)
_CITE_AS = re.compile(r"\bcite this (?:article|paper) as\b", re.I)
_CROSSMARK = re.compile(r"crossmark\.crossref\.org/.*[?&]doi=(10\.\d{4,9}/[^&#\s]+)", re.I)
_BROKEN = re.compile(r"\b(10\.\d{4,9}/)\s+(?=\S)")  # a DOI broken at a line end after its prefix ("10.1074/ mcp.M8")
_PUBLISHED = re.compile(r"\b(?:published|this (?:article|paper)|article (?:and|is|was))\b", re.I)
_BARE = re.compile(r"(?<![\w/.])(10\.\d{4,9}/[^\s\"'<>]+?)[.,;]?(?=\s|$)")  # a DOI without "doi:"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = rf"(?:\b\d{{1,2}},?\s+{_MONTH}|\b{_MONTH}\s+\d{{1,2}},?)\s+(?:19|20)\d\d\b"
# the paper's dated history opening a line: "Received, May 22, 2008", "10 April 2019; accepted 2 July 2019"; later
# in a line (a reference entry) or lower-case at its start (a sentence of the body) the date is a cited work's
_HISTORY = re.compile(
    rf"^\W*(?:{_DATE}\W*(?:received|revised|accepted|published)|"
    rf"(?-i:Received|Revised|Accepted|Published|RECEIVED|REVISED|ACCEPTED|PUBLISHED))\b.{{0,60}}?{_DATE}",
    re.I,
)


def paper_doi(
    info: dict,
    read: list[Line],
    heads: list[Line],
    foot: dict[int, Line],
    blocks: list[Block],
    body: float,
    opening: int,
    title: str,
) -> str | None:
    """The paper's DOI: ``info`` is the PDF's metadata (with its first pages' ``links``), ``read`` the paper's
    lines without running furniture, ``heads`` the running heads and feet of the pages up to the one after
    ``opening`` (the first text page), ``foot`` that page's foot (by line id), ``blocks`` the paper's blocks."""
    doi = info.get("doi") or info.get("DOI") or _subject_doi(info.get("Subject") or "")
    if doi:
        return doi
    lines = [ln for ln in read if ln.kind not in ASIDE and id(ln) not in foot]
    aside = [ln for ln in read if ln.kind in ASIDE]
    first = [ln for ln in lines if ln.page == opening]
    front = [ln for ln in first if not blocks or ln.top <= _first_heading_top(blocks, body, opening)]
    # "doi:10.1186/...", then "Cite this article as: ..." (BMC prints them last): the line and its neighbours
    cite_as = [ln for k, ln in enumerate(lines) for near in lines[max(k - 1, 0) : k + 2] if _CITE_AS.search(near.text)]
    # then the front page's foot, licence block and the paper's own citation line ("ACM Reference Format")
    notes = [b.text for b in front_notes(blocks, body, opening, title)] + [ln.text for ln in foot.values()]
    # the next page's notes too, but not its reference entries set small (a layout model's footnotes)
    entries = _entry_lines(read, blocks)
    notes += [ln.text for ln in aside if ln.page == opening or (ln.page == opening + 1 and id(ln) not in entries)]
    found = DOI_IN_TEXT.search(_joined([info.get("Subject") or "", *(ln.text for ln in front + heads + cite_as)]))
    found = found or DOI_IN_TEXT.search(_joined(notes))
    # last, a line that is a DOI and nothing else on the first page (its foot); not later, where such a line
    # is a reference entry's
    alone = (ln.text for ln in read if ln.page == opening)
    found = found or next((m for m in map(_DOI_LINE.fullmatch, alone) if m), None)
    # then a running head of the first page that opens with a bare DOI ("10.5005/jp-journals-10005-1292 ...")
    edges = heads + [ln for ln in aside if ln.page == opening and ln.kind in ("page-header", "page-footer")]
    found = found or next((m for m in (_BARE.match(ln.text.strip()) for ln in edges if ln.page == opening) if m), None)
    if found:
        return found[1]
    return (
        _linked_doi(info.get("links") or [], opening)
        or _published_at(read, opening, body)
        or _with_history(read, entries)
        or _last_foot(read, body)
    )


def _subject_doi(subject: str) -> str | None:
    """The DOI that a field of the Subject metadata holds alone (IEEE's "Journal;2020;5;4;10.1109/LRA.2020.1")."""
    return next((f.strip() for f in subject.split(";") if _BARE.fullmatch(f.strip())), None)


def _joined(texts: list[str]) -> str:
    """Lines as one text, a DOI broken after its prefix whole again."""
    return _BROKEN.sub(r"\1", " ".join(texts))


def links(pages) -> list[tuple[int, str]]:
    """(page number, address) of pdfplumber pages' links: a hint for the DOI, so a damaged annotation loses its
    page's."""
    out = []
    for page in pages:
        try:
            out += [(page.page_number, a["uri"]) for a in page.hyperlinks if a.get("uri")]
        except Exception:  # pdfplumber raises KeyError, ValueError ... on an annotation without its rectangle
            continue
    return out


def _first_heading_top(blocks: list[Block], body: float, opening: int) -> float:
    """Where the first section heading of the first text page stands (its whole height when it has none); the
    authors' line is no heading."""
    tops = [
        b.lines[0].top
        for b in blocks
        if b.lines[0].page == opening
        and len(b.lines) == 1
        and is_heading(b.lines[0], body)
        and not b.lines[0].text.lower().startswith("abstract")
        and not AUTHOR_NAMES.match(b.lines[0].text)  # the authors' names set large under the title
    ]
    return min(tops, default=float("inf"))


def _linked_doi(links: list[tuple[int, str]], opening: int) -> str | None:
    """The DOI of the first text page's Crossmark badge link: the paper's own, whatever else the page links to (a
    doi.org link alone may be a cited work's or a dataset's)."""
    uris = [unquote(uri) for page, uri in links if page == opening]
    return next((m[1] for m in map(_CROSSMARK.search, uris) if m), None)


def _published_at(lines: list[Line], opening: int, body: float) -> str | None:
    """The DOI of the first text page's small print that says where the article is published ("Article published
    online ahead of print ... at http://.../doi/10..."), when it names one DOI alone."""
    small = [ln for ln in lines if ln.page == opening and ln.size < 0.95 * body]
    found = {
        m[1]
        for k, ln in enumerate(small)
        if any(_PUBLISHED.search(near.text) for near in small[max(k - 1, 0) : k + 1])
        for m in DOI_IN_TEXT.finditer(ln.text)
    }
    return found.pop() if len(found) == 1 else None


def _entry_lines(read: list[Line], blocks: list[Block]) -> set[int]:
    """The ids of the lines of reference entries: blocks that read as an entry or a run of them, and so the layout
    model's footnote and other aside blocks (a list of entries set small at a page's foot)."""
    aside: dict[tuple[int, int], list[Line]] = {}
    for ln in read:
        if ln.kind in ASIDE:
            aside.setdefault((ln.page, ln.box), []).append(ln)
    groups = [*blocks, *map(Block, aside.values())]
    return {id(ln) for b in groups if reference_run(b) or is_entry(b.text) for ln in b.lines}


def _with_history(read: list[Line], entries: set[int]) -> str | None:
    """The DOI printed with the paper's dated history, on its line or the next two under it ("Published, ... DOI
    10.1074/" over the rest of it at the foot of a first column; "accepted 2 July 2019" over the DOI at the end of
    a Science report): the article's own record, wherever the page sets it and at whatever size. Not a line of a
    reference entry (``entries``, by line id), where a date and a DOI are a cited work's."""
    for k, ln in enumerate(read):
        if _HISTORY.search(ln.text) and id(ln) not in entries:
            near = [
                x
                for x in read[k : k + 3]
                if x.page == ln.page and abs(x.x0 - ln.x0) < 4 * ln.size and 0 <= x.top - ln.top < 4 * ln.size
            ]
            text = _joined([x.text for x in near])
            found = DOI_IN_TEXT.search(text) or _BARE.search(text)
            if found:
                return found[1]
    return None


def _last_foot(read: list[Line], body: float) -> str | None:
    """The DOI a line of the last page's foot prints alone, marked as one ("doi:", a doi.org address): set smaller
    than the body, apart from the lines above it, with no text of the body's size below it (where a journal
    prints it only there). A reference entry's DOI on a line of its own runs on from its entry."""
    last = max((ln.page for ln in read), default=0)
    page = sorted((ln for ln in read if ln.page == last), key=lambda ln: ln.top)
    for k, ln in enumerate(page[1:], 1):
        m = _MARKED_DOI.fullmatch(ln.text)
        apart = ln.top - max(x.bottom for x in page[:k]) > 1.5 * ln.size
        if m and ln.size < 0.95 * body and apart and not any(abs(x.size - body) < 0.6 for x in page[k + 1 :]):
            return m[1]
    return None
