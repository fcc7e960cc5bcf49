"""A PDF's title from its first text page's lines: the layout model's title block where it has one (not a web
address, a volume or an article type, without a section label above the title or the authors' line under it, and
not the journal's name), else the largest text above the body, without a journal's masthead, name or section label
set above it; a title's lines that the model split from it are taken back."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from sciqag_dataset.builders.ingest.pdf_blocks import HEADING_WORDS
from sciqag_dataset.builders.ingest.pdf_glyphs import family
from sciqag_dataset.builders.ingest.pdf_line import Line

# two or more people's names, each of two to four words, with their marks ("Ada Quill1,2, Bo Renner* and Cy Moss"),
# the list going on in the next line ("Bo Renner, Cy Moss,")
_NAME = r"[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|van|von|de|da|del|di|le|la)){1,3}[\d*†‡§]*(?:,\d+)*"
AUTHOR_NAMES = re.compile(rf"^{_NAME}(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*){_NAME})+(?:\s*,|\s+and)?\s*$")
# a journal's name set above the title, larger than it ("Journal of Statistical Software")
_MASTHEAD = re.compile(
    r"^(?:The\s+)?(?:[A-Z][\w&-]*\s+){0,3}Journal(?:\s+(?:of|for|on)(?:\s+(?:[A-Z][\w&-]*|and|&|the))+)?$|"
    r"^(?:Annals|Proceedings|Transactions) of(?:\s+(?:[A-Z][\w&-]*|and|&|the))+$"
)  # the name alone: "Journal of Statistical Software", not a title about journals


# a university's or an institute's name alone on a line (a thesis's title page sets it above the title)
INSTITUTION = re.compile(
    r"(?:the\s+)?(?:universi\w+|college|institut\w*)\s+(?:of|for|d[aeiou]|del|della|des)(?:\s+[\w.&'-]+){1,6}|"
    r"(?:[A-Z][\w.&'-]*\s+){1,5}(?:university|college|institute\s+of\s+technology)",
    re.I,
)


# an article's type printed above its title, larger than it ("Review", "Original Article", "Brief Report")
_ARTICLE_TYPE = re.compile(
    r"\s*(?:(?:systematic|narrative|mini|critical)[ -]?)?reviews?\s*$|"
    r"\s*(?:original|research|review|short|brief|rapid)?\s*"
    r"(?:articles?|papers?|communications?|reports?|letters?|research)\s*$|"
    r"\s*(?:editorial|perspective|commentary|viewpoint|essay|notes?|correspondence|highlights?)\s*$",
    re.I,
)

# a journal's web address or volume that a layout model may call a title ("www.bioinformation.net", "Volume 13(3)")
_ADDRESS_OR_VOLUME = re.compile(
    r"\s*(?:(?:https?://|www\.)\S+|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|edu|gov|info)(?:/\S*)?|"
    r"(?:vol(?:ume)?|issue|no)\.?\s*\d[\w().:/-]*(?:,?\s*(?:issue|no)\.?\s*\d[\w().:/-]*)?)\s*",
    re.I,
)

# the front matter's headings, which no title is ("Keywords", "Highlights", "ARTICLE INFO"), and a heading's number
_FRONT_HEADING = re.compile(r"(?:key\s?words?|highlights|article\s+info(?:rmation)?)\b", re.I)
_NUMBERING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.)\s+")

# a title of two to four words ("Tidy Data"), which plausible_title() finds too short to trust unseen
_SHORT_TITLE = re.compile(r"[A-Z][\w'’-]*(?:\s+[\w'’-]+){1,3}")


def title_of(
    first: list[Line], top: list[Line], around: list[Line], body: float, meta: str = "", page: list[Line] = ()
) -> list[Line]:
    """The title's lines: those of ``top`` (the lines a title may be among) that print ``meta`` (the PDF's Title
    metadata), else the model's title block in ``first`` (the page's text lines), else the largest run of ``top``
    with the lines of its model blocks in ``around``. ``page`` (all the page's lines, its furniture too; else
    ``around``) holds the citation line that names the journal, whose name set large is no title."""
    page = page or around
    # a short title in the metadata ("Tidy Data") is taken only where the page prints it, as a longer one is
    named = (plausible_title(meta) or _SHORT_TITLE.fullmatch(meta or "")) and not (
        _ARTICLE_TYPE.match(meta) or _MASTHEAD.search(meta)
    )
    printed = _printed(meta, top, body) if named else []  # not a banner a template put in the metadata
    if printed:
        return printed
    model = _model_title(first)
    banner = len(model) == 1 and _journal_name(model[0], page)
    if model and max(ln.size for ln in model) >= body and not banner:  # one set smaller than the text is a label
        return _with_subtitle(model, around, body)
    return _with_subtitle(_whole_block(_title(top, body, page), around), around, body)


def _with_subtitle(title: list[Line], lines: list[Line], body: float) -> list[Line]:
    """The title with its subtitle: the run of lines right under it, smaller than it but still a third larger than
    the body, in its weight and starting where it starts ("A PRISMA-compliant meta-analysis"), and not a list of
    names (the authors set large)."""
    if not title:
        return title
    last, size = title[-1], min(ln.size for ln in title)
    below = sorted((ln for ln in lines if ln.page == last.page and ln.top > last.bottom - 1), key=lambda ln: ln.top)
    run: list[Line] = []
    for ln in below:
        above = run[-1] if run else last
        if not (
            1.3 * body < ln.size < size - 0.5
            and ln.bold == last.bold
            and abs(ln.x0 - title[0].x0) < ln.size
            and 0 <= ln.top - above.bottom < 0.8 * ln.size
            and not AUTHOR_NAMES.match(ln.text)
        ):
            break
        run.append(ln)
    return title + run


def _printed(meta: str, lines: list[Line], body: float) -> list[Line]:
    """One to four consecutive lines of one size, larger than the body, whose letters and digits are the metadata
    title's (a footnote mark or a hyphen at a line end aside): the metadata confirmed by the page."""
    want = _letters(meta)
    lines = sorted((ln for ln in lines if ln.size > body), key=lambda ln: (ln.page, ln.top))
    for k, ln in enumerate(lines):
        if k and _continues(lines[k - 1], ln):
            continue  # a run starts where the line above is not of it (a title's second line is no title)
        run = [ln]
        for nxt in lines[k + 1 : k + 4]:
            if not _continues(run[-1], nxt):
                break
            run.append(nxt)
        for n in range(1, len(run) + 1):
            got = _letters(" ".join(x.text for x in run[:n]))
            if got == want or len(got) > len(want) and got.startswith(want) and len(got) - len(want) <= 2:
                return run[:n]
    return []


def _continues(above: Line, line: Line) -> bool:
    """``line`` is the next line of ``above``'s run: one size, close below it, side by side with it."""
    return (
        above.page == line.page
        and abs(above.size - line.size) < 0.5
        and 0 <= line.top - above.bottom < 1.5 * line.size
        and line.x0 < _right(above)
        and above.x0 < _right(line)
    )


def _right(ln: Line) -> float:
    return max((w["x1"] for w in ln.words), default=ln.x0)


def _letters(text: str) -> str:
    """The text's letters and digits, lower case, without accents ("ﬁ" as "fi"; "Sj¨ogren" as "Sjögren" is)."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"[^\w]|_", "", text).lower()


def _model_title(first: list[Line]) -> list[Line]:
    """The lines of the first block the layout model calls the title on the first page with text (not a web
    address, a volume or an article type), and of the title blocks right under it at its size (a title's line the
    model set apart), without a section label set above the title in the same block ("Research Article") and
    without smaller lines under it."""
    text = {b: " ".join(ln.text for ln in first if ln.box == b) for b in {ln.box for ln in first}}
    box = next(
        (
            ln.box
            for ln in first
            if ln.kind == "title"
            and not _ADDRESS_OR_VOLUME.fullmatch(text[ln.box])
            and not _ARTICLE_TYPE.fullmatch(text[ln.box])  # "Short Communication" in a title block of its own
        ),
        None,
    )
    lines = [ln for ln in first if ln.box == box] if box is not None else []
    lines = lines[1:] if len(lines) > 1 and _label(lines[0], lines[1]) else lines
    # the block ends with the title's last line: smaller lines after it are the authors' names, as are names
    # set nearly as large but in another weight ("Ada Quill*, Bo Renner and Cy Moss" under a bold title)
    big = max((ln.size for ln in lines), default=0.0)
    lines = lines[: max((k + 1 for k, ln in enumerate(lines) if ln.size >= big - 1), default=0)]
    while (
        len(lines) > 1
        and lines[-1].bold != lines[0].bold
        and lines[-1].size <= big - 0.5
        and AUTHOR_NAMES.match(lines[-1].text)
    ):
        lines = lines[:-1]
    after = next((k + 1 for k, ln in enumerate(first) if lines and ln is lines[-1]), len(first))
    for ln in first[after:]:
        if ln.box in {x.box for x in lines} or ln.kind != "title":
            continue
        if abs(ln.size - big) >= 0.5 or not 0 <= ln.top - lines[-1].bottom < 1.2 * ln.size:
            break
        lines.append(ln)
    return lines


def _whole_block(title: list[Line], lines: list[Line]) -> list[Line]:
    """The title's lines and the others below them in the layout model's blocks it is in, at its size (a title's
    second line set apart from the first)."""
    boxes = {ln.box for ln in title if ln.box >= 0}
    if not boxes:
        return title
    size, ids, start = max(ln.size for ln in title), {id(ln) for ln in title}, min(ln.top for ln in title)
    # below the title's first line: a label above it, which the rules left out, stays out
    return [ln for ln in lines if id(ln) in ids or ln.box in boxes and _one_size(ln.size, size) and ln.top > start]


def opening_block(first: list[Line]) -> list[Line]:
    """The first text line with the lines of its layout-model block (a title's second line), for a page where
    nothing stands out as the title: a title set no larger than the body, its authors' line larger than it. Where
    the model's first section header on the page stands above the first paragraph and names no section, no front
    matter, no authors and no journal, that block is the title (one set at the body's size under a volume line)."""
    if not first or first[0].box < 0:
        return first[:1]
    for ln in first:
        if ln.kind == "text" and sum(x.box == ln.box for x in first) >= 3:
            break  # the first paragraph
        if ln.kind == "section-header":
            name = _NUMBERING.sub("", ln.text)
            if not (
                HEADING_WORDS.match(name)
                or _FRONT_HEADING.match(name)
                or AUTHOR_NAMES.match(ln.text)
                or _MASTHEAD.search(ln.text)
                or _letter_spaced(ln.text)
            ):
                return [x for x in first if x.box == ln.box]
            break
    return [ln for ln in first if ln.box == first[0].box and ln.page == first[0].page]


def _letter_spaced(text: str) -> bool:
    """Most of its words single letters ("a b s t r a c t", "R E S E ARCH AR TIC L E"): a heading set letter-spaced."""
    words = text.split()
    return len(words) > 2 and sum(len(w) == 1 for w in words) > len(words) / 2


def plausible_title(text: str) -> bool:
    return (
        len(text) > 15
        and " " in text
        and not re.search(
            # a file's name ("vol 7 (06.03.2008).pmd"), an arXiv identifier stamped as the title
            r"^doi|\.(docx?|pdf|tex|dvi|indd|pmd|p65|qxd|qxp|rtf|odt|wpd|e?ps)$|^microsoft|^arxiv:|"
            r"^untitled|^\d",
            text,
            re.I,
        )
    )


def _title(first: list[Line], body: float, page: list[Line] = ()) -> list[Line]:
    """Page 1's largest text above its first body paragraph (consecutive lines of that size), without a
    journal's section label or name set above it ("NOTES", "Communication", a banner that the citation line among
    the ``page``'s lines names), nor a university's name: larger than the title, the next largest run is the
    title; at its size, the run goes on without it."""
    top = [ln for ln in first if ln.size > body * 1.15 and len(ln.text) > 3 and not INSTITUTION.fullmatch(ln.text)]
    run = _largest_run(top)
    if len(run) > 1 and _label(run[0], run[1]):
        return run[1:]
    # a label's words in two sizes, one block ("Original" set large over "Research")
    block = " ".join(ln.text for ln in first if ln.box >= 0 and ln.box == run[0].box) if run else ""
    if len(run) == 1 and (
        _label(run[0], None)
        or _MASTHEAD.search(run[0].text)
        or _ARTICLE_TYPE.match(run[0].text)
        or _ARTICLE_TYPE.fullmatch(block)
        or _journal_name(run[0], page)
    ):
        below = _largest_run([ln for ln in top if ln.top > run[0].bottom and ln.size > 1.3 * body])
        if sum(len(ln.text.split()) for ln in below) >= 3:
            return below
    return run


def _journal_name(ln: Line, lines: list[Line]) -> bool:
    """The line is the journal's name set as a banner: a smaller line of the page opens with it, or names it after
    the authors, followed by the year or volume ("Medicine (2018) 97:11", "BMC Bioinformatics 2009, 10:46",
    "D. Writer et al. / Molecular Phylogenetics and Evolution 69 (2013)")."""
    name = " ".join(ln.text.split())
    if len(name) < 4:
        return False
    cited = re.compile(rf"(?:^|/\s*){re.escape(name)}\s*,?\s*\(?\d", re.I)
    return any(x is not ln and x.size < ln.size and cited.search(" ".join(x.text.split())) for x in lines)


def _largest_run(lines: list[Line]) -> list[Line]:
    if not lines:
        return []
    size = max(ln.size for ln in lines)
    lines = sorted((ln for ln in lines if _one_size(ln.size, size)), key=lambda ln: ln.top)
    run = [lines[0]]
    for ln in lines[1:]:
        if ln.top - run[-1].bottom < 1.5 * size:
            run.append(ln)
    return run


def _one_size(a: float, b: float) -> bool:
    """Two lines' sizes are one size: within half a point, or 4 % of it (a scan's OCR layer sizes each line of a
    title as it measured it: 21.4 and 20.8 points)."""
    return abs(a - b) < max(0.5, 0.04 * max(a, b))


def _label(ln: Line, title: Line | None) -> bool:
    """A section label, not a title's line: a word or two, no digits, no colon at its end, letter-spaced, or in
    capitals where the title is not, or in a font family unlike the title's (an italic name opening the title is
    the title's)."""
    words = ln.text.split()
    spaced = len(words) > 2 and all(len(w) == 1 for w in words)  # "N O T E S"
    if not (len(words) <= 2 or spaced) or len(ln.text) > 24 or re.search(r"\d", ln.text):
        return False
    if ln.text.rstrip().endswith(":") and not _ARTICLE_TYPE.fullmatch(ln.text.rstrip(" :")):
        return False  # a title's lead ("POINTWISE:" over "Predicting Points ..."), not "Review:"
    if spaced or title is None:
        return spaced or ln.text.isupper()
    # at the title's size a family of its own is not enough: a label's word or two are capitalised nouns
    # ("Communication", "Short Communication"), where a title's first line may run on ("Reduction of")
    label_words = abs(ln.size - title.size) >= 0.5 or re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", ln.text)
    other = bool(ln.words and title.words and label_words) and (
        _stem(ln.words[0]) != Counter(_stem(w) for w in title.words).most_common(1)[0][0] or ln.bold != title.bold
    )  # the title line's own family (not that of an italic word opening it), or its weight
    # a block of its own where a layout model read the page ("Research Article" above the title's block), set
    # apart from the title's first line (a title's first word on a line of its own, "Efficient" over "String
    # Matching:", stands at the title's line spacing)
    apart = (
        bool(label_words)
        and ln.box >= 0
        and title.box >= 0
        and ln.box != title.box
        and (title.top - ln.bottom >= 0.25 * title.size or bool(_ARTICLE_TYPE.fullmatch(ln.text)))
    )
    return ln.text.isupper() and not title.text.isupper() or other or apart


def _stem(word: dict) -> str:
    """The word's font family, TeX's fonts by their stem: CMBX12 and CMTI12 are Computer Modern's bold and
    italic, LMRoman10-Bold Latin Modern's; their names carry the style where other fonts' carry it after "-"."""
    return re.sub(r"^(CM|LM)[A-Za-z]*\d+$", r"\1", family(word["fontname"]))
