"""PDF, layout-aware (pdfplumber on pdfminer.six, MIT): words with their font size and position, read column by
column; running headers and footers removed by their repetition across pages; paragraphs from line spacing,
headings from font size, weight and numbering; the title from page 1's largest text; the abstract found; the
reference list and figure/table captions removed; ligatures, loose accents and line-end hyphens repaired.
Pages without a text layer are named in a warning (the paper is then partial); a paper that is mostly such
pages fails with "run OCR first"."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

import pdfplumber
from pdfplumber.utils.exceptions import PdfminerException

from .pdf_layout import BOLD, Line, page_lines, running_furniture
from .text import DOI_IN_TEXT, MAX_TITLE_CHARS, IngestError, capitalised, inline, parse_authors

_LIGATURES = re.compile("[\ufb00-\ufb06]")
_SPACING_ACCENTS = {"\u02c6": "\u0302", "\u00a8": "\u0308", "\u00b4": "\u0301", "`": "\u0300", "\u02dc": "\u0303",
                    "\u00b8": "\u0327", "\u02c7": "\u030c", "\u02da": "\u030a", "\u02d8": "\u0306", "\u00af": "\u0304"}
_LOOSE_ACCENT = re.compile("([" + "".join(_SPACING_ACCENTS) + r"])\s?([A-Za-z\u0131\u0237])")
_HEADING_WORDS = re.compile(r"^(?:abstract|introduction|background|methods?|materials and methods|experimental(?: "
                            r"section| details)?|results(?: and discussion)?|discussion|conclusions?|summary|"
                            r"acknowledge?ments?|references|bibliography|appendix|supporting information|"
                            r"data availability|author contributions|conflicts? of interest)\b", re.I)
_NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.|[A-H]\.)\s+[A-Z]")
_REFERENCES = re.compile(r"^(?:\d{1,2}\.?\s+)?(?:references(?: and notes)?|bibliography|literature cited|works cited)"
                         r"\s*$", re.I)
_AFTER_REFERENCES = re.compile(r"^(?:\d{1,2}\.?\s+)?(?:appendix|supplementary|supporting information|methods|"
                               r"online methods|data availability|code availability|extended data)\b", re.I)
_NUMBERING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.|[A-H]\.)\s+")
# "Figure 2. ...", "Table 1: ...", BMC's "Figure 1 Patient flow ..."; not "Figure 3 (a) shows" or "Fig. 2 A and B"
_CAPTION = re.compile(r"^(?:fig(?:ure)?|table|scheme|chart)\.?\s*[S]?\d+[a-z]?\s*"
                      r"(?:[.:|]|\s+(?-i:[A-Z][a-z]+(?:-[a-z]+)*)\s(?!(?:and|to)\b)(?-i:[a-z]))", re.I)
# a word of a heading: two letters or more ("CO2", "MoS2"), a capital alone ("Appendix B"); not "h^!" or "gk;k"
_WORD = re.compile(r"[(\"“‘]?(?=(?:[^\W_]*[^\W\d_]){2}|[A-Z]\b)[^\W_]+(?:['’/-][^\W_]+)*[)\"”’]?[:,?.]?|&|a")
# numbered citations; not Miller indices ("[001]", "[110]": a leading zero or three digits of 0-2)
_CITE_NUMBER = r"(?!0)(?![0-2]{3}\b)\d{1,3}"
_BRACKET_CITE = re.compile(rf"\s?\[{_CITE_NUMBER}(?:\s*[,–-]\s*{_CITE_NUMBER})*\]")
_REFERENCES_RUN_IN = re.compile(r"^(?:references|bibliography)\s+(?:\[1\]|1\.)\s", re.I)
_FRONT_MATTER = re.compile(r"^[*∗†‡]?\s*(?:proceedings of\b|©|\(cid:13\)|copyright\b|received:|received \d|"
                           r"accepted:|published(?: online)?:|correspond(?:ence|ing author)\b|e-?mail:|tel\.?:|"
                           r"full list of author information|this is an open access article|\S+ et al\.?;? licensee|"
                           r"open access$|citation:|academic editor:|edited by\b|"
                           r"(?:research|review|original|short|brief)?\s*(?:article|paper|communication|review|"
                           r"research|letter)?\s*(?:open access)?$)", re.I)  # a banner: "RESEARCH ARTICLE Open Access"
# "Dhaka Univ. J. Pharm. Sci. 8(1): 7-10, 2009": the journal's line, printed on the first page only
_JOURNAL_LINE = re.compile(r"^(?:[A-Z][\w.&,]*\s+){1,8}\d{1,4}\s*\(\d{1,4}\)\s*:?\s*\d+\s*[-–]\s*\d+")
_CITE_AS = re.compile(r"\bcite this (?:article|paper) as\b", re.I)
_COPYRIGHT = re.compile(r"©|^c\s?\d{4}\b|\bcopyright\b", re.I)  # "c 2019": © in a font without a Unicode map
# "1 See ...", "∗ Equal contribution"; not "10 mg", "13C NMR", "3D"
_FOOTNOTE = re.compile(r"^(?:[*∗†‡§¶]|\d{1,2}\s+(?![A-Z]?\d|mg|g|mL|ml|mmol|mol|h|min|K|°)\S)")
_NUMBER = re.compile(r"[-+−±]?\(?[\d.,]*\d[\d.,]*%?\)?|±")
_ENTRY = re.compile(r"^\s*(?:\[\d+\]|\d+\.)\s")


def read_pdf(path: str, warn) -> Iterator[dict]:
    try:
        with pdfplumber.open(path, password="") as pdf:
            info = pdf.metadata or {}
            pages, empty, unmapped = [], [], 0
            for n, page in enumerate(pdf.pages, 1):
                try:
                    lines, missing = page_lines(page, n)
                    unmapped += missing
                    # an image and (almost) no text: a scanned page; a blank page or a drawing is not one
                    if sum(len(ln.text) for ln in lines) < 20 and page.images:
                        empty.append(n)
                except Exception as exc:  # one bad page must not lose the others
                    warn(f"page {n}: no text extracted ({type(exc).__name__}: {exc})", True)
                    lines = []
                finally:
                    page.close()  # pdfplumber keeps every parsed page otherwise: memory grows with the PDF
                pages.append(lines)
    except IngestError:
        raise
    except Exception as exc:  # pdfminer raises many types on damaged or encrypted files
        if isinstance(exc, PdfminerException) and exc.args and isinstance(exc.args[0], Exception):
            exc = exc.args[0]  # pdfplumber's wrapper: the name and reason are pdfminer's
        name = type(exc).__name__
        if "Password" in name or "Encrypt" in name:
            raise IngestError("encrypted PDF: decrypt it first with its password "
                              "(qpdf --decrypt --password=... in.pdf out.pdf)") from None
        raise IngestError(f"invalid PDF: {name}" + (f": {exc}" if str(exc) else "")) from None
    if not pages:
        raise IngestError("the PDF has no pages")
    if not any(pages) and unmapped:
        raise IngestError(f"the text is set in fonts without a Unicode map ({unmapped} glyphs): it cannot be read "
                          "as text; run OCR first")
    if not any(pages) or len(empty) > len(pages) / 2:
        raise IngestError(f"no text layer on {len(empty)} of {len(pages)} page(s) (scanned?): run OCR first")
    if empty:
        warn(f"page(s) {', '.join(map(str, empty))} have no text layer (scanned?): their text is missing", True)
    if unmapped:  # a few: symbols of a math font; many: a body font, and the text is not readable
        chars = sum(len(ln.text) for lines in pages for ln in lines)
        warn(f"{unmapped} glyph(s) in fonts without a Unicode map left out (symbols or words may be missing)",
             unmapped > 0.05 * (chars + unmapped))
    yield _paper(pages, info, warn)


# ---------------------------------------------------------------- lines -> paper

def _paper(pages: list[list[Line]], info: dict, warn) -> dict:
    furniture = running_furniture(pages)
    lines = [ln for lines in pages for ln in lines if (ln.page, ln.top) not in furniture]
    sizes = Counter()  # the body's size: the most text, in the first half of the paper (references and tables
    half = max(1, (len(pages) + 1) // 2)  # at the end are set smaller and can outweigh a short paper's body)
    for ln in lines:
        if ln.page <= half:
            sizes[round(ln.size, 1)] += len(ln.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    opening = min((ln.page for ln in lines), default=1)  # the first page with text (a scanned cover before it)
    first = [ln for ln in lines if ln.page == opening]
    title_lines = _title(first, body)
    title = inline(" ".join(ln.text for ln in title_lines))
    meta_title = inline(info.get("Title"))
    if not title and meta_title and _plausible_title(meta_title):
        title = meta_title
    if not title and first and len(first[0].text.split()) <= 20 and not first[0].text.endswith("."):
        title = first[0].text  # all one size: the first line, as a plain text file's title
    heads = {id(ln) for ln in title_lines}
    blocks = _blocks([ln for ln in lines if id(ln) not in heads], body)
    sections, references, has_abstract = _sections(blocks, body, opening)
    # the paper's own words, without the halves of words broken at a line end
    vocab = Counter(w.lower() for b in blocks for w in re.findall(r"[A-Za-z]{2,}", re.sub(r"\w+-\x00\w+", " ", b.text)))
    sections = [[h, "\n\n".join(_repair(p, vocab) for p in paras)] for h, paras in sections]
    # the paper's own DOI is printed in its front matter or a running head: not in the body, where a DOI is
    # another work's (a dataset, a cited paper) and would become this paper's id
    front = [ln for ln in first if not blocks or ln.top <= _first_heading_top(blocks, body, opening)]
    heads = [ln for lines_ in pages[:opening + 1] for ln in lines_ if (ln.page, ln.top) in furniture]
    doi = info.get("doi") or info.get("DOI")
    # "doi:10.1186/...", then "Cite this article as: ..." (BMC prints them last): the line and its neighbours
    cite_as = [ln for k, ln in enumerate(lines) for near in lines[max(k - 1, 0):k + 2] if _CITE_AS.search(near.text)]
    if not doi:
        found = DOI_IN_TEXT.search(" ".join([info.get("Subject") or "", *(ln.text for ln in front + heads + cite_as)]))
        doi = found[1] if found else None
    title = title if len(title) <= 1.5 * MAX_TITLE_CHARS else ""  # set in the largest type: longer than a guess
    return {"format": "pdf", "extractor": "pdf/pdfplumber", "title": title,
            "sections": [s for s in sections if s[1].strip()],
            "metadata": {"doi": doi, "authors": parse_authors(info.get("Author"))},
            "has_abstract": has_abstract, "references_dropped": references}


def _first_heading_top(blocks: list["Block"], body: float, opening: int) -> float:
    """Where the first section heading of the first text page stands (its whole height when it has none)."""
    tops = [b.lines[0].top for b in blocks if b.lines[0].page == opening and len(b.lines) == 1
            and _is_heading(b.lines[0], body) and not b.lines[0].text.lower().startswith("abstract")]
    return min(tops, default=float("inf"))


def _plausible_title(text: str) -> bool:
    return (len(text) > 15 and " " in text and not re.search(r"^doi|\.(docx?|pdf|tex|dvi|indd)$|^microsoft|"
                                                             r"^untitled|^\d", text, re.I))


def _title(first: list[Line], body: float) -> list[Line]:
    """Page 1's largest text above its first body paragraph (consecutive lines of that size)."""
    top = [ln for ln in first if ln.size > body * 1.15 and len(ln.text) > 3]
    if not top:
        return []
    size = max(ln.size for ln in top)
    lines = sorted((ln for ln in top if abs(ln.size - size) < 0.5), key=lambda ln: ln.top)
    run = [lines[0]]
    for ln in lines[1:]:
        if ln.top - run[-1].bottom < 1.5 * size:
            run.append(ln)
    return run


@dataclass
class Block:
    lines: list[Line]

    @property
    def text(self) -> str:
        return _join_lines([ln.text for ln in self.lines])


def _blocks(lines: list[Line], body: float) -> list[Block]:
    """Consecutive lines of one column and font size, without a paragraph's gap between them."""
    blocks: list[Block] = []
    for ln in lines:
        prev = blocks[-1].lines[-1] if blocks else None
        same = (prev is not None and prev.page == ln.page and prev.column == ln.column
                and abs(prev.size - ln.size) < 0.6 and prev.bold == ln.bold
                and 0 <= ln.top - prev.bottom < 0.8 * max(ln.size, body)
                and not (_is_heading(ln, body) or _is_heading(prev, body)))
        if same:
            blocks[-1].lines.append(ln)
        elif prev is not None and (prev.page, prev.column) != (ln.page, ln.column) and _continues(blocks[-1], ln, body):
            blocks[-1].lines.append(ln)  # a paragraph running on over a page or column break
        else:
            blocks.append(Block([ln]))
    return blocks


def _continues(block: Block, ln: Line, body: float) -> bool:
    last = block.lines[-1]
    return (abs(last.size - ln.size) < 0.6 and not _is_heading(ln, body) and not _is_heading(last, body)
            and not re.search(r"[.!?:]$", last.text) and ln.text[:1].islower())


def _is_heading(ln: Line, body: float) -> bool:
    words = ln.text.split()
    if not words or len(words) > 14 or re.search(r"[.,;]$", ln.text) and not _NUMBERED.match(ln.text):
        return False
    plain = _NUMBERING.sub("", ln.text).split()
    # not a caption, a table row or a formula: a heading is mostly words
    if _CAPTION.match(ln.text) or sum(bool(_WORD.fullmatch(w)) for w in plain) < 0.6 * len(plain) and \
            not _AFTER_REFERENCES.match(ln.text):
        return False
    bold = ln.bold and all(BOLD.search(w["fontname"]) for w in ln.words)  # not a run-in heading and its text
    return (ln.size > body * 1.12 or (bold and len(words) <= 10) or bool(_NUMBERED.match(ln.text) and ln.bold)
            or bool(_HEADING_WORDS.match(ln.text) and len(words) <= 5 and (ln.text.isupper() or ln.bold)))


def _sections(blocks: list[Block], body: float, opening: int = 1) -> tuple[list[list], int, bool]:
    """[heading, paragraphs] in order; the reference list and captions out. Returns (sections, reference
    entries dropped, abstract found)."""
    sections: list[list] = [["", []]]
    references, in_refs, has_abstract = 0, False, False
    headed = any(len(b.lines) == 1 and _is_heading(b.lines[0], body) for b in blocks)
    mark = None  # a footnote's mark, standing alone: its text follows, set small
    dropped = None  # the last line of furniture: the small lines right under it are more of it
    for block in blocks:
        text, first = block.text, block.lines[0]
        footnote = mark is not None and mark.page == first.page and first.size < 0.92 * body
        mark = first if len(text) <= 3 else None
        more = dropped is not None and (dropped.page, dropped.column) == (first.page, first.column) and \
            abs(dropped.size - first.size) < 0.3 and first.size < 0.95 * body and \
            0 <= first.top - dropped.bottom < 1.5 * first.size  # "Proceedings of ...", then its place and date
        kind = _furniture_block(block, text, body)
        dropped = block.lines[-1] if kind == "notes" or more else None  # only notes run on
        if footnote or more or kind:
            continue
        if len(block.lines) == 1 and _is_heading(block.lines[0], body):
            # the list ends at the next known section (Nature prints Methods after the references)
            heading = _NUMBERING.sub("", text)
            author_like = ("," in heading or " and " in heading) and not _NUMBERED.match(text)
            if _FRONT_MATTER.match(heading) or block.lines[0].page == opening and len(sections) == 1 and not \
                    _HEADING_WORDS.match(heading) and author_like:
                continue  # a banner ("Open Access"), an author line set large: front matter
            known = _AFTER_REFERENCES.match(text) or _HEADING_WORDS.match(heading)
            in_refs = bool(_REFERENCES.match(text)) or (in_refs and not known)
            if not in_refs:
                has_abstract = has_abstract or heading.lower().startswith("abstract")
                sections.append([heading, []])
            continue
        in_refs = in_refs or bool(_REFERENCES_RUN_IN.match(text))  # "References 1. Writer A..." as one block
        if in_refs:
            references += max(1, sum(1 for ln in block.lines if _ENTRY.match(ln.text)))
            continue
        if headed and len(sections) == 1 and block.lines[0].page == opening and (
                len(text.split()) < 25 or capitalised(text) > 0.7):
            continue  # front matter before the first heading: authors, affiliations, dates
        if _CAPTION.match(text):
            continue
        m = re.match(r"^(?:(?i:abstract|summary)\s*[:.—–-]\s*|(?:ABSTRACT|SUMMARY)\s+)", text)
        if m and not has_abstract:  # "Abstract: We ..." run into its paragraph
            sections.append(["Abstract", [text[m.end():]]])
            has_abstract = True
            continue
        sections[-1][1].append(text)
    if not has_abstract and sections[0][1] and len(" ".join(sections[0][1]).split()) >= 40:
        sections[0][0], has_abstract = "Abstract", True  # the unlabelled paragraph under the title
    return sections, references, has_abstract


def _numeric(words: list[str]) -> float:
    """The share of words that are numbers (a table row's cells)."""
    return sum(bool(_NUMBER.fullmatch(w)) for w in words) / max(len(words), 1)


def _furniture_block(block: Block, text: str, body: float) -> str | None:
    """What a page carries besides the paper, and which kind: "notes" (licence and copyright lines,
    received/accepted dates, correspondence, proceedings and journal lines), "footnote" (set small, behind its
    mark), "table" (a row of numbers), "mark" (a footnote mark or a page number on its own); None for text."""
    small = block.lines[0].size < 0.92 * body
    words = text.split()
    if len(text) <= 3:
        return "mark"
    if len(block.lines) <= 10 and block.lines[0].size <= body * 1.05 and _FRONT_MATTER.match(text) or \
            len(block.lines) <= 3 and _COPYRIGHT.search(text) or len(block.lines) <= 2 and _JOURNAL_LINE.match(text):
        return "notes"
    if small and len(block.lines) <= 4 and _FOOTNOTE.match(text):
        return "footnote"
    if len(words) >= 4 and _numeric(words) >= 0.5:
        return "table"
    return None


def _join_lines(texts: list[str]) -> str:
    out = ""
    for t in texts:
        if out.endswith("-") and t[:1].islower():
            out = out + "\x00" + t  # decided later, with the paper's vocabulary
        else:
            out = f"{out} {t}" if out else t
    return out


def _repair(text: str, vocab: Counter) -> str:
    """Ligatures, loose accents, line-end hyphens (joined where the joined word is the paper's, or where
    neither half is a word of it), bracketed citation numbers."""
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)
    text = _LOOSE_ACCENT.sub(lambda m: unicodedata.normalize(
        "NFC", {"\u0131": "i", "\u0237": "j"}.get(m[2], m[2]) + _SPACING_ACCENTS[m[1]]), text)

    def hyphen(m: re.Match) -> str:
        head, tail = m[1], m[2]
        joined = (head + tail).lower()
        if vocab[joined] or (not vocab[tail.lower()] and not vocab[head.lower()]):
            return head + tail
        return f"{head}-{tail}"
    text = re.sub(r"(\w+)-\x00(\w+)", hyphen, text).replace("\x00", "")
    return _BRACKET_CITE.sub("", text)
