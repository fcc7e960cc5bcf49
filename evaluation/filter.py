"""Filtering evaluated QA pairs: a stage over papers, then the kept rows as ``WORK/filtered.jsonl``.

The stage (``stage(rules)``) reads each paper's rows of ``WORK/evaluated.jsonl`` and writes its verdicts to
``WORK/filter_verdicts.jsonl`` (resumable and shardable like any stage: a change of rules or of a paper's
rows redoes just that paper); ``filter_pairs`` runs it and writes ``filtered.jsonl`` (the kept rows,
unchanged) and ``filter_summary.json`` (counts per rule).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sciqag_dataset.core import metrics
from sciqag_dataset.core.atomic import replacing, write_json
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.jsonl import JsonlIndex
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.schema import RACAR_DIMENSIONS, grounding_rank
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.core.wiring import EVALUATED, EVALUATION_SUMMARY, FILTER_SUMMARY, FILTERED
from sciqag_dataset.evaluation.decontaminate import Benchmarks
from sciqag_dataset.evaluation.duplicates import Duplicates
from sciqag_dataset.evaluation.evaluated_pairs import evaluated_papers, pair_verdict

VERDICTS = "filter_verdicts.jsonl"
DECONTAMINATE = "decontaminate"  # the verdict of a question a benchmark asks
DUPLICATE = "duplicate"  # the verdict of a near-duplicate of a better-scored pair
FLAGGED_ITEM = "flagged_item"  # the verdict of a question a benchmark's item analysis flagged
DIMENSIONS = RACAR_DIMENSIONS
_DIM_RULES = tuple(f"min_{d}" for d in DIMENSIONS)  # RACAR's rules per dimension travel as ``min_dims``


LABEL_RULES = ("reasoning_types", "min_difficulty", "max_difficulty")


def _rule_metric(rule: str) -> str:
    """The metric whose scores a rule reads (the authors' rule reads RACAR's)."""
    return "racar" if rule == "authors_test_set" else metrics.rules()[rule][0].name


def _same(question: str) -> str:
    return " ".join(question.split()).casefold()


class _Verdicts:
    def __init__(
        self, rules: dict, bench: Benchmarks | None = None, dups: Duplicates | None = None, flagged: dict | None = None
    ):
        self.rules, self.bench, self.dups = rules, bench, dups
        self.flagged = {_same(q): f for q, f in (flagged or {}).items()}

    def __call__(self, paper: dict) -> dict:
        verdicts = [
            pair_verdict({**row, "question": q}, **self.rules) for row, q in zip(paper["rows"], paper["questions"])
        ]
        duplicate_of = []
        if self.dups is not None:
            ids = RowIds()
            duplicate_of = [self.dups.duplicate_of.get(ids(row)) for row in paper["rows"]]
            for (failed, _), kept in zip(verdicts, duplicate_of):
                if kept:
                    failed.append(DUPLICATE)
        reasons = []
        if self.bench is not None:
            reasons = self.bench.check(paper["questions"])
            for (failed, _), reason in zip(verdicts, reasons):
                if reason:
                    failed.append(DECONTAMINATE)
        for (failed, _), q in zip(verdicts, paper["questions"]):
            if _same(q) in self.flagged:
                failed.append(FLAGGED_ITEM)
        return {
            "id": paper["id"],
            "status": "ok",
            "failed": [f for f, _ in verdicts],
            "missing": [m for _, m in verdicts],
            **({"duplicate_of": duplicate_of} if self.dups is not None else {}),
            **({"contaminated": reasons} if self.bench is not None else {}),
        }


def check_rules(
    min_dims: dict[str, float] | None = None,
    drop_source_references: bool = False,
    authors_test_set: bool = False,
    allow_none: bool = False,
    **thresholds,
) -> dict[str, Any]:
    """The rules as one mapping (keyword arguments of ``pair_verdict``); UserError for none (unless
    ``allow_none``: decontamination alone) or a bad one."""
    unknown = set(min_dims or {}) - set(DIMENSIONS)
    if unknown:
        raise UserError(f"unknown RACAR dimension(s) {sorted(unknown)}: expected {', '.join(DIMENSIONS)}")
    registry = metrics.rules()
    if bad := sorted(set(thresholds) - set(registry)):
        raise UserError(f"unknown filter rule(s) {bad}: the registered metrics have {', '.join(registry)}")
    nothing = all(v is None for v in thresholds.values()) and not (
        min_dims or drop_source_references or authors_test_set
    )
    if nothing and not allow_none:
        raise UserError("no filter rule given (e.g. --min-racar 2.5, --authors-test-set; --clear undoes a filter)")
    return {
        **{name: thresholds.get(name) for name in registry if not name.startswith(_DIM_RULES)},
        "min_dims": dict(min_dims or {}),
        "drop_source_references": drop_source_references,
        "authors_test_set": authors_test_set,
    }


def describe_rules(rules: dict[str, Any]) -> list[str]:
    """The rules in words, for the card and the summary (``rules`` as ``check_rules`` returns them)."""
    registry = metrics.rules()
    words = [
        registry[name][1].describe(value)
        for name, value in rules.items()
        if name in registry and value is not None and name != "min_dims"
    ]
    words += [registry[f"min_{d}"][1].describe(t) for d, t in (rules.get("min_dims") or {}).items()]
    if rules.get("authors_test_set"):
        words.append("the authors' test-set rule: 3 on relevance, completeness, accuracy and reasonableness")
    if rules.get("drop_source_references") or rules.get("authors_test_set"):
        words.append('no reference to the source paper in the question ("this paper", "the study" ...)')
    return words


def _shown(source: str) -> str:
    """A benchmark as the card names it: a local file or folder by its name (its path is this machine's)."""
    return Path(source).name if Path(source).exists() else source


def stage(
    bench: Benchmarks | None = None, dups: Duplicates | None = None, flagged: dict | None = None, **rules
) -> Stage:
    """Verdicts of every evaluated pair -> ``WORK/filter_verdicts.jsonl`` (rules: see ``pair_verdict``; ``bench``:
    the benchmarks to decontaminate against; ``dups``: the near-duplicates to drop; ``flagged``: questions a
    benchmark's item analysis flagged, to drop)."""
    rules = check_rules(allow_none=bench is not None or dups is not None or flagged is not None, **rules)
    params = {"rules": rules} | ({"decontaminate": bench.describe()} if bench else {})
    params |= {"duplicates": dups.describe()} if dups else {}
    params |= {"flagged_items": sorted(flagged)} if flagged is not None else {}
    process = _Verdicts(rules, bench, dups, flagged)
    return Stage(name="filter", output=VERDICTS, inputs=evaluated_papers, process=process, params=params)


def unscored(work: Path, rules: dict[str, Any]) -> dict[str, str]:
    """The rules whose metric scored no pair at all (rule -> metric): such a rule would drop every pair."""
    path = work / EVALUATION_SUMMARY
    summary = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    scored = summary.get("metrics") or {}
    active = [r for r, v in rules.items() if r in metrics.rules() and v is not None]
    active += [f"min_{d}" for d in rules.get("min_dims") or {}] + ["authors_test_set"] * bool(
        rules.get("authors_test_set")
    )
    out = {r: _rule_metric(r) for r in active if not (scored.get(_rule_metric(r)) or {}).get("merged")}
    racar = summary.get("racar") or {}  # labels come with RACAR, but a judge (or an older run) may give none
    labelled = set(racar.get("reasoning_types") or {}) - {"missing"} or (racar.get("difficulty") or {}).get("mean")
    return out | {r: "racar" for r in active if r in LABEL_RULES and not labelled}


def clear(work: str | Path) -> list[str]:
    """Undo the filter: its files go, and the next publish takes every evaluated pair. Returns what went."""
    work = Path(work)
    gone = [
        p
        for p in (FILTERED, FILTER_SUMMARY, VERDICTS, VERDICTS.removesuffix(".jsonl") + "_manifest.json")
        if (work / p).exists()
    ]
    for name in gone:
        (work / name).unlink()
    return gone


def filter_pairs(
    work: str | Path,
    allow_missing: bool = False,
    bench: Benchmarks | None = None,
    dups: Duplicates | None = None,
    flagged: dict | None = None,
    **rules,
) -> dict[str, Any]:
    """Keep the evaluated pairs that pass every rule: WORK/filtered.jsonl (same rows) + filter_summary.json.

    A pair lacking a value a rule needs is never kept; it is counted as ``missing`` (a pair that fails
    some rule outright counts as ``dropped`` even if it also lacks a value). A rule on a metric that scored
    no pair would keep nothing: UserError naming the metric, unless ``allow_missing``. Returns the counts.
    """
    work = Path(work)
    verdicts_stage = stage(bench, dups, flagged, **rules)
    if not (work / EVALUATED).exists():
        raise MissingInput(f"{work / EVALUATED} not found: run `sciqag evaluate {work}` first")
    if (missing := unscored(work, verdicts_stage.params["rules"])) and not allow_missing:
        raise UserError(
            "; ".join(f"{rule} needs {metric} scores and no pair has them" for rule, metric in missing.items())
            + ": run `"
            + "`, `".join(sorted({metrics.get_metric(m).how_to_run for m in missing.values()}))
            + "` first, or pass --allow-missing-scores to drop every pair without them"
        )
    run_stage(verdicts_stage, work, progress=False)
    verdicts = JsonlIndex(work / VERDICTS)
    counts = {"pairs": 0, "kept": 0, "dropped": 0, "missing": 0}
    failed_by, missing_by = Counter(), Counter()
    by_kind: dict[str, Counter] = {}  # what each verdict was, per kind of pair (asked from the text, a table ...)
    with replacing(work / FILTERED) as out:
        for paper in evaluated_papers(work):
            verdict = verdicts.get(paper["id"]) or {}
            if verdict.get("status") != "ok":  # the verdict itself failed (see filter_verdicts.jsonl)
                verdict = {"failed": [[]] * len(paper["rows"]), "missing": [["verdict failed"]] * len(paper["rows"])}
            for row, failed, missing in zip(paper["rows"], verdict["failed"], verdict["missing"]):
                counts["pairs"] += 1
                failed_by.update(failed)
                missing_by.update(missing)
                verdict_of = "dropped" if failed else "missing" if missing else "kept"
                counts[verdict_of] += 1
                kind = (row.get("grounding") or {}).get("kind") or "prose"
                by_kind.setdefault(kind, Counter()).update(["pairs", verdict_of])
                if verdict_of == "kept":
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = {
        **counts,
        "failed_by_rule": dict(sorted(failed_by.items())),
        "missing_by_rule": dict(sorted(missing_by.items())),
        "rules": verdicts_stage.params["rules"],
        "rules_described": describe_rules(verdicts_stage.params["rules"]),
    }
    if set(by_kind) - {"prose"}:  # some pairs asked from tables, equations or figures: how each kind fared
        result["by_asked_from"] = {k: {c: by_kind[k][c] for c in counts} for k in sorted(by_kind, key=grounding_rank)}
    if dups is not None:
        d = dups.describe()
        result["duplicates"] = {**d, "dropped": failed_by[DUPLICATE]}
        result["rules_described"].append(
            f"no near-duplicate question (within a paper: embedding cosine ≥ {d['threshold']:g}; across the corpus: "
            f"MinHash Jaccard ≥ {d['jaccard']:g}; of a group, the pair its reviewers kept, else the best judged, "
            f"else the best grounded): {plural(failed_by[DUPLICATE], 'pair')} dropped"
        )
    if flagged is not None:
        result["flagged_items"] = {"questions": len(flagged), "dropped": failed_by[FLAGGED_ITEM]}
        result["rules_described"].append(
            f"no question a benchmark's item analysis flagged (every model right, none right or negative "
            f"discrimination; {plural(len(flagged), 'question')}): {plural(failed_by[FLAGGED_ITEM], 'pair')} dropped"
        )
    if bench is not None:
        d = bench.describe()
        result["decontamination"] = {**d, "dropped": failed_by[DECONTAMINATE]}
        result["rules_described"].append(
            f"no question a benchmark asks ({', '.join(map(_shown, d['sources']))}: "
            f"{plural(d['questions'], 'question')}; a shared {d['ngram']}-word sequence, or embedding cosine ≥ "
            f"{d['threshold']:g}): {plural(failed_by[DECONTAMINATE], 'pair')} dropped"
        )
    write_json(work / FILTER_SUMMARY, result)
    return result
