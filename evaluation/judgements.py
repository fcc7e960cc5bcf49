"""Reading an LLM judge's reply, and combining a committee's scores (RACAR; SciQAG Appendix B).

Replies are parsed tolerantly (code fences, single quotes, trailing commas, a wrapping object, "Score: 2,
Reasons: ..." lines), but scores are never invented, guessed or clamped: an unreadable score is None.
Several judges are combined per pair and dimension by ``mean``, ``min`` or ``majority`` (ties go to the
lower score: a committee of verifiers errs on the strict side).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.schema import DIFFICULTY_LEVELS, REASONING_TYPES

COMBINE_MODES = ("mean", "min", "majority")
SCORES = (1, 2, 3)


# --- parsing -------------------------------------------------------------------------------------


@dataclass
class Parsed:
    """A judge reply read as judgements: ``items`` of {score, reasons, reasoning_type, difficulty} (the labels
    None where the reply gives none) when ``n`` were found.

    ``problem`` is None when the reply is fully usable; otherwise it says why. With the right
    count but some invalid scores, ``items`` is kept with None for those (the others are real).
    """

    items: list[dict] | None
    problem: str | None


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_SCORE_STR = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*3)?\s*$")
_SCORE_LINE = re.compile(r"\bscore\b\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*['\"]?(-?\d+(?:\.\d+)?)['\"]?", re.I)
_REASONS_LABEL = re.compile(r"\breasons?\b\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?", re.I)
_NEXT_LABEL = re.compile(r"\n\s*(?:Q|A|pair|item|question|answer)?\s*#?\d+\s*[:.)]?\s*$", re.I)
_LABEL_LINES = {
    "reasoning_type": re.compile(r"\breasoning[ _]type\b\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*['\"]?([A-Za-z]+)", re.I),
    "difficulty": re.compile(r"\bdifficulty\b\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*['\"]?(\w+)", re.I),
}
_WRAPPER_KEYS = (
    "judgements",
    "judgments",
    "scores",
    "results",
    "evaluations",
    "evaluation",
    "items",
    "output",
    "ratings",
)
_SCORE_KEYS = ("score", "Score", "SCORE", "rating")
_REASON_KEYS = ("reasons", "reason", "Reasons", "Reason", "explanation", "rationale", "justification", "reasoning")


def valid_score(value: Any) -> int | None:
    """1, 2 or 3 from an int, an integral float or a string like "2" or "2/3"; anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        m = _SCORE_STR.match(value)
        if not m:
            return None
        value = float(m.group(1))
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    return value if isinstance(value, int) and value in SCORES else None


def valid_reasoning_type(value: Any) -> str | None:
    """One of ``REASONING_TYPES`` from "causal", "Causal reasoning" or "type: causal"; anything else None."""
    if not isinstance(value, str):
        return None
    words = set(re.findall(r"[a-z]+", value.lower()))
    found = [t for t in REASONING_TYPES if t in words]
    return found[0] if len(found) == 1 else None


def valid_difficulty(value: Any) -> int | None:
    """1, 2 or 3 from a score or from "easy", "medium", "hard"."""
    if isinstance(value, str) and value.strip().lower() in DIFFICULTY_LEVELS.values():
        return {v: k for k, v in DIFFICULTY_LEVELS.items()}[value.strip().lower()]
    return valid_score(value)


def _labels(obj: dict) -> dict[str, Any]:
    """The labels a judgement may carry beside its score (None when absent or unreadable: never guessed; a
    judge's "reasoning" is its justification, not a type)."""
    kind = next((obj[k] for k in ("reasoning_type", "question_type") if k in obj), None)
    return {"reasoning_type": valid_reasoning_type(kind), "difficulty": valid_difficulty(obj.get("difficulty"))}


def _load(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    for candidate in (text, _TRAILING_COMMA.sub(r"\1", text)):
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            pass
        try:  # single quotes and Python literals; literal_eval evaluates no code
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return None


def _as_list(obj: Any) -> list | None:
    """The list of judgements inside a parsed reply, unwrapping a dict around it."""
    if isinstance(obj, list):
        return obj
    if not isinstance(obj, dict):
        return None
    if any(k in obj for k in _SCORE_KEYS):
        return [obj]
    for key in _WRAPPER_KEYS:
        if isinstance(obj.get(key), list):
            return obj[key]
    lists = [v for v in obj.values() if isinstance(v, list)]
    if len(lists) == 1:
        return lists[0]
    values = list(obj.values())  # {"Q1": {...}, "Q2": {...}}
    if values and all(isinstance(v, dict) and any(k in v for k in _SCORE_KEYS) for v in values):
        return values
    return None


def _item(obj: Any) -> tuple[dict, Any]:
    """One judgement as {score, reasons, reasoning_type, difficulty}, and its raw score."""
    if isinstance(obj, dict):
        raw = next((obj[k] for k in _SCORE_KEYS if k in obj), None)
        reasons = next((obj[k] for k in _REASON_KEYS if k in obj), "")
        if isinstance(reasons, list):
            reasons = "; ".join(str(r) for r in reasons)
        return {"score": valid_score(raw), "reasons": str(reasons or "").strip(), **_labels(obj)}, raw
    # a bare score in a list: [3, 2, 3]
    return {"score": valid_score(obj), "reasons": "", "reasoning_type": None, "difficulty": None}, obj


def _from_json(text: str) -> list[list]:
    candidates = _FENCE.findall(text) + [text]
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            candidates.append(text[i : j + 1])
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        candidates.append("[" + text[i : j + 1] + "]")  # dictionaries written one after another
    found = []
    for cand in candidates:
        items = _as_list(_load(cand))
        if items:
            found.append(items)
    return found


def _from_lines(text: str) -> list:
    """Judgements written as prose: "Score: 2, Reasons: ..." (one per item, reasons up to the next). Labels
    ("Reasoning type: causal", "Difficulty: 2") are read after their item's score; written before it, an item's
    labels could be taken for the previous item's, so then none is read."""
    matches = list(_SCORE_LINE.finditer(text))
    first = matches[0].start() if matches else 0
    labels_after = not any(p.search(text[:first]) for p in _LABEL_LINES.values())
    items = []
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        segment = text[m.end() : end]
        found = {key: p.search(segment) for key, p in _LABEL_LINES.items()} if labels_after else {}
        cut = min((f.start() for f in found.values() if f), default=len(segment))  # labels are not reasons
        label = _REASONS_LABEL.search(segment[:cut])
        reasons = _NEXT_LABEL.sub("", segment[label.end() : cut] if label else segment[:cut])
        item = {"score": m.group(1), "reasons": reasons.strip(" \t\n,;-*'\"}{")}
        item |= {key: f.group(1) for key, f in found.items() if f}
        items.append(item)
    return items


def parse_judgements(text: str, n: int) -> Parsed:
    """Read ``n`` judgements {score: 1-3, reasons} from a judge reply, as tolerantly as is safe."""
    text = _THINK.sub("", text or "")
    lists = _from_json(text)
    line_items = _from_lines(text)
    if line_items:
        lists.append(line_items)
    if not lists:
        return Parsed(None, "no judgements found in the reply")
    best = None
    for raw_items in lists:
        if len(raw_items) != n:
            continue
        items, bad = [], []
        for k, raw in enumerate(raw_items, 1):
            item, raw_score = _item(raw)
            items.append(item)
            if item["score"] is None:
                bad.append(f"#{k}: {raw_score!r}"[:60])
        if not bad:
            return Parsed(items, None)
        if best is None:
            best = Parsed(items, f"invalid score(s), not 1-3: {', '.join(bad)}")
    if best is not None:
        return best
    counts = sorted({len(x) for x in lists})
    return Parsed(None, f"expected {n} judgements, found {' or '.join(map(str, counts))}")


# --- combining judges -------------------------------------------------------------------------------


def combine_scores(scores: Sequence[int | None], mode: str = "mean") -> int | float | None:
    """One committee score from the judges' scores of a pair (missing ones left out; None if all are)."""
    if mode not in COMBINE_MODES:
        raise UserError(f"unknown combine mode {mode!r}; choose one of {COMBINE_MODES}")
    valid = [s for s in scores if s is not None]
    if not valid:
        return None
    if mode == "min":
        return min(valid)
    if mode == "majority":
        counts = Counter(valid)
        top = max(counts.values())
        return min(s for s, c in counts.items() if c == top)  # a tie goes to the stricter score
    value = sum(valid) / len(valid)
    return int(value) if value.is_integer() else round(value, 4)


def agreement_counts(per_judge: Sequence[Sequence[int | None]]) -> dict[str, float]:
    """Raw counts behind the agreement figures, so papers can be pooled."""
    out = {"n_pairs": 0, "n_agree": 0, "n_comparisons": 0, "sum_abs_diff": 0.0}
    if len(per_judge) < 2:
        return out
    for scores in zip(*per_judge):
        valid = [s for s in scores if s is not None]
        if len(valid) < 2:
            continue
        out["n_pairs"] += 1
        out["n_agree"] += len(set(valid)) == 1
        for a, b in combinations(valid, 2):
            out["n_comparisons"] += 1
            out["sum_abs_diff"] += abs(a - b)
    return out


def agreement_figures(counts: dict[str, float]) -> dict[str, Any]:
    n, cmp_ = counts["n_pairs"], counts["n_comparisons"]
    return {
        "all_agree": round(counts["n_agree"] / n, 4) if n else None,
        "mean_abs_diff": round(counts["sum_abs_diff"] / cmp_, 4) if cmp_ else None,
        "n_pairs": int(n),
    }


def judge_agreement(per_judge: Sequence[Sequence[int | None]]) -> dict[str, Any]:
    """Agreement of several judges on one dimension, over the pairs at least two of them scored:
    ``all_agree`` = share of those pairs where every judge gave the same score, ``mean_abs_diff`` =
    mean absolute score difference over all pairs of judges. None with fewer than two judges."""
    return agreement_figures(agreement_counts(per_judge))
