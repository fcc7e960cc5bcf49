"""Dataset figures of an evaluation (``WORK/evaluation_summary.json``) and the card's plots (``WORK/plots``)."""
from __future__ import annotations

import logging
from pathlib import Path
from statistics import mean
from typing import Any

from sciqag_dataset.atomic import write_json
from sciqag_dataset.config import METRICS, EvaluateConfig
from sciqag_dataset.console import plural
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
CAPTIONS = "captions.json"  # {"plots/<name>.png": one-sentence caption}, for the card
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
    """The card's PNGs under WORK/plots/ (paths relative to WORK) and their one-sentence captions in
    ``WORK/plots/captions.json`` ({path relative to WORK: caption}). A plot that fails is logged and left out."""
    folder = Path(work) / PLOTS_DIR
    if folder.is_dir():  # a metric left out of this run must not keep an old picture (or its caption)
        for old in [*folder.glob("*.png"), folder / CAPTIONS]:
            if old.name.startswith(_PLOT_PREFIXES) or old.name == CAPTIONS:
                old.unlink(missing_ok=True)
    made: dict[str, Any] = {}
    captions: dict[str, str] = {}

    def rel(p: Path) -> str:
        return p.relative_to(work).as_posix()

    def attempt(name: str, fn, caption: str):
        try:
            p = fn(caption)
        except Exception as exc:  # metrics are already saved; a picture must not lose them
            log.warning("plot %s failed: %s: %s", name, type(exc).__name__, exc)
            made.setdefault("errors", []).append(f"{name}: {type(exc).__name__}: {exc}")
            return None
        captions[rel(p)] = caption
        return p

    papers = plural(c.papers, "paper")
    if any(c.racar_scores[d] for d in DIMENSIONS):
        n = max(len(v) for v in c.racar_scores.values())
        p = attempt("racar_distribution", lambda cap: plots.racar_distribution(
            c.racar_scores, folder / "racar_distribution.png", scope=papers, caption=cap),
            f"How many of the {plural(n, 'QA pair')} of {papers} the judge scored 1, 2 or 3 (or left unscored) on each RACAR "
            f"dimension ({', '.join(DIMENSIONS)}; 3 is best).")
        if p:
            made["racar_distribution"] = rel(p)
    samples = []
    for i, s in enumerate(c.similarity_samples, 1):
        label = plots.paper_label(s["paper_id"], s["title"])
        llm = s["method"] == "llm"
        how = (f"the judge's intent similarity score ({s['model']}, 0-100, shown / 100)" if llm
               else f"cosine similarity of the questions' embeddings ({s['model']})")
        p = attempt("question_similarity", lambda cap: plots.question_similarity_heatmap(
            s["matrix"], s["questions"], folder / f"question_similarity_{i}.png", paper=label,
            measure=plots.LLM_SIMILARITY if llm else f"cosine, {s['model']}", caption=cap),
            f"Question diversity of paper {label}: each cell is {how} between two of its {len(s['questions'])} "
            "generated questions; low values mean the questions ask different things.")
        if p:
            samples.append({"paper_id": s["paper_id"], "path": rel(p)})
    if samples:
        made["question_similarity"] = samples
    if c.coverage_sample is not None:
        paper, info = c.coverage_sample["paper"], c.coverage_sample["info"]
        # the model and instruction the coverage record was computed with, so the picture matches it
        model = info.get("model") or cfg.embedding_model
        label = plots.paper_label(paper["id"], paper.get("title"))

        def answer_sentences(cap):
            sim, _ = answer_sentence_matrix(paper, model_name=model, instruction=info.get("instruction") or "",
                                            batch_size=cfg.batch_size)
            return plots.answer_sentence_heatmap(sim, folder / "answer_sentence_similarity.png", paper=label,
                                                 measure=f"cosine, {model}", caption=cap)

        p = attempt("answer_sentence_similarity", answer_sentences,
                    f"Answer coverage of paper {label}: cosine similarity ({model}) of each generated answer "
                    "(rows) to each sentence of the paper (columns); dashed lines cut the paper into the 10 "
                    "chunks that coverage counts.")
        if p:
            made["answer_sentence_similarity"] = {"paper_id": paper["id"], "path": rel(p)}
    if c.coverage:
        p = attempt("coverage_histogram", lambda cap: plots.coverage_histogram(
            c.coverage, folder / "coverage_histogram.png",
            label=f"coverage per paper ({cfg.coverage_definition} definition)", unit="paper", caption=cap),
            f"Coverage per paper over {plural(len(c.coverage), 'paper')}: the share of a paper's 10 chunks holding the "
            f"sentences its answers draw on ({cfg.coverage_definition} definition); the dashed line is the mean.")
        if p:
            made["coverage_histogram"] = rel(p)
    if c.chunk_rates:
        p = attempt("chunk_rate_histogram", lambda cap: plots.coverage_histogram(
            c.chunk_rates, folder / "chunk_rate_histogram.png", label="chunk rate per answer", unit="answer",
            caption=cap),
            f"Chunk rate per answer over {plural(len(c.chunk_rates), 'answer')}: the share of its paper's 10 chunks that "
            "hold one answer's best-matching sentences; the dashed line is the mean.")
        if p:
            made["chunk_rate_histogram"] = rel(p)
    if captions:
        write_json(folder / CAPTIONS, captions)
    return made
