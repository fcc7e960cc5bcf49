"""RACAR: an LLM judge committee scores every QA pair on five dimensions (SciQAG, Appendix B).

Relevance, Agnosticism, Completeness, Accuracy, Reasonableness, each on a 1-3 scale. One call per
dimension scores all pairs of a paper (5 calls per paper and judge, never 5 x 10), through the judging
loop of ``judging.py`` (structured output with a plain-text fallback, tolerant parsing, a retry with a note
while a reply is unusable; a score that cannot be read is recorded missing, never invented).

Several judges are combined per pair and dimension by ``mean``, ``min`` or ``majority`` (ties go to
the lower score: a committee of verifiers errs on the strict side); their agreement is reported.

Output ``WORK/racar.jsonl``, one line per paper:
``{"id", "status", "pair_metrics": [...], "paper_metrics": {"judge_agreement": ...}, "judge_calls", ...}``
where ``pair_metrics`` aligns with the QA file's ``qa`` list. ``status`` is ``ok`` (every score
present), ``partial`` or ``unjudged`` (no usable score); a paper whose requests failed outright is
``failed`` and retried on the next run.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from datasets import Value

from sciqag_dataset.core import records
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import FAIL, MISSING, Context, Metric, Plots, Rule, at_least, at_most, num, register
from sciqag_dataset.core.options import option
from sciqag_dataset.core.schema import DIFFICULTY_LEVELS, LABELS, RACAR_DIMENSIONS, REASONING_TYPES, majority
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation import plots
from sciqag_dataset.evaluation.judge_prompts import (
    LABELLED,
    RACAR_INPUTS,
    SEES_PAPER,
    build_racar_messages,
    racar_prompt_chars,
    racar_prompts_digest,
    racar_response_format,
)
from sciqag_dataset.evaluation.judgements import (
    COMBINE_MODES,
    agreement_counts,
    agreement_figures,
    combine_scores,
    judge_agreement,
)
from sciqag_dataset.evaluation.judging import DimensionResult, Judge, judge_items, make_judges
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.qa.components import asked_about
from sciqag_dataset.qa.prompts import fit_to_context
from sciqag_dataset.qa.rules import refers_to_source

log = logging.getLogger(__name__)

RAW_KEPT = 4000  # characters of an unusable reply kept once per paper, judge and dimension


# --- judging --------------------------------------------------------------------------------------


async def judge_dimension(
    judge: Judge, dimension: str, pairs: Sequence[dict], paper_text: str = "", title: str = "", max_attempts: int = 3
) -> DimensionResult:
    """All pairs of one paper scored on one dimension by one judge: one call, plus retries if unusable."""
    return await judge_items(
        judge,
        len(pairs),
        lambda problem: build_racar_messages(dimension, pairs, paper_text, title, retry_problem=problem),
        racar_response_format(dimension),
        max_attempts,
    )


def paper_char_budget(
    pairs: Sequence[dict], judges: Sequence[Judge], context_tokens: int, chars_per_token: float
) -> int:
    """Characters of paper text that fit beside the prompt, the pairs and the reply."""
    max_tokens = max(int(j.client.params.get("max_tokens") or 2048) for j in judges)
    prompt = max(racar_prompt_chars(d, pairs) for d in RACAR_DIMENSIONS if RACAR_INPUTS[d] in SEES_PAPER)
    return max(1000, int((context_tokens - max_tokens) * chars_per_token) - prompt)


async def racar_paper(
    paper: dict,
    judges: Sequence[Judge],
    *,
    combine: str = "mean",
    max_attempts: int = 3,
    context_tokens: int = 8192,
    chars_per_token: float = 3.5,
) -> dict:
    """One paper {id, title, text, qa, components} -> its racar.jsonl record (5 calls per judge when replies
    parse). The judge reads the text and, after it, the components the pairs were asked from."""
    pairs = paper["qa"]
    budget = paper_char_budget(pairs, judges, context_tokens, chars_per_token)
    # a pair asked about a table is judged against that table: it goes after the text, which is cut to leave room
    shown = asked_about(paper, budget // 2)
    (text,), warnings = fit_to_context(paper.get("text") or "", max(budget - len(shown), 0), "truncate")
    text = f"{text}\n\n{shown}" if shown else text
    jobs = [(j, d) for j in judges for d in RACAR_DIMENSIONS]
    results = await asyncio.gather(
        *(judge_dimension(j, d, pairs, text, paper.get("title") or "", max_attempts) for j, d in jobs)
    )
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
        labels = [by[j.name, LABELLED].labels[k] for j in judges]
        m["reasoning_type"] = majority(x["reasoning_type"] for x in labels)  # a tie: the judge listed first
        m["difficulty"] = combine_scores([x["difficulty"] for x in labels], combine)
        m["refers_to_source"] = refers_to_source(pair.get("question") or "")
        pair_metrics.append(m)

    n_scores = sum(m[d] is not None for m in pair_metrics for d in RACAR_DIMENSIONS)
    status = "ok" if n_scores == len(pairs) * len(RACAR_DIMENSIONS) else "partial" if n_scores else "unjudged"
    agreement = (
        {d: judge_agreement([by[j.name, d].scores for j in judges]) for d in RACAR_DIMENSIONS}
        if len(judges) > 1
        else None
    )
    problems = {
        f"{j.name}/{d}": {"problem": r.problem, "raw_reply": r.raw[:RAW_KEPT]}
        for (j, d), r in zip(jobs, results)
        if r.problem
    }
    if any(r.structured_fallback for r in results):
        warnings.append("a judge rejected structured output; it was asked in plain text")
    return {
        "id": paper["id"],
        "status": status,
        "pair_metrics": pair_metrics,
        "paper_metrics": {"judge_agreement": agreement},
        "judge_calls": sum(r.calls for r in results),
        "judges": [j.name for j in judges],
        "combine": combine,
        "qa_hash": records.qa_hash(pairs),
        "judge_scores": {
            j.name: {
                **{d: by[j.name, d].scores for d in RACAR_DIMENSIONS},
                **{key: [x[key] for x in by[j.name, LABELLED].labels] for key in LABELS},
            }
            for j in judges
        },
        "problems": problems,
        "warnings": warnings,
    }


def stage(
    judges: list[LLMClient],
    *,
    source: str | None = None,
    combine: str = "mean",
    max_attempts: int = 3,
    context_tokens: int = 8192,
    structured: bool = True,
    chars_per_token: float = 3.5,
) -> Stage:
    """Every paper's QA pairs judged on the five dimensions -> ``WORK/racar.jsonl``."""
    if combine not in COMBINE_MODES:
        raise UserError(f"unknown combine mode {combine!r}; choose one of {COMBINE_MODES}")
    if max_attempts < 1:
        raise UserError("max_attempts must be at least 1")
    members = make_judges(judges, structured)
    # Each paper issues 5 calls per judge at once; keep enough papers in flight to fill the slowest judge.
    capacity = min(j.client.concurrency * len(j.client.urls) for j in members)

    async def one(paper: dict) -> dict:
        return await racar_paper(
            paper,
            members,
            combine=combine,
            max_attempts=max_attempts,
            context_tokens=context_tokens,
            chars_per_token=chars_per_token,
        )

    async def close() -> None:
        for j in members:
            await j.client.aclose()

    return Stage(
        name="racar",
        inputs=lambda work: records.qa_papers(work, source),
        process=one,
        params={
            "judges": [[j.name, j.client.params] for j in members],
            "combine": combine,
            "prompts": racar_prompts_digest(),
            "max_attempts": max_attempts,
            "context_tokens": context_tokens,
            "chars_per_token": chars_per_token,
        },
        concurrency=max(1, math.ceil(capacity / len(RACAR_DIMENSIONS))) + 1,
        count=lambda work: records.count_qa(work, source),
        progress=lambda: {
            "calls": sum(j.client.usage.requests for j in members),
            "cached": sum(j.client.usage.cached for j in members),
        },
        describe=lambda: {"judges": [j.client.describe() for j in members]},
        close=close,
    )


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
    types: Counter = Counter()
    difficulty = _Pool()
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
            types[m.get("reasoning_type") or "missing"] += 1
            if m.get("difficulty") is None:
                difficulty.missing += 1
            else:
                difficulty.values.append(m["difficulty"])
        per_judge = rec.get("judge_scores") or {}
        if len(per_judge) > 1:
            for d in RACAR_DIMENSIONS:
                counts = agreement_counts([s[d] for s in per_judge.values()])
                for k in pooled[d]:
                    pooled[d][k] += counts[k]
    dimensions = {}
    for d, pool in dims.items():
        dist = Counter(_bucket(v) for v in pool.values)
        dimensions[d] = {
            "mean": round(mean(pool.values), 4) if pool.values else None,
            "distribution": dict(sorted(dist.items())),
            "missing": pool.missing,
        }
    return {
        "papers": sum(statuses.values()),
        "statuses": dict(statuses),
        "pairs": n_pairs,
        "dimensions": dimensions,
        "racar_mean": round(mean(pair_means), 4) if pair_means else None,
        "reasoning_types": {t: types[t] for t in (*REASONING_TYPES, "missing") if types[t]},
        "difficulty": {
            "mean": round(mean(difficulty.values), 4) if difficulty.values else None,
            "distribution": dict(sorted(Counter(_bucket(round(v * 2) / 2) for v in difficulty.values).items())),
            "missing": difficulty.missing,
        },
        "agreement": {d: agreement_figures(c) for d, c in pooled.items()} if len(judges) > 1 else None,
        "judge_calls_per_paper": round(mean(calls), 3) if calls else None,
        "judges": sorted(judges),
        "combine": sorted(c for c in combine if c),
    }


def _mean_rule(row: dict, threshold: float) -> str | None:
    """The mean needs all five dimensions scored: a mean over the scored ones would let an unscored one pass."""
    if any(row.get(d) is None for d in RACAR_DIMENSIONS) or row.get("racar_mean") is None:
        return MISSING
    return FAIL if row["racar_mean"] < threshold else None


def _reasoning_type_rule(row: dict, allowed) -> str | None:
    kind = row.get("reasoning_type")
    return MISSING if kind is None else None if kind in allowed else FAIL


def _labels_card(s: dict) -> str:
    types, diff = s.get("reasoning_types") or {}, s.get("difficulty") or {}
    if not types or set(types) == {"missing"}:
        return ""
    named = {str(k): v for k, v in DIFFICULTY_LEVELS.items()}
    levels = ", ".join(f"{named.get(k, k)} {n}" for k, n in (diff.get("distribution") or {}).items())
    return (
        "\n\nLabels the judge gave each pair in the same calls (`reasoning_type`, `difficulty` 1–3): "
        + ", ".join(f"{t} {n}" for t, n in types.items())
        + f"; difficulty {levels or 'none'} (mean {num(diff.get('mean'))}, missing {diff.get('missing', 0)})."
    )


def _card(s: dict) -> str:
    rows = "\n".join(f"| {d} | {num(v['mean'])} | {v['missing']} |" for d, v in s["dimensions"].items())
    return (
        "**RACAR** (1–3, LLM judge; the paper reports a mean of about 2.5):\n\n"
        f"| dimension | mean | missing |\n|---|---:|---:|\n{rows}" + _labels_card(s)
    )


def _collect(got: dict, paper: dict, rec: dict, rows: list[dict], cfg) -> None:
    scores = got.setdefault("scores", {d: [] for d in RACAR_DIMENSIONS})
    for row in rows:
        for d in RACAR_DIMENSIONS:
            scores[d].append(row[d])


def _plots(got: dict, draw: Plots, cfg) -> dict:
    """How the judge scored the pairs on each dimension."""
    scores = got.get("scores") or {}
    if not any(scores.get(d) for d in RACAR_DIMENSIONS):
        return {}
    n, papers = max(len(v) for v in scores.values()), plural(draw.papers, "paper")
    p = draw.attempt(
        "racar_distribution",
        lambda cap: plots.racar_distribution(
            scores, draw.folder / "racar_distribution.png", scope=papers, caption=cap
        ),
        f"How many of the {plural(n, 'QA pair')} of {papers} the judge scored 1, 2 or 3 (or left unscored) on "
        f"each RACAR dimension ({', '.join(RACAR_DIMENSIONS)}; 3 is best).",
    )
    return {"racar_distribution": p} if p else {}


def _requires(ctx: Context) -> str | None:
    if ctx.judges:
        return None
    return (
        "RACAR needs a judge: pass --judge-endpoint URL --judge-model NAME (or set `judge:` in the config), or leave "
        "racar out of --metrics"
    )


def _score_rule(name: str, check, describe, what: str) -> Rule:
    return Rule(name, check, describe, help=f"minimum {what}", constraints={"min": 1, "max": 3})


METRIC = register(
    Metric(
        name="racar",
        cost=90,
        help="five 1-3 scores per pair from an LLM judge committee (SciQAG Appendix B)",
        build=lambda ctx: stage(
            list(ctx.judges),
            source=ctx.source,
            combine=ctx.cfg.combine,
            max_attempts=ctx.cfg.max_attempts,
            context_tokens=ctx.cfg.context_tokens,
            structured=ctx.cfg.structured,
            chars_per_token=ctx.cfg.chars_per_token,
        ),
        options=(
            option(
                "combine",
                str,
                "mean",
                choices=COMBINE_MODES,
                what="combine mode",
                help="how a judge committee's scores combine",
            ),
            option(
                "max_attempts",
                int,
                3,
                min=1,
                help="tries per unusable judge reply before the score is recorded missing",
            ),
            option(
                "structured",
                bool,
                True,
                help="ask judges for JSON-schema output (falls back to plain text if rejected)",
            ),
            option("context_tokens", int, 8192, min=256, help="the judge's context window; the paper is fitted to it"),
            option(
                "chars_per_token", float, 3.5, min=0.1, help="how paper length is measured against the judge's context"
            ),
        ),
        requires=_requires,
        collect=_collect,
        plots=_plots,
        plot_files=("racar_distribution",),
        pair_columns={
            # 1-3 (a committee mean may be 2.5); null = no usable score
            **{d: Value("float32") for d in RACAR_DIMENSIONS},
            "racar_mean": Value("float32"),
            "racar_reasons": {d: Value("string") for d in RACAR_DIMENSIONS},
            "refers_to_source": Value("bool"),  # agnosticism regex: "Figure 3", "Table 2", "this paper" ...
            "reasoning_type": Value("string"),  # one of schema.REASONING_TYPES; null = not given
            "difficulty": Value("float32"),  # 1 easy - 3 hard (a committee mean may be 2.5)
        },
        derived={"refers_to_source": lambda pair: refers_to_source(pair.get("question") or "")},  # a regex
        needs_llm=lambda cfg: True,
        default="with_judge",
        summarize=lambda path, cfg: racar_summary(path.parent),
        card=_card,
        not_run="RACAR was not run (no judge endpoint configured).",
        rules=(
            _score_rule(
                "min_racar",
                _mean_rule,
                lambda t: f"RACAR mean ≥ {t:g} (all five dimensions scored)",
                "mean RACAR score (all five must be scored)",
            ),
            *(
                _score_rule(f"min_{d}", at_least(d), lambda t, d=d: f"{d} ≥ {t:g}", f"{d} score")
                for d in RACAR_DIMENSIONS
            ),
            Rule(
                "reasoning_types",
                _reasoning_type_rule,
                lambda v: f"reasoning type one of {', '.join(v)}",
                type=list[str] | None,
                help="keep only questions of these reasoning types (the judge's `reasoning_type` label), "
                "comma-separated",
                constraints={"choices": REASONING_TYPES, "what": "reasoning type"},
            ),
            _score_rule(
                "min_difficulty",
                at_least("difficulty"),
                lambda t: f"difficulty ≥ {t:g}",
                "difficulty label (1 easy - 3 hard)",
            ),
            Rule(
                "max_difficulty",
                at_most("difficulty"),
                lambda t: f"difficulty ≤ {t:g}",
                help="maximum difficulty label (1 easy - 3 hard)",
                constraints={"min": 1, "max": 3},
            ),
        ),
        how_to_run="sciqag evaluate WORK --judge-endpoint URL --judge-model NAME (or --metrics racar, the embedded "
        "model as judge)",
    )
)
