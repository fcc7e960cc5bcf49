"""The general-knowledge check: a question a small model answers right without the paper and without its domain
terms is a candidate "general knowledge" item, which tests what any model knows rather than the paper.

One model (``benchmark.general_knowledge_model``; default: the embedded one) answers every question
closed-book with its domain terms masked: the pair's keywords (or its paper's, ``question_keywords.jsonl``)
and those of a ``keywords.jsonl`` of the work dir by paper id, each replaced by ``PLACEHOLDER``, longest first,
whole words, case-insensitive. Its answers are scored like a benchmarked model's (the reference metrics, and
the judge when the benchmark has one), in ``RESULTS/general_knowledge/``; the item analysis flags a question
``general_knowledge`` when that answer is right by the leaderboard's ranking metric and threshold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from sciqag_dataset.core.jsonl import read_jsonl
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation.benchmark.answer import DEFAULT_SYSTEM_PROMPT, closed_book_messages
from sciqag_dataset.evaluation.benchmark.questions import QUESTION_KEYWORDS, read_questions
from sciqag_dataset.llm import LLMClient

FOLDER = "general_knowledge"
PREDICTIONS = f"{FOLDER}/predictions.jsonl"
PLACEHOLDER = "[TERM]"
FLAG = "general_knowledge"


def mask(question: str, keywords: list[str], placeholder: str = PLACEHOLDER) -> str:
    """``question`` with every one of ``keywords`` (whole words, any case; the longest first, so a phrase goes
    before a word of it) replaced by ``placeholder``."""
    for word in sorted({k.strip() for k in keywords if k and k.strip()}, key=len, reverse=True):
        question = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", placeholder, question, flags=re.IGNORECASE)
    return question


def question_terms(results: Path, keywords_file: str | Path | None = None) -> dict[str, list[str]]:
    """Question id -> its domain terms: the data's (``question_keywords.jsonl``) and, by paper id, those of
    ``keywords_file`` (a work dir's ``keywords.jsonl``: ``{"id": paper id, "keywords": [...]}``)."""
    path = results / QUESTION_KEYWORDS
    terms = {r["id"]: list(r.get("keywords") or []) for r in read_jsonl(path)} if path.exists() else {}
    if keywords_file:
        by_paper = {r["id"]: r.get("keywords") or [] for r in read_jsonl(Path(keywords_file)) if r.get("id")}
        for q in read_questions(results):
            terms.setdefault(q["id"], []).extend(by_paper.get(q.get("paper_id"), []))
    return terms


def masked_questions(results: Path, keywords_file: str | Path | None = None) -> Iterator[dict]:
    terms = question_terms(results, keywords_file)
    for q in read_questions(results):
        yield {"id": q["id"], "question": mask(q["question"], terms.get(q["id"], []))}


def answer_stage(
    client: LLMClient, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT, keywords_file: str | Path | None = None
) -> Stage:
    """The masked questions answered closed-book -> ``RESULTS/general_knowledge/answers.jsonl`` (the records the
    benchmark's score and judge stages read, as for a model under benchmark)."""
    client.cache_namespace = client.cache_namespace or FOLDER

    async def ask(q: dict) -> dict:
        resp = await client.chat(closed_book_messages(q["question"], system_prompt), partial=True)
        return {
            "id": q["id"],
            "status": "ok",
            "masked_question": q["question"],
            "prediction": resp.text.strip(),
            "finish_reason": resp.finish_reason,
            "prompt_tokens": resp.prompt_tokens,
            "completion_tokens": resp.completion_tokens,
        }

    return Stage(
        name="general_knowledge",
        inputs=lambda results: masked_questions(results, keywords_file),
        process=ask,
        output=f"{FOLDER}/answers.jsonl",
        params={"model": client.name, "params": client.params, "system_prompt": system_prompt, "mask": PLACEHOLDER},
        concurrency=client.concurrency * max(1, len(client.urls)),
        count=lambda results: len(read_questions(results)),
        progress=lambda: {"calls": client.usage.requests, "cached": client.usage.cached},
        describe=lambda: {"model": client.describe()},
        close=client.aclose,
        unit="question",
    )


def clear(results: Path) -> None:
    """Forget the check's predictions (the answers stay, as a cache): a benchmark run without the check flags
    nothing as general knowledge."""
    (results / PREDICTIONS).unlink(missing_ok=True)


def right_without_paper(results: Path, correct) -> dict | None:
    """The model of the check and the ids of the questions it answered right (``correct(row)``), or None where
    the check did not run."""
    path = results / PREDICTIONS
    if not path.exists():
        return None
    rows = list(read_jsonl(path))
    info = results / FOLDER / "model.json"
    model = json.loads(info.read_text(encoding="utf-8")).get("model") if info.exists() else None
    return {"model": model, "placeholder": PLACEHOLDER, "right": [r["id"] for r in rows if correct(r)]}
