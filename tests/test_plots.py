"""Quality plots: each writes a real, non-empty PNG; the similarity bins are hand-checked."""
from __future__ import annotations

import numpy as np
import pytest

from sciqag_dataset.evaluation import plots
from sciqag_dataset.evaluation.diversity import similarity_bins

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path) -> bool:
    data = path.read_bytes()
    return data.startswith(PNG_MAGIC) and len(data) > 2000


def test_similarity_bins_hand_case():
    # <0.3: 0.0, 0.1, 0.29 | 0.3-0.5: 0.3, 0.45 | 0.5-0.7: 0.5 | >0.7: 0.7, 0.9 (None skipped)
    values = [0.0, 0.1, 0.29, 0.3, 0.45, 0.5, 0.7, 0.9, None]
    table = similarity_bins(values)
    assert table == {"<0.3": 3 / 8, "0.3-0.5": 2 / 8, "0.5-0.7": 1 / 8, ">0.7": 2 / 8,
                     "mean": pytest.approx(3.24 / 8)}
    assert similarity_bins([])["mean"] is None


def test_plots_write_pngs(tmp_path):
    rng = np.random.default_rng(0)
    scores = {"relevance": [3, 3, 2, None], "agnosticism": [1, 3, 3, 3], "completeness": [2, 2, 3, 1],
              "accuracy": [3, 3, 3, 3], "reasonableness": [3, 2, None, None]}
    q = rng.random((10, 10))
    q = (q + q.T) / 2
    np.fill_diagonal(q, 1.0)
    questions = [f"Why does dopant {i} change the band gap of the oxide film so much?" for i in range(10)]
    paths = [
        plots.racar_distribution(scores, tmp_path / "racar.png"),
        plots.question_similarity_heatmap(q, questions, tmp_path / "sub" / "questions.png"),
        plots.answer_sentence_heatmap(rng.random((10, 137)), tmp_path / "answers.png"),
        plots.coverage_histogram([0.6, 0.7, 0.7, 0.8, None], tmp_path / "coverage.png"),
        plots.coverage_histogram([], tmp_path / "empty.png"),
    ]
    for path in paths:
        assert _is_png(path), path
