"""A metric of your own in one module (docs/ARCHITECTURE.md): how many words does each question take?

Its column reaches ``evaluated.jsonl``, the published `evaluated` config (typed) and the card; its option
(``evaluate.question_word_min_length``) is read from the config like a built-in metric's; and its filter rule
(``filter.max_question_words``) drops pairs in ``sciqag filter``. Name the module in the config's ``plugins:``
(or ``--plugins``):

    sciqag evaluate sciqag_work --plugins sciqag_dataset.examples.custom_metric --metrics numeric,question_words
    sciqag filter sciqag_work --config filter.yaml   # plugins: [...], filter: {max_question_words: 25}
    sciqag publish sciqag_work
"""

from __future__ import annotations

from statistics import mean

from datasets import Value

from sciqag_dataset.core import records
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import FAIL, MISSING, Metric, Rule, num, register
from sciqag_dataset.core.options import option
from sciqag_dataset.core.stage import Stage


class _Words:
    """Words per question, counting only words of at least ``min_length`` letters (punctuation aside)."""

    def __init__(self, min_length: int):
        self.min_length = min_length

    def __call__(self, paper: dict) -> dict:
        counts = [
            sum(len(w.strip("?!.,;:")) >= self.min_length for w in (pair["question"] or "").split())
            for pair in paper["qa"]
        ]
        return {
            "id": paper["id"],
            "status": "ok",
            "pair_metrics": [{"question_words": n} for n in counts],
            "paper_metrics": {"mean_question_words": mean(counts) if counts else None},
        }


def question_words_stage(source: str, min_length: int = 1) -> Stage:
    """Words per question of every paper's usable QA pairs -> WORK/question_words.jsonl."""
    return Stage(
        name="question_words",
        inputs=lambda work: records.qa_papers(work, source),
        process=_Words(min_length),
        params={"min_length": min_length},
        count=lambda work: records.count_qa(work, source),
    )


def _summary(path, cfg) -> dict:
    counts = [p["question_words"] for rec in iter_latest(path) for p in rec["pair_metrics"]]
    return {"questions": len(counts), "mean": mean(counts) if counts else None, "longest": max(counts, default=None)}


def _at_most(row: dict, limit: int) -> str | None:
    words = row.get("question_words")
    return MISSING if words is None else FAIL if words > limit else None


METRIC = register(
    Metric(
        name="question_words",
        cost=5,
        help="words per question (an example plugin)",
        build=lambda ctx: question_words_stage(ctx.source, ctx.cfg.question_word_min_length),
        options=(
            option(
                "question_word_min_length",
                int,
                1,
                min=1,
                help="question_words: count words of at least this many letters",
            ),
        ),
        pair_columns={"question_words": Value("int32")},
        paper_columns={"mean_question_words": Value("float32")},
        summarize=_summary,
        card=lambda s: f"**Question length**: {num(s['mean'])} words per question on average, {s['longest']} at most.",
        rules=(
            Rule(
                "max_question_words",
                _at_most,
                lambda limit: f"questions of at most {limit} words",
                type=int | None,
                help="maximum words per question (the question_words metric)",
                constraints={"min": 1},
            ),
        ),
        how_to_run="sciqag evaluate WORK --plugins sciqag_dataset.examples.custom_metric --metrics question_words",
    )
)
