"""Item analysis of a benchmark (classical test theory) over the models its leaderboard ranks.

Each model's answer to a question is right or wrong by the ranking metric's threshold (``CORRECT_AT``: a
judge's correctness of 3, or token F1 of at least 0.5); a question a model did not answer is wrong. Per
question: its difficulty (the share of models right) and its discrimination (the corrected point-biserial:
the correlation, across models, of being right on it with the model's number right on the other questions;
None when either does not vary). Flags: ``all_right`` (too easy, or leaked), ``none_right`` (a wrong reference,
or not answerable closed-book), ``negative_discrimination`` (weaker models get it right more often). Over the
set: KR-20 reliability and the ranking's stability: the share of bootstrap resamples of the questions (numpy,
seeded) whose model order, by number right, is the full leaderboard's order. With enough models, a 2PL IRT fit
(``irt.py``) adds each question's ``irt_a`` (discrimination) and ``irt_b`` (difficulty) and each model's ability.
Where the benchmark ran the general-knowledge check (``general_knowledge.py``), a question its model answered
right without the paper and with its domain terms masked is flagged ``general_knowledge``.
Written beside the leaderboard: ``items.jsonl`` (one row per question), ``item_analysis.json`` and
``item_analysis.png`` (difficulty against discrimination).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import MissingInput
from sciqag_dataset.core.jsonl import read_jsonl
from sciqag_dataset.evaluation.benchmark import general_knowledge
from sciqag_dataset.evaluation.benchmark.irt import MIN_MODELS, fit_2pl
from sciqag_dataset.evaluation.plots import _pyplot, _save, wrap

CORRECT_AT = {"judge_correctness": 3.0, "f1": 0.5}
FILES = ("items.jsonl", "item_analysis.json", "item_analysis.png")
FLAGS = ("all_right", "none_right", "negative_discrimination")
GENERAL = general_knowledge.FLAG  # a flag of its own check, not of the models x items matrix


def point_biserial(item: np.ndarray, rest: np.ndarray) -> float | None:
    """Pearson correlation of a 0/1 item with the rest score; None when either is constant."""
    if item.std() == 0 or rest.std() == 0:
        return None
    return float(np.corrcoef(item, rest)[0, 1])


def kr20(matrix: np.ndarray) -> float | None:
    """KR-20 of a models x items 0/1 matrix: k/(k-1) * (1 - sum p(1-p) / variance of the totals)."""
    k = matrix.shape[1]
    totals = matrix.sum(axis=1)
    if k < 2 or totals.var() == 0:
        return None
    p = matrix.mean(axis=0)
    return float(k / (k - 1) * (1 - (p * (1 - p)).sum() / totals.var()))


def ranking_stability(matrix: np.ndarray, *, samples: int = 1000, seed: int = 0) -> float | None:
    """Share of item resamples (with replacement) whose model order by number right equals the order over all
    items; models of equal totals keep their leaderboard order (the rows' order), so a tie is unstable."""
    n_models, k = matrix.shape
    if n_models < 2 or k < 1:
        return None
    full = np.argsort(-matrix.sum(axis=1), kind="stable")
    rng = np.random.default_rng(seed)
    totals = matrix[:, rng.integers(0, k, size=(samples, k))].sum(axis=2)  # models x samples
    orders = np.argsort(-totals.T, axis=1, kind="stable")
    return float((orders == full).all(axis=1).mean())


def analyse(ids: list[str], models: list[str], matrix, *, samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Item analysis of a models x items 0/1 matrix (rows in leaderboard order)."""
    x = np.asarray(matrix, dtype=float).reshape(len(models), len(ids))
    totals = x.sum(axis=1)
    items = []
    for j, qid in enumerate(ids):
        difficulty = float(x[:, j].mean()) if len(models) else None
        disc = point_biserial(x[:, j], totals - x[:, j]) if len(models) > 2 else None
        flags = [
            f for f, on in zip(FLAGS, (difficulty == 1.0, difficulty == 0.0, disc is not None and disc < 0)) if on
        ]
        items.append(
            {
                "id": qid,
                "difficulty": None if difficulty is None else round(difficulty, 4),
                "discrimination": None if disc is None else round(disc, 4),
                "right": [m for m, r in zip(models, x[:, j]) if r],
                "flags": flags,
            }
        )
    irt = fit_2pl(x)
    if irt:
        for j, item in enumerate(items):
            item["irt_a"], item["irt_b"] = irt["a"][j], irt["b"][j]
    alpha = kr20(x) if len(models) > 1 else None
    stable = ranking_stability(x, samples=samples, seed=seed)
    return {
        "models": models,
        "questions": len(ids),
        "kr20": None if alpha is None else round(alpha, 4),
        "ranking_stability": None if stable is None else round(stable, 4),
        "bootstrap_samples": samples,
        "irt_2pl": {"ability": dict(zip(models, irt["theta"]))}
        if irt
        else (
            f"not fitted: under {MIN_MODELS} models"
            if len(models) < MIN_MODELS
            else "not fitted: scipy is not installed"
        ),
        "flagged": {f: [i["id"] for i in items if f in i["flags"]] for f in FLAGS},
        "items": items,
    }


def correct(row: dict, metric: str) -> bool:
    value = row.get(metric) if row.get("status") == "answered" else None
    return value is not None and value >= CORRECT_AT[metric]


def item_analysis(results: Path, board: dict, rows: dict[str, list[dict]], *, samples: int = 1000) -> dict | None:
    """The analysis over the leaderboard's models (``rows``: each model's predictions), written into ``results``;
    None without a ranking metric or with fewer than two models (an earlier run's analysis files then go: they
    would describe other models)."""
    metric = board.get("ranked_by")
    models = [e["model"] for e in board["models"]]
    if metric not in CORRECT_AT or len(models) < 2:
        for name in FILES:
            (results / name).unlink(missing_ok=True)
        return None
    ids = [r["id"] for r in rows[models[0]]]
    by_model = {m: {r["id"]: r for r in rows[m]} for m in models}
    matrix = [[correct(by_model[m].get(q) or {}, metric) for q in ids] for m in models]
    result = {"metric": metric, "correct_at": CORRECT_AT[metric]} | analyse(ids, models, matrix, samples=samples)
    general = general_knowledge.right_without_paper(results, lambda row: correct(row, metric))
    if general is not None:
        right = set(general["right"])
        for item in result["items"]:
            item["flags"] += [GENERAL] if item["id"] in right else []
        result["flagged"][GENERAL] = [i["id"] for i in result["items"] if i["id"] in right]
        result["general_knowledge"] = {k: v for k, v in general.items() if k != "right"}
    questions = {r["id"]: r.get("question") for r in rows[models[0]]}
    write_whole(
        results / "items.jsonl",
        "".join(json.dumps(i | {"question": questions[i["id"]]}, ensure_ascii=False) + "\n" for i in result["items"]),
    )
    summary = {k: v for k, v in result.items() if k != "items"}
    write_whole(results / "item_analysis.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    summary["plot"] = str(scatter(result, results / "item_analysis.png"))
    return summary


def flagged_questions(folders: list[str]) -> dict[str, list[str]]:
    """The questions the item analyses in these benchmark results folders flagged: question -> flags."""
    out: dict[str, list[str]] = {}
    for folder in folders:
        path = Path(folder) / "items.jsonl"
        if not path.is_file():
            raise MissingInput(f"{path} not found: run `sciqag benchmark` with two or more models into {folder}")
        for row in read_jsonl(path):
            if row.get("flags") and row.get("question"):
                out.setdefault(row["question"], []).extend(
                    f for f in row["flags"] if f not in out.get(row["question"], [])
                )
    return out


def scatter_figure(result: dict):
    """Each question's difficulty (share of models right) against its discrimination; flagged ones in red."""
    fig, ax = _pyplot().subplots(figsize=(6, 4.2))
    for flagged, colour in ((False, "#4c72b0"), (True, "#c44e52")):
        pts = [
            (i["difficulty"], i["discrimination"] if i["discrimination"] is not None else 0.0)
            for i in result["items"]
            if bool(i["flags"]) == flagged
        ]
        if pts:
            ax.scatter(*zip(*pts), color=colour, alpha=0.7, label="flagged" if flagged else "not flagged")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel(f"difficulty: share of {len(result['models'])} models right ({result['metric']})")
    ax.set_ylabel("discrimination (corrected point-biserial; 0 if undefined)")
    ax.legend(fontsize=8)
    fig.suptitle(wrap(f"Item analysis of {result['questions']} benchmark questions"), fontsize=9)
    return fig


def scatter(result: dict, path: Path) -> Path:
    return _save(scatter_figure(result), path)


def markdown(summary: dict) -> str:
    """The analysis as a few lines of Markdown for the card."""
    flagged = summary["flagged"]
    words = {
        "all_right": "every model right",
        "none_right": "no model right",
        "negative_discrimination": "negative",
        GENERAL: "general knowledge (answered right by "
        + str((summary.get("general_knowledge") or {}).get("model") or "the check's model")
        + f" without the paper, its domain terms masked as {general_knowledge.PLACEHOLDER})",
    }
    lines = [
        f"Item analysis over {len(summary['models'])} models (right: {summary['metric']} >= {summary['correct_at']}): "
        f"KR-20 {summary['kr20']}, ranking stable in {summary['ranking_stability']} of "
        f"{summary['bootstrap_samples']} bootstrap resamples of the questions.",
        "",
    ]
    lines += [f"- {words[f]}: {len(ids)}" + (f" ({', '.join(ids)})" if ids else "") for f, ids in flagged.items()]
    return "\n".join(lines) + "\n"
