"""The benchmark's LLM judge: each prediction's correctness and completeness against the reference, 1-3.

One call per batch of questions and dimension scores every prediction of the batch, through the RACAR
judging loop (``judging.py``: structured output with a plain-text fallback, tolerant parsing, retries with
a note, a score that cannot be read recorded missing, never invented); a committee of judges is combined
per prediction by ``mean``, ``min`` or ``majority``. The judge sees the question, the reference answer and
the prediction, never the paper. -> ``models/<model>/judgements.jsonl``, one line per batch.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.stage import Stage, digest
from sciqag_dataset.evaluation.benchmark.answer import answered
from sciqag_dataset.evaluation.benchmark.questions import read_questions
from sciqag_dataset.evaluation.judge_prompts import RETRY_NOTE
from sciqag_dataset.evaluation.judgements import COMBINE_MODES, combine_scores
from sciqag_dataset.evaluation.judging import Judge, judge_items, judgements_format, make_judges
from sciqag_dataset.llm import LLMClient

JUDGE_DIMENSIONS = ("correctness", "completeness")

_INTRO = (
    "You will be given science questions, each with a reference answer, which is correct, and a model's "
    "answer written without access to any source. Judge each model answer against its reference."
)

CRITERIA = {
    "correctness": (
        "Rate the correctness of each model answer: do its claims agree with the reference answer (facts, "
        "values, units, direction of effects)? Wording and length do not matter.\n"
        "Rule: a model answer that contradicts the reference, or that answers a different question, scores 1.\n"
        "Score 1: incorrect - it contradicts the reference or does not answer the question.\n"
        "Score 2: partly correct - its main claim agrees with the reference, but a detail or a value is wrong.\n"
        "Score 3: correct - every claim agrees with the reference."
    ),
    "completeness": (
        "Rate the completeness of each model answer: does it give every point of the reference answer that "
        "the question asks for? Extra correct detail does not lower the score.\n"
        "Score 1: incomplete - it gives none of the reference's points.\n"
        "Score 2: partly complete - it gives some of the reference's points and misses others.\n"
        "Score 3: complete - it gives every point of the reference that the question asks for."
    ),
}

OUTPUT = (
    "Output a list of dictionaries, one for each of the {n} model answers, in the order given, with the keys "
    "'score' (1, 2 or 3) and 'reasons' (a brief justification of the score). Output only the list."
)


def build_messages(dimension: str, items: Sequence[dict], retry_problem: str | None = None) -> list[dict]:
    """The single message asking one judge to score every prediction of a batch on ``dimension``."""
    output = OUTPUT.format(n=len(items))
    listed = "\n\n".join(
        f"Q{i}: {it['question'].strip()}\nReference {i}: {it['reference'].strip()}\n"
        f"Model answer {i}: {it['prediction'].strip()}"
        for i, it in enumerate(items, 1)
    )
    parts = [_INTRO, CRITERIA[dimension], output, listed, output]
    if retry_problem:
        parts.append(RETRY_NOTE.format(problem=retry_problem, n=len(items)))
    return [{"role": "user", "content": "\n\n".join(parts)}]


def _batches(folder: str, size: int):
    def inputs(results: Path) -> Iterator[dict]:
        """Batches by position in the question list, so answering a question later changes its batch only."""
        answers = answered(results, folder)
        questions = read_questions(results)
        for k in range(0, len(questions), size):
            items = [
                {
                    "id": q["id"],
                    "question": q["question"],
                    "reference": q["reference"],
                    "prediction": answers[q["id"]]["prediction"],
                }
                for q in questions[k : k + size]
                if q["id"] in answers
            ]
            if items:
                yield {"id": f"batch-{k // size:05d}", "items": items}

    return inputs


async def judge_batch(batch: dict, judges: Sequence[Judge], *, combine: str, max_attempts: int) -> dict:
    items = batch["items"]
    jobs = [(j, d) for j in judges for d in JUDGE_DIMENSIONS]
    results = await asyncio.gather(
        *(
            judge_items(
                j,
                len(items),
                lambda problem, d=d: build_messages(d, items, problem),
                judgements_format(f"benchmark_{d}"),
                max_attempts,
            )
            for j, d in jobs
        )
    )
    by = {(j.name, d): r for (j, d), r in zip(jobs, results)}
    out = []
    for k, item in enumerate(items):
        row = {"id": item["id"], "prediction_digest": digest(item["prediction"])}
        for d in JUDGE_DIMENSIONS:
            row[f"judge_{d}"] = combine_scores([by[j.name, d].scores[k] for j in judges], combine)
        row["judge_reasons"] = {
            d: "\n".join(f"{j.name}: {by[j.name, d].reasons[k]}" for j in judges)
            if len(judges) > 1
            else by[judges[0].name, d].reasons[k]
            for d in JUDGE_DIMENSIONS
        }
        out.append(row)
    present = sum(r[f"judge_{d}"] is not None for r in out for d in JUDGE_DIMENSIONS)
    status = "ok" if present == len(out) * len(JUDGE_DIMENSIONS) else "partial" if present else "unjudged"
    return {
        "id": batch["id"],
        "status": status,
        "items": out,
        "judge_calls": sum(r.calls for r in results),
        "problems": {f"{j.name}/{d}": r.problem for (j, d), r in zip(jobs, results) if r.problem},
    }


def judge_stage(
    clients: list[LLMClient],
    *,
    folder: str,
    batch_size: int = 10,
    combine: str = "mean",
    max_attempts: int = 3,
    structured: bool = True,
) -> Stage:
    if combine not in COMBINE_MODES:
        raise UserError(f"unknown combine mode {combine!r}; choose one of {COMBINE_MODES}")
    members = make_judges(clients, structured)
    capacity = min(j.client.concurrency * len(j.client.urls or [None]) for j in members)

    async def one(batch: dict) -> dict:
        return await judge_batch(batch, members, combine=combine, max_attempts=max_attempts)

    async def close() -> None:
        for j in members:
            await j.client.aclose()

    return Stage(
        name="judge",
        inputs=_batches(folder, batch_size),
        process=one,
        output=f"{folder}/judgements.jsonl",
        params={
            "judges": [[j.name, j.client.params] for j in members],
            "combine": combine,
            "max_attempts": max_attempts,
            "prompt": [CRITERIA, _INTRO, OUTPUT],
        },
        concurrency=max(1, math.ceil(capacity / len(JUDGE_DIMENSIONS))),
        progress=lambda: {"calls": sum(j.client.usage.requests for j in members)},
        describe=lambda: {"judges": [j.client.describe() for j in members]},
        close=close,
        unit="batch",
    )
