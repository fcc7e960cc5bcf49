"""What the CLI prints after each stage: one line of counts, and the evaluation's short table."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import yaml

from sciqag_dataset.core.console import plural
from sciqag_dataset.core.records import seen_share, stage_records
from sciqag_dataset.core.runner import Summary
from sciqag_dataset.core.schema import RACAR_DIMENSIONS as DIMENSIONS
from sciqag_dataset.core.wiring import EVALUATION_SUMMARY, INGEST_REPORT, WIRING
from sciqag_dataset.llm.budget import spend_by_stage
from sciqag_dataset.llm.models import DEMO_QUALITY, REAL_DATA, is_embedded

EXIT_OK, EXIT_FAILED_RECORDS = 0, 1


def summary_line(summary: Summary, advice: str | None = None) -> int:
    """Print a stage's counts; exit status 1 when papers failed, with what to do (a rerun retries what failed
    for a reason a rerun can change: a server, a network, a timeout)."""
    print(summary.line())
    if summary.failed:
        print(
            f"  {plural(summary.failed, 'paper')} failed; "
            + (advice or "rerun the same command to retry them (finished papers are not redone)."),
            file=sys.stderr,
        )
        return EXIT_FAILED_RECORDS
    return EXIT_OK


def ingested(work: Path, summary: Summary) -> int:
    """The ingest summary, then papers ok / partial / failed per format (from ingest_report.json)."""
    # a file that could not be read fails the same way on a rerun: it is the file that must change
    status = summary_line(
        summary,
        "their files and why are in ingest_report.json: a rerun reads them again only "
        "once they changed (a fixed or replaced file), or when the failure was a "
        "download or a time limit.",
    )
    try:
        formats = json.loads((work / INGEST_REPORT).read_text(encoding="utf-8")).get("formats") or {}
    except (OSError, ValueError):
        return status
    if formats:
        print(f"  {'format':<12} {'ok':>6} {'partial':>8} {'failed':>7} {'words/paper':>12}")
        for name, c in formats.items():
            read = c["ok"] + c["partial"]
            print(
                f"  {name:<12} {c['ok']:>6} {c['partial']:>8} {c['failed']:>7} "
                f"{(c['words'] / read if read else 0):>12.0f}"
            )
        if any(c["partial"] for c in formats.values()):
            print(
                "  partial papers are left out of publish (publish --allow-partial keeps them); "
                "see ingest_report.json",
                file=sys.stderr,
            )
    return status


def _fmt(value, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if pct else f"{value:.3g}"


def print_evaluation(work: Path, summaries: dict, out=None) -> None:
    """The short table at the end of `sciqag evaluate`."""
    out = out or sys.stdout
    for s in summaries.values():
        print(s.line(), file=out)
    summary = json.loads((work / EVALUATION_SUMMARY).read_text(encoding="utf-8"))
    print(
        f"\nEvaluated {plural(summary['pairs'], 'QA pair')} of {plural(summary['papers'], 'paper')} "
        f"({summary['source']}) -> {work / 'evaluated.jsonl'}",
        file=out,
    )
    r = summary.get("racar")
    if r:
        print(f"  RACAR ({', '.join(r['judges'])}; {plural(r['judge_calls_per_paper'], 'call')}/paper)", file=out)
        for d in DIMENSIONS:
            dim = r["dimensions"][d]
            print(f"    {d:<16} mean {_fmt(dim['mean']):>5}   missing {dim['missing']}", file=out)
        if set(r.get("reasoning_types") or {}) - {"missing"}:  # a judge that gave no labels: nothing to show
            print("    reasoning types  " + ", ".join(f"{t} {n}" for t, n in r["reasoning_types"].items()), file=out)
            hard = r.get("difficulty") or {}
            levels = ", ".join(f"{k} {n}" for k, n in (hard.get("distribution") or {}).items())
            print(f"    difficulty       mean {_fmt(hard.get('mean')):>5}   ({levels or 'none'})", file=out)
        if r.get("agreement"):
            agree = [a["all_agree"] for a in r["agreement"].values() if a["all_agree"] is not None]
            if agree:
                print(f"    judges agree on {sum(agree) / len(agree):.0%} of pairs (mean over dimensions)", file=out)
    d = summary.get("diversity")
    if d:
        bins = d["bins"]
        print(
            f"  diversity ({', '.join(d['methods'])}): mean similarity {_fmt(bins['mean'])}; "
            + ", ".join(f"{b} {_fmt(bins[b], True)}" for b in ("<0.3", "0.3-0.5", "0.5-0.7", ">0.7")),
            file=out,
        )
    c = summary.get("coverage")
    if c:
        print(
            f"  coverage ({c['definition']}): {_fmt(c['coverage'], True)} "
            f"(released {_fmt(c['coverage_released'], True)}, eq1 {_fmt(c['coverage_eq1'], True)}); "
            f"chunk rate per answer {_fmt(c['chunk_rate'], True)}",
            file=out,
        )
    n = summary.get("numeric")
    if n:
        print(
            f"  numeric: {_fmt(n['answers_with_numbers'], True)} of answers have numbers; "
            f"{_fmt(n['supported_ratio'], True)} of their {plural(n['numbers'], 'number')} occur in the paper",
            file=out,
        )
    for name in set(summary["metrics"]) - {"racar", "diversity", "coverage", "numeric"}:  # a plugin's metric
        if summary.get(name):
            print(f"  {name}: {json.dumps(summary[name], ensure_ascii=False)[:300]}", file=out)
    stale = {m: v["stale"] for m, v in summary["metrics"].items() if v["stale"]}
    if stale:
        print(f"  left out (QA changed since): {stale}", file=out)
    plots = [p for k, p in summary.get("plots", {}).items() if k != "errors"]
    if plots:
        print(f"  plots: {work / 'plots'}", file=out)


def evaluation(work: Path, summaries: dict) -> int:
    print_evaluation(work, summaries)
    failed = sum(s.failed for s in summaries.values())
    if failed:
        print(f"  {plural(failed, 'paper evaluation')} failed; rerun the same command to retry them.", file=sys.stderr)
        return EXIT_FAILED_RECORDS
    return EXIT_OK


def published(out: Path, copies: list[str]) -> int:
    front = (out / "README.md").read_text(encoding="utf-8").split("---")[1]
    names = [c["config_name"] for c in yaml.safe_load(front)["configs"]]
    print(f"Published {out} (configs: {', '.join(names)})  ->  datasets.load_dataset({str(out)!r}, {names[0]!r})")
    for copy in copies:
        print(f"Uploaded: {copy}")
    return EXIT_OK


def calibration(result: dict) -> None:
    print(
        f"calibration on {plural(result['pairs'], 'reviewed pair')} ({result['kept_by_people']} kept by people): "
        "keep a pair when its RACAR mean is at least"
    )
    print(f"  {'threshold':>9} {'precision':>9} {'recall':>6} {'agree':>5} {'kept':>5}")
    for row in result["table"]:
        mark = "  <- chosen" if row["threshold"] == result["threshold"] else ""
        print(
            f"  {row['threshold']:>9.2f} {row['precision']:>9.2f} {row['recall']:>6.2f} {row['agreement']:>5.2f} "
            f"{row['kept']:>5}{mark}"
        )


def filtered(work: Path, result: dict) -> int:
    print(
        f"filter: {plural(result['pairs'], 'pair')} -> {result['kept']} kept, {result['dropped']} dropped, "
        f"{result['missing']} missing a required score -> {work / 'filtered.jsonl'}"
    )
    for label, by in (("failed", result["failed_by_rule"]), ("missing", result["missing_by_rule"])):
        if by:
            print(f"  {label}: " + ", ".join(f"{k} {n}" for k, n in by.items()))
    for kind, n in (result.get("by_asked_from") or {}).items():
        print(f"  asked from {kind}: {n['kept']} of {plural(n['pairs'], 'pair')} kept")
    return EXIT_OK


def run_summary(work: Path, seconds: dict[str, float], embedded: str | None, output: Path | None, out=None) -> None:
    """The block at the end of `sciqag run`: what each QA stage gave, how long each stage took, which
    embedded backend answered, and where the results are."""
    out = out or sys.stdout
    print("\nSummary", file=out)
    demo = []
    for stage, name in (("seed", WIRING["seed"].output), ("generate", WIRING["generate"].output)):
        if not (work / name).exists():
            continue
        recs = list(stage_records(work, name))
        if any(is_embedded(r.get("model")) for r in recs):
            demo.append(stage)
        share = seen_share(recs)
        statuses = Counter(r.get("status") or "ok" for r in recs)
        pairs = sum(len(r.get("qa") or []) for r in recs)
        many = sum(len(r.get("qa") or []) >= 5 for r in recs)
        off = sum(len(r.get("off_passage") or []) for r in recs)
        print(
            f"  {stage:<9} {plural(len(recs), 'paper')}: "
            + ", ".join(f"{n} {k}" for k, n in sorted(statuses.items()))
            + f"; {plural(pairs, 'QA pair')}, {plural(many, 'paper')} with 5 or more"
            + (f"; {plural(off, 'pair')} not about their paper dropped (see warnings)" if off else "")
            + (f"; the model saw {share:.0%} of the papers' words" if share is not None else ""),
            file=out,
        )
    if seconds:
        print(
            "  time      "
            + ", ".join(f"{k} {v:.0f}s" for k, v in seconds.items())
            + f" (total {sum(seconds.values()):.0f}s)",
            file=out,
        )
    if embedded:
        print(f"  model     embedded SmolLM2-135M-Instruct on {embedded}", file=out)
    if demo:
        print(f"  quality   {', '.join(demo)}: {DEMO_QUALITY}", file=out)
        print(f"            {REAL_DATA}", file=out)
    spend = spend_by_stage(work)
    for row in spend:
        print(
            f"  tokens    {row['stage']} · {row['model']}: {plural(row['requests'], 'request')} "
            f"({row['cached']} from the cache), {row['prompt_tokens']:,} prompt + {row['completion_tokens']:,} "
            f"completion tokens, ${row['cost']:.4f}",
            file=out,
        )
    if spend:
        print(
            f"  cost      ${sum(r['cost'] for r in spend):.4f} estimated, all runs of this work dir "
            "(endpoint prices from the config; none set counts as free)",
            file=out,
        )
    print(f"  work dir  {work.resolve()}", file=out)
    if output is not None and output.exists():
        print(f'  dataset   {output.resolve()}  (datasets.load_dataset("{output}", "seed"))', file=out)
