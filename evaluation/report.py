"""Dataset figures of an evaluation (``WORK/evaluation_summary.json``) and the card's plots (``WORK/plots``)."""
from __future__ import annotations

import logging
from pathlib import Path
from statistics import mean
from typing import Any

from sciqag_dataset.config import METRICS, EvaluateConfig
from sciqag_dataset.jsonl import iter_latest
from sciqag_dataset.schema import RACAR_DIMENSIONS

from . import plots
from .coverage import answer_sentence_matrix, coverage_summary
from .diversity import diversity_summary
from .numeric import numeric_summary
from .racar import racar_summary

log = logging.getLogger(__name__)

SUMMARY = "evaluation_summary.json"
PLOTS_DIR = "plots"
_PLOT_PREFIXES = ("racar_distribution", "question_similarity", "answer_sentence_similarity", "coverage_histogram",
                  "chunk_rate_histogram")
DIMENSIONS = RACAR_DIMENSIONS


def summarize(aligned: Path, src: str, c, cfg: EvaluateConfig) -> dict[str, Any]:
    def have(m: str) -> bool:
        return c.counts[m]["merged"] > 0

    out: dict[str, Any] = {
        "source": src, "papers": c.papers, "pairs": c.pairs,
        "metrics": {m: {k: c.counts[m][k] for k in ("merged", "stale", "failed", "absent")} for m in METRICS},
        "racar": None, "diversity": None, "coverage": None, "numeric": None,
    }
    if have("racar"):
        out["racar"] = racar_summary(aligned)
    if have("diversity"):
        out["diversity"] = diversity_summary(aligned)
    if have("coverage"):
        out["coverage"] = _coverage_summary(aligned / "coverage.jsonl", cfg.coverage_definition)
    if have("numeric"):
        out["numeric"] = numeric_summary(iter_latest(aligned / "numeric.jsonl"))
    return out


def _coverage_summary(path: Path, definition: str) -> dict[str, Any]:
    """``coverage_summary`` in the chosen definition, plus the mean of both definitions."""
    both: dict[str, list] = {"released": [], "eq1": []}
    models, slim = set(), []
    for rec in iter_latest(path):  # slimmed: the evidence sentences are not needed here
        info = rec.get("info") or {}
        models.add(info.get("model"))
        for d in both:
            if info.get(f"coverage_{d}") is not None:
                both[d].append(info[f"coverage_{d}"])
        cov = info.get(f"coverage_{definition}", (rec.get("paper_metrics") or {}).get("coverage"))
        slim.append({"status": rec.get("status"), "paper_metrics": {"coverage": cov},
                     "pair_metrics": [{"chunk_rate": p.get("chunk_rate")} for p in rec.get("pair_metrics") or []]})
    return {**coverage_summary(slim), "definition": definition,
            **{f"coverage_{d}": round(mean(v), 4) if v else None for d, v in both.items()},
            "models": sorted(m for m in models if m)}


def write_plots(work: Path, c, cfg: EvaluateConfig) -> dict[str, Any]:
    """The card's PNGs under WORK/plots/ (paths relative to WORK). A plot that fails is logged and left out."""
    folder = Path(work) / PLOTS_DIR
    if folder.is_dir():  # a metric left out of this run must not keep an old picture
        for old in folder.glob("*.png"):
            if old.name.startswith(_PLOT_PREFIXES):
                old.unlink()
    made: dict[str, Any] = {}

    def rel(p: Path) -> str:
        return p.relative_to(work).as_posix()

    def attempt(name: str, fn):
        try:
            return fn()
        except Exception as exc:  # metrics are already saved; a picture must not lose them
            log.warning("plot %s failed: %s: %s", name, type(exc).__name__, exc)
            made.setdefault("errors", []).append(f"{name}: {type(exc).__name__}: {exc}")
            return None

    if any(c.racar_scores[d] for d in DIMENSIONS):
        p = attempt("racar_distribution", lambda: plots.racar_distribution(
            c.racar_scores, folder / "racar_distribution.png"))
        if p:
            made["racar_distribution"] = rel(p)
    samples = []
    for i, (pid, matrix, questions) in enumerate(c.similarity_samples, 1):
        p = attempt("question_similarity", lambda: plots.question_similarity_heatmap(
            matrix, questions, folder / f"question_similarity_{i}.png"))
        if p:
            samples.append({"paper_id": pid, "path": rel(p)})
    if samples:
        made["question_similarity"] = samples
    if c.coverage_sample is not None:
        paper, info = c.coverage_sample["paper"], c.coverage_sample["info"]

        def answer_sentences():
            # the model and instruction the coverage record was computed with, so the picture matches it
            sim, _ = answer_sentence_matrix(paper, model_name=info.get("model") or cfg.embedding_model,
                                            instruction=info.get("instruction") or "", batch_size=cfg.batch_size)
            title = f"Answer-sentence similarity: {paper.get('title') or paper['id']}"[:90]
            return plots.answer_sentence_heatmap(sim, folder / "answer_sentence_similarity.png", title=title)

        p = attempt("answer_sentence_similarity", answer_sentences)
        if p:
            made["answer_sentence_similarity"] = {"paper_id": paper["id"], "path": rel(p)}
    if c.coverage:
        p = attempt("coverage_histogram", lambda: plots.coverage_histogram(
            c.coverage, folder / "coverage_histogram.png", label=f"coverage ({cfg.coverage_definition})"))
        if p:
            made["coverage_histogram"] = rel(p)
    if c.chunk_rates:
        p = attempt("chunk_rate_histogram", lambda: plots.coverage_histogram(
            c.chunk_rates, folder / "chunk_rate_histogram.png", label="chunk rate per answer"))
        if p:
            made["chunk_rate_histogram"] = rel(p)
    return made
