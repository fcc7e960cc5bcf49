"""What a PDF's pages carry besides the paper, block by block: front matter (banners, licences and copyright,
received/accepted dates, correspondence, a journal's line, declarations of contributions, interests and
submission set in small type), the paper's own citation line, footnotes behind their mark, rows of a table, page
marks."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.normalize import DOI_IN_TEXT, YEAR
from sciqag_dataset.builders.ingest.pdf_line import Block

FRONT_MATTER = re.compile(
    r"^[*∗†‡]?\s*(?:proceedings of\b|©|\(cid:13\)|copyright\b|received:|received \d|"
    r"accepted:|published(?: online)?:|correspond(?:ence|ing author)\b|e-?mail:|tel\.?:|"
    r"full list of author information|this is an open access article|\S+ et al\.?;? licensee|"
    r"open access$|citation:|(?:acm )?reference format:?$|academic editor:|edited by\b|"
    r"(?:research|review|original|short|brief)?\s*(?:article|paper|communication|review|"
    r"research|letter)?\s*(?:open access)?$)",
    re.I,
)  # a banner: "RESEARCH ARTICLE Open Access"
# "Dhaka Univ. J. Pharm. Sci. 8(1): 7-10, 2009": the journal's line, printed on the first page only
_JOURNAL_LINE = re.compile(r"^(?:[A-Z][\w.&,]*\s+){1,8}\d{1,4}\s*\(\d{1,4}\)\s*:?\s*\d+\s*[-–]\s*\d+")
_COPYRIGHT = re.compile(r"©|^c\s?\d{4}\b|\bcopyright\b", re.I)  # "c 2019": © in a font without a Unicode map
# "1 See ...", "∗ Equal contribution"; not "10 mg", "13C NMR", "3D"
_FOOTNOTE = re.compile(r"^(?:[*∗†‡§¶]|\d{1,2}\s+(?![A-Z]?\d|mg|g|mL|ml|mmol|mol|h|min|K|°)\S)")
# a licence, copyright or permission notice, an ISBN/ISSN or price line ("ACM ISBN 978-...$15.00"): front-page
# furniture when set apart from the body in smaller type; an ISSN is known by its shape when it carries a price
# ("1051-8215/97$10.00", "0167-2789/$ - see front matter") or opens a publisher item identifier ("S0167-2789(05)...",
# "S 0167-2789(05)"): not a year range ("1990–2010 (mm)"), so no digit or dash before it and only those shapes after
_ISSN = r"(?<![\d–-])\d{4}[-–]\d{3}[\dX]"
_LICENCE = re.compile(
    r"©|\(cid:13\)|\bcopyright\b|\bpermission to (?:make|copy|reproduce)\b|\bISBN\b|\bISSN\b|"
    r"\blicen[cs]ed? (?:under|to)\b|\ball rights reserved\b|\$\d+\.\d\d\b|"
    rf"{_ISSN}/(?:\d\d)?\s?\$|(?<![\w-])(?-i:S)\s?{_ISSN}\(\d\d\)",
    re.I,
)
# the declarations papers print in small type, in a front page's sidebar or foot (PNAS, Cell, eLife) or at the end:
# the authors' roles, their interests, the way it was submitted and edited, where to write
_DECLARATION = re.compile(
    r"^[*∗†‡§¶\d]?\s*(?:author contributions?:|(?:the )?authors? declares?\b|competing interests?(?: statement)?:|"
    r"conflicts? of interests?:|this (?:article|paper) (?:is a\b|contains supporting)|to whom correspondence\b|"
    r"reviewers?:|data deposition:|edited by\b|approved\b.{0,40}\(received\b)",
    re.I,
)
_NUMBER = re.compile(r"[-+−±]?\(?[\d.,]*\d[\d.,]*%?\)?|±")


def cites_title(block: Block, title: str) -> bool:
    """The paper citing itself ("ACM Reference Format: ... 2023. Its Title. In ... https://doi.org/..."): its
    title's first words, a year and a DOI in one block (an abstract may repeat the title, not with those).
    Callers ask this of blocks set smaller than the body: the title's own line is not one."""
    words = re.findall(r"\w+", title.lower())[:8]
    text = block.text
    return (
        len(words) >= 3
        and bool(YEAR.search(text) and DOI_IN_TEXT.search(text))
        and " ".join(words) in " ".join(re.findall(r"\w+", text.lower()))
    )


def front_notes(blocks: list[Block], body: float, opening: int, title: str) -> list[Block]:
    """The first pages' licence blocks and the paper's own citation line: where a DOI printed nowhere else is."""
    return [
        b
        for b in blocks
        if b.lines[0].page <= opening + 1
        and b.lines[0].size < 0.95 * body
        and (_LICENCE.search(b.text) or cites_title(b, title))
    ]


def _numeric(words: list[str]) -> float:
    """The share of words that are numbers (a table row's cells)."""
    return sum(bool(_NUMBER.fullmatch(w)) for w in words) / max(len(words), 1)


def furniture_block(block: Block, text: str, body: float) -> str | None:
    """What a page carries besides the paper, and which kind: "notes" (licence and copyright lines,
    received/accepted dates, correspondence, proceedings and journal lines), "footnote" (set small, behind its
    mark), "table" (a row of numbers), "mark" (a footnote mark or a page number on its own); None for text."""
    small = block.lines[0].size < 0.92 * body
    words = text.split()
    if len(text) <= 3:
        return "mark"
    if (
        len(block.lines) <= 10
        and block.lines[0].size <= body * 1.05
        and FRONT_MATTER.match(text)
        or len(block.lines) <= 3
        and _COPYRIGHT.search(text)
        or len(block.lines) <= 2
        and _JOURNAL_LINE.match(text)
        or block.lines[0].size < 0.95 * body
        and len(block.lines) <= 15
        and _LICENCE.search(text)
        or small
        and len(block.lines) <= 15
        and _DECLARATION.match(text)
    ):
        return "notes"
    if small and len(block.lines) <= 4 and _FOOTNOTE.match(text):
        return "footnote"
    if len(words) >= 4 and _numeric(words) >= 0.5 or len(words) >= 2 and _numeric(words) == 1:
        return "table"  # a table's rows; a layout model reads a row of numbers as a block of its own
    return None
