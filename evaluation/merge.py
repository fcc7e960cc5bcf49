"""The metrics of a QA source joined into one row per QA pair: ``WORK/evaluated.jsonl``, the summary, plots.

Metric records are joined to QA pairs by paper id and pair index. A record is used only if it was
computed on the paper's current input (its ``input_hash``, written by the runner, equals the hash of the
paper as ``records.qa_papers`` gives it now); a record without one (written by hand or by an older
version) must fit the current pairs by count, ``qa_hash`` and QA source. Otherwise it is left out with a
warning, never misaligned, and the next ``run_evaluate`` recomputes it (its fingerprint no longer matches).
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Features

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core import metrics, records
from sciqag_dataset.core.atomic import replacing, write_json
from sciqag_dataset.core.jsonl import JsonlIndex, JsonlWriter
from sciqag_dataset.core.pair_ids import pair_ids
from sciqag_dataset.core.runner import FAILED
from sciqag_dataset.core.schema import conform, evaluated_features
from sciqag_dataset.core.stage import digest
from sciqag_dataset.core.wiring import EVALUATED, PAPERS
from sciqag_dataset.evaluation.report import SUMMARY, summarize, write_plots

log = logging.getLogger(__name__)


def stale_reason(record: dict, qa: list[dict], source: str) -> str | None:
    """Why a metric record does not fit the paper's current QA pairs, or None if it does."""
    pm = record.get("pair_metrics")
    if not isinstance(pm, list):
        return "it has no pair metrics"
    if len(pm) != len(qa):
        return f"{len(pm)} pair metrics for {len(qa)} QA pairs"
    if record.get("qa_hash") and record["qa_hash"] != records.qa_hash(qa):
        return "it was computed on different QA pairs"
    if record.get("qa_source") and record["qa_source"] != source:
        return f"it was computed on the {record['qa_source']} QA pairs, not {source}"
    return None


def fits(record: dict, paper: dict) -> str | None:
    """Why a metric record does not fit ``paper`` (a ``records.qa_papers`` item) as it is now, or None."""
    if "input_hash" in record:
        return None if record["input_hash"] == digest(paper) else "it was computed on a different input"
    return stale_reason(record, paper["qa"], paper["source"])


@dataclass
class _Collected:
    """What the summary and the plots need, gathered in the one pass over the papers."""

    papers: int = 0
    pairs: int = 0
    features: Features = field(default_factory=evaluated_features)  # the rows' columns, as written
    counts: dict = field(default_factory=lambda: {m: Counter() for m in metrics.NAMES})
    stale: dict = field(default_factory=lambda: {m: [] for m in metrics.NAMES})
    gathered: dict = field(default_factory=lambda: {m: {} for m in metrics.NAMES})  # each metric's ``collect``


def _float_fields(features: Features) -> set[str]:
    return {n for n, f in features.items() if getattr(f, "dtype", None) in ("float32", "float64")}


def _rows(
    paper: dict, doi: str | None, recs: dict[str, dict], features: Features, float_fields: set[str]
) -> Iterator[dict]:
    mine = {m.name: (set(m.pair_columns), set(m.paper_columns)) for m in metrics.registered()}
    derived = {c: f for m in metrics.registered() for c, f in m.derived.items() if c in features}
    paper_metrics: dict[str, Any] = {}
    for name, rec in recs.items():  # a metric fills only its own columns
        paper_metrics.update({k: v for k, v in (rec.get("paper_metrics") or {}).items() if k in mine[name][1]})
    ids = pair_ids(paper["id"], [p.get("question") or "" for p in paper["qa"]])
    for k, pair in enumerate(paper["qa"]):
        row: dict[str, Any] = {
            "pair_id": ids[k],
            "paper_id": paper["id"],
            "title": paper.get("title"),
            "doi": doi,
            "keywords": paper.get("keywords") or [],
            **pair,
        }
        for name, rec in recs.items():
            row.update({n: v for n, v in rec["pair_metrics"][k].items() if n in mine[name][0]})
        row.update(paper_metrics)
        for column, derive in derived.items():  # computed from the pair alone: no need to run the metric
            if row.get(column) is None:
                row[column] = derive(pair)
        row = conform(row, features)
        for n in float_fields:  # 3 and 3.0 in one column: keep JSON readers on one type
            if row[n] is not None:
                row[n] = float(row[n])
        yield row


def _merge(work: Path, src: str, cfg: EvaluateConfig, aligned: Path, out) -> _Collected:
    """Write evaluated rows to ``out``; copy the metric records that fit into ``aligned``/<metric>.jsonl."""
    # a metric never run has an empty index: its papers all count as absent
    registered = metrics.registered()
    indexes = {m.name: JsonlIndex(work / f"{m.name}.jsonl") for m in registered}
    views = {m.name: m.view for m in registered if m.view}
    papers = JsonlIndex(work / PAPERS)
    c = _Collected()
    float_fields = _float_fields(c.features)
    copies = {m: JsonlWriter(aligned / f"{m}.jsonl") for m in indexes}
    try:
        for paper in records.qa_papers(work, src):
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
                reason = fits(rec, paper)
                if reason:
                    c.counts[m]["stale"] += 1
                    if len(c.stale[m]) < 3:  # examples for the warning; the count is in counts
                        c.stale[m].append(f"{paper['id']} ({reason})")
                    continue
                c.counts[m]["merged"] += 1
                copies[m].write(rec)
                recs[m] = views[m](rec, cfg) if m in views else rec
            meta = (papers.get(paper["id"]) or {}).get("metadata") or {}
            rows = list(_rows(paper, meta.get("doi"), recs, c.features, float_fields))
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            _collect(c, paper, recs, rows, cfg)
    finally:
        for w in copies.values():
            w.close()
    for m, items in c.stale.items():
        if items:
            n = c.counts[m]["stale"]
            log.warning(
                "%s: %d record(s) do not fit their paper's current QA pairs and are left out (rerun "
                "`sciqag evaluate` to recompute them): %s%s",
                m,
                n,
                "; ".join(items),
                " ..." if n > 3 else "",
            )
    return c


def _collect(c: _Collected, paper: dict, recs: dict, rows: list[dict], cfg: EvaluateConfig) -> None:
    """Each merged metric gathers what its plots need from this paper (``Metric.collect``)."""
    for m in metrics.registered():
        if m.collect and m.name in recs:
            m.collect(c.gathered[m.name], paper, recs[m.name], rows, cfg)


def merge_evaluation(
    work: str | Path, source: str | None = None, cfg: EvaluateConfig | None = None, *, plots: bool | None = None
) -> Path:
    """Write ``WORK/evaluated.jsonl`` (one row per QA pair), ``evaluation_summary.json`` and the plots.

    Reads whatever metric files exist, whichever run wrote them; only records that fit the current QA
    pairs are used, and the summary covers exactly those. Returns the path of evaluated.jsonl.
    """
    cfg = cfg or EvaluateConfig()
    work = Path(work)
    src = records.qa_source(work, source if source is not None else cfg.source)
    path = work / EVALUATED
    with tempfile.TemporaryDirectory(prefix="sciqag-eval-") as aligned:
        with replacing(path) as out:  # readers never see a half-written file
            collected = _merge(work, src, cfg, Path(aligned), out)
        summary = summarize(Path(aligned), src, collected, cfg)
    summary["plots"] = write_plots(work, collected, cfg) if (cfg.plots if plots is None else plots) else {}
    write_json(work / SUMMARY, summary)
    return path
