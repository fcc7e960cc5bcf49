"""Turn an LLM's QA reply into question/answer pairs, whatever shape it came in.

Teachers and small generators rarely follow the requested ``Q1:``/``A1:`` format
exactly, so the parser tries, in order, and keeps the first that yields pairs:

1. JSON: a list of ``{"question", "answer"}`` (or ``Q``/``A``) objects, an object
   holding such a list, possibly inside a fenced block; truncated JSON is salvaged
   pair by pair.
2. Question markers: ``Q1:``, ``Q1.``, ``Q1)``, ``**Q1:**``, ``Question 1:``, ``Q:``,
   ``1. Question: ...`` with ``A1:`` / ``Answer:`` answers (or, failing those, the
   paragraph after the question).
3. Answer markers only: ``Answer:`` lines, each question being the block above.
4. A numbered list: ``1. question?`` followed by its answer paragraph.

Numbered or bulleted lists inside an answer stay in that answer: only the
markers of the chosen mode start a new pair. A leading ``Keywords: a, b`` line is
returned separately; anything else before the first question is ignored.
``parse_qa`` never raises: a reply it cannot read is ``status="unparsed"`` with
a reason, so one bad reply never stops a batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .reply_formats import parse_answer_only, parse_json, parse_markers, parse_numbered
from .reply_text import Collector, KEYWORDS, Marker, NUMBERED, RULE, THINK, classify, split_keywords, strip_bold


OK, SHORT, UNPARSED = "ok", "short", "unparsed"


@dataclass
class ParseResult:
    pairs: list[dict[str, str]] = field(default_factory=list)  # {"question", "answer"}
    keywords: list[str] = field(default_factory=list)
    status: str = UNPARSED  # ok | short | unparsed
    reason: str | None = None


# ---------------------------------------------------------------------------------------------
def _normalise(text) -> str:
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return THINK.sub("", text)


def _take_keywords(lines: list[str], marks: list[Marker | None]) -> list[str]:
    """Read (and blank out) a ``Keywords:`` line, or list, that comes before the first question."""
    for i, line in enumerate(lines):
        if marks[i] is not None or NUMBERED.match(line) and "?" in line:
            return []
        m = KEYWORDS.match(line)
        if not m:
            continue
        rest = strip_bold(m["rest"])
        lines[i] = ""
        if rest:
            return split_keywords(rest)
        keywords = []
        for j in range(i + 1, len(lines)):
            if marks[j] is not None or (not lines[j].strip() and keywords):
                break
            if lines[j].strip():
                keywords += split_keywords(lines[j])
                lines[j] = ""
        return keywords
    return []


def _take_trailing_keywords(pair: dict[str, str]) -> list[str]:
    """Some models write the Keywords paragraph last; it must not stay in the last answer."""
    paragraphs = pair["answer"].split("\n\n")
    if len(paragraphs) < 2:
        return []
    lines = paragraphs[-1].split("\n")
    keywords = _take_keywords(lines, [None] * len(lines))
    if keywords and not any(s.strip() for s in lines):
        pair["answer"] = "\n\n".join(paragraphs[:-1]).strip()
        return keywords
    return []


def _parse(text: str, min_pairs: int) -> ParseResult:
    if not text.strip():
        return ParseResult(status=UNPARSED, reason="empty output")
    out = Collector()
    keywords = parse_json(text, out)
    if keywords is None:
        lines = ["" if RULE.match(s) else s for s in text.split("\n")]
        marks = [classify(s) for s in lines]
        keywords = _take_keywords(lines, marks)
        has_questions = any(mk is not None and mk.kind == "Q" for mk in marks)
        if has_questions:
            parse_markers(lines, marks, out)
        elif any(marks):
            parse_answer_only(lines, marks, out)
        if not out.pairs and not has_questions:
            fresh = Collector()
            parse_numbered(lines, fresh, strict=True)
            if not fresh.pairs:
                fresh = Collector()
                parse_numbered(lines, fresh, strict=False)
            if fresh.pairs or not out.no_answer:
                out = fresh
    if not keywords and out.pairs:
        keywords = _take_trailing_keywords(out.pairs[-1])
    notes = out.notes()
    n = len(out.pairs)
    if n == 0:
        reason = "; ".join(notes) if notes else "no question/answer markers found"
        return ParseResult([], keywords, UNPARSED, reason)
    if n < min_pairs:
        return ParseResult(out.pairs, keywords, SHORT, "; ".join([f"parsed {n} of {min_pairs} pairs", *notes]))
    return ParseResult(out.pairs, keywords, OK, "; ".join(notes) or None)


def parse_qa(text: str, expected: int = 10, min_pairs: int | None = None) -> ParseResult:
    """Parse a QA reply. ``status`` is "ok" with at least ``min_pairs`` (default ``expected``)
    pairs, "short" with fewer, "unparsed" with none; every parsed pair is kept."""
    need = expected if min_pairs is None else min_pairs
    try:
        need = max(1, int(need))
    except (TypeError, ValueError, OverflowError):
        need = 1
    try:
        return _parse(_normalise(text), need)
    except Exception as exc:  # a parser bug must not stop a batch; tests assert this never happens
        return ParseResult([], [], UNPARSED, f"parser error: {type(exc).__name__}: {exc}")
