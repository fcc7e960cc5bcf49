"""Quality plots: each writes a real, non-empty PNG that a reader can understand without the README (a title
naming what is shown and of which paper, never cut mid-word; labelled colour bars; a caption for the card);
the similarity bins are hand-checked."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.evaluation import plots
from sciqag_dataset.evaluation.diversity import similarity_bins
from sciqag_dataset.evaluation.merge import _Collected
from sciqag_dataset.evaluation.report import write_plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SCORES = {
    "relevance": [3, 3, 2, None],
    "agnosticism": [1, 3, 3, 3],
    "completeness": [2, 2, 3, 1],
    "accuracy": [3, 3, 3, 3],
    "reasonableness": [3, 2, None, None],
}
QUESTIONS = [f"Why does dopant {i} change the band gap of the oxide film so much?" for i in range(10)]
LONG_TITLE = (
    "Operando X-ray absorption spectroscopy of nickel-rich layered cathodes reveals oxygen-redox "
    "contributions during high-voltage cycling in lithium-ion batteries"
)


def _is_png(path) -> bool:
    data = path.read_bytes()
    return data.startswith(PNG_MAGIC) and len(data) > 2000


def _png_text(path) -> dict:
    with Image.open(path) as im:
        return dict(im.text)


def _similarity(seed: int, n: int = 10) -> np.ndarray:
    q = np.random.default_rng(seed).random((n, n))
    q = (q + q.T) / 2
    np.fill_diagonal(q, 1.0)
    return q


def _colorbar_label(fig) -> str:
    return fig.axes[0].images[0].colorbar.ax.get_ylabel()


def test_similarity_bins_hand_case():
    # <0.3: 0.0, 0.1, 0.29 | 0.3-0.5: 0.3, 0.45 | 0.5-0.7: 0.5 | >0.7: 0.7, 0.9 (None skipped)
    values = [0.0, 0.1, 0.29, 0.3, 0.45, 0.5, 0.7, 0.9, None]
    table = similarity_bins(values)
    assert table == {"<0.3": 3 / 8, "0.3-0.5": 2 / 8, "0.5-0.7": 1 / 8, ">0.7": 2 / 8, "mean": pytest.approx(3.24 / 8)}
    assert similarity_bins([])["mean"] is None


def test_plots_write_pngs_carrying_title_and_caption(tmp_path):
    rng = np.random.default_rng(0)
    paths = [
        plots.racar_distribution(SCORES, tmp_path / "racar.png", scope="5 papers", caption="RACAR."),
        plots.question_similarity_heatmap(
            _similarity(0), QUESTIONS, tmp_path / "sub" / "questions.png", paper="p1", caption="Questions."
        ),
        plots.answer_sentence_heatmap(rng.random((10, 137)), tmp_path / "answers.png", paper="p1", caption="Answers."),
        plots.coverage_histogram(
            [0.6, 0.7, 0.7, 0.8, None], tmp_path / "coverage.png", unit="paper", caption="Coverage."
        ),
        plots.coverage_histogram([], tmp_path / "empty.png"),
    ]
    for path in paths:
        assert _is_png(path), path
    texts = [_png_text(p) for p in paths]
    assert [t.get("Description") for t in texts] == ["RACAR.", "Questions.", "Answers.", "Coverage.", None]
    assert texts[0]["Title"] == "RACAR scores (1-3, judge) per dimension: 4 QA pairs of 5 papers"
    assert texts[3]["Title"] == "Coverage: histogram over 4 papers"


def test_question_similarity_plots_name_their_paper_and_label_the_colour_bar():
    """Each paper's question-similarity picture names its paper (three papers, three titles), and its colour bar
    says what it measures."""
    figs = [
        plots.question_similarity_figure(_similarity(i), QUESTIONS, paper=plots.paper_label(pid, title))
        for i, (pid, title) in enumerate(
            [("p1", "Band gaps of doped oxides"), ("p2", "Perovskite stability"), ("p3", None)]
        )
    ]
    titles = [plots.title_of(f) for f in figs]
    assert titles == [
        "Question similarity of the 10 questions of paper “Band gaps of doped oxides” (p1)",
        "Question similarity of the 10 questions of paper “Perovskite stability” (p2)",
        "Question similarity of the 10 questions of paper p3",
    ]
    assert " ".join(_colorbar_label(figs[0]).split()) == "question similarity (cosine similarity of embeddings)"
    judged = plots.question_similarity_figure(_similarity(0), QUESTIONS, paper="p1", measure=plots.LLM_SIMILARITY)
    assert "judge" in _colorbar_label(judged)
    answers = plots.answer_sentence_figure(
        np.random.default_rng(0).random((4, 30)), paper="p1", measure="cosine, all-MiniLM-L6-v2"
    )
    assert _colorbar_label(answers) == "answer-sentence similarity\n(cosine, all-MiniLM-L6-v2)"


def test_the_colour_bar_label_stays_beside_its_bar_clear_of_the_title():
    from matplotlib.text import Text

    label = plots.paper_label("10.1234/na.7", LONG_TITLE)
    for n, measure in ((2, plots.LLM_SIMILARITY), (3, plots.EMBEDDING_SIMILARITY), (10, plots.LLM_SIMILARITY)):
        fig = plots.question_similarity_figure(_similarity(0, n), QUESTIONS[:n], paper=label, measure=measure)
        fig.tight_layout()  # as the PNG is laid out
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        bar = fig.axes[0].images[0].colorbar.ax
        title = next(t for t in fig.findobj(Text) if t.get_text().startswith("Question similarity of"))
        bar_label = bar.yaxis.label.get_window_extent(renderer)
        assert not bar_label.overlaps(title.get_window_extent(renderer)), (n, measure)
        bar_box = bar.get_window_extent(renderer)
        assert bar_box.y0 <= bar_label.y0 and bar_label.y1 <= bar_box.y1, (n, measure)  # no taller than its bar
        assert fig.bbox.contains(bar_label.x1, bar_label.y1) and fig.bbox.contains(*title.get_window_extent().p1)
        plots._pyplot().close(fig)


def test_long_titles_wrap_between_words_and_are_never_cut():
    label = plots.paper_label("10.1234/na.7", LONG_TITLE)
    for fig in (
        plots.question_similarity_figure(_similarity(0, 3), QUESTIONS[:3], paper=label),
        plots.answer_sentence_figure(np.zeros((3, 40)), paper=label),
    ):
        shown = fig.get_suptitle() or fig.axes[0].get_title()
        assert "\n" in shown and LONG_TITLE in " ".join(shown.split())  # wrapped, whole
        words = set(" ".join(shown.split()).split())
        assert all(line.split()[0] in words and line.split()[-1] in words for line in shown.splitlines())
    assert plots.wrap("a " + "x" * 100 + " b", 20) == "a\n" + "x" * 100 + "\nb"  # a long word keeps its line
    assert plots.wrap("one two-three four", 9) == "one\ntwo-three\nfour"  # not split at its hyphen
    # question tick labels are shortened at a word boundary
    ticks = [
        t.get_text()
        for t in plots.question_similarity_figure(
            _similarity(0, 2), ["What limits the open-circuit voltage of tandem perovskite cells?", "Why?"], paper="p"
        )
        .axes[0]
        .get_yticklabels()
    ]
    assert ticks == ["Q1: What limits the open-circuit…", "Q2: Why?"]


def _collected(n_papers: int = 3) -> _Collected:
    c = _Collected(papers=n_papers, pairs=10 * n_papers)  # what each metric's `collect` gathers in the merge
    c.gathered["racar"] = {"scores": SCORES}
    c.gathered["coverage"] = {"coverage": [0.6, 0.7, 0.8][:n_papers], "chunk_rates": [0.3, 0.4, 0.5, 0.6]}
    titles = [LONG_TITLE, "Perovskite stability", None][:n_papers]
    c.gathered["diversity"]["samples"] = [
        {
            "paper_id": f"p{i}",
            "title": t,
            "method": "embedding",
            "model": "all-MiniLM-L6-v2",
            "matrix": _similarity(i).tolist(),
            "questions": QUESTIONS,
        }
        for i, t in enumerate(titles, 1)
    ]
    return c


def test_write_plots_titles_each_paper_and_writes_captions_for_the_card(tmp_path):
    work = tmp_path / "work"
    paper = {
        "id": "p9",
        "title": LONG_TITLE,
        "qa": [
            {"question": "What is probed?", "answer": "Oxygen redox in nickel-rich cathodes."},
            {"question": "At what voltage?", "answer": "Above 4.3 V."},
        ],
        "text": " ".join(f"Sentence {i} reports that cathode property {i} changes above 4.3 V." for i in range(20)),
    }
    c = _collected()
    c.gathered["coverage"]["sample"] = {"paper": paper, "info": {"model": "sentence-transformers/all-MiniLM-L6-v2"}}
    made = write_plots(work, c, EvaluateConfig())
    assert "errors" not in made
    captions = json.loads((work / "plots" / "captions.json").read_text())
    pngs = sorted(p.relative_to(work).as_posix() for p in (work / "plots").glob("*.png"))
    assert sorted(captions) == pngs and len(pngs) == 7  # racar, 3 questions, answers, coverage, chunk rate
    for rel, caption in captions.items():
        text = _png_text(work / rel)
        assert text["Description"] == caption and caption.endswith(".") and "\n" not in caption, rel
    titles = [_png_text(work / s["path"])["Title"] for s in made["question_similarity"]]
    assert len(set(titles)) == 3 and LONG_TITLE in titles[0] and "Perovskite stability" in titles[1]
    assert "p3" in titles[2] and LONG_TITLE in captions["plots/question_similarity_1.png"]
    assert "all-MiniLM-L6-v2" in captions["plots/question_similarity_1.png"]
    # the answer-sentence title holds the whole paper title, however long
    answers = _png_text(work / made["answer_sentence_similarity"]["path"])["Title"]
    assert answers == f"Answer-sentence similarity: 2 answers x 20 sentences of paper “{LONG_TITLE}” (p9)"
    assert LONG_TITLE in captions["plots/answer_sentence_similarity.png"]
    assert "3 papers" in captions["plots/racar_distribution.png"]

    # a rerun with fewer plots leaves no caption (or picture) of the old ones behind
    made = write_plots(work, _collected(1), EvaluateConfig())
    assert (
        sorted(json.loads((work / "plots" / "captions.json").read_text()))
        == sorted(p.relative_to(work).as_posix() for p in (work / "plots").glob("*.png"))
        == [
            "plots/chunk_rate_histogram.png",
            "plots/coverage_histogram.png",
            "plots/question_similarity_1.png",
            "plots/racar_distribution.png",
        ]
    )
