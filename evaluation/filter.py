"""Filtering evaluated QA pairs: a stage over papers, then the kept rows as ``WORK/filtered.jsonl``.

The stage (``stage(rules)``) reads each paper's rows of ``WORK/evaluated.jsonl`` and writes its verdicts to
``WORK/filter_verdicts.jsonl`` (resumable and shardable like any stage: a change of rules or of a paper's
rows redoes just that paper); ``filter_pairs`` runs it and writes ``filtered.jsonl`` (the kept rows,
unchanged) and ``filter_summary.json`` (counts per rule).
"""
from __future__ import annotations

import json
from collections import Counter
from itertools import groupby
from pathlib import Path
from typing import Any, Iterator

from sciqag_dataset.atomic import replacing, write_json
from sciqag_dataset.errors import MissingInput, UserError
from sciqag_dataset.jsonl import JsonlIndex, read_jsonl
from sciqag_dataset.runner import run_stage
from sciqag_dataset.schema import RACAR_DIMENSIONS
from sciqag_dataset.stage import Stage

from .merge import EVALUATED
from .numeric import extract_numbers

FILTERED, FILTER_SUMMARY, VERDICTS = "filtered.jsonl", "filter_summary.json", "filter_verdicts.jsonl"
DIMENSIONS = RACAR_DIMENSIONS
#: the evaluation metric whose scores each rule reads, and how to get them
RULE_METRIC = {"min_racar": "racar", "authors_test_set": "racar", **{f"min_{d}": "racar" for d in DIMENSIONS},
               "min_numeric_ratio": "numeric", "min_chunk_rate": "coverage"}
HOW_TO_SCORE = {"racar": "sciqag evaluate WORK --judge-endpoint URL --judge-model NAME (or --metrics racar, the "
                         "embedded model as judge)",
                "numeric": "sciqag evaluate WORK --metrics numeric", "coverage": "sciqag evaluate WORK --metrics coverage"}


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


def evaluated_papers(work: str | Path) -> Iterator[dict]:
    """Each paper's rows of ``evaluated.jsonl`` (written paper by paper): the filter stage's input."""
    path = Path(work) / EVALUATED
    if not path.exists():
        raise MissingInput(f"{path} not found: run `sciqag evaluate {work}` first")
    for paper_id, rows in groupby(read_jsonl(path), key=lambda row: row["paper_id"]):
        yield {"id": paper_id, "rows": list(rows)}


class _Verdicts:
    def __init__(self, rules: dict):
        self.rules = rules

    def __call__(self, paper: dict) -> dict:
        verdicts = [pair_verdict(row, **self.rules) for row in paper["rows"]]
        return {"id": paper["id"], "status": "ok", "failed": [f for f, _ in verdicts],
                "missing": [m for _, m in verdicts]}


def check_rules(min_racar: float | None = None, min_dims: dict[str, float] | None = None,
                drop_source_references: bool = False, min_numeric_ratio: float | None = None,
                min_chunk_rate: float | None = None, authors_test_set: bool = False) -> dict[str, Any]:
    """The rules as one mapping (keyword arguments of ``pair_verdict``); UserError for none or a bad one."""
    unknown = set(min_dims or {}) - set(DIMENSIONS)
    if unknown:
        raise UserError(f"unknown RACAR dimension(s) {sorted(unknown)}: expected {', '.join(DIMENSIONS)}")
    if (min_racar is None and not min_dims and not drop_source_references and min_numeric_ratio is None
            and min_chunk_rate is None and not authors_test_set):
        raise UserError("no filter rule given (e.g. --min-racar 2.5, --authors-test-set; --clear undoes a filter)")
    return {"min_racar": min_racar, "min_dims": dict(min_dims or {}), "drop_source_references": drop_source_references,
            "min_numeric_ratio": min_numeric_ratio, "min_chunk_rate": min_chunk_rate,
            "authors_test_set": authors_test_set}


def describe_rules(rules: dict[str, Any]) -> list[str]:
    """The rules in words, for the card and the summary (``rules`` as ``check_rules`` returns them)."""
    words = []
    if rules.get("min_racar") is not None:
        words.append(f"RACAR mean ≥ {rules['min_racar']:g} (all five dimensions scored)")
    words += [f"{d} ≥ {t:g}" for d, t in (rules.get("min_dims") or {}).items()]
    if rules.get("authors_test_set"):
        words.append("the authors' test-set rule: 3 on relevance, completeness, accuracy and reasonableness")
    if rules.get("drop_source_references") or rules.get("authors_test_set"):
        words.append("no reference to the source paper in the question (\"this paper\", \"the study\" ...)")
    if rules.get("min_numeric_ratio") is not None:
        words.append(f"at least {rules['min_numeric_ratio']:.0%} of an answer's numbers found in its paper")
    if rules.get("min_chunk_rate") is not None:
        words.append(f"answer chunk rate ≥ {rules['min_chunk_rate']:g}")
    return words


def stage(**rules) -> Stage:
    """Verdicts of every evaluated pair -> ``WORK/filter_verdicts.jsonl`` (rules: see ``pair_verdict``)."""
    rules = check_rules(**rules)
    return Stage(name="filter", output=VERDICTS, inputs=evaluated_papers, process=_Verdicts(rules),
                 params={"rules": rules})


def unscored(work: Path, rules: dict[str, Any]) -> dict[str, str]:
    """The rules whose metric scored no pair at all (rule -> metric): such a rule would drop every pair."""
    path = work / "evaluation_summary.json"
    metrics = (json.loads(path.read_text(encoding="utf-8")).get("metrics") or {}) if path.exists() else {}
    active = [r for r in ("min_racar", "min_numeric_ratio", "min_chunk_rate") if rules.get(r) is not None]
    active += [f"min_{d}" for d in rules.get("min_dims") or {}] + ["authors_test_set"] * bool(rules.get("authors_test_set"))
    return {r: RULE_METRIC[r] for r in active if not (metrics.get(RULE_METRIC[r]) or {}).get("merged")}


def clear(work: str | Path) -> list[str]:
    """Undo the filter: its files go, and the next publish takes every evaluated pair. Returns what went."""
    work = Path(work)
    gone = [p for p in (FILTERED, FILTER_SUMMARY, VERDICTS, VERDICTS.removesuffix(".jsonl") + "_manifest.json")
            if (work / p).exists()]
    for name in gone:
        (work / name).unlink()
    return gone


def filter_pairs(work: str | Path, allow_missing: bool = False, **rules) -> dict[str, Any]:
    """Keep the evaluated pairs that pass every rule: WORK/filtered.jsonl (same rows) + filter_summary.json.

    A pair lacking a value a rule needs is never kept; it is counted as ``missing`` (a pair that fails
    some rule outright counts as ``dropped`` even if it also lacks a value). A rule on a metric that scored
    no pair would keep nothing: UserError naming the metric, unless ``allow_missing``. Returns the counts.
    """
    work = Path(work)
    verdicts_stage = stage(**rules)
    if not (work / EVALUATED).exists():
        raise MissingInput(f"{work / EVALUATED} not found: run `sciqag evaluate {work}` first")
    if (missing := unscored(work, verdicts_stage.params["rules"])) and not allow_missing:
        raise UserError("; ".join(f"{rule} needs {metric} scores and no pair has them" for rule, metric in
                                  missing.items()) + ": run `" + "`, `".join(sorted({HOW_TO_SCORE[m] for m in
                                                                                    missing.values()}))
                        + "` first, or pass --allow-missing-scores to drop every pair without them")
    run_stage(verdicts_stage, work, progress=False)
    verdicts = JsonlIndex(work / VERDICTS)
    counts = {"pairs": 0, "kept": 0, "dropped": 0, "missing": 0}
    failed_by, missing_by = Counter(), Counter()
    with replacing(work / FILTERED) as out:
        for paper in evaluated_papers(work):
            verdict = verdicts.get(paper["id"]) or {}
            if verdict.get("status") != "ok":  # the verdict itself failed (see filter_verdicts.jsonl)
                verdict = {"failed": [[]] * len(paper["rows"]), "missing": [["verdict failed"]] * len(paper["rows"])}
            for row, failed, missing in zip(paper["rows"], verdict["failed"], verdict["missing"]):
                counts["pairs"] += 1
                failed_by.update(failed)
                missing_by.update(missing)
                if failed:
                    counts["dropped"] += 1
                elif missing:
                    counts["missing"] += 1
                else:
                    counts["kept"] += 1
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = {**counts, "failed_by_rule": dict(sorted(failed_by.items())),
              "missing_by_rule": dict(sorted(missing_by.items())), "rules": verdicts_stage.params["rules"],
              "rules_described": describe_rules(verdicts_stage.params["rules"])}
    write_json(work / FILTER_SUMMARY, result)
    return result
