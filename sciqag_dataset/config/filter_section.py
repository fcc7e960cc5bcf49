"""`filter:` in the YAML config: which evaluated pairs `sciqag filter` keeps (a section of ``config.Config``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sciqag_dataset.core import metrics
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.metrics import on_register
from sciqag_dataset.core.options import extend_section
from sciqag_dataset.core.options import opt as _opt
from sciqag_dataset.core.registry import did_you_mean
from sciqag_dataset.core.schema import RACAR_DIMENSIONS, REASONING_TYPES


@dataclass
class FilterConfig:
    """`filter:` in the YAML config: which evaluated pairs `sciqag filter` keeps (all rules must pass).

    Its first fields are the registered metrics' filter rules (``Rule``: ``min_racar``, ``min_chunk_rate``...),
    added as each metric registers; a rule of a plugin not yet imported when the file is read goes in
    ``thresholds``. The fields below are the filter's own."""

    drop_source_references: bool = _opt(
        False, help='drop questions that cite the source ("Figure 3", "this paper", "the study", "the authors")'
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
    thresholds: dict[str, Any] = _opt(
        {}, cli=False, help="filter rules by name, e.g. {max_question_words: 25} (a plugin's, before it is imported)"
    )
    allow_missing_scores: bool = _opt(
        False,
        help="apply a rule whose metric scored no pair (it drops every pair; "
        "without this flag such a rule is refused)",
    )

    def values(self) -> dict[str, Any]:
        """Every registered rule's value (None: off): its field where set (YAML or flag), else ``thresholds``."""
        fields = {name: getattr(self, name, None) for name in metrics.rules()}
        return {**fields, **self.thresholds, **{k: v for k, v in fields.items() if v is not None}}

    def check(self) -> None:
        """Refuse a threshold no registered rule has, or out of its rule's range; and rules that select nothing
        whatever the pairs: an empty list of reasoning types, a difficulty range with its minimum above its
        maximum (NaN is refused with every option's range)."""
        registry = metrics.rules()
        for name, value in self.thresholds.items():
            if name not in registry:
                raise UserError(
                    f"filter.thresholds: unknown filter rule {name!r}{did_you_mean(name, registry)}; the registered "
                    f"metrics have {', '.join(registry)}"
                )
            registry[name][1].option.check(value, "filter.thresholds.")
        values = self.values()
        types = values.get("reasoning_types")
        if types is not None and not [t for t in types if t]:
            raise UserError(
                f"filter.reasoning_types: no reasoning type given (it would drop every pair); expected some of "
                f"{', '.join(REASONING_TYPES)}"
            )
        low, high = values.get("min_difficulty"), values.get("max_difficulty")
        if low is not None and high is not None and low > high:
            raise UserError(
                f"filter.min_difficulty {low:g} is above filter.max_difficulty {high:g}: no pair can pass both"
            )

    def rules(self) -> dict[str, Any]:
        """Keyword arguments of ``evaluation.filter.filter_pairs``: every registered rule's value (RACAR's per
        dimension as ``min_dims``) and the filter's own rules."""
        values = self.values()
        dims = {d: values.pop(f"min_{d}") for d in RACAR_DIMENSIONS if f"min_{d}" in values}
        return {
            **values,
            "min_dims": {d: v for d, v in dims.items() if v is not None} or None,
            "drop_source_references": self.drop_source_references,
            "authors_test_set": self.authors_test_set,
        }


on_register(
    lambda metric: extend_section(
        FilterConfig, [r.option for r in metric.rules], f"metric {metric.name!r}", first=True
    )
)
