"""The dataset card's "Human review" section: who reviewed how many pairs, what they changed, how well the
judge agrees with them (``WORK/agreement.json``, with its plots), and a calibrated filter threshold."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from sciqag_dataset.core.wiring import AGREEMENT, REVIEWS
from sciqag_dataset.review.store import decisions, read_reviews, reviewed

PLOTS = Path("plots") / "agreement"  # the agreement plots in the published folder


def _interval(stat: dict | None) -> str:
    if not stat or stat.get("value") is None:
        return "–"
    text = f"{stat['value']:.2f}"
    if stat.get("low") is not None:
        text += f" [{stat['low']:.2f}, {stat['high']:.2f}]"
    return text


def agreement_rows(result: dict) -> list[dict]:
    """One table row per dimension and pair of raters that includes a person."""
    kinds = {r: v["kind"] for r, v in result.get("raters", {}).items()}
    rows = []
    for dim, d in result.get("dimensions", {}).items():
        for p in d["pairs"]:
            if "reviewer" not in (kinds.get(p["a"]), kinds.get(p["b"])) and "imported" not in (
                kinds.get(p["a"]),
                kinds.get(p["b"]),
            ):
                continue  # judge against judge: the evaluation summary has it
            rows.append(
                {
                    "dimension": dim,
                    "raters": f"{p['a']} – {p['b']}",
                    "n": p["n"],
                    "kappa": _interval(p["kappa"]),
                    "spearman": _interval(p.get("spearman")),  # none for nominal labels
                    "exact": _interval(p["exact"]),
                    "alpha_humans": _interval(d.get("alpha_humans")),
                    "alpha_all": _interval(d.get("alpha_all")),
                }
            )
    return rows


def human_review(work: Path, staging: Path | None = None) -> dict | None:
    """The section's data (None when nobody reviewed); agreement plots are copied into ``staging``."""
    log = read_reviews(work / REVIEWS)
    decided = decisions(log)
    if not decided:
        return None
    per_reviewer = Counter(r for (r, _), state in log.states.items() if reviewed(state))
    out = {
        "pairs": len(decided),
        "reviewers": [{"name": r, "pairs": per_reviewer.get(r, 0)} for r in log.reviewers()],
        "dropped": sum(d.keep is False for d in decided.values()),
        "edited": sum(d.question is not None or d.answer is not None for d in decided.values()),
        "agreement": None,
    }
    path = work / AGREEMENT
    if path.exists():
        result = json.loads(path.read_text(encoding="utf-8"))
        plots = []
        for rel, caption in (result.get("plots") or {}).items():
            src = work / rel
            if src.exists() and staging is not None:
                (staging / PLOTS).mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, staging / PLOTS / src.name)
                plots.append({"path": (PLOTS / src.name).as_posix(), "caption": caption})
        out["agreement"] = {
            "rows": agreement_rows(result),
            "warnings": result.get("warnings") or [],
            "plots": plots,
            "rounds": result.get("bootstrap_rounds"),
        }
    return out
