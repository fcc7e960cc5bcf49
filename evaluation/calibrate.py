"""`sciqag filter --calibrate`: the RACAR-mean threshold that best reproduces people's keep/drop decisions.

On the reviewed pairs with a keep/drop decision and a judge mean, every distinct judge mean is a candidate
threshold ("keep when the mean is at least t"); for each, precision and recall of "kept" against the people's
decisions (scikit-learn's ``precision_recall_curve``) and the share of decisions reproduced. The chosen one
reproduces the most decisions; ties go to the higher F1, then to the lower threshold (keeping more).
"""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.core.errors import Unavailable, UserError
from sciqag_dataset.core.jsonl import read_jsonl
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.core.wiring import EVALUATED, REVIEWS
from sciqag_dataset.review.store import decisions, read_reviews


def _curve():
    try:
        from sklearn.metrics import precision_recall_curve  # ~1 s to import: only when calibrating
    except ImportError as exc:
        raise Unavailable(f"--calibrate needs {exc.name}: pip install 'sciqag-hf[review]'") from exc
    return precision_recall_curve


def reviewed_pairs(work: Path) -> tuple[list[float], list[int]]:
    """Judge means and people's decisions (1 keep, 0 drop) of the pairs with a decision and all five scores."""
    decided = {pid: d.keep for pid, d in decisions(read_reviews(work / REVIEWS)).items() if d.keep is not None}
    means, kept = [], []
    if not decided or not (work / EVALUATED).exists():
        return means, kept
    ids = RowIds()
    for row in read_jsonl(work / EVALUATED):
        pid = ids(row)
        # as the filter's min_racar rule: a pair with a dimension unscored is never kept, so it is no candidate
        if pid in decided and all(row.get(d) is not None for d in RACAR_DIMENSIONS):
            means.append(float(row["racar_mean"]))
            kept.append(int(decided[pid]))
    return means, kept


def calibrate(work: str | Path) -> dict:
    """The threshold table and the chosen threshold (UserError when the reviews cannot decide one)."""
    work = Path(work)
    means, kept = reviewed_pairs(work)
    if len(set(kept)) < 2:
        raise UserError(
            f"--calibrate needs reviewed pairs both kept and dropped that the judge scored; {work / REVIEWS} has "
            f"{len(kept)} such decision(s), {sum(kept)} kept: review more with `sciqag review {work}`"
        )
    precision, recall, thresholds = _curve()(kept, means)
    table = []
    for p, r, t in zip(precision, recall, thresholds):
        predicted = [m >= t for m in means]
        agree = sum(int(x) == y for x, y in zip(predicted, kept)) / len(kept)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        table.append(
            {
                "threshold": round(float(t), 4),
                "precision": round(float(p), 4),
                "recall": round(float(r), 4),
                "f1": round(float(f1), 4),
                "agreement": round(agree, 4),
                "kept": sum(predicted),
            }
        )
    best = max(table, key=lambda row: (row["agreement"], row["f1"], -row["threshold"]))
    return {"threshold": best["threshold"], "pairs": len(kept), "kept_by_people": sum(kept), "table": table}
