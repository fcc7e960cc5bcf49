"""Closed-book QA benchmark on a published dataset's test split (or a file of pairs).

``run_benchmark``: the questions (``questions.py``) -> per model: closed-book answers and their
reference-based scores (``answer.py``), optionally an LLM judge's correctness and completeness
(``judge.py``), each a stage on the one runner (resume, failure isolation, progress, manifests) -> the
predictions file per model and the leaderboard over all models (``leaderboard.py``) with its item analysis
(``items.py``, ``irt.py``) -> optionally the
card's Benchmark section (``card.py``). ``export.py`` writes the same benchmark as lighteval and
lm-evaluation-harness tasks. Results layout::

    RESULTS/questions.jsonl, questions.json          the question set and where it came from
    RESULTS/models/<model>/answers.jsonl             closed-book answers (+ _manifest.json)
    RESULTS/models/<model>/scores.jsonl              reference-based scores
    RESULTS/models/<model>/judgements.jsonl          the judge's scores, one line per batch
    RESULTS/models/<model>/predictions.jsonl         one row per question, every score a column
    RESULTS/leaderboard.json, .md, .png              mean and 95 % bootstrap CI per metric and model
    RESULTS/items.jsonl, item_analysis.json, .png    item analysis over the models (``items.py``)
    RESULTS/general_knowledge/                       the general-knowledge check (``general_knowledge.py``)
    RESULTS/cache.sqlite                             model replies (a rerun asks nothing twice)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.runner import Summary, run_stage
from sciqag_dataset.evaluation.benchmark import general_knowledge as general_knowledge_check
from sciqag_dataset.evaluation.benchmark.answer import DEFAULT_SYSTEM_PROMPT, answer_stage, model_dir, score_stage
from sciqag_dataset.evaluation.benchmark.card import question_writers, update_card
from sciqag_dataset.evaluation.benchmark.judge import judge_stage
from sciqag_dataset.evaluation.benchmark.leaderboard import leaderboard, write_predictions
from sciqag_dataset.evaluation.benchmark.metrics import ReferenceScorer
from sciqag_dataset.evaluation.benchmark.questions import load_questions, write_questions
from sciqag_dataset.llm import LLMClient

__all__ = ["DEFAULT_SYSTEM_PROMPT", "BenchmarkRun", "load_questions", "run_benchmark", "update_card"]

log = logging.getLogger(__name__)


@dataclass
class BenchmarkRun:
    board: dict
    summaries: dict[str, list[Summary]] = field(default_factory=dict)  # model -> its stages' summaries


def run_benchmark(
    data: str,
    results: str | Path,
    models: list[LLMClient],
    *,
    judges: list[LLMClient] | None = None,
    config: str | None = None,
    split: str = "test",
    limit: int | None = None,
    authors_test_set: bool = False,
    system_prompt: str | None = None,
    bertscore_model: str | None = "sentence-transformers/all-MiniLM-L6-v2",
    judge_batch: int = 10,
    combine: str = "mean",
    max_attempts: int = 3,
    structured: bool = True,
    bootstrap_samples: int = 1000,
    progress: bool = True,
    general_knowledge: LLMClient | None = None,
    general_knowledge_keywords: str | None = None,
) -> BenchmarkRun:
    """Ask every model every question closed-book, score the answers, and write the leaderboard; with
    ``general_knowledge`` (a model), its answers to the questions with their domain terms masked flag the
    questions it gets right in the item analysis."""
    results = Path(results)
    folders = [model_dir(c.name) for c in models]
    if len(set(folders)) < len(folders):
        raise UserError(
            "two models under benchmark share a name (" + ", ".join(c.name for c in models) + "): their "
            "answers would share a folder; give each a name of its own"
        )
    questions, info = load_questions(data, config=config, split=split, limit=limit, authors_test_set=authors_test_set)
    write_questions(results, questions, info)
    prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
    scorer = ReferenceScorer(bertscore_model)
    run = BenchmarkRun(board={})
    writers = question_writers(data)
    alike = {"system_prompt": prompt, "scorer": scorer.describe()}  # what makes the models' scores comparable
    for client, folder in zip(models, folders):
        wrote = writers.get(client.name) or writers.get(client.model)
        if wrote:
            log.warning(
                "%s is %s recorded in %s's card: it answers questions it wrote itself, so its scores are not "
                "those of a model that never saw them",
                client.name,
                wrote,
                data,
            )
        stages = [answer_stage(client, system_prompt=prompt, folder=folder), score_stage(scorer, folder=folder)]
        if judges:
            stages.append(
                judge_stage(
                    judges,
                    folder=folder,
                    batch_size=judge_batch,
                    combine=combine,
                    max_attempts=max_attempts,
                    structured=structured,
                )
            )
        run.summaries[client.name] = [run_stage(s, results, progress=progress) for s in stages]
        write_predictions(
            results,
            folder,
            {
                "model": client.name,
                "endpoints": client.describe()["endpoints"],
                "params": client.params,
                "questions_digest": info["digest"],
                **alike,
                "judges": [j.name for j in judges or []],
                "wrote_the_questions": wrote,
            },
        )
    if general_knowledge is not None:
        check = general_knowledge_check
        stages = [
            check.answer_stage(general_knowledge, system_prompt=prompt, keywords_file=general_knowledge_keywords),
            score_stage(scorer, folder=check.FOLDER),
        ]
        if judges:
            stages.append(
                judge_stage(
                    judges,
                    folder=check.FOLDER,
                    batch_size=judge_batch,
                    combine=combine,
                    max_attempts=max_attempts,
                    structured=structured,
                )
            )
        name = f"general knowledge check ({general_knowledge.name})"
        run.summaries[name] = [run_stage(s, results, progress=progress) for s in stages]
        write_predictions(results, check.FOLDER, {"model": general_knowledge.name, "mask": check.PLACEHOLDER, **alike})
    else:
        general_knowledge_check.clear(results)
    run.board = leaderboard(results, samples=bootstrap_samples, current=alike)
    return run
