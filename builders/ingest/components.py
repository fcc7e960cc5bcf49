"""A paper's tables, equations and figures as data: the record's ``components``, and where its prose refers to them.

A reader gives each component it finds (:func:`component`: kind, id, label, caption, content, table cells) and
marks its prose with private-use characters: where the text mentions a component (:func:`mention_marks`, around
"Table 2") and where the component stands (:func:`place_marks`, around a displayed equation, or empty where a
table or figure was left out of the text). ``record.to_record`` calls :func:`resolve`, which takes the marks out
and turns them into character offsets into the record's normalised ``text``. The text itself is what it would be
without the marks: normalising only removes or inserts spaces and invisible characters, so the n-th other
character of the marked text is the n-th character of the record's text, and offsets are mapped by that count.
A reader's rule that deletes characters (citation markers, brackets left empty) runs through :func:`keep_marks`,
on the text without its marks, so that a mark beside what it deletes changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sciqag_dataset.builders.ingest.normalize import INVISIBLE_CHARS

KINDS = ("table", "equation", "figure")

# A mark opens with the kind of mark, then the component's index as one character of Plane 15's private use area,
# and closes with _CLOSE: no letter, digit or space in it, so no rule of a reader on words or spaces sees it.
_MENTION, _PLACE, _CLOSE = "\ue000", "\ue001", "\ue002"
_INDEX0 = 0xF0000
_MAX_COMPONENTS = 0xFFFD  # the indices one character can hold
_MARK = re.compile(f"([{_MENTION}{_PLACE}])([\U000f0000-\U000ffffd])|{_CLOSE}")
_SKIPPED = re.compile(rf"[\s{INVISIBLE_CHARS}]")  # what normalising may add or remove
_KEPT = re.compile(rf"[^\s{INVISIBLE_CHARS}]")
# the word a mention stands after when the source marks only the number: "Table <xref>2</xref>", "Eq.~\eqref{x}"
_LABEL_WORD = re.compile(
    r"(?:\b(?:Tables?|Tabs?\.|Figures?|Figs?\.|Eqs?\.|Eqns?\.|Equations?|Schemes?)\s?\(?|\()$", re.I
)
_NUMBER = re.compile(r"\(?(?:[A-Z]\.?)?\d+(?:\.\d+)*[A-Za-z]?\)?")  # "2", "S1", "3b", "1A", "(4)", "A.1", "2.1.3"


def component(
    kind: str,
    id: str,
    *,
    label: str = "",
    caption: str = "",
    content: str = "",
    content_format: str | None = None,
    cells: Sequence[Sequence[str]] = (),
    header_rows: int = 0,
) -> dict:
    """One component as a reader gives it; ``content`` of a table is its Markdown, made here from ``cells``
    when not given (``header_rows``: how many of the rows are its header)."""
    if kind not in KINDS:
        raise ValueError(f"a component is one of {', '.join(KINDS)}, not {kind!r}")
    rows = [[str(c) for c in row] for row in cells]
    if kind == "table" and rows and not content:
        content, content_format = markdown_table(rows, header_rows), "markdown"
    return {
        "id": id,
        "kind": kind,
        "label": label,
        "caption": caption,
        "content": content,
        "content_format": content_format or None,
        "cells": rows,
        "header_rows": header_rows,
    }


# how prose names a component of each kind ("Table 2", "Tab. 2", "Fig. 2", "Scheme 1", "Eq. (3)")
_NAMED_AS = {
    "table": r"Tables?|Tabs?\.",
    "figure": r"Figures?|Figs?\.?",
    "scheme": r"Schemes?",
    "equation": r"Eqs?\.|Eqns?\.?|Equations?",
}


def mentioned_as(kind: str, number: str) -> str:
    """A regex of the text that mentions component ``number`` ("2", "S1", "3b") of ``kind`` (``_NAMED_AS``'s
    keys), for a reader whose text carries no marks (``resolve``'s ``mentioned_as``)."""
    brackets = r"\(?{}\)?" if kind == "equation" else "{}"
    # the word in any case: "equation (3)" and "table 2" in running text are mentions too
    return rf"\b(?i:{_NAMED_AS[kind]})\s?{brackets.format(re.escape(number))}(?![\w.]\d|\d)"


def unique_id(wanted: str | None, kind: str, taken: set[str]) -> str:
    """``wanted`` (the source's own id), else "table-3" by kind and count; never an id ``taken`` holds."""
    base = wanted or f"{kind}-{sum(t.startswith(kind + '-') for t in taken) + 1}"
    found, n = base, 1
    while found in taken:
        n += 1
        found = f"{base}-{n}"
    taken.add(found)
    return found


def mention_marks(indices: Sequence[int]) -> tuple[str, str]:
    """(before, after) the text that mentions the components at ``indices`` of the reader's list."""
    indices = [i for i in indices if i < _MAX_COMPONENTS]
    return "".join(_MENTION + chr(_INDEX0 + i) for i in indices), _CLOSE * len(indices)


def place_marks(index: int) -> tuple[str, str]:
    """(before, after) where component ``index`` stands: around its text, or nothing between them."""
    return (_PLACE + chr(_INDEX0 + index), _CLOSE) if index < _MAX_COMPONENTS else ("", "")


def unmark(text: str | None) -> str | None:
    """``text`` without its marks."""
    return _MARK.sub("", text) if text and _CLOSE in text else text


def keep_marks(text: str, drop: Callable[[str], str]) -> str:
    """``drop(text)`` for a function that only deletes characters (citation markers, empty brackets), applied to
    the text without its marks, so that a mark beside what it deletes cannot change what it deletes; each mark
    goes back before the first character that was after it and is kept."""
    if not text or _CLOSE not in text:
        return drop(text)
    plain, marks, pos = [], [], 0
    for m in _MARK.finditer(text):
        plain.append(text[pos : m.start()])
        marks.append((sum(map(len, plain)), m[0]))
        pos = m.end()
    plain.append(text[pos:])
    before, after = "".join(plain), drop("".join(plain))
    kept_at, j = [], 0  # for each character of ``before``, where it is in ``after`` (or where it would be)
    for c in before:
        kept_at.append(j)
        if j < len(after) and after[j] == c:
            j += 1
    kept_at.append(len(after))
    out, pos = [], 0
    for at, mark in marks:
        out += [after[pos : kept_at[at]], mark]
        pos = kept_at[at]
    return "".join(out) + after[pos:]


def resolve(raw: list[dict], marked: list[str], text: str, warn: Callable[[str], None]) -> list[dict]:
    """The record's components: the reader's ``raw`` ones with their ``mentions`` (offsets into ``text``,
    widened to the label's word: "Table 2", not "2") and their context, the paragraph before and after where
    each stands. ``marked``: the reader's texts, in the order their normalised forms make ``text``.

    A reader whose text passes through a library that drops the marks (trafilatura) says instead how the text
    refers to a component (``mentioned_as``, a regex) and how the paragraph it stands after begins
    (``follows``). A component that does not stand in the text (a float at the end of a JATS file) is placed
    after the paragraph of its first mention, as a typesetter would place it."""
    if not raw:
        return []
    spans, places = _spans(marked, text, warn)
    out = []
    for i, comp in enumerate(raw):
        comp = dict(comp)
        pattern, follows = comp.pop("mentioned_as", None), comp.pop("follows", None)
        found = spans.get(i, []) + [m.span() for m in re.finditer(pattern, text)] if pattern else spans.get(i, [])
        mentions = sorted({_widen(text, s, e) for s, e in found})
        where = places.get(i)
        if where is None and follows and (at := text.find(follows)) >= 0:
            end = text.find("\n\n", at)
            where = (len(text), len(text)) if end < 0 else (end, end)
        if where is None and mentions:
            end = text.find("\n\n", mentions[0][1])
            where = (len(text), len(text)) if end < 0 else (end, end)
        before = text[: where[0]].rstrip().rsplit("\n\n", 1)[-1].strip() if where else ""
        after = text[where[1] :].lstrip().split("\n\n", 1)[0].strip() if where else ""
        out.append(
            {
                **comp,
                "context_before": before,
                "context_after": after,
                "mentions": [{"start": s, "end": e} for s, e in mentions],
            }
        )
    return out


def _spans(marked: list[str], text: str, warn) -> tuple[dict[int, list], dict[int, tuple[int, int]]]:
    """(component -> its mentions' (start, end), component -> where it stands) in ``text``."""
    kept = [m.start() for m in _KEPT.finditer(text)]
    opened: list[tuple[str, int, int]] = []  # (kind, component, characters kept before the mark)
    found: list[tuple[str, int, int, int]] = []
    count = 0
    for part in marked:
        pos = 0
        for m in _MARK.finditer(part):
            count += _count_kept(part[pos : m.start()])
            pos = m.end()
            if m[1]:
                opened.append(("m" if m[1] == _MENTION else "p", ord(m[2]) - _INDEX0, count))
            elif opened:
                kind, index, start = opened.pop()
                found.append((kind, index, start, count))
        count += _count_kept(part[pos:])
    if count != len(kept):  # the text is not the marked text's normal form: no offset can be trusted
        warn("the text's marks for tables, equations and figures were lost; their mentions are left out")
        return {}, {}

    def start(k: int) -> int:  # where the k-th kept character is
        return kept[k] if k < len(kept) else len(text)

    def end(k: int) -> int:  # just after the first k kept characters
        return kept[k - 1] + 1 if k else 0

    spans: dict[int, list] = {}
    places: dict[int, tuple[int, int]] = {}
    for kind, index, a, b in found:
        if kind == "m" and b > a:
            spans.setdefault(index, []).append((start(a), end(b)))
        elif kind == "p" and index not in places:
            places[index] = (start(a), end(b)) if b > a else (end(a), end(a))
    return spans, places


def _count_kept(segment: str) -> int:
    return len(segment) - len(_SKIPPED.findall(segment))


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A mention of a number alone widened to its word and brackets: "2" of "Table 2" -> "Table 2", "3" of
    "Eq. (3)" -> "Eq. (3)", "(3)" of "Eq. (3)" -> "Eq. (3)"."""
    if not _NUMBER.fullmatch(text[start:end]):
        return start, end
    m = _LABEL_WORD.search(text, max(0, start - 16), start)
    if not m:
        return start, end
    if m[0].endswith("("):
        if text[end : end + 1] != ")":
            return start, end
        end += 1
    return m.start(), end


def markdown_table(cells: list[list[str]], header_rows: int) -> str:
    """A table as GitHub Markdown: its header rows merged into one (a cell spanning columns repeats its text
    in each, so "Cooling" over "Rate" reads "Cooling Rate"); an empty header row when it has none."""
    width = max((len(r) for r in cells), default=0)
    if not width:
        return ""
    rows = [[_md_cell(c) for c in r] + [""] * (width - len(r)) for r in cells]
    head = [" ".join(dict.fromkeys(r[k] for r in rows[:header_rows] if r[k])) for k in range(width)]
    lines = [head, ["---"] * width, *rows[header_rows:]]
    return "\n".join("| " + " | ".join(r) + " |" for r in lines)


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
