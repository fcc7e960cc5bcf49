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

Layers, each importing only the ones below it: ``parse`` (the result and its status) on ``reply_formats``
(one reader per shape, and the order they are tried in) on ``reply_text`` (line markers, cleaning, the
collector of pairs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sciqag_dataset.qa.reply_formats import read_reply
from sciqag_dataset.qa.reply_text import normalise

OK, SHORT, UNPARSED = "ok", "short", "unparsed"


@dataclass
class ParseResult:
    pairs: list[dict[str, str]] = field(default_factory=list)  # {"question", "answer"}
    keywords: list[str] = field(default_factory=list)
    status: str = UNPARSED  # ok | short | unparsed
    reason: str | None = None


def _parse(text: str, min_pairs: int) -> ParseResult:
    if not text.strip():
        return ParseResult(status=UNPARSED, reason="empty output")
    out, keywords = read_reply(text)
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
        return _parse(normalise(text), need)
    except Exception as exc:  # a parser bug must not stop a batch; tests assert this never happens
        return ParseResult([], [], UNPARSED, f"parser error: {type(exc).__name__}: {exc}")
