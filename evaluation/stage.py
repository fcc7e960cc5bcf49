"""The evaluation stage: run the selected metrics, merge them into one row per QA pair, summarize, filter.

Work directory artifacts (all rewritten or appended here, readable by ``datasets``):

- ``racar.jsonl``, ``diversity.jsonl``, ``coverage.jsonl``, ``numeric.jsonl``: one record per paper,
  written by the metric modules (streamed, resumable by id).
- ``evaluated.jsonl``: one row per QA pair with exactly the ``schema.EVALUATED_PAIR`` fields; a metric
  that was not run (or whose record no longer fits the paper's QA pairs) is None / [] there.
- ``evaluation_summary.json``: dataset figures of every metric, the counts behind them, the plots.
- ``plots/*.png``: RACAR distribution, question-similarity heatmaps, answer-sentence heatmap,
  coverage and chunk-rate histograms.
- ``filtered.jsonl`` + ``filter_summary.json``: the rows ``filter_pairs`` kept, and why others went.

Metric records are joined to QA pairs by paper id and pair index. A record is used only if it still
fits the paper's current QA pairs (same pair count; same pairs when it carries a ``qa_hash``; same QA
file when it names one); otherwise it is ignored with a warning, never misaligned, and the next
``run_evaluate`` recomputes it (the runner retries an id whose latest line is a failure).

``sciqag_dataset.config`` imports the dataclasses of this module, so module-level imports stay light
(no ``datasets``, no metric modules): those are imported where they are used.
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, Iterable, Iterator

from sciqag_dataset.errors import MissingInput, UserError
from sciqag_dataset.runner import FAILED, JsonlIndex, JsonlWriter, Summary, iter_latest, read_jsonl

from .common import USABLE_STATUSES, iter_qa_papers, qa_source
from .embedder import DEFAULT_MODEL

log = logging.getLogger(__name__)

METRICS = ("racar", "diversity", "coverage", "numeric")
RUN_ORDER = ("numeric", "coverage", "diversity", "racar")  # cheap first: an LLM outage loses the least
DIMENSIONS = ("relevance", "agnosticism", "completeness", "accuracy", "reasonableness")  # = schema.RACAR_DIMENSIONS
EVALUATED, SUMMARY, FILTERED, FILTER_SUMMARY = ("evaluated.jsonl", "evaluation_summary.json", "filtered.jsonl",
                                                "filter_summary.json")
PLOTS_DIR = "plots"
_PLOT_PREFIXES = ("racar_distribution", "question_similarity", "answer_sentence_similarity", "coverage_histogram",
                  "chunk_rate_histogram")


# ---------------------------------------------------------------- configs

def judge_endpoint(**values):
    """An endpoint config for a judge: temperature 0 unless given (judgements should be repeatable).

    Uses ``config.JudgeEndpointConfig`` when the config module defines one, else ``EndpointConfig``.
    """
    from sciqag_dataset import config

    cls = getattr(config, "JudgeEndpointConfig", None)
    if cls is not None:
        return cls(**values)
    return config.EndpointConfig(**{"temperature": 0.0, **values})


@dataclass
class EvaluateConfig:
    """`evaluate:` in the YAML config. The judge itself is the `judge:` endpoint section."""

    # None: all four with a judge endpoint configured, else the LLM-free ones
    metrics: list[str] | None = field(default=None, metadata={"choices": METRICS})
    # QA file: generated | seed (default: generated if present, else seed)
    source: str | None = field(default=None, metadata={"choices": ("generated", "seed")})
    # RACAR
    # how a committee's scores become one: mean | min | majority
    combine: str = field(default="mean", metadata={"choices": ("mean", "min", "majority")})
    max_attempts: int = field(default=3, metadata={"min": 1})  # per judge, dimension and paper; then missing
    structured: bool = True  # ask for a JSON schema (response_format); falls back to plain text if rejected
    context_tokens: int = field(default=8192, metadata={"min": 256})  # the judge's context window
    chars_per_token: float = field(default=3.5, metadata={"min": 0.1})
    judges: list = field(default_factory=list)  # further committee members (endpoint mappings) besides `judge:`
    # diversity: embedding (cheap) | llm (the paper's Appendix C prompt, 45 calls per paper)
    diversity: str = field(default="embedding", metadata={"choices": ("embedding", "llm")})
    diversity_model: str | None = None  # embedder for the embedding method (default: embedding_model)
    # coverage (and the embedding diversity)
    embedding_model: str = DEFAULT_MODEL  # e.g. intfloat/e5-mistral-7b-instruct as in the paper
    # released (the authors' notebook, 68 %) | eq1 (Eq. 1 literally)
    coverage_definition: str = field(default="released", metadata={"choices": ("released", "eq1")})
    top_context: int = field(default=3, metadata={"min": 0})  # evidence sentences kept per answer (`context`)
    instruction: str | None = None  # query prefix; None: the model's default (the e5 instruction for *instruct*)
    batch_size: int = field(default=64, metadata={"min": 1})
    device: str = "cpu"
    # numeric
    allow_rounding: bool = False  # also accept an answer's 3.1 for a source 3.14
    # outputs
    plots: bool = True
    sample_papers: int = field(default=3, metadata={"min": 0})  # papers shown in question-similarity heatmaps

    def __post_init__(self) -> None:
        if isinstance(self.metrics, str):
            self.metrics = [m.strip() for m in self.metrics.split(",") if m.strip()]
        self.judges = [judge_endpoint(**j) if isinstance(j, dict) else j for j in self.judges or []]

    def validate(self) -> None:
        """Reject unknown names before any metric runs (so a typo does not cost a judge run)."""
        from .common import QA_SOURCES
        from .coverage import DEFINITIONS
        from .diversity import METHODS
        from .racar import COMBINE_MODES

        checks = [("metric", m, METRICS) for m in self.metrics or []] + [
            ("combine mode", self.combine, COMBINE_MODES), ("diversity method", self.diversity, METHODS),
            ("coverage definition", self.coverage_definition, DEFINITIONS)]
        if self.source is not None:
            checks.append(("QA source", self.source, QA_SOURCES))
        for what, value, allowed in checks:
            if value not in allowed:
                raise UserError(f"unknown {what} {value!r}: expected one of {', '.join(allowed)}")
        if self.metrics is not None and not self.metrics:
            raise UserError(f"no metrics selected: choose from {', '.join(METRICS)}")
        if self.max_attempts < 1:
            raise UserError("max_attempts must be at least 1")

    def needs_judge(self) -> bool:
        metrics = self.metrics or []
        return "racar" in metrics or ("diversity" in metrics and self.diversity == "llm")

    def resolve_metrics(self, judge_configured: bool) -> list[str]:
        """Fill in the default: RACAR only when a judge endpoint is configured (it is the costly metric)."""
        if self.metrics is None:
            self.metrics = list(METRICS) if judge_configured else [m for m in METRICS if m != "racar"]
        return self.metrics


@dataclass
class FilterConfig:
    """`filter:` in the YAML config: which evaluated pairs `sciqag filter` keeps (all rules must pass)."""

    min_racar: float | None = None  # on racar_mean; needs all five dimensions scored
    min_relevance: float | None = None
    min_agnosticism: float | None = None
    min_completeness: float | None = None
    min_accuracy: float | None = None
    min_reasonableness: float | None = None
    drop_source_references: bool = False  # drop questions that cite "Figure 3", "this paper" ...
    min_numeric_ratio: float | None = None  # answers without numbers pass
    min_chunk_rate: float | None = None
    authors_test_set: bool = False  # the authors' test-set rule (see filter_pairs)

    def min_dims(self) -> dict[str, float]:
        return {d: v for d in DIMENSIONS if (v := getattr(self, f"min_{d}")) is not None}

    def rules(self) -> dict[str, Any]:
        """Keyword arguments of ``filter_pairs``."""
        return {"min_racar": self.min_racar, "min_dims": self.min_dims() or None,
                "drop_source_references": self.drop_source_references,
                "min_numeric_ratio": self.min_numeric_ratio, "min_chunk_rate": self.min_chunk_rate,
                "authors_test_set": self.authors_test_set}


# ---------------------------------------------------------------- which records still fit

def _current_qa(pairs: list[dict]) -> list[dict]:
    """QA pairs as ``iter_qa_papers`` gives them (None texts as ""), so hashes agree."""
    return [{"question": p.get("question") or "", "answer": p.get("answer") or "", "origin": p.get("origin")}
            for p in pairs]


def stale_reason(record: dict, qa: list[dict], source: str) -> str | None:
    """Why a metric record does not fit the paper's current QA pairs, or None if it does."""
    from .racar import qa_hash

    pm = record.get("pair_metrics")
    if not isinstance(pm, list):
        return "it has no pair metrics"
    if len(pm) != len(qa):
        return f"{len(pm)} pair metrics for {len(qa)} QA pairs"
    if record.get("qa_hash") and record["qa_hash"] != qa_hash(qa):
        return "it was computed on different QA pairs"
    if record.get("qa_source") and record["qa_source"] != source:
        return f"it was computed on the {record['qa_source']} QA pairs, not {source}"
    return None


def invalidate_stale(work: str | Path, source: str, metrics: Iterable[str]) -> dict[str, int]:
    """Mark metric records that no longer fit their paper's QA pairs for recomputation.

    Appends ``{"id", "status": "failed", "error": "stale: ..."}`` to the metric's file, which makes the
    runner redo that paper (its newer line then wins). Returns how many were marked per metric.
    """
    work = Path(work)
    indexes = {m: JsonlIndex(work / f"{m}.jsonl") for m in metrics if (work / f"{m}.jsonl").exists()}
    marked: Counter = Counter()
    if not indexes:
        return {}
    writers: dict[str, JsonlWriter] = {}
    try:
        for rec in iter_latest(work / f"{source}.jsonl"):
            if rec.get("status", "ok") not in USABLE_STATUSES or not rec.get("qa"):
                continue
            qa = _current_qa(rec["qa"])
            for m, index in indexes.items():
                old = index.get(rec["id"])
                if old is None or old.get("status") == FAILED:
                    continue
                reason = stale_reason(old, qa, source)
                if reason:
                    if m not in writers:
                        writers[m] = JsonlWriter(work / f"{m}.jsonl")
                    writers[m].write({"id": rec["id"], "status": FAILED, "error": f"stale: {reason}; recomputed"})
                    marked[m] += 1
    finally:
        for w in writers.values():
            w.close()
    for m, n in marked.items():
        log.warning("%s: %d paper(s) have QA pairs that changed since they were evaluated; recomputing them", m, n)
    return dict(marked)


# ---------------------------------------------------------------- running the metrics

def run_evaluate(work: str | Path, cfg: EvaluateConfig | None = None, judges: list | None = None,
                 diversity_client=None) -> dict[str, Summary]:
    """Run the selected metrics (each resumable), then write evaluated.jsonl, the summary and the plots.

    ``judges`` (LLMClients, several = a committee) are needed for RACAR; LLM diversity uses
    ``diversity_client`` or the first judge. Coverage, numeric and embedding diversity need no LLM.
    Returns each metric's runner summary.
    """
    cfg = cfg or EvaluateConfig()
    judges = list(judges or [])
    cfg.resolve_metrics(bool(judges))
    cfg.validate()
    work = Path(work)
    src = qa_source(work, cfg.source)
    if "racar" in cfg.metrics and not judges:
        raise UserError("RACAR needs a judge: pass --judge-endpoint URL --judge-model NAME (or set `judge:` "
                         "in the config), or leave racar out of --metrics")
    div_client = diversity_client or (judges[0] if judges else None)
    if "diversity" in cfg.metrics and cfg.diversity == "llm" and div_client is None:
        raise UserError("diversity method 'llm' needs a judge endpoint; use --diversity embedding to run "
                         "without one")
    selected = [m for m in RUN_ORDER if m in cfg.metrics]
    invalidate_stale(work, src, selected)

    summaries: dict[str, Summary] = {}
    for metric in selected:
        if metric == "numeric":
            from .numeric import run_numeric

            summaries[metric] = run_numeric(work, source=src, allow_rounding=cfg.allow_rounding)
        elif metric == "coverage":
            from .coverage import run_coverage

            summaries[metric] = run_coverage(work, source=src, model_name=cfg.embedding_model,
                                             definition=cfg.coverage_definition, top_context=cfg.top_context,
                                             instruction=cfg.instruction, batch_size=cfg.batch_size,
                                             device=cfg.device)
        elif metric == "diversity":
            from .diversity import run_diversity

            summaries[metric] = run_diversity(work, method=cfg.diversity, client=div_client, source=src,
                                              model_name=cfg.diversity_model or cfg.embedding_model,
                                              device=cfg.device, batch_size=cfg.batch_size)
        else:
            from .racar import run_racar

            summaries[metric] = run_racar(work, judges, source=src, combine=cfg.combine,
                                          max_attempts=cfg.max_attempts, context_tokens=cfg.context_tokens,
                                          structured=cfg.structured, chars_per_token=cfg.chars_per_token)
    merge_evaluation(work, src, cfg)
    return summaries


# ---------------------------------------------------------------- merging

@dataclass
class _Collected:
    """What the summary and the plots need, gathered in the one pass over the papers."""

    papers: int = 0
    pairs: int = 0
    counts: dict = field(default_factory=lambda: {m: Counter() for m in METRICS})
    stale: dict = field(default_factory=lambda: {m: [] for m in METRICS})
    racar_scores: dict = field(default_factory=lambda: {d: [] for d in DIMENSIONS})
    coverage: list = field(default_factory=list)
    chunk_rates: list = field(default_factory=list)
    similarity_samples: list = field(default_factory=list)  # (paper id, matrix, questions)
    coverage_sample: dict | None = None  # {"paper": ..., "info": ...}


def _float_fields() -> set[str]:
    from sciqag_dataset.schema import EVALUATED_PAIR

    return {n for n, f in EVALUATED_PAIR.items() if getattr(f, "dtype", None) in ("float32", "float64")}


def _rows(paper: dict, doi: str | None, recs: dict[str, dict], definition: str | None,
          float_fields: set[str]) -> Iterator[dict]:
    from sciqag_dataset.builders.postprocess import refers_to_source
    from sciqag_dataset.schema import EVALUATED_PAIR, PAIR_METRICS, PAPER_METRICS, conform

    paper_metrics: dict[str, Any] = {}
    for rec in recs.values():
        paper_metrics.update({k: v for k, v in (rec.get("paper_metrics") or {}).items() if k in PAPER_METRICS})
    info = (recs.get("coverage") or {}).get("info") or {}
    if definition and f"coverage_{definition}" in info:  # switching definitions needs no recomputation
        paper_metrics["coverage"] = info[f"coverage_{definition}"]
    for k, pair in enumerate(paper["qa"]):
        row: dict[str, Any] = {"paper_id": paper["id"], "title": paper.get("title"), "doi": doi,
                               "keywords": paper.get("keywords") or [], **pair}
        for rec in recs.values():
            row.update({n: v for n, v in rec["pair_metrics"][k].items() if n in PAIR_METRICS})
        row.update(paper_metrics)
        if row.get("refers_to_source") is None:  # a regex, so known without the judge
            row["refers_to_source"] = refers_to_source(pair.get("question") or "")
        row = conform(row, EVALUATED_PAIR)
        for n in float_fields:  # 3 and 3.0 in one column: keep JSON readers on one type
            if row[n] is not None:
                row[n] = float(row[n])
        yield row


def _merge(work: Path, src: str, cfg: EvaluateConfig, aligned: Path, out) -> _Collected:
    """Write evaluated rows to ``out``; copy the metric records that fit into ``aligned``/<metric>.jsonl."""
    # a metric never run has an empty index: its papers all count as absent
    indexes = {m: JsonlIndex(work / f"{m}.jsonl") for m in METRICS}
    papers = JsonlIndex(work / "papers.jsonl")
    float_fields = _float_fields()
    c = _Collected()
    copies = {m: JsonlWriter(aligned / f"{m}.jsonl") for m in METRICS}
    try:
        for paper in iter_qa_papers(work, src):
            c.papers += 1
            c.pairs += len(paper["qa"])
            recs = {}
            for m, index in indexes.items():
                rec = index.get(paper["id"])
                if rec is None:
                    c.counts[m]["absent"] += 1
                    continue
                if rec.get("status") == FAILED:
                    c.counts[m]["failed"] += 1
                    continue
                reason = stale_reason(rec, paper["qa"], src)
                if reason:
                    c.counts[m]["stale"] += 1
                    if len(c.stale[m]) < 3:  # examples for the warning; the count is in counts
                        c.stale[m].append(f"{paper['id']} ({reason})")
                    continue
                c.counts[m]["merged"] += 1
                recs[m] = rec
                copies[m].write(rec)
            meta = (papers.get(paper["id"]) or {}).get("metadata") or {}
            rows = list(_rows(paper, meta.get("doi"), recs, cfg.coverage_definition, float_fields))
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            _collect(c, paper, recs, rows, cfg)
    finally:
        for w in copies.values():
            w.close()
    for m, items in c.stale.items():
        if items:
            n = c.counts[m]["stale"]
            log.warning("%s: %d record(s) do not fit their paper's current QA pairs and are left out (rerun "
                        "`sciqag evaluate` to recompute them): %s%s", m, n, "; ".join(items), " ..." if n > 3 else "")
    return c


def _collect(c: _Collected, paper: dict, recs: dict, rows: list[dict], cfg: EvaluateConfig) -> None:
    if "racar" in recs:
        for row in rows:
            for d in DIMENSIONS:
                c.racar_scores[d].append(row[d])
    if "coverage" in recs:
        if rows and rows[0]["coverage"] is not None:
            c.coverage.append(rows[0]["coverage"])
        c.chunk_rates += [r["chunk_rate"] for r in rows if r["chunk_rate"] is not None]
        if c.coverage_sample is None:
            c.coverage_sample = {"paper": paper, "info": recs["coverage"].get("info") or {}}
    matrix = (recs.get("diversity") or {}).get("similarity_matrix") or []
    if len(c.similarity_samples) < cfg.sample_papers and len(matrix) >= 2 and any(
            matrix[i][j] is not None for i in range(len(matrix)) for j in range(i)):
        c.similarity_samples.append((paper["id"], matrix, [p["question"] for p in paper["qa"]]))


def merge_evaluation(work: str | Path, source: str | None = None, cfg: EvaluateConfig | None = None, *,
                     plots: bool | None = None) -> Path:
    """Write ``WORK/evaluated.jsonl`` (one row per QA pair), ``evaluation_summary.json`` and the plots.

    Reads whatever metric files exist, whichever run wrote them; only records that fit the current QA
    pairs are used, and the summary covers exactly those. Returns the path of evaluated.jsonl.
    """
    cfg = cfg or EvaluateConfig()
    work = Path(work)
    src = qa_source(work, source if source is not None else cfg.source)
    path = work / EVALUATED
    tmp = path.with_suffix(".jsonl.tmp")
    with tempfile.TemporaryDirectory(prefix="sciqag-eval-") as aligned:
        with tmp.open("w", encoding="utf-8") as out:
            collected = _merge(work, src, cfg, Path(aligned), out)
        os.replace(tmp, path)  # readers never see a half-written file
        summary = _summary(Path(aligned), src, collected, cfg)
    summary["plots"] = write_plots(work, collected, cfg) if (cfg.plots if plots is None else plots) else {}
    (work / SUMMARY).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _summary(aligned: Path, src: str, c: _Collected, cfg: EvaluateConfig) -> dict[str, Any]:
    def have(m: str) -> bool:
        return c.counts[m]["merged"] > 0

    out: dict[str, Any] = {
        "source": src, "papers": c.papers, "pairs": c.pairs,
        "metrics": {m: {k: c.counts[m][k] for k in ("merged", "stale", "failed", "absent")} for m in METRICS},
        "racar": None, "diversity": None, "coverage": None, "numeric": None,
    }
    if have("racar"):
        from .racar import racar_summary

        out["racar"] = racar_summary(aligned)
    if have("diversity"):
        from .diversity import diversity_summary

        out["diversity"] = diversity_summary(aligned)
    if have("coverage"):
        out["coverage"] = _coverage_summary(aligned / "coverage.jsonl", cfg.coverage_definition)
    if have("numeric"):
        from .numeric import numeric_summary

        out["numeric"] = numeric_summary(iter_latest(aligned / "numeric.jsonl"))
    return out


def _coverage_summary(path: Path, definition: str) -> dict[str, Any]:
    """``coverage_summary`` in the chosen definition, plus the mean of both definitions."""
    from .coverage import coverage_summary

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


# ---------------------------------------------------------------- plots

def write_plots(work: Path, c: _Collected, cfg: EvaluateConfig) -> dict[str, Any]:
    """The card's PNGs under WORK/plots/ (paths relative to WORK). A plot that fails is logged and left out."""
    from . import plots

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
            from .coverage import answer_sentence_matrix

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


# ---------------------------------------------------------------- filtering

def pair_verdict(row: dict, *, min_racar: float | None = None, min_dims: dict[str, float] | None = None,
                 drop_source_references: bool = False, min_numeric_ratio: float | None = None,
                 min_chunk_rate: float | None = None, authors_test_set: bool = False) -> tuple[list[str], list[str]]:
    """(rules the row fails, rules it cannot be judged on for a missing value). Kept iff both are empty.

    A value at the threshold passes. ``min_racar`` applies to ``racar_mean`` and needs all five
    dimensions scored (a mean over the scored ones would let an unscored dimension pass). An answer
    without numbers has nothing unsupported and passes ``min_numeric_ratio``; one with numbers but no
    ratio (numeric not run) is missing. ``authors_test_set``: 3 on relevance, completeness, accuracy
    and reasonableness, and no source reference in the question (their agnosticism regex).
    """
    from .numeric import extract_numbers

    failed, missing = [], []

    def need(rule: str, value, threshold) -> None:
        if value is None:
            missing.append(rule)
        elif value < threshold:
            failed.append(rule)

    if min_racar is not None:
        if any(row.get(d) is None for d in DIMENSIONS) or row.get("racar_mean") is None:
            missing.append("min_racar")
        elif row["racar_mean"] < min_racar:
            failed.append("min_racar")
    for d, threshold in (min_dims or {}).items():
        need(f"min_{d}", row.get(d), threshold)
    if authors_test_set:
        for d in DIMENSIONS:
            if d != "agnosticism":
                need(f"authors_{d}", row.get(d), 3)
    if (drop_source_references or authors_test_set) and row.get("refers_to_source"):
        failed.append("source_reference")
    if min_numeric_ratio is not None:
        ratio = row.get("numeric_ratio")
        if ratio is None:
            if extract_numbers(row.get("answer") or ""):
                missing.append("min_numeric_ratio")
        elif ratio < min_numeric_ratio:
            failed.append("min_numeric_ratio")
    if min_chunk_rate is not None:
        need("min_chunk_rate", row.get("chunk_rate"), min_chunk_rate)
    return failed, missing


def filter_pairs(work: str | Path, *, min_racar: float | None = None, min_dims: dict[str, float] | None = None,
                 drop_source_references: bool = False, min_numeric_ratio: float | None = None,
                 min_chunk_rate: float | None = None, authors_test_set: bool = False) -> dict[str, Any]:
    """Keep the evaluated pairs that pass every rule: WORK/filtered.jsonl (same rows) + filter_summary.json.

    A pair lacking a value a rule needs is never kept; it is counted as ``missing`` (a pair that fails
    some rule outright counts as ``dropped`` even if it also lacks a value). Returns the counts.
    """
    unknown = set(min_dims or {}) - set(DIMENSIONS)
    if unknown:
        raise UserError(f"unknown RACAR dimension(s) {sorted(unknown)}: expected {', '.join(DIMENSIONS)}")
    rules = {"min_racar": min_racar, "min_dims": dict(min_dims or {}),
             "drop_source_references": drop_source_references, "min_numeric_ratio": min_numeric_ratio,
             "min_chunk_rate": min_chunk_rate, "authors_test_set": authors_test_set}
    if (min_racar is None and not min_dims and not drop_source_references and min_numeric_ratio is None
            and min_chunk_rate is None and not authors_test_set):
        raise UserError("no filter rule given (e.g. --min-racar 2.5, --authors-test-set)")
    work = Path(work)
    src = work / EVALUATED
    if not src.exists():
        raise MissingInput(f"{src} not found: run `sciqag evaluate {work}` first")
    counts = {"pairs": 0, "kept": 0, "dropped": 0, "missing": 0}
    failed_by, missing_by = Counter(), Counter()
    path = work / FILTERED
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for row in read_jsonl(src):
            counts["pairs"] += 1
            failed, missing = pair_verdict(row, min_racar=min_racar, min_dims=min_dims,
                                           drop_source_references=drop_source_references,
                                           min_numeric_ratio=min_numeric_ratio, min_chunk_rate=min_chunk_rate,
                                           authors_test_set=authors_test_set)
            failed_by.update(failed)
            missing_by.update(missing)
            if failed:
                counts["dropped"] += 1
            elif missing:
                counts["missing"] += 1
            else:
                counts["kept"] += 1
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    result = {**counts, "failed_by_rule": dict(sorted(failed_by.items())),
              "missing_by_rule": dict(sorted(missing_by.items())), "rules": rules}
    (work / FILTER_SUMMARY).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


__all__ = ["EvaluateConfig", "FilterConfig", "METRICS", "filter_pairs", "invalidate_stale",
           "judge_endpoint", "merge_evaluation", "pair_verdict", "run_evaluate", "stale_reason", "write_plots"]
