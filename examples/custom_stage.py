"""A stage of your own in ~30 lines (docs/ARCHITECTURE.md): how long is each generated question?

from sciqag_dataset.examples.custom_stage import question_lengths
from sciqag_dataset.core.runner import run_stage
run_stage(question_lengths(max_words=40), "sciqag_work")   # -> sciqag_work/question_lengths.jsonl
"""

from __future__ import annotations

from sciqag_dataset.core import records
from sciqag_dataset.core.stage import Stage


class _Lengths:
    def __init__(self, max_words: int):
        self.max_words = max_words

    def __call__(self, paper: dict) -> dict:
        words = [len(pair["question"].split()) for pair in paper["qa"]]
        return {
            "id": paper["id"],
            "status": "ok",
            "words": words,
            "too_long": [i for i, n in enumerate(words) if n > self.max_words],
        }


def question_lengths(max_words: int = 40, source: str | None = None) -> Stage:
    """Words per question of every paper's usable QA pairs -> WORK/question_lengths.jsonl."""
    return Stage(
        name="question_lengths",
        inputs=lambda work: records.qa_papers(work, source),
        process=_Lengths(max_words),
        params={"max_words": max_words},
        count=lambda work: records.count_qa(work, source),
    )
