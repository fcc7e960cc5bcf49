"""Predictions files and the leaderboard.

``write_predictions``: one row per question of the set (answered or not) with the prediction, what the question
was asked from and every score as a column -> ``models/<model>/predictions.jsonl``
(``load_dataset("json", data_files=...)`` reads it). ``leaderboard``: per model, each metric's mean over the
answered questions (``number_agreement`` over those whose reference has numbers) with a 95 % percentile-bootstrap
confidence interval (questions resampled with replacement), questions answered and failed, tokens, and the same
means per kind of question where some were asked from tables, equations or figures (``by_asked_from``) ->
``leaderboard.json``, ``leaderboard.md`` and ``leaderboard.png``. Models answered on another question set, system
prompt or BERTScore model are left out, and named. Scores and judgements join an answer only while they are of
that very answer.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.jsonl import iter_latest, read_jsonl
from sciqag_dataset.core.schema import grounding_rank
from sciqag_dataset.core.stage import digest
from sciqag_dataset.evaluation.benchmark.items import item_analysis
from sciqag_dataset.evaluation.benchmark.judge import JUDGE_DIMENSIONS
from sciqag_dataset.evaluation.benchmark.metrics import REFERENCE_METRICS
from sciqag_dataset.evaluation.benchmark.questions import QUESTIONS, QUESTIONS_INFO, read_questions
from sciqag_dataset.evaluation.plots import _pyplot, _save, wrap

log = logging.getLogger(__name__)

METRICS = (*REFERENCE_METRICS, *(f"judge_{d}" for d in JUDGE_DIMENSIONS))
PREDICTIONS = "predictions.jsonl"
MODEL_INFO = "model.json"
COMPARABLE = ("system_prompt", "scorer")  # besides the question set: what makes two models' scores comparable


def _latest(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in iter_latest(path)} if path.exists() else {}


def write_predictions(results: Path, folder: str, info: dict) -> Path:
    """Join the questions with this model's answers, scores and judgements into its predictions file."""
    base = results / folder
    answers, scores = _latest(base / "answers.jsonl"), _latest(base / "scores.jsonl")
    judged = {
        item["id"]: item for batch in _latest(base / "judgements.jsonl").values() for item in batch.get("items") or []
    }
    rows = []
    for q in read_questions(results):
        ans = answers.get(q["id"]) or {}
        ok = (ans.get("status") or "ok") == "ok" and "prediction" in ans
        # scores and judgements of this very answer only: a redone answer leaves older ones behind
        current = digest(ans["prediction"]) if ok else None
        score = scores.get(q["id"]) or {}
        score = score if current and score.get("prediction_digest") == current else {}
        judge = judged.get(q["id"]) or {}
        judge = judge if current and judge.get("prediction_digest") == current else {}
        rows.append(
            {
                "id": q["id"],
                "paper_id": q.get("paper_id"),
                "asked_from": q.get("asked_from") or "prose",
                "question": q["question"],
                "reference": q["reference"],
                "prediction": ans.get("prediction") if ok else None,
                "status": "answered" if ok else "failed" if ans else "not asked",
                "error": None if ok else ans.get("error"),
                "finish_reason": ans.get("finish_reason"),
                "prompt_tokens": ans.get("prompt_tokens"),
                "completion_tokens": ans.get("completion_tokens"),
                **{m: (score if m in REFERENCE_METRICS else judge).get(m) for m in METRICS},
                "judge_reasons": judge.get("judge_reasons"),
            }
        )
    write_whole(base / PREDICTIONS, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    (base / MODEL_INFO).write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return base / PREDICTIONS


def bootstrap_ci(values, *, samples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return (float(x.mean()), float(x.mean())) if len(x) else (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(samples, len(x)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _metrics(answered: list[dict], samples: int) -> dict[str, dict]:
    """Each metric's mean over ``answered`` with its bootstrap interval and count (metrics no row has: left out)."""
    metrics = {}
    for m in METRICS:
        values = [r[m] for r in answered if r.get(m) is not None]
        if not values:
            continue
        low, high = bootstrap_ci(values, samples=samples)
        metrics[m] = {
            "mean": round(float(np.mean(values)), 4),
            "ci95": [round(low, 4), round(high, 4)],
            "n": len(values),
        }
    return metrics


def model_entry(rows: list[dict], info: dict, *, samples: int = 1000) -> dict[str, Any]:
    answered = [r for r in rows if r["status"] == "answered"]
    metrics = _metrics(answered, samples)
    kinds = sorted({r.get("asked_from") or "prose" for r in rows}, key=grounding_rank)
    by_kind = {}
    if kinds != ["prose"]:  # questions asked from tables, equations or figures too: scores per kind
        for kind in kinds:
            of_kind = [r for r in answered if (r.get("asked_from") or "prose") == kind]
            by_kind[kind] = {
                "questions": sum((r.get("asked_from") or "prose") == kind for r in rows),
                "answered": len(of_kind),
                "metrics": _metrics(of_kind, samples),
            }
    return {
        "model": info["model"],
        "endpoint": info.get("endpoints"),
        "questions": len(rows),
        "answered": len(answered),
        "failed": sum(r["status"] == "failed" for r in rows),
        "prompt_tokens": sum(r.get("prompt_tokens") or 0 for r in answered),
        "completion_tokens": sum(r.get("completion_tokens") or 0 for r in answered),
        "metrics": metrics,
        "by_asked_from": by_kind,  # empty when every question was asked from the text
        "wrote_the_questions": info.get("wrote_the_questions"),  # its role when it wrote them, else None
    }


def leaderboard(results: Path, *, samples: int = 1000, current: dict | None = None) -> dict[str, Any]:
    """The leaderboard over the models in ``results`` answered like ``current`` (the model info of this run):
    on the same question set, with the same system prompt and the same BERTScore model."""
    qinfo = json.loads((results / QUESTIONS_INFO).read_text(encoding="utf-8"))
    entries, stale, rows = [], [], {}
    # what each question was asked from, as the question set says (a model answered in an earlier run has
    # predictions written before the set recorded it)
    asked = {q["id"]: q.get("asked_from") or "prose" for q in read_jsonl(results / QUESTIONS)}
    for path in sorted((results / "models").glob(f"*/{MODEL_INFO}")):
        info = json.loads(path.read_text(encoding="utf-8"))
        if info.get("questions_digest") != qinfo["digest"] or any(
            current is not None and info.get(k) != current.get(k) for k in COMPARABLE
        ):
            stale.append(info.get("model") or path.parent.name)
            continue
        rows[info["model"]] = [
            {**r, "asked_from": asked.get(r["id"], r.get("asked_from") or "prose")}
            for r in read_jsonl(path.parent / PREDICTIONS)
        ]
        entries.append(model_entry(rows[info["model"]], info, samples=samples))
    if stale:
        log.warning(
            "left out of the leaderboard, answered on another question set, system prompt or BERTScore model: %s",
            ", ".join(stale),
        )
    key = next((m for m in ("judge_correctness", "f1") if all(m in e["metrics"] for e in entries)), None)
    entries.sort(key=lambda e: -(e["metrics"][key]["mean"] if key else 0))
    board = {"questions": qinfo, "ranked_by": key, "bootstrap_samples": samples, "models": entries, "left_out": stale}
    board["item_analysis"] = item_analysis(results, board, rows, samples=samples)
    (results / "leaderboard.json").write_text(json.dumps(board, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (results / "leaderboard.md").write_text(markdown(board), encoding="utf-8")
    if any(e["metrics"] for e in entries):
        bars(board, results / "leaderboard.png")
    return board


def _cell(metric: dict | None, scale: float = 1.0) -> str:
    if not metric:
        return "–"
    low, high = metric["ci95"]
    return f"{metric['mean'] * scale:.3g} [{low * scale:.3g}, {high * scale:.3g}]"


def markdown(board: dict) -> str:
    """The leaderboard as a Markdown table: mean [95 % CI] per metric."""
    shown = [m for m in METRICS if any(m in e["metrics"] for e in board["models"])]
    q = board["questions"]
    source = f"`{q['data']}`" + (f" (config `{q['config']}`, split `{q['split']}`)" if q.get("config") else "")
    lines = [
        f"Closed-book answers to {plural(q['questions'], 'question')} of {source}; mean [95 % bootstrap CI] "
        "over the answered questions" + (f", ranked by {board['ranked_by']}" if board["ranked_by"] else "") + ".",
        "",
        "| model | answered | failed | " + " | ".join(shown) + " | completion tokens |",
        "|---|---:|---:|" + "---:|" * len(shown) + "---:|",
    ]
    for e in board["models"]:
        cells = [_cell(e["metrics"].get(m)) for m in shown]
        lines.append(
            f"| {e['model']} | {e['answered']} | {e['failed']} | "
            + " | ".join(cells)
            + f" | {e['completion_tokens']} |"
        )
    lines += _by_kind_lines(board, shown)
    own = [f"**{e['model']}** is {e['wrote_the_questions']}" for e in board["models"] if e.get("wrote_the_questions")]
    if own:
        lines += ["", "Warning: " + "; ".join(own) + " of this dataset: it answers questions it wrote itself."]
    return "\n".join(lines) + "\n"


def _by_kind_lines(board: dict, shown: list[str]) -> list[str]:
    """A table of each model's scores per kind of question (asked from the text, a table, an equation, a
    figure): the ranking metric, else the first shown; nothing when every question was asked from the text."""
    metric = board["ranked_by"] or next(iter(shown), None)
    kinds = sorted({k for e in board["models"] for k in e.get("by_asked_from") or {}}, key=grounding_rank)
    if not kinds or metric is None:
        return []
    counts = {k: max(e["by_asked_from"].get(k, {}).get("questions", 0) for e in board["models"]) for k in kinds}
    lines = [
        "",
        f"{metric} by what the question was asked from: mean [95 % bootstrap CI] over the answered questions of "
        "that kind.",
        "",
        "| model | " + " | ".join(f"{k} ({plural(counts[k], 'question')})" for k in kinds) + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for e in board["models"]:
        per = e.get("by_asked_from") or {}
        lines.append(
            f"| {e['model']} | "
            + " | ".join(_cell(per.get(k, {}).get("metrics", {}).get(metric)) for k in kinds)
            + " |"
        )
    return lines


def board_title(board: dict, width: int = 72) -> str:
    """What the leaderboard shows: the data set (config, split) and the number of questions."""
    q = board["questions"]
    where = ", ".join(f"{k} {q[k]}" for k in ("config", "split") if q.get(k))
    ranked = f"; ranked by {board['ranked_by']}" if board.get("ranked_by") else ""
    data = (
        f"Closed-book QA on {q['data']}" + (f" ({where})" if where else "") + f": {plural(q['questions'], 'question')}"
    )
    how = f"mean and 95 % bootstrap CI over each model's answered questions{ranked}"
    return wrap(data, width) + "\n" + wrap(how, width)


def bars_figure(board: dict):
    """One panel per metric: each model's mean with its 95 % interval, as horizontal bars labelled with the
    model's full name (left column; the panels share it), the best ranked on top."""
    shown = [m for m in METRICS if any(m in e["metrics"] for e in board["models"])]
    if not shown:
        raise ValueError("no model has a score to plot")
    names = [e["model"] for e in board["models"]]
    cols = min(4, len(shown))
    rows = -(-len(shown) // cols)
    # room on the left for the longest name: about 0.075 in per character at font size 8
    name_width = 0.075 * max(len(n) for n in names)
    size = (2.8 * cols + name_width, (0.35 * len(names) + 1.1) * rows + 0.8)
    fig, axes = _pyplot().subplots(rows, cols, sharey=True, squeeze=False, figsize=size)
    y = np.arange(len(names))
    for ax, m in zip(axes.flat, shown):
        means = [e["metrics"].get(m, {}).get("mean", np.nan) for e in board["models"]]
        err = [
            [
                max(0.0, mu - e["metrics"][m]["ci95"][0]) if m in e["metrics"] else 0
                for mu, e in zip(means, board["models"])
            ],
            [
                max(0.0, e["metrics"][m]["ci95"][1] - mu) if m in e["metrics"] else 0
                for mu, e in zip(means, board["models"])
            ],
        ]
        ax.barh(y, means, xerr=err, capsize=3, color="#4c72b0")
        ax.set_title(m, fontsize=9)
        ax.set_xlim(left=0)
        ax.tick_params(axis="x", labelsize=7)
        ax.tick_params(axis="y", labelsize=8)
    axes[0, 0].set_yticks(y, names)
    axes[0, 0].invert_yaxis()  # shared: the first-ranked model on top in every panel
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    fig.suptitle(board_title(board, int(12 * size[0])), fontsize=9)  # ~12 characters an inch at size 9
    return fig


def bars(board: dict, path: Path) -> Path:
    return _save(bars_figure(board), path)
