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

import json
import re
from dataclasses import dataclass, field

OK, SHORT, UNPARSED = "ok", "short", "unparsed"


@dataclass
class ParseResult:
    pairs: list[dict[str, str]] = field(default_factory=list)  # {"question", "answer"}
    keywords: list[str] = field(default_factory=list)
    status: str = UNPARSED  # ok | short | unparsed
    reason: str | None = None


# ---------------------------------------------------------------------------------------------
# Line patterns. `[^\S\n]` is horizontal whitespace of any kind (tabs, no-break spaces).
_HS = r"[^\S\n]"
_LEAD = rf"^{_HS}*(?:[-*+•>]{_HS}+)?(?:#{{1,6}}{_HS}*)?"  # bullet / quote / heading
_BOLD = r"(?:\*\*|__|\*)"
_MARKER = re.compile(
    _LEAD
    + rf"(?:(?P<list>\d{{1,3}})[.)]{_HS}+)?"  # "1. Question: ..."
    + rf"{_BOLD}?{_HS}*"
    + r"(?P<kind>Q|A|(?i:question|answer|ans))"
    + rf"{_HS}*(?P<num>\d{{1,3}})?"
    + rf"{_HS}*(?:\([^()\n]{{0,80}}\))?"  # "Q1 (thermal stability):"
    + rf"{_HS}*{_BOLD}?{_HS}*"
    + r"(?P<sep>[:：]|\.(?!\d)|\)|[-–—](?=\s)|$)"
    + rf"{_HS}*{_BOLD}?{_HS}*(?P<rest>.*)$"
)
# An answer marker later on a question's own line ("Q1: Why ...? A1: Because ...").
_INLINE_ANSWER = re.compile(
    rf"(?:(?<=\s)|^){_BOLD}?(?P<kind>A|(?i:answer|ans)){_HS}*(?P<num>\d{{1,3}})?{_HS}*{_BOLD}?{_HS}*[:：]"
)
_KEYWORDS = re.compile(
    _LEAD + rf"{_BOLD}?{_HS}*(?i:key{_HS}*words?|key{_HS}*terms|key{_HS}*phrases){_HS}*{_BOLD}?{_HS}*[:：]"
    rf"{_HS}*{_BOLD}?(?P<rest>.*)$"
)
_NUMBERED = re.compile(
    rf"^(?P<indent>{_HS}*)(?:#{{1,6}}{_HS}*)?{_BOLD}?{_HS}*(?P<num>\d{{1,3}})[.)]{_HS}+(?P<rest>\S.*)$"
)
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,}|`{3,}[\w+-]*)\s*$")  # separators, code fences
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```[\w+-]*[^\S\n]*\n(.*?)(?:\n[^\S\n]*```|\Z)", re.S)
_JSON_PAIR = re.compile(
    r'"(?P<qk>question|q)"\s*:\s*"(?P<q>(?:[^"\\]|\\.)*)"\s*,\s*"(?P<ak>answer|a)"\s*:\s*"(?P<a>(?:[^"\\]|\\.)*)"',
    re.I | re.S,
)
def _is_example(question: str) -> bool:
    from .prompts import EXAMPLE_QUESTION  # the format example shown in the paper-style prompt

    return " ".join(question.lower().split()) == EXAMPLE_QUESTION.lower()


_PLACEHOLDER = re.compile(r"^\W*(?i:question|answer|keyword)\s*\d{0,3}\W*$")
_Q_KEYS = ("question", "q", "query", "prompt")
_A_KEYS = ("answer", "a", "response", "reply")


@dataclass
class _Marker:
    kind: str  # "Q" or "A"
    num: int | None
    rest: str


def _classify(line: str) -> _Marker | None:
    m = _MARKER.match(line)
    if not m:
        return None
    kind, num, sep = m["kind"], m["num"], m["sep"]
    word = len(kind) > 1
    if num is None and m["list"] is not None:
        num = m["list"]
    if m["num"] is None:
        # "Q."/"A)"/"A-" without a number are ordinary prose ("A. thaliana", "A-site"); a bare word on
        # its own line is a heading ("### Answer").
        if not (sep in (":", "：") or (word and sep == "" and not m["rest"])):
            return None
    kind = "Q" if kind[0] in "Qq" else "A"
    return _Marker(kind, int(num) if num is not None else None, m["rest"])


def _strip_bold(text: str) -> str:
    text = text.strip()
    for mark in ("**", "__"):
        if text.startswith(mark) and text.endswith(mark) and len(text) > 2 * len(mark):
            text = text[len(mark):-len(mark)].strip()
        elif text.endswith(mark) and text.count(mark) % 2 == 1:  # opener eaten with the marker
            text = text[: -len(mark)].rstrip()
        elif text.startswith(mark) and text.count(mark) % 2 == 1:
            text = text[len(mark):].lstrip()
    return text


def _clean_question(lines: list[str]) -> str:
    return _strip_bold(" ".join(s.strip() for s in lines if s.strip()))


def _clean_answer(lines: list[str]) -> str:
    lines = [s.rstrip() for s in lines]
    while lines and (not lines[-1].strip() or _RULE.match(lines[-1])):
        lines.pop()
    while lines and (not lines[0].strip() or _RULE.match(lines[0])):
        lines.pop(0)
    if lines:
        lines[0] = _strip_bold(lines[0]) if lines[0].strip().startswith(("**", "__")) else lines[0].strip()
    return "\n".join(lines).strip()


def _split_keywords(text: str) -> list[str]:
    text = text.strip()
    # "Keywords: [a, b]" copied from the template (but not a keyword such as "[BMIM]PF6")
    if text[:1] + text[-1:] in ("[]", "{}") and not any(c in text[1:-1] for c in "[]{}"):
        text = text[1:-1].strip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    sep = "," if "," in text else ";" if ";" in text else None
    parts = text.split(sep) if sep else [text]
    out = []
    for p in parts:
        p = re.sub(rf"^{_HS}*(?:[-*+•]|\d{{1,3}}[.)]){_HS}+", "", p).strip().strip("\"'`*").strip()
        if _has_text(p) and not _PLACEHOLDER.match(p):
            out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
class _Collector:
    """Pairs plus the counts that explain what was dropped."""

    def __init__(self) -> None:
        self.pairs: list[dict[str, str]] = []
        self.seen: set[str] = set()
        self.no_answer = 0
        self.duplicates = 0
        self.orphans = 0
        self.placeholders = 0

    def add(self, question: str, answer: str) -> None:
        question, answer = _unwrap(question), _unwrap(answer)
        if _PLACEHOLDER.match(question) or _PLACEHOLDER.match(answer) or _is_example(question):
            self.placeholders += 1  # a weak model copied the format skeleton "Q1: [Question 1]"
            return
        if not _has_text(question):
            if _has_text(answer):
                self.orphans += 1
            return
        if not _has_text(answer):
            self.no_answer += 1
            return
        key = re.sub(r"\W+", " ", question.lower()).strip()
        if key in self.seen:  # a model stuck in a loop repeats whole blocks
            self.duplicates += 1
            return
        self.seen.add(key)
        self.pairs.append({"question": question, "answer": answer})

    def notes(self) -> list[str]:
        out = []
        if self.no_answer:
            out.append(f"{self.no_answer} question(s) without an answer dropped")
        if self.duplicates:
            out.append(f"{self.duplicates} repeated question(s) dropped")
        if self.orphans:
            out.append(f"{self.orphans} answer(s) without a question ignored")
        if self.placeholders:
            out.append(f"{self.placeholders} template placeholder pair(s) dropped")
        return out


def _has_text(s: str) -> bool:
    return any(c.isalnum() for c in s)


def _unwrap(s: str) -> str:
    """"[What limits ...?]": the model kept the template's brackets around real text."""
    s = s.strip()
    if s[:1] == "[" and s[-1:] == "]" and not any(c in s[1:-1] for c in "[]"):
        return s[1:-1].strip()
    return s


def _split_question_block(lines: list[str]) -> tuple[list[str], list[str]]:
    """A question segment with no answer marker: question first, the rest is its answer."""
    body = list(lines)
    while body and not body[0].strip():
        body.pop(0)
    if not body:
        return [], []
    for i, line in enumerate(body):
        if not line.strip():
            break
        if _strip_bold(line).endswith("?"):
            return body[: i + 1], body[i + 1:]
    first = body[0]
    if len(body) == 1:
        q, a = _split_on_question_mark(first)
        return [q], [a]
    return [first], body[1:]


def _split_on_question_mark(text: str) -> tuple[str, str]:
    """"**Why X?** Because Y." or "Why X? Because Y." on one line."""
    text = text.strip()
    m = re.match(r"^(\*\*|__)(.+?)\1\s*(.*)$", text)
    if m and m[3]:
        return m[2], m[3]
    i = text.find("? ")
    if i > 0 and text[i + 2:].strip():
        return text[: i + 1], text[i + 2:]
    return text, ""


def _parse_markers(lines: list[str], marks: list[_Marker | None], out: _Collector) -> None:
    q: list[str] | None = None
    a: list[str] | None = None
    a_num: int | None = None

    def flush() -> None:
        if q is None:
            return
        if a is None:
            qs, ans = _split_question_block(q)
            out.add(_clean_question(qs), _clean_answer(ans))
        else:
            out.add(_clean_question(q), _clean_answer(a))

    for line, mk in zip(lines, marks):
        if mk is not None and mk.kind == "Q":
            flush()
            a, a_num = None, mk.num
            rest = mk.rest
            inline = _inline_answer(rest, mk.num)
            if inline is None:
                q = [rest]
            else:
                q, a = [rest[: inline[0]]], [rest[inline[1]:]]
        elif mk is not None:  # an answer marker
            if q is None:
                out.orphans += 1 if _has_text(mk.rest) else 0
            elif a is None:
                a, a_num = [mk.rest], mk.num if mk.num is not None else a_num
            elif mk.num is None or mk.num == a_num:  # "A1:" twice under one question: keep both parts
                a.append(mk.rest)
            else:  # "A2:" after "A1:" with no "Q2:": answers listed apart from their questions
                flush()
                q = a = None
                out.orphans += 1
        elif a is not None:
            a.append(line)
        elif q is not None:
            q.append(line)
    flush()


def _inline_answer(rest: str, qnum: int | None) -> tuple[int, int] | None:
    for m in _INLINE_ANSWER.finditer(rest):
        if m.start() == 0:
            continue
        num = m["num"]
        if num is not None:
            if qnum is None or int(num) == qnum:
                return m.start(), m.end()
        elif rest[: m.start()].rstrip().endswith(("?", ".", "*", "!")):
            return m.start(), m.end()
    return None


def _parse_answer_only(lines: list[str], marks: list[_Marker | None], out: _Collector) -> None:
    """``Answer:`` lines; each question is the block of lines just above its answer."""
    starts = [i for i, mk in enumerate(marks) if mk is not None]
    prev_end = 0  # first line not yet claimed
    pending: tuple[list[str], int] | None = None  # (question lines, answer start)
    for idx in starts:
        j = idx - 1
        while j >= prev_end and not lines[j].strip():
            j -= 1
        k = j
        while k >= prev_end and lines[k].strip() and marks[k] is None:
            k -= 1
        block = lines[k + 1: j + 1]
        run_on = pending is not None and k + 1 == prev_end  # no blank line after the previous answer
        if len(block) > 1 and (run_on or _strip_bold(block[-1]).endswith("?")):
            block = block[-1:]  # an answer's tail or a preface ran into the question: the last line asks
        qstart = j + 1 - len(block)
        if pending is not None:
            pq, pa = pending
            out.add(_clean_question(pq), _clean_answer([marks[pa].rest, *lines[pa + 1: qstart]]))
        block = [re.sub(rf"^{_HS}*(?:#{{1,6}}{_HS}*)?{_BOLD}?{_HS}*\d{{1,3}}[.)]{_HS}+", "", s) for s in block]
        if not block:
            out.orphans += 1
            pending = None
        else:
            pending = (block, idx)
        prev_end = idx + 1
    if pending is not None:
        pq, pa = pending
        out.add(_clean_question(pq), _clean_answer([marks[pa].rest, *lines[pa + 1:]]))


def _parse_numbered(lines: list[str], out: _Collector, strict: bool) -> None:
    """``1. question?`` items; the lines up to the next item are the answer."""
    items: list[tuple[int, str]] = []  # (line index, question text)
    expected, last, base = 1, None, None
    for i, line in enumerate(lines):
        m = _NUMBERED.match(line)
        if not m:
            continue
        num, indent = int(m["num"]), len(m["indent"].expandtabs(4))
        if base is not None and indent > base:
            continue  # an indented list belongs to an answer
        text = m["rest"]
        bold = text.lstrip().startswith(("**", "__")) or line.lstrip().startswith(("**", "__"))
        question_like = "?" in text or bold
        if strict and not question_like:
            continue
        allowed = (expected, 1, last) if strict else (expected,)
        if num not in allowed:
            continue
        items.append((i, text))
        base = indent if base is None else base
        last, expected = num, num + 1
    for n, (i, text) in enumerate(items):
        end = items[n + 1][0] if n + 1 < len(items) else len(lines)
        body = lines[i + 1: end]
        q, inline = _split_on_question_mark(text) if text.strip() else ("", "")
        if not any(s.strip() for s in body) and inline and not inline.rstrip().endswith("?"):
            out.add(_strip_bold(q), inline.strip())
            continue
        if inline and not text.rstrip().endswith("?"):
            out.add(_strip_bold(q), _clean_answer([inline, *body]))
        else:
            out.add(_strip_bold(text), _clean_answer(body))


# ---------------------------------------------------------------------------------------------
def _json_candidates(text: str) -> list[str]:
    cands = [m.group(1) for m in _FENCE.finditer(text)]
    s = text.strip()
    if s[:1] in "[{":
        cands.append(s)
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            cands.append(text[i: j + 1])
    return cands


def _pairs_from_json(obj, depth: int = 0) -> tuple[list[tuple[str, str]], list[str]]:
    """(pairs, keywords) from any nesting of lists/dicts that holds question/answer objects."""
    if depth > 4:
        return [], []
    pairs: list[tuple[str, str]] = []
    keywords: list[str] = []
    if isinstance(obj, list):
        for item in obj:
            p, k = _pairs_from_json(item, depth + 1)
            pairs += p
            keywords = keywords or k
        return pairs, keywords
    if not isinstance(obj, dict):
        return [], []
    low = {str(k).strip().lower(): v for k, v in obj.items()}
    q = next((low[k] for k in _Q_KEYS if k in low), None)
    a = next((low[k] for k in _A_KEYS if k in low), None)
    if q is not None and not isinstance(q, (dict, list)):
        return [(_scalar(q), _scalar(a) if a is not None and not isinstance(a, (dict, list)) else "")], []
    numbered = {}  # {"Q1": ..., "A1": ...}
    for k, v in low.items():
        m = re.fullmatch(r"(q|a|question|answer)\s*_?(\d{1,3})", k)
        if m and not isinstance(v, (dict, list)):
            numbered.setdefault(int(m[2]), {})[m[1][0]] = _scalar(v)
    for num in sorted(numbered):
        pairs.append((numbered[num].get("q", ""), numbered[num].get("a", "")))
    for k, v in low.items():
        if k.replace(" ", "").replace("_", "") in ("keywords", "keyterms", "keyphrases"):
            if isinstance(v, list):
                keywords = [_scalar(x).strip() for x in v if x is not None]
                keywords = [k for k in keywords if _has_text(k) and not _PLACEHOLDER.match(k)]
            elif isinstance(v, str):
                keywords = _split_keywords(v)
        elif isinstance(v, (list, dict)):
            p, kw = _pairs_from_json(v, depth + 1)
            pairs += p
            keywords = keywords or kw
    return pairs, keywords


def _scalar(v) -> str:
    return v if isinstance(v, str) else "" if v is None else str(v)


def _parse_json(text: str, out: _Collector) -> list[str] | None:
    """Fill ``out`` from JSON in ``text``; return its keywords, or None if no pair was found."""
    if "{" not in text:
        return None
    for cand in _json_candidates(text):
        try:
            obj = json.loads(cand)
        except (ValueError, RecursionError):
            continue
        pairs, keywords = _pairs_from_json(obj)
        if pairs:
            for q, a in pairs:
                out.add(q, a)
            return keywords
    # Truncated or slightly broken JSON: salvage each complete "question": ..., "answer": ... pair.
    found = False
    for m in _JSON_PAIR.finditer(text):
        found = True
        out.add(_unescape(m["q"]), _unescape(m["a"]))
    return [] if found else None


def _unescape(s: str) -> str:
    try:
        return json.loads(f'"{s}"')
    except ValueError:
        return s


# ---------------------------------------------------------------------------------------------
def _normalise(text) -> str:
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return _THINK.sub("", text)


def _take_keywords(lines: list[str], marks: list[_Marker | None]) -> list[str]:
    """Read (and blank out) a ``Keywords:`` line, or list, that comes before the first question."""
    for i, line in enumerate(lines):
        if marks[i] is not None or _NUMBERED.match(line) and "?" in line:
            return []
        m = _KEYWORDS.match(line)
        if not m:
            continue
        rest = _strip_bold(m["rest"])
        lines[i] = ""
        if rest:
            return _split_keywords(rest)
        keywords = []
        for j in range(i + 1, len(lines)):
            if marks[j] is not None or (not lines[j].strip() and keywords):
                break
            if lines[j].strip():
                keywords += _split_keywords(lines[j])
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
    out = _Collector()
    keywords = _parse_json(text, out)
    if keywords is None:
        lines = ["" if _RULE.match(s) else s for s in text.split("\n")]
        marks = [_classify(s) for s in lines]
        keywords = _take_keywords(lines, marks)
        has_questions = any(mk is not None and mk.kind == "Q" for mk in marks)
        if has_questions:
            _parse_markers(lines, marks, out)
        elif any(marks):
            _parse_answer_only(lines, marks, out)
        if not out.pairs and not has_questions:
            fresh = _Collector()
            _parse_numbered(lines, fresh, strict=True)
            if not fresh.pairs:
                fresh = _Collector()
                _parse_numbered(lines, fresh, strict=False)
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
