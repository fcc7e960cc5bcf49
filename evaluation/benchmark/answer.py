"""Closed-book answers and their reference-based scores: two stages per model.

``answer_stage``: each question is asked with a system prompt and the question alone (no paper text, no
keywords, no title), through the one LLM client (concurrency, replicas, cache) and the one runner (resume
by fingerprint, failure isolation, a progress bar, a manifest) -> ``models/<model>/answers.jsonl``.
``score_stage``: each answer's reference-based scores (``metrics.ReferenceScorer``) ->
``models/<model>/scores.jsonl``; a changed answer or reference is scored again, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.stage import Stage, digest
from sciqag_dataset.evaluation.benchmark.metrics import ReferenceScorer
from sciqag_dataset.evaluation.benchmark.questions import read_questions
from sciqag_dataset.llm import LLMClient

DEFAULT_SYSTEM_PROMPT = (
    "You are an expert scientist answering a closed-book question. Answer from your own "
    "knowledge in one to three sentences, stating numbers with their units."
)


def model_dir(name: str) -> str:
    """``models/<name>``, the name made safe as one folder (a Hub id's slash, a path's separators)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip()).strip("._") or "model"
    return f"models/{slug}"


def closed_book_messages(question: str, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> list[dict]:
    """What the model sees: the system prompt and the question, nothing from the paper."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return messages + [{"role": "user", "content": question.strip()}]


def _questions(results: Path) -> Iterator[dict]:
    for q in read_questions(results):
        yield {"id": q["id"], "question": q["question"]}  # the input the answer depends on: nothing else


def answer_stage(client: LLMClient, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT, folder: str) -> Stage:
    async def ask(q: dict) -> dict:
        # an empty or cut reply is the model's answer (it scores 0), not a failure left out of the means
        resp = await client.chat(closed_book_messages(q["question"], system_prompt), partial=True)
        return {
            "id": q["id"],
            "status": "ok",
            "prediction": resp.text.strip(),
            "finish_reason": resp.finish_reason,
            "prompt_tokens": resp.prompt_tokens,
            "completion_tokens": resp.completion_tokens,
        }

    return Stage(
        name="answer",
        inputs=_questions,
        process=ask,
        output=f"{folder}/answers.jsonl",
        params={"model": client.name, "params": client.params, "system_prompt": system_prompt},
        concurrency=client.concurrency * max(1, len(client.urls)),
        count=lambda results: len(read_questions(results)),
        progress=lambda: {"calls": client.usage.requests, "cached": client.usage.cached},
        describe=lambda: {"model": client.describe()},
        close=client.aclose,
        unit="question",
    )


def answered(results: Path, folder: str) -> dict[str, dict]:
    """id -> the latest answer record of each question this model answered."""
    return {r["id"]: r for r in iter_latest(results / folder / "answers.jsonl") if (r.get("status") or "ok") == "ok"}


def _scored_inputs(folder: str):
    def inputs(results: Path) -> Iterator[dict]:
        answers = answered(results, folder)
        for q in read_questions(results):
            if q["id"] in answers:
                yield {"id": q["id"], "prediction": answers[q["id"]]["prediction"], "reference": q["reference"]}

    return inputs


class _Score:
    def __init__(self, scorer: ReferenceScorer):
        self.scorer = scorer

    def __call__(self, rec: dict) -> dict:
        return {
            "id": rec["id"],
            "status": "ok",
            "prediction_digest": digest(rec["prediction"]),
            **self.scorer(rec["prediction"], rec["reference"]),
        }


def score_stage(scorer: ReferenceScorer, *, folder: str) -> Stage:
    inputs = _scored_inputs(folder)
    return Stage(
        name="score",
        inputs=inputs,
        process=_Score(scorer),
        count=lambda results: sum(1 for _ in inputs(results)),
        output=f"{folder}/scores.jsonl",
        params={"bertscore_model": scorer.bertscore_model},
        describe=scorer.describe,
        unit="answer",
    )
