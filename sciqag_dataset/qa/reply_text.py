"""The pieces a QA reply is read with: line markers (``Q1:``, ``Answer:``, numbered items), cleaning, and the
collector that turns question and answer lines into pairs. The lowest layer of the parser: ``reply_formats``
reads a reply's shapes with these, ``parse`` sits on top (see ``parse.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sciqag_dataset.qa.prompts import EXAMPLE_QUESTION
from sciqag_dataset.qa.small_model import EXAMPLE_QUESTIONS

# ---------------------------------------------------------------------------------------------
# Line patterns. `[^\S\n]` is horizontal whitespace of any kind (tabs, no-break spaces).
HS = r"[^\S\n]"
LEAD = rf"^{HS}*(?:[-*+•>]{HS}+)?(?:#{{1,6}}{HS}*)?"  # bullet / quote / heading
BOLD = r"(?:\*\*|__|\*)"
MARKER = re.compile(
    LEAD
    + rf"(?:(?P<list>\d{{1,3}})[.)]{HS}+)?"  # "1. Question: ..."
    + rf"{BOLD}?{HS}*"
    + r"(?P<kind>Q|A|(?i:question|answer|ans))"
    + rf"{HS}*(?P<num>\d{{1,3}})?"
    + rf"{HS}*(?:\([^()\n]{{0,80}}\))?"  # "Q1 (thermal stability):"
    + rf"{HS}*{BOLD}?{HS}*"
    + r"(?P<sep>[:：]|\.(?!\d)|\)|[-–—](?=\s)|$)"
    + rf"{HS}*{BOLD}?{HS}*(?P<rest>.*)$"
)
# An answer marker later on a question's own line ("Q1: Why ...? A1: Because ...").
INLINE_ANSWER = re.compile(
    rf"(?:(?<=\s)|^){BOLD}?(?P<kind>A|(?i:answer|ans)){HS}*(?P<num>\d{{1,3}})?{HS}*{BOLD}?{HS}*[:：]"
)
KEYWORDS = re.compile(
    LEAD + rf"{BOLD}?{HS}*(?i:key{HS}*words?|key{HS}*terms|key{HS}*phrases){HS}*{BOLD}?{HS}*[:：]"
    rf"{HS}*{BOLD}?(?P<rest>.*)$"
)
NUMBERED = re.compile(rf"^(?P<indent>{HS}*)(?:#{{1,6}}{HS}*)?{BOLD}?{HS}*(?P<num>\d{{1,3}})[.)]{HS}+(?P<rest>\S.*)$")
RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,}|`{3,}[\w+-]*)\s*$")  # separators, code fences
THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
FENCE = re.compile(r"```[\w+-]*[^\S\n]*\n(.*?)(?:\n[^\S\n]*```|\Z)", re.S)
JSON_PAIR = re.compile(
    r'"(?P<qk>question|q)"\s*:\s*"(?P<q>(?:[^"\\]|\\.)*)"\s*,\s*"(?P<ak>answer|a)"\s*:\s*"(?P<a>(?:[^"\\]|\\.)*)"',
    re.I | re.S,
)


def normalise(text) -> str:
    """Any reply as text: bytes decoded, line ends unified, a byte-order mark and ``<think>`` blocks removed."""
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return THINK.sub("", text)


def is_example(question: str) -> bool:
    """A format or worked example shown in a prompt, copied by a model."""
    q = " ".join(question.lower().split())
    return q == EXAMPLE_QUESTION.lower() or q in EXAMPLE_QUESTIONS


PLACEHOLDER = re.compile(r"^\W*(?i:question|answer|keyword)\s*\d{0,3}\W*$")
Q_KEYS = ("question", "q", "query", "prompt")
A_KEYS = ("answer", "a", "response", "reply")


@dataclass
class Marker:
    kind: str  # "Q" or "A"
    num: int | None
    rest: str


def classify(line: str) -> Marker | None:
    m = MARKER.match(line)
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
    return Marker(kind, int(num) if num is not None else None, m["rest"])


def strip_bold(text: str) -> str:
    text = text.strip()
    for mark in ("**", "__"):
        if text.startswith(mark) and text.endswith(mark) and len(text) > 2 * len(mark):
            text = text[len(mark) : -len(mark)].strip()
        elif text.endswith(mark) and text.count(mark) % 2 == 1:  # opener eaten with the marker
            text = text[: -len(mark)].rstrip()
        elif text.startswith(mark) and text.count(mark) % 2 == 1:
            text = text[len(mark) :].lstrip()
    return text


def clean_question(lines: list[str]) -> str:
    return strip_bold(" ".join(s.strip() for s in lines if s.strip()))


def clean_answer(lines: list[str]) -> str:
    lines = [s.rstrip() for s in lines]
    while lines and (not lines[-1].strip() or RULE.match(lines[-1])):
        lines.pop()
    while lines and (not lines[0].strip() or RULE.match(lines[0])):
        lines.pop(0)
    if lines:
        lines[0] = strip_bold(lines[0]) if lines[0].strip().startswith(("**", "__")) else lines[0].strip()
    return "\n".join(lines).strip()


def split_keywords(text: str) -> list[str]:
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
        p = re.sub(rf"^{HS}*(?:[-*+•]|\d{{1,3}}[.)]){HS}+", "", p).strip().strip("\"'`*").strip()
        if has_text(p) and not PLACEHOLDER.match(p):
            out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
class Collector:
    """Pairs plus the counts that explain what was dropped."""

    def __init__(self) -> None:
        self.pairs: list[dict[str, str]] = []
        self.seen: set[str] = set()
        self.no_answer = 0
        self.duplicates = 0
        self.orphans = 0
        self.placeholders = 0

    def add(self, question: str, answer: str) -> None:
        question, answer = unwrap(question), unwrap(answer)
        if PLACEHOLDER.match(question) or PLACEHOLDER.match(answer) or is_example(question):
            self.placeholders += 1  # a weak model copied the format skeleton "Q1: [Question 1]"
            return
        if not has_text(question):
            if has_text(answer):
                self.orphans += 1
            return
        if not has_text(answer):
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


def has_text(s: str) -> bool:
    return any(c.isalnum() for c in s)


def unwrap(s: str) -> str:
    """ "[What limits ...?]": the model kept the template's brackets around real text."""
    s = s.strip()
    if s[:1] == "[" and s[-1:] == "]" and not any(c in s[1:-1] for c in "[]"):
        return s[1:-1].strip()
    return s


def split_question_block(lines: list[str]) -> tuple[list[str], list[str]]:
    """A question segment with no answer marker: question first, the rest is its answer."""
    body = list(lines)
    while body and not body[0].strip():
        body.pop(0)
    if not body:
        return [], []
    for i, line in enumerate(body):
        if not line.strip():
            break
        if strip_bold(line).endswith("?"):
            return body[: i + 1], body[i + 1 :]
    first = body[0]
    if len(body) == 1:
        q, a = split_on_question_mark(first)
        return [q], [a]
    return [first], body[1:]


def split_on_question_mark(text: str) -> tuple[str, str]:
    """ "**Why X?** Because Y." or "Why X? Because Y." on one line."""
    text = text.strip()
    m = re.match(r"^(\*\*|__)(.+?)\1\s*(.*)$", text)
    if m and m[3]:
        return m[2], m[3]
    i = text.find("? ")
    if i > 0 and text[i + 2 :].strip():
        return text[: i + 1], text[i + 2 :]
    return text, ""
