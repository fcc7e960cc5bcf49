"""leaderboard.png read without the README: every model by its full name, and the title names the data set
and the number of questions. Built by the real ``leaderboard`` from a results folder written by hand."""

from __future__ import annotations

import json

from helpers import write_jsonl
from PIL import Image

from sciqag_dataset.evaluation.benchmark.leaderboard import bars_figure, leaderboard
from sciqag_dataset.evaluation.plots import title_of

MODELS = {
    "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo": 0.6,
    "meta-llama/Meta-Llama-3.1-8B-Instruct": 0.4,
    "Qwen/Qwen2.5-7B-Instruct": 0.5,
}


def results_folder(tmp_path):
    results = tmp_path / "res"
    results.mkdir()
    (results / "questions.json").write_text(
        json.dumps(
            {"data": "me/sciqag-materials", "config": "evaluated", "split": "test", "questions": 4, "digest": "d1"}
        )
    )
    for i, (name, f1) in enumerate(MODELS.items()):
        folder = results / "models" / f"m{i}"
        folder.mkdir(parents=True)
        (folder / "model.json").write_text(json.dumps({"model": name, "questions_digest": "d1"}))
        write_jsonl(
            folder / "predictions.jsonl",
            [
                {
                    "id": f"q{k}",
                    "status": "answered",
                    "f1": f1 + 0.1 * (k % 2),
                    "rougeL": f1 / 2,
                    "prompt_tokens": 20,
                    "completion_tokens": 10,
                }
                for k in range(4)
            ],
        )
    return results


def test_leaderboard_png_names_every_model_in_full_and_the_data_set(tmp_path):
    results = results_folder(tmp_path)
    board = leaderboard(results, samples=50)
    assert [e["model"] for e in board["models"]] == sorted(MODELS, key=lambda m: -MODELS[m])  # ranked by f1

    with Image.open(results / "leaderboard.png") as im:
        shown = im.text["Title"]
    assert shown.startswith("Closed-book QA on me/sciqag-materials (config evaluated, split test): 4 questions")
    assert "ranked by f1" in shown

    fig = bars_figure(board)
    assert title_of(fig) == shown
    names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert names == [e["model"] for e in board["models"]]  # full names, best on top (inverted axis)
    assert fig.axes[0].yaxis_inverted()
    assert [ax.get_title() for ax in fig.axes] == ["f1", "rougeL"]
