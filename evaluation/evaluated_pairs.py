"""The evaluated pairs as they stand (each paper's rows, reviewers' edits applied) and the verdict of the filter's
rules on one pair: what `sciqag filter`, the duplicate finder and the benchmark's question selection share."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from pathlib import Path

from sciqag_dataset.core import metrics
from sciqag_dataset.core.errors import MissingInput
from sciqag_dataset.core.jsonl import read_jsonl
from sciqag_dataset.core.metrics import FAIL, MISSING
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.core.wiring import EVALUATED, REVIEWS
from sciqag_dataset.qa.rules import refers_to_source
from sciqag_dataset.review.store import decisions, read_reviews


def pair_verdict(
    row: dict,
    *,
    min_dims: dict[str, float] | None = None,
    drop_source_references: bool = False,
    authors_test_set: bool = False,
    **thresholds,
) -> tuple[list[str], list[str]]:
    """(rules the row fails, rules it cannot be judged on for a missing value). Kept iff both are empty.

    ``thresholds`` are the registered metrics' rules by name (``min_racar``, ``min_numeric_ratio``,
    ``min_chunk_rate`` ...; None: not applied); each metric's rule says what passes (a value at the threshold
    does; ``min_racar`` needs all five dimensions scored; an answer without numbers passes
    ``min_numeric_ratio``). ``min_dims`` {dimension: threshold} are RACAR's ``min_<dimension>`` rules.
    ``authors_test_set``: 3 on relevance, completeness, accuracy and reasonableness, and no source reference
    in the question (their agnosticism regex, run on the row's ``question`` as it stands).
    """
    failed, missing = [], []
    registry = metrics.rules()
    wanted = {**thresholds, **{f"min_{d}": t for d, t in (min_dims or {}).items()}}
    for name, value in wanted.items():
        if value is not None:
            verdict = registry[name][1].check(row, value)
            (failed if verdict == FAIL else missing if verdict == MISSING else []).append(name)
    if authors_test_set:
        for d in RACAR_DIMENSIONS:
            if d != "agnosticism":
                value = row.get(d)
                (missing if value is None else failed if value < 3 else []).append(f"authors_{d}")
    if (drop_source_references or authors_test_set) and refers_to_source(row.get("question") or ""):
        failed.append("source_reference")
    return failed, missing


def evaluated_papers(work: str | Path) -> Iterator[dict]:
    """Each paper's rows of ``evaluated.jsonl`` (written paper by paper): the filter stage's input, with
    ``questions``, each row's question as it stands (the newest reviewer's edit, else the generated one)."""
    path = Path(work) / EVALUATED
    if not path.exists():
        raise MissingInput(f"{path} not found: run `sciqag evaluate {work}` first")
    edits = {pid: d.question for pid, d in decisions(read_reviews(Path(work) / REVIEWS)).items() if d.question}
    ids = RowIds()
    for paper_id, group in groupby(read_jsonl(path), key=lambda row: row["paper_id"]):
        rows = list(group)
        questions = [edits.get(ids(row)) or row.get("question") or "" for row in rows]
        yield {"id": paper_id, "rows": rows, "questions": questions}
