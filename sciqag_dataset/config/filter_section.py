"""`filter:` in the YAML config: which evaluated pairs `sciqag filter` keeps (a section of ``config.Config``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.options import opt as _opt
from sciqag_dataset.core.schema import RACAR_DIMENSIONS, REASONING_TYPES


@dataclass
class FilterConfig:
    """`filter:` in the YAML config: which evaluated pairs `sciqag filter` keeps (all rules must pass)."""

    min_racar: float | None = _opt(None, min=1, max=3, help="minimum mean RACAR score (all five must be scored)")
    min_relevance: float | None = _opt(None, min=1, max=3, help="minimum relevance score")
    min_agnosticism: float | None = _opt(None, min=1, max=3, help="minimum agnosticism score")
    min_completeness: float | None = _opt(None, min=1, max=3, help="minimum completeness score")
    min_accuracy: float | None = _opt(None, min=1, max=3, help="minimum accuracy score")
    min_reasonableness: float | None = _opt(None, min=1, max=3, help="minimum reasonableness score")
    drop_source_references: bool = _opt(
        False, help='drop questions that cite the source ("Figure 3", "this paper", "the study", "the authors")'
    )
    reasoning_types: list[str] | None = _opt(
        None,
        choices=REASONING_TYPES,
        what="reasoning type",
        help="keep only questions of these reasoning types (the judge's `reasoning_type` label), comma-separated",
    )
    min_difficulty: float | None = _opt(None, min=1, max=3, help="minimum difficulty label (1 easy - 3 hard)")
    max_difficulty: float | None = _opt(None, min=1, max=3, help="maximum difficulty label (1 easy - 3 hard)")
    min_numeric_ratio: float | None = _opt(
        None,
        min=0,
        max=1,
        help="minimum share of an answer's numbers found in the paper (answers without numbers pass)",
    )
    min_chunk_rate: float | None = _opt(
        None, min=0, max=1, help="minimum share of the paper's 10 chunks an answer's evidence covers"
    )
    min_grounding: float | None = _opt(
        None,
        min=0,
        max=1,
        help="minimum share of an answer's content words found in its quoted evidence (coverage's `grounded`)",
    )
    drop_duplicates: bool = _opt(
        False,
        help="drop near-duplicate questions (within a paper by embeddings, across papers by MinHash), keeping of "
        "each group the pair its reviewers kept, else the best judged (RACAR mean), else the best grounded",
    )
    duplicate_threshold: float = _opt(0.9, min=0, max=1, help="embedding cosine of near-duplicates within a paper")
    duplicate_jaccard: float = _opt(0.8, min=0.1, max=0.99, help="MinHash Jaccard of near-duplicates across papers")
    decontaminate: list[str] | None = _opt(
        None,
        repeat=True,
        metavar="DATASET",
        help="drop pairs whose question a benchmark asks (13-gram overlap or embedding similarity); a Hub id, "
        "published folder (its test split) or JSON/JSONL/parquet file; repeat for several",
    )
    decontaminate_threshold: float = _opt(
        0.9, min=0, max=1, help="embedding cosine at which a question counts as a benchmark's paraphrase"
    )
    drop_flagged_items: list[str] | None = _opt(
        None,
        repeat=True,
        metavar="RESULTS",
        help="drop pairs whose question a `sciqag benchmark` item analysis flagged (every model right, none "
        "right, or negative discrimination); RESULTS is its output folder; repeat for several",
    )
    authors_test_set: bool = _opt(
        False,
        help="the authors' rule: 3 on every RACAR dimension but agnosticism, and no source reference in the question",
    )
    thresholds: dict[str, float] = _opt(
        {}, cli=False, help="rules of plugin metrics by name, e.g. {min_question_words: 5}"
    )
    allow_missing_scores: bool = _opt(
        False,
        help="apply a rule whose metric scored no pair (it drops every pair; "
        "without this flag such a rule is refused)",
    )

    def check(self) -> None:
        """Refuse rules that select nothing whatever the pairs: an empty list of reasoning types, a difficulty
        range with its minimum above its maximum (NaN is refused with every option's range)."""
        if self.reasoning_types is not None and not [t for t in self.reasoning_types if t]:
            raise UserError(
                f"filter.reasoning_types: no reasoning type given (it would drop every pair); expected some of "
                f"{', '.join(REASONING_TYPES)}"
            )
        low, high = self.min_difficulty, self.max_difficulty
        if low is not None and high is not None and low > high:
            raise UserError(
                f"filter.min_difficulty {low:g} is above filter.max_difficulty {high:g}: no pair can pass both"
            )

    def min_dims(self) -> dict[str, float]:
        return {d: v for d in RACAR_DIMENSIONS if (v := getattr(self, f"min_{d}")) is not None}

    def rules(self) -> dict[str, Any]:
        """Keyword arguments of ``evaluation.filter.filter_pairs``."""
        return {
            "min_racar": self.min_racar,
            "min_dims": self.min_dims() or None,
            "drop_source_references": self.drop_source_references,
            "min_numeric_ratio": self.min_numeric_ratio,
            "min_chunk_rate": self.min_chunk_rate,
            "min_grounding": self.min_grounding,
            "reasoning_types": self.reasoning_types,
            "min_difficulty": self.min_difficulty,
            "max_difficulty": self.max_difficulty,
            "authors_test_set": self.authors_test_set,
            **self.thresholds,
        }
