"""RACAR: an LLM judge committee scores every QA pair on five dimensions (SciQAG, Appendix B).

Relevance, Agnosticism, Completeness, Accuracy, Reasonableness, each on a 1-3 scale. One call per
dimension scores all pairs of a paper (5 calls per paper and judge, never 5 x 10). The reply is asked
for as structured output (a JSON schema in ``response_format``); a server that rejects that with a
client error is asked again in plain text, and from then on that judge gets plain requests only.
Replies are parsed tolerantly (code fences, single quotes, trailing commas, a wrapping object,
"Score: 2, Reasons: ..." lines). A reply with the wrong number of judgements or an invalid score is
retried with a note saying what was wrong (a different request, so it is not answered from the cache,
and a rerun replays the same requests); after ``max_attempts`` the pair's dimension is recorded as
missing (None) with the raw reply in its reason. Scores are never invented, guessed or clamped.

Several judges are combined per pair and dimension by ``mean``, ``min`` or ``majority`` (ties go to
the lower score: a committee of verifiers errs on the strict side); their agreement is reported.

Output ``WORK/racar.jsonl``, one line per paper:
``{"id", "status", "pair_metrics": [...], "paper_metrics": {"judge_agreement": ...}, "judge_calls", ...}``
where ``pair_metrics`` aligns with the QA file's ``qa`` list. ``status`` is ``ok`` (every score
present), ``partial`` or ``unjudged`` (no usable score); a paper whose requests failed outright is
``failed`` and retried on the next run.
"""
from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from statistics import mean
from typing import Any, Sequence

import openai

from sciqag_dataset.builders.postprocess import refers_to_source
from sciqag_dataset.builders.qagen import fit_to_context
from sciqag_dataset.errors import UserError
from sciqag_dataset.llm import LLMClient, LLMError
from sciqag_dataset.runner import Summary, iter_latest, run_async
from sciqag_dataset.schema import RACAR_DIMENSIONS

from .common import count_qa_papers, iter_qa_papers, qa_source
from .judge_prompts import (PAPER_AND_PAIRS, RACAR_INPUTS, build_racar_messages, racar_prompt_chars,
                            racar_response_format)

log = logging.getLogger(__name__)

COMBINE_MODES = ("mean", "min", "majority")
SCORES = (1, 2, 3)
RAW_IN_REASON = 500  # characters of an unusable reply kept in each affected pair's reason
RAW_KEPT = 4000  # characters of an unusable reply kept once per paper, judge and dimension
# Statuses a server uses for "I do not understand this request" (here: response_format).
STRUCTURED_REJECTED = {400, 415, 422}


# --- parsing -------------------------------------------------------------------------------------

@dataclass
class Parsed:
    """A judge reply read as judgements: ``items`` of {score, reasons} when ``n`` were found.

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
_WRAPPER_KEYS = ("judgements", "judgments", "scores", "results", "evaluations", "evaluation", "items",
                 "output", "ratings")
_SCORE_KEYS = ("score", "Score", "SCORE", "rating")
_REASON_KEYS = ("reasons", "reason", "Reasons", "Reason", "explanation", "rationale", "justification")


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


def _item(obj: Any) -> tuple[int | None, str, Any]:
    """(score, reasons, the raw score) of one judgement."""
    if isinstance(obj, dict):
        raw = next((obj[k] for k in _SCORE_KEYS if k in obj), None)
        reasons = next((obj[k] for k in _REASON_KEYS if k in obj), "")
        if isinstance(reasons, list):
            reasons = "; ".join(str(r) for r in reasons)
        return valid_score(raw), str(reasons or "").strip(), raw
    return valid_score(obj), "", obj  # a bare score in a list: [3, 2, 3]


def _from_json(text: str) -> list[list]:
    candidates = _FENCE.findall(text) + [text]
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            candidates.append(text[i:j + 1])
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        candidates.append("[" + text[i:j + 1] + "]")  # dictionaries written one after another
    found = []
    for cand in candidates:
        items = _as_list(_load(cand))
        if items:
            found.append(items)
    return found


def _from_lines(text: str) -> list:
    """Judgements written as prose: "Score: 2, Reasons: ..." (one per item, reasons up to the next)."""
    matches = list(_SCORE_LINE.finditer(text))
    items = []
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        segment = text[m.end():end]
        label = _REASONS_LABEL.search(segment)
        reasons = _NEXT_LABEL.sub("", segment[label.end():] if label else segment)
        items.append({"score": m.group(1), "reasons": reasons.strip(" \t\n,;-*'\"}{")})
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
            score, reasons, raw_score = _item(raw)
            items.append({"score": score, "reasons": reasons})
            if score is None:
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


def _agreement_counts(per_judge: Sequence[Sequence[int | None]]) -> dict[str, float]:
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


def _agreement_figures(counts: dict[str, float]) -> dict[str, Any]:
    n, cmp_ = counts["n_pairs"], counts["n_comparisons"]
    return {"all_agree": round(counts["n_agree"] / n, 4) if n else None,
            "mean_abs_diff": round(counts["sum_abs_diff"] / cmp_, 4) if cmp_ else None,
            "n_pairs": int(n)}


def judge_agreement(per_judge: Sequence[Sequence[int | None]]) -> dict[str, Any]:
    """Agreement of several judges on one dimension, over the pairs at least two of them scored:
    ``all_agree`` = share of those pairs where every judge gave the same score, ``mean_abs_diff`` =
    mean absolute score difference over all pairs of judges. None with fewer than two judges."""
    return _agreement_figures(_agreement_counts(per_judge))


# --- judging --------------------------------------------------------------------------------------

@dataclass
class Judge:
    """One committee member: its client, a unique name, and whether it still gets structured requests."""

    client: LLMClient
    name: str
    structured: bool = True


@dataclass
class DimensionResult:
    scores: list[int | None]
    reasons: list[str]
    calls: int = 0
    problem: str | None = None  # why scores are missing (None when all are present)
    raw: str = ""  # the reply the missing scores come from
    structured_fallback: bool = False


def make_judges(clients: Sequence[LLMClient], structured: bool = True) -> list[Judge]:
    if not clients:
        raise UserError("RACAR needs at least one judge (an LLMClient)")
    seen: Counter = Counter()
    judges = []
    for client in clients:
        seen[client.name] += 1
        name = client.name if seen[client.name] == 1 else f"{client.name}#{seen[client.name]}"
        judges.append(Judge(client, name, structured))
    return judges


def _rejects_structured(exc: LLMError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, openai.APIStatusError) and cause.status_code in STRUCTURED_REJECTED


async def _ask(judge: Judge, dimension: str, messages: list[dict]) -> tuple[str, bool]:
    """The judge's reply text, and whether this call fell back from structured to plain."""
    if judge.structured:
        try:
            return (await judge.client.chat(messages, response_format=racar_response_format(dimension))).text, False
        except LLMError as exc:
            if not _rejects_structured(exc):
                raise
            log.warning("judge %s rejected structured output (%s); asking in plain text from now on",
                        judge.name, exc)
            judge.structured = False
            return (await judge.client.chat(messages)).text, True
    return (await judge.client.chat(messages)).text, False


async def judge_dimension(judge: Judge, dimension: str, pairs: Sequence[dict], paper_text: str = "",
                          title: str = "", max_attempts: int = 3) -> DimensionResult:
    """All pairs of one paper scored on one dimension by one judge: one call, plus retries if unusable.

    Request errors (server down after the client's own retries) propagate: the paper is then
    recorded as failed and judged again on the next run.
    """
    n = len(pairs)
    result = DimensionResult([None] * n, [""] * n)
    problem: str | None = None
    best: Parsed | None = None  # the first reply with the right count: its valid scores are real
    best_text = last_text = ""
    for _ in range(max(1, max_attempts)):
        messages = build_racar_messages(dimension, pairs, paper_text, title, retry_problem=problem)
        last_text, fell_back = await _ask(judge, dimension, messages)
        result.calls += 1
        result.structured_fallback |= fell_back
        parsed = parse_judgements(last_text, n)
        if parsed.items is not None and (best is None or parsed.problem is None):
            best, best_text = parsed, last_text
        if parsed.problem is None:
            break
        problem = parsed.problem
    if best is not None:
        result.scores = [it["score"] for it in best.items]
        result.reasons = [it["reasons"] for it in best.items]
    if any(s is None for s in result.scores):
        result.problem, result.raw = (best.problem, best_text) if best is not None else (problem, last_text)
        note = (f"[missing: no usable judgement after {result.calls} attempt(s): {result.problem}; "
                f"raw reply: {result.raw[:RAW_IN_REASON]!r}]")
        result.reasons = [note if s is None else r for s, r in zip(result.scores, result.reasons)]
    return result


def paper_char_budget(pairs: Sequence[dict], judges: Sequence[Judge], context_tokens: int,
                      chars_per_token: float) -> int:
    """Characters of paper text that fit beside the prompt, the pairs and the reply."""
    max_tokens = max(int(j.client.params.get("max_tokens") or 2048) for j in judges)
    prompt = max(racar_prompt_chars(d, pairs) for d in RACAR_DIMENSIONS if RACAR_INPUTS[d] == PAPER_AND_PAIRS)
    return max(1000, int((context_tokens - max_tokens) * chars_per_token) - prompt)


def qa_hash(pairs: Sequence[dict]) -> str:
    """Identifies the judged pairs, so a metric line can be checked against a regenerated QA file."""
    blob = json.dumps([[p.get("question"), p.get("answer")] for p in pairs], ensure_ascii=False)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


async def racar_paper(paper: dict, judges: Sequence[Judge], *, combine: str = "mean", max_attempts: int = 3,
                      context_tokens: int = 8192, chars_per_token: float = 3.5) -> dict:
    """One paper {id, title, text, qa} -> its racar.jsonl record (5 calls per judge when replies parse)."""
    pairs = paper["qa"]
    budget = paper_char_budget(pairs, judges, context_tokens, chars_per_token)
    (text,), warnings = fit_to_context(paper.get("text") or "", budget, "truncate")
    jobs = [(j, d) for j in judges for d in RACAR_DIMENSIONS]
    results = await asyncio.gather(*(
        judge_dimension(j, d, pairs, text, paper.get("title") or "", max_attempts) for j, d in jobs))
    by = {(j.name, d): r for (j, d), r in zip(jobs, results)}

    pair_metrics = []
    for k, pair in enumerate(pairs):
        m: dict[str, Any] = {}
        reasons = {}
        for d in RACAR_DIMENSIONS:
            m[d] = combine_scores([by[j.name, d].scores[k] for j in judges], combine)
            if len(judges) == 1:
                reasons[d] = by[judges[0].name, d].reasons[k]
            else:
                reasons[d] = "\n".join(f"{j.name}: {by[j.name, d].reasons[k]}" for j in judges)
        present = [m[d] for d in RACAR_DIMENSIONS if m[d] is not None]
        m["racar_mean"] = round(mean(present), 4) if present else None
        m["racar_reasons"] = reasons
        m["refers_to_source"] = refers_to_source(pair.get("question") or "")
        pair_metrics.append(m)

    n_scores = sum(m[d] is not None for m in pair_metrics for d in RACAR_DIMENSIONS)
    status = "ok" if n_scores == len(pairs) * len(RACAR_DIMENSIONS) else "partial" if n_scores else "unjudged"
    agreement = {d: judge_agreement([by[j.name, d].scores for j in judges]) for d in RACAR_DIMENSIONS} \
        if len(judges) > 1 else None
    problems = {f"{j.name}/{d}": {"problem": r.problem, "raw_reply": r.raw[:RAW_KEPT]}
                for (j, d), r in zip(jobs, results) if r.problem}
    if any(r.structured_fallback for r in results):
        warnings.append("a judge rejected structured output; it was asked in plain text")
    return {
        "id": paper["id"], "status": status, "pair_metrics": pair_metrics,
        "paper_metrics": {"judge_agreement": agreement},
        "judge_calls": sum(r.calls for r in results),
        "judges": [j.name for j in judges], "combine": combine, "qa_hash": qa_hash(pairs),
        "judge_scores": {j.name: {d: by[j.name, d].scores for d in RACAR_DIMENSIONS} for j in judges},
        "problems": problems, "warnings": warnings,
    }


def run_racar(work: str | Path, judges: list[LLMClient], *, source: str | None = None, combine: str = "mean",
              max_attempts: int = 3, context_tokens: int = 8192, structured: bool = True,
              chars_per_token: float = 3.5) -> Summary:
    """Judge every paper's QA pairs; append to ``WORK/racar.jsonl``; resume by id."""
    if combine not in COMBINE_MODES:
        raise UserError(f"unknown combine mode {combine!r}; choose one of {COMBINE_MODES}")
    if max_attempts < 1:
        raise UserError("max_attempts must be at least 1")
    work = Path(work)
    src = qa_source(work, source)
    members = make_judges(judges, structured)
    # Each paper issues 5 calls per judge at once; keep enough papers in flight to fill the slowest judge.
    capacity = min(j.client.concurrency * len(j.client.urls) for j in members)
    papers_in_flight = max(1, math.ceil(capacity / len(RACAR_DIMENSIONS))) + 1

    async def main() -> Summary:
        try:
            return await run_async(
                "racar", iter_qa_papers(work, src),
                lambda p: racar_paper(p, members, combine=combine, max_attempts=max_attempts,
                                      context_tokens=context_tokens, chars_per_token=chars_per_token),
                work / "racar.jsonl", concurrency=papers_in_flight, total=count_qa_papers(work, src),
                postfix=lambda: {"calls": sum(j.client.usage.requests for j in members),
                                 "cached": sum(j.client.usage.cached for j in members)})
        finally:
            for j in members:
                await j.client.aclose()

    return asyncio.run(main())


# --- summary ----------------------------------------------------------------------------------------

def _bucket(value: int | float) -> str:
    return f"{value:g}"


@dataclass
class _Pool:  # one dimension's scores over the dataset
    values: list = field(default_factory=list)
    missing: int = 0


def racar_summary(work: str | Path) -> dict[str, Any]:
    """Dataset-level RACAR figures from ``WORK/racar.jsonl``: mean and distribution per dimension,
    judge agreement pooled over pairs, calls per paper."""
    path = Path(work) / "racar.jsonl"
    dims = {d: _Pool() for d in RACAR_DIMENSIONS}
    pooled = {d: {"n_pairs": 0, "n_agree": 0, "n_comparisons": 0, "sum_abs_diff": 0.0} for d in RACAR_DIMENSIONS}
    statuses: Counter = Counter()
    calls, pair_means, judges, combine = [], [], set(), set()
    n_pairs = 0
    for rec in iter_latest(path):
        statuses[rec.get("status") or "ok"] += 1
        if rec.get("status") == "failed":
            continue
        calls.append(rec.get("judge_calls") or 0)
        judges.update(rec.get("judges") or [])
        combine.add(rec.get("combine"))
        for m in rec.get("pair_metrics") or []:
            n_pairs += 1
            for d in RACAR_DIMENSIONS:
                if m.get(d) is None:
                    dims[d].missing += 1
                else:
                    dims[d].values.append(m[d])
            if m.get("racar_mean") is not None:
                pair_means.append(m["racar_mean"])
        per_judge = rec.get("judge_scores") or {}
        if len(per_judge) > 1:
            for d in RACAR_DIMENSIONS:
                counts = _agreement_counts([s[d] for s in per_judge.values()])
                for k in pooled[d]:
                    pooled[d][k] += counts[k]
    dimensions = {}
    for d, pool in dims.items():
        dist = Counter(_bucket(v) for v in pool.values)
        dimensions[d] = {"mean": round(mean(pool.values), 4) if pool.values else None,
                         "distribution": dict(sorted(dist.items())), "missing": pool.missing}
    return {
        "papers": sum(statuses.values()), "statuses": dict(statuses), "pairs": n_pairs,
        "dimensions": dimensions,
        "racar_mean": round(mean(pair_means), 4) if pair_means else None,
        "agreement": {d: _agreement_figures(c) for d, c in pooled.items()} if len(judges) > 1 else None,
        "judge_calls_per_paper": round(mean(calls), 3) if calls else None,
        "judges": sorted(judges), "combine": sorted(c for c in combine if c),
    }
