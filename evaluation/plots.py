"""Quality plots for the dataset card (matplotlib, Agg backend, PNG).

- ``racar_distribution``: counts of scores 1-3 (and missing) per RACAR dimension;
- ``question_similarity_heatmap``: the paper's diversity view of one paper (the bins <0.3, 0.3-0.5,
  0.5-0.7, >0.7 and the mean are ``diversity.similarity_bins``);
- ``answer_sentence_heatmap``: answers x sentences similarity of one paper (the paper's Fig. 5);
- ``coverage_histogram``: per-paper coverage (or per-answer chunk rates).
Every function writes the PNG at ``path`` (parents created) and returns the path; the ``*_figure`` twin
draws the same figure and returns it unsaved. Titles say what is shown and of which paper (wrapped between
words, never cut), colour bars say what their colours measure, and the PNG carries its title and caption
as text chunks (``Title``, ``Description``), so a copy away from the card still explains itself.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from sciqag_dataset.core.console import plural

TITLE_WIDTH = 72  # characters per title line at the narrowest figure (6 in)
EMBEDDING_SIMILARITY = "cosine similarity of embeddings"
LLM_SIMILARITY = "judge's similarity score (0-100) / 100"


def _pyplot():
    """matplotlib's pyplot, headless (Agg). Heavy (~0.6 s): imported only when a plot is drawn."""
    import matplotlib

    matplotlib.use("Agg")  # set before pyplot is imported
    import matplotlib.pyplot as plt

    return plt


def _integer_ticks(axis) -> None:
    from matplotlib.ticker import MaxNLocator  # heavy: see _pyplot

    axis.set_major_locator(MaxNLocator(integer=True))


def wrap(text: str, width: int = TITLE_WIDTH) -> str:
    """``text`` on lines of at most ``width`` characters, broken between words only (a longer word, such as
    a path, keeps a line of its own)."""
    return textwrap.fill(" ".join(str(text).split()), width, break_long_words=False, break_on_hyphens=False)


def paper_label(paper_id: str, title: str | None = None) -> str:
    """How a plot names its paper: the title and the id, or the id alone."""
    title = " ".join(str(title or "").split())
    return f"“{title}” ({paper_id})" if title else str(paper_id)


def title_of(fig) -> str:
    """The figure's title as shown (the suptitle, else the first panel's), on one line."""
    text = fig.get_suptitle() or fig.axes[0].get_title()
    return " ".join(text.split())


def _save(fig, path, caption: str = "") -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    meta = {"Title": title_of(fig)} | ({"Description": caption} if caption else {})
    fig.savefig(path, dpi=110, metadata=meta)
    _pyplot().close(fig)
    return path


def racar_figure(scores: Mapping[str, Sequence[int | None]], *, scope: str = ""):
    """Grouped bars: for each dimension, how many pairs scored 1, 2, 3 or have no usable score."""
    dims = list(scores)
    levels = [1, 2, 3, None]
    labels = ["1", "2", "3", "missing"]
    colors = ["#d62728", "#ff7f0e", "#2ca02c", "#7f7f7f"]
    x = np.arange(len(dims))
    width = 0.2
    fig, ax = _pyplot().subplots(figsize=(max(6, 1.6 * len(dims)), 3.8))
    for j, (level, label, color) in enumerate(zip(levels, labels, colors)):
        counts = [sum(1 for s in scores[d] if s == level) for d in dims]
        if level is None and not any(counts):
            continue
        ax.bar(x + (j - 1.5) * width, counts, width, label=label, color=color)
    ax.set_xticks(x, dims)
    ax.set_ylabel("QA pairs")
    _integer_ticks(ax.yaxis)
    n = max((len(v) for v in scores.values()), default=0)
    ax.set_title(
        wrap(f"RACAR scores (1-3, judge) per dimension: {plural(n, 'QA pair')}" + (f" of {scope}" if scope else ""))
    )
    ax.legend(title="score", fontsize=8)
    return fig


def racar_distribution(
    scores: Mapping[str, Sequence[int | None]], path, *, scope: str = "", caption: str = ""
) -> Path:
    return _save(racar_figure(scores, scope=scope), path, caption)


def _short(text: str, width: int = 48) -> str:
    """``text`` cut to ``width`` characters at a word boundary, with an ellipsis."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    head = text[: width - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head) + "…"


def question_similarity_figure(matrix, questions: Sequence[str], *, paper: str, measure: str = EMBEDDING_SIMILARITY):
    """Questions x questions similarity (0-1) of one paper, annotated, with shortened question labels."""
    m = np.asarray(matrix, dtype=float)
    n = m.shape[0]
    fig, ax = _pyplot().subplots(figsize=(max(6, 0.55 * n + 5), max(4, 0.5 * n + 2)))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
    labels = [f"Q{i + 1}: {_short(q, 32)}" for i, q in enumerate(questions)]
    ax.set_yticks(range(n), labels, fontsize=7)
    ax.set_xticks(range(n), [f"Q{i + 1}" for i in range(n)], fontsize=7)
    if n <= 15:
        for i in range(n):
            for j in range(n):
                if not np.isnan(m[i, j]):
                    ax.text(
                        j,
                        i,
                        f"{m[i, j]:.2f}",
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="white" if m[i, j] < 0.6 else "black",
                    )
    cbar = fig.colorbar(im, ax=ax, fraction=0.04)
    # on lines short enough to stay beside the bar, below the title, however few the questions
    cbar.set_label(wrap(f"question similarity ({measure})", 24), fontsize=8)
    # over the whole figure (the heatmap and its colour bar), so the bar's label never reaches it
    fig.suptitle(wrap(f"Question similarity of the {n} questions of paper {paper}"), fontsize=10)
    return fig


def question_similarity_heatmap(
    matrix, questions: Sequence[str], path, *, paper: str, measure: str = EMBEDDING_SIMILARITY, caption: str = ""
) -> Path:
    return _save(question_similarity_figure(matrix, questions, paper=paper, measure=measure), path, caption)


def answer_sentence_figure(matrix, *, paper: str, measure: str = EMBEDDING_SIMILARITY):
    """Answers (rows) x paper sentences (columns) similarity of one paper, with the 10 chunk borders."""
    m = np.asarray(matrix, dtype=float)
    n_answers, n_sentences = m.shape
    fig, ax = _pyplot().subplots(figsize=(12, max(3, 0.3 * n_answers + 1.6)))
    im = ax.imshow(m, aspect="auto", cmap="coolwarm", interpolation="nearest")
    for c in range(1, 10):  # chunk c starts at the first sentence i with floor(10 i / n) == c
        ax.axvline(-(-c * n_sentences // 10) - 0.5, color="k", lw=0.9, ls="--", alpha=0.8)
    ax.set_xlabel("sentence index (lines: the 10 chunks)")
    _integer_ticks(ax.xaxis)
    ax.set_ylabel("QA index")
    ax.set_yticks(range(n_answers), [str(i + 1) for i in range(n_answers)], fontsize=7)
    cbar = fig.colorbar(im, ax=ax, fraction=0.03)
    cbar.set_label(f"answer-sentence similarity\n({measure})", fontsize=8)
    ax.set_title(
        wrap(
            f"Answer-sentence similarity: {n_answers} answers x {n_sentences} sentences of paper {paper}",
            2 * TITLE_WIDTH,
        ),
        fontsize=10,
    )
    return fig


def answer_sentence_heatmap(
    matrix, path, *, paper: str, measure: str = EMBEDDING_SIMILARITY, caption: str = ""
) -> Path:
    return _save(answer_sentence_figure(matrix, paper=paper, measure=measure), path, caption)


def coverage_figure(values: Iterable[float], *, label: str = "coverage", unit: str = "value"):
    """Histogram of coverage values in 0-1 (one bin per chunk count 0/10 ... 10/10), mean marked."""
    vals = [float(v) for v in values if v is not None]
    fig, ax = _pyplot().subplots(figsize=(6, 3.6))
    ax.hist(vals, bins=np.linspace(-0.05, 1.05, 12), color="#1f77b4", edgecolor="white")
    if vals:
        mean = float(np.mean(vals))
        ax.axvline(mean, color="#d62728", ls="--", label=f"mean {mean:.0%}")
        ax.legend(fontsize=8)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel(label)
    ax.set_ylabel(f"{unit}s")
    _integer_ticks(ax.yaxis)
    ax.set_title(wrap(f"{label[:1].upper()}{label[1:]}: histogram over {plural(len(vals), unit)}"))
    return fig


def coverage_histogram(
    values: Iterable[float], path, *, label: str = "coverage", unit: str = "value", caption: str = ""
) -> Path:
    return _save(coverage_figure(values, label=label, unit=unit), path, caption)


def agreement_confusion(matrix, dimension: str, path, caption: str = "", *, rows: str = "judge") -> Path:
    """A 3 x 3 count for one scale: the judge's score (rows) against people's (columns), or with ``rows``
    "people", one person's score against another's (each pair of ratings counted both ways)."""
    fig, ax = _pyplot().subplots(figsize=(3.8, 3.4))
    ax.imshow(matrix, cmap="Blues")
    for i in range(3):
        for j in range(3):
            dark = matrix[i, j] > matrix.max() / 2
            ax.text(j, i, str(int(matrix[i, j])), ha="center", va="center", color="white" if dark else "black")
    ax.set_xticks(range(3), ["1", "2", "3"])
    ax.set_yticks(range(3), ["1", "2", "3"])
    if rows == "judge":
        ax.set_xlabel("reviewer score")
        ax.set_ylabel("judge score")
        title = f"{dimension}: judge vs reviewers ({plural(int(matrix.sum()), 'rating')})"
    else:
        ax.set_xlabel("another reviewer's score")
        ax.set_ylabel("reviewer score")
        title = f"{dimension}: reviewer vs reviewer ({plural(int(matrix.sum()) // 2, 'pair')} of ratings)"
    ax.set_title(wrap(title, 40))
    return _save(fig, path, caption)
