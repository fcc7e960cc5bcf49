"""The shapes a QA reply comes in, one reader each: JSON, question markers, answer markers only, a numbered
list, and a ``Keywords:`` line; ``read_reply`` tries them in order (listed in ``parse.py``). Built on
``reply_text``; ``parse`` builds on this."""

from __future__ import annotations

import json
import re

from sciqag_dataset.qa.reply_text import (
    A_KEYS,
    BOLD,
    FENCE,
    HS,
    INLINE_ANSWER,
    JSON_PAIR,
    KEYWORDS,
    NUMBERED,
    PLACEHOLDER,
    Q_KEYS,
    RULE,
    Collector,
    Marker,
    classify,
    clean_answer,
    clean_question,
    has_text,
    split_keywords,
    split_on_question_mark,
    split_question_block,
    strip_bold,
)


def read_reply(text: str) -> tuple[Collector, list[str]]:
    """The pairs (with the counts of what was dropped) and the keywords of a normalised reply, read in the first
    shape that yields pairs: JSON, then question markers, answer markers only, a numbered list."""
    out = Collector()
    keywords = parse_json(text, out)
    if keywords is None:
        lines = ["" if RULE.match(s) else s for s in text.split("\n")]
        marks = [classify(s) for s in lines]
        keywords = take_keywords(lines, marks)
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
        keywords = take_trailing_keywords(out.pairs[-1])
    return out, keywords


def take_keywords(lines: list[str], marks: list[Marker | None]) -> list[str]:
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


def take_trailing_keywords(pair: dict[str, str]) -> list[str]:
    """Some models write the Keywords paragraph last; it must not stay in the last answer."""
    paragraphs = pair["answer"].split("\n\n")
    if len(paragraphs) < 2:
        return []
    lines = paragraphs[-1].split("\n")
    keywords = take_keywords(lines, [None] * len(lines))
    if keywords and not any(s.strip() for s in lines):
        pair["answer"] = "\n\n".join(paragraphs[:-1]).strip()
        return keywords
    return []


def parse_markers(lines: list[str], marks: list[Marker | None], out: Collector) -> None:
    q: list[str] | None = None
    a: list[str] | None = None
    a_num: int | None = None

    def flush() -> None:
        if q is None:
            return
        if a is None:
            qs, ans = split_question_block(q)
            out.add(clean_question(qs), clean_answer(ans))
        else:
            out.add(clean_question(q), clean_answer(a))

    for line, mk in zip(lines, marks):
        if mk is not None and mk.kind == "Q":
            flush()
            a, a_num = None, mk.num
            rest = mk.rest
            inline = inline_answer(rest, mk.num)
            if inline is None:
                q = [rest]
            else:
                q, a = [rest[: inline[0]]], [rest[inline[1] :]]
        elif mk is not None:  # an answer marker
            if q is None:
                out.orphans += 1 if has_text(mk.rest) else 0
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


def inline_answer(rest: str, qnum: int | None) -> tuple[int, int] | None:
    for m in INLINE_ANSWER.finditer(rest):
        if m.start() == 0:
            continue
        num = m["num"]
        if num is not None:
            if qnum is None or int(num) == qnum:
                return m.start(), m.end()
        elif rest[: m.start()].rstrip().endswith(("?", ".", "*", "!")):
            return m.start(), m.end()
    return None


def parse_answer_only(lines: list[str], marks: list[Marker | None], out: Collector) -> None:
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
        block = lines[k + 1 : j + 1]
        run_on = pending is not None and k + 1 == prev_end  # no blank line after the previous answer
        if len(block) > 1 and (run_on or strip_bold(block[-1]).endswith("?")):
            block = block[-1:]  # an answer's tail or a preface ran into the question: the last line asks
        qstart = j + 1 - len(block)
        if pending is not None:
            pq, pa = pending
            out.add(clean_question(pq), clean_answer([marks[pa].rest, *lines[pa + 1 : qstart]]))
        block = [re.sub(rf"^{HS}*(?:#{{1,6}}{HS}*)?{BOLD}?{HS}*\d{{1,3}}[.)]{HS}+", "", s) for s in block]
        if not block:
            out.orphans += 1
            pending = None
        else:
            pending = (block, idx)
        prev_end = idx + 1
    if pending is not None:
        pq, pa = pending
        out.add(clean_question(pq), clean_answer([marks[pa].rest, *lines[pa + 1 :]]))


def parse_numbered(lines: list[str], out: Collector, strict: bool) -> None:
    """``1. question?`` items; the lines up to the next item are the answer."""
    items: list[tuple[int, str]] = []  # (line index, question text)
    expected, last, base = 1, None, None
    for i, line in enumerate(lines):
        m = NUMBERED.match(line)
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
        body = lines[i + 1 : end]
        q, inline = split_on_question_mark(text) if text.strip() else ("", "")
        if not any(s.strip() for s in body) and inline and not inline.rstrip().endswith("?"):
            out.add(strip_bold(q), inline.strip())
            continue
        if inline and not text.rstrip().endswith("?"):
            out.add(strip_bold(q), clean_answer([inline, *body]))
        else:
            out.add(strip_bold(text), clean_answer(body))


# ---------------------------------------------------------------------------------------------
def json_candidates(text: str) -> list[str]:
    cands = [m.group(1) for m in FENCE.finditer(text)]
    s = text.strip()
    if s[:1] in "[{":
        cands.append(s)
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            cands.append(text[i : j + 1])
    return cands


def pairs_from_json(obj, depth: int = 0) -> tuple[list[tuple[str, str]], list[str]]:
    """(pairs, keywords) from any nesting of lists/dicts that holds question/answer objects."""
    if depth > 4:
        return [], []
    pairs: list[tuple[str, str]] = []
    keywords: list[str] = []
    if isinstance(obj, list):
        for item in obj:
            p, k = pairs_from_json(item, depth + 1)
            pairs += p
            keywords = keywords or k
        return pairs, keywords
    if not isinstance(obj, dict):
        return [], []
    low = {str(k).strip().lower(): v for k, v in obj.items()}
    q = next((low[k] for k in Q_KEYS if k in low), None)
    a = next((low[k] for k in A_KEYS if k in low), None)
    if q is not None and not isinstance(q, (dict, list)):
        return [(scalar(q), scalar(a) if a is not None and not isinstance(a, (dict, list)) else "")], []
    numbered = {}  # {"Q1": ..., "A1": ...}
    for k, v in low.items():
        m = re.fullmatch(r"(q|a|question|answer)\s*_?(\d{1,3})", k)
        if m and not isinstance(v, (dict, list)):
            numbered.setdefault(int(m[2]), {})[m[1][0]] = scalar(v)
    for num in sorted(numbered):
        pairs.append((numbered[num].get("q", ""), numbered[num].get("a", "")))
    for k, v in low.items():
        if k.replace(" ", "").replace("_", "") in ("keywords", "keyterms", "keyphrases"):
            if isinstance(v, list):
                keywords = [scalar(x).strip() for x in v if x is not None]
                keywords = [k for k in keywords if has_text(k) and not PLACEHOLDER.match(k)]
            elif isinstance(v, str):
                keywords = split_keywords(v)
        elif isinstance(v, (list, dict)):
            p, kw = pairs_from_json(v, depth + 1)
            pairs += p
            keywords = keywords or kw
    return pairs, keywords


def scalar(v) -> str:
    return v if isinstance(v, str) else "" if v is None else str(v)


def parse_json(text: str, out: Collector) -> list[str] | None:
    """Fill ``out`` from JSON in ``text``; return its keywords, or None if no pair was found."""
    if "{" not in text:
        return None
    for cand in json_candidates(text):
        try:
            obj = json.loads(cand)
        except (ValueError, RecursionError):
            continue
        pairs, keywords = pairs_from_json(obj)
        if pairs:
            for q, a in pairs:
                out.add(q, a)
            return keywords
    # Truncated or slightly broken JSON: salvage each complete "question": ..., "answer": ... pair.
    found = False
    for m in JSON_PAIR.finditer(text):
        found = True
        out.add(unescape(m["q"]), unescape(m["a"]))
    return [] if found else None


def unescape(s: str) -> str:
    try:
        return json.loads(f'"{s}"')
    except ValueError:
        return s
