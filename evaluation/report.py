"""Dataset figures of an evaluation (``WORK/evaluation_summary.json``) and the card's plots (``WORK/plots``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core import metrics
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.core.wiring import EVALUATION_SUMMARY
from sciqag_dataset.evaluation import plots
from sciqag_dataset.evaluation.coverage import answer_sentence_matrix

log = logging.getLogger(__name__)

SUMMARY = EVALUATION_SUMMARY
PLOTS_DIR = "plots"
CAPTIONS = "captions.json"  # {"plots/<name>.png": one-sentence caption}, for the card
_PLOT_PREFIXES = (
    "racar_distribution",
    "question_similarity",
    "answer_sentence_similarity",
    "coverage_histogram",
    "chunk_rate_histogram",
)
DIMENSIONS = RACAR_DIMENSIONS


def summarize(aligned: Path, src: str, c, cfg: EvaluateConfig) -> dict[str, Any]:
    """The summary: each metric's counts and figures (from its records that fit, in ``aligned``), its card
    paragraph, and the columns of the rows written (what publish types the `evaluated` config with)."""
    out: dict[str, Any] = {
        "source": src,
        "papers": c.papers,
        "pairs": c.pairs,
        "metrics": {m: {k: c.counts[m][k] for k in ("merged", "stale", "failed", "absent")} for m in c.counts},
        "card": {},
    }
    for m in metrics.registered():
        merged = c.counts[m.name]["merged"] > 0
        out[m.name] = m.summarize(aligned / f"{m.name}.jsonl", cfg) if merged and m.summarize else None
        text = m.card(out[m.name]) if out[m.name] is not None and m.card else None if merged else m.not_run
        if text:
            out["card"][m.name] = text
    out["features"] = c.features.to_dict()
    return out


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
        p = attempt(
            "racar_distribution",
            lambda cap: plots.racar_distribution(
                c.racar_scores, folder / "racar_distribution.png", scope=papers, caption=cap
            ),
            f"How many of the {plural(n, 'QA pair')} of {papers} the judge scored 1, 2 or 3 (or left unscored) on "
            f"each RACAR dimension ({', '.join(DIMENSIONS)}; 3 is best).",
        )
        if p:
            made["racar_distribution"] = rel(p)
    samples = []
    for i, s in enumerate(c.similarity_samples, 1):
        label = plots.paper_label(s["paper_id"], s["title"])
        llm = s["method"] == "llm"
        how = (
            f"the judge's intent similarity score ({s['model']}, 0-100, shown / 100)"
            if llm
            else f"cosine similarity of the questions' embeddings ({s['model']})"
        )
        p = attempt(
            "question_similarity",
            lambda cap, s=s, i=i, label=label, llm=llm: plots.question_similarity_heatmap(
                s["matrix"],
                s["questions"],
                folder / f"question_similarity_{i}.png",
                paper=label,
                measure=plots.LLM_SIMILARITY if llm else f"cosine, {s['model']}",
                caption=cap,
            ),
            f"Question diversity of paper {label}: each cell is {how} between two of its {len(s['questions'])} "
            "generated questions; low values mean the questions ask different things.",
        )
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
            sim, _ = answer_sentence_matrix(
                paper, model_name=model, instruction=info.get("instruction") or "", batch_size=cfg.batch_size
            )
            return plots.answer_sentence_heatmap(
                sim, folder / "answer_sentence_similarity.png", paper=label, measure=f"cosine, {model}", caption=cap
            )

        p = attempt(
            "answer_sentence_similarity",
            answer_sentences,
            f"Answer coverage of paper {label}: cosine similarity ({model}) of each generated answer "
            "(rows) to each sentence of the paper (columns); dashed lines cut the paper into the 10 "
            "chunks that coverage counts.",
        )
        if p:
            made["answer_sentence_similarity"] = {"paper_id": paper["id"], "path": rel(p)}
    if c.coverage:
        p = attempt(
            "coverage_histogram",
            lambda cap: plots.coverage_histogram(
                c.coverage,
                folder / "coverage_histogram.png",
                label=f"coverage per paper ({cfg.coverage_definition} definition)",
                unit="paper",
                caption=cap,
            ),
            f"Coverage per paper over {plural(len(c.coverage), 'paper')}: the share of a paper's 10 chunks holding "
            f"the sentences its answers draw on ({cfg.coverage_definition} definition); the dashed line is the mean.",
        )
        if p:
            made["coverage_histogram"] = rel(p)
    if c.chunk_rates:
        p = attempt(
            "chunk_rate_histogram",
            lambda cap: plots.coverage_histogram(
                c.chunk_rates,
                folder / "chunk_rate_histogram.png",
                label="chunk rate per answer",
                unit="answer",
                caption=cap,
            ),
            f"Chunk rate per answer over {plural(len(c.chunk_rates), 'answer')}: the share of its paper's 10 chunks "
            "that hold one answer's best-matching sentences; the dashed line is the mean.",
        )
        if p:
            made["chunk_rate_histogram"] = rel(p)
    if captions:
        write_json(folder / CAPTIONS, captions)
    return made
