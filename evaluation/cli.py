"""`sciqag evaluate` and `sciqag filter`, registered into the main parser by ``register``.

Flags follow ``sciqag_dataset/cli.py``: ``dest="section.field"`` names the config field a flag
overrides (``evaluate.*``, ``filter.*``, ``judge.*``), so a flag, a YAML entry and a default are the same
option. ``--judge-endpoint`` is repeatable and, unlike ``--endpoint`` (replicas of one model), each one
is a separate judge: several make a committee. ``--judge-model`` pairs with them in order (one model
name applies to all). One judge served by several replicas is set in YAML: ``judge: {url: [a, b]}``.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from sciqag_dataset.errors import UserError

from .stage import DIMENSIONS, METRICS, SUMMARY, EvaluateConfig, FilterConfig, judge_endpoint

_SECTIONS = ("evaluate.", "filter.", "judge.")


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def committee(judge, extra: list, urls: list[str] | None, models: list[str] | None) -> list:
    """The judge endpoint configs: ``judge`` and ``extra`` from the config, unless flags name the committee.

    ``urls`` (one per judge) replace the configured committee; ``models`` pair with them in order, or
    one model applies to all. Without ``urls``, a single ``models`` entry renames the configured judge.
    """
    if not urls:
        if models and len(models) > 1:
            raise UserError("several --judge-model values need as many --judge-endpoint values")
        return [replace(judge, model=models[0]) if models else judge, *extra]
    if models and len(models) not in (1, len(urls)):
        raise UserError(f"{len(models)} --judge-model values for {len(urls)} --judge-endpoint values: "
                         "give one model for all, or one per endpoint")
    names = models * len(urls) if models and len(models) == 1 else models or [judge.model] * len(urls)
    return [replace(judge, url=u, model=m) for u, m in zip(urls, names)]


def resolve(args) -> tuple:
    """(Config, EvaluateConfig, FilterConfig, [judge endpoint configs]) from defaults, YAML and flags."""
    from sciqag_dataset.cli import resolve_config

    own = {k: v for k, v in vars(args).items() if k.startswith(_SECTIONS)}
    cfg = resolve_config(argparse.Namespace(**{k: v for k, v in vars(args).items() if k not in own}))
    # getattr defaults: these sections work before (and whether or not) Config declares them
    ev = getattr(cfg, "evaluate", None) or EvaluateConfig()
    flt = getattr(cfg, "filter", None) or FilterConfig()
    judge = getattr(cfg, "judge", None) or judge_endpoint()
    sections = {"evaluate": ev, "filter": flt, "judge": judge}
    for dest, value in own.items():
        section, name = dest.split(".", 1)
        if value is None or (section == "judge" and name in ("url", "model")):
            continue
        setattr(sections[section], name, value)
    members = committee(judge, list(ev.judges), own.get("judge.url"), own.get("judge.model"))
    ev.judges = members[1:]
    for name, value in (("evaluate", ev), ("filter", flt), ("judge", members[0])):
        if hasattr(cfg, name):
            setattr(cfg, name, value)
    cfg.validate()  # the flags of this command, too, before any work
    return cfg, ev, flt, members


# ---------------------------------------------------------------- commands

def _fmt(value, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if pct else f"{value:.3g}"


def print_evaluation(work: Path, summaries: dict, out=None) -> None:
    """The short table at the end of `sciqag evaluate`."""
    out = out or sys.stdout
    for s in summaries.values():
        print(s.line(), file=out)
    summary = json.loads((work / SUMMARY).read_text(encoding="utf-8"))
    print(f"\nEvaluated {summary['pairs']} QA pairs of {summary['papers']} papers ({summary['source']}) "
          f"-> {work / 'evaluated.jsonl'}", file=out)
    r = summary.get("racar")
    if r:
        print(f"  RACAR ({', '.join(r['judges'])}; {r['judge_calls_per_paper']} calls/paper)", file=out)
        for d in DIMENSIONS:
            dim = r["dimensions"][d]
            print(f"    {d:<16} mean {_fmt(dim['mean']):>5}   missing {dim['missing']}", file=out)
        if r.get("agreement"):
            agree = [a["all_agree"] for a in r["agreement"].values() if a["all_agree"] is not None]
            if agree:
                print(f"    judges agree on {sum(agree) / len(agree):.0%} of pairs (mean over dimensions)", file=out)
    d = summary.get("diversity")
    if d:
        bins = d["bins"]
        print(f"  diversity ({', '.join(d['methods'])}): mean similarity {_fmt(bins['mean'])}; "
              + ", ".join(f"{b} {_fmt(bins[b], True)}" for b in ("<0.3", "0.3-0.5", "0.5-0.7", ">0.7")), file=out)
    c = summary.get("coverage")
    if c:
        print(f"  coverage ({c['definition']}): {_fmt(c['coverage'], True)} "
              f"(released {_fmt(c['coverage_released'], True)}, eq1 {_fmt(c['coverage_eq1'], True)}); "
              f"chunk rate per answer {_fmt(c['chunk_rate'], True)}", file=out)
    n = summary.get("numeric")
    if n:
        print(f"  numeric: {_fmt(n['answers_with_numbers'], True)} of answers have numbers; "
              f"{_fmt(n['supported_ratio'], True)} of their {n['numbers']} numbers occur in the paper", file=out)
    stale = {m: v["stale"] for m, v in summary["metrics"].items() if v["stale"]}
    if stale:
        print(f"  left out (QA changed since): {stale}", file=out)
    plots = [p for k, p in summary.get("plots", {}).items() if k != "errors"]
    if plots:
        print(f"  plots: {work / 'plots'}", file=out)


def cmd_evaluate(args, endpoints_factory) -> int:
    from sciqag_dataset.cli import EXIT_FAILED_RECORDS, EXIT_OK, prepare_work

    from .stage import run_evaluate

    cfg, ev, _, members = resolve(args)
    if ev.metrics is None and not members[0].url:
        print("No judge endpoint configured: running diversity, coverage and numeric; add --judge-endpoint "
              "(or --metrics racar for the embedded model) for RACAR.", file=sys.stderr)
    ev.resolve_metrics(bool(members[0].url))
    ev.validate()
    prepare_work(cfg, ["evaluate"] if ev.needs_judge() else [])
    work = Path(cfg.work_dir)
    with endpoints_factory(cfg) as endpoints:
        judges = [endpoints.client(e) for e in members] if ev.needs_judge() else None
        summaries = run_evaluate(work, ev, judges)
    print_evaluation(work, summaries)
    failed = sum(s.failed for s in summaries.values())
    if failed:
        print(f"  {failed} paper evaluation(s) failed; rerun the same command to retry them.", file=sys.stderr)
        return EXIT_FAILED_RECORDS
    return EXIT_OK


def cmd_filter(args) -> int:
    from sciqag_dataset.cli import EXIT_OK
    from sciqag_dataset.folders import WORK_LAYOUT, claim

    from .stage import FILTERED, filter_pairs

    cfg, _, flt, _ = resolve(args)
    claim(cfg.work_dir, "work", option="work_dir", adopt=WORK_LAYOUT)
    result = filter_pairs(cfg.work_dir, **flt.rules())
    print(f"filter: {result['pairs']} pairs -> {result['kept']} kept, {result['dropped']} dropped, "
          f"{result['missing']} missing a required score -> {Path(cfg.work_dir) / FILTERED}")
    for label, by in (("failed", result["failed_by_rule"]), ("missing", result["missing_by_rule"])):
        if by:
            print(f"  {label}: " + ", ".join(f"{k} {n}" for k, n in by.items()))
    return EXIT_OK


# ---------------------------------------------------------------- parsers

def _add_judge(p) -> None:
    g = p.add_argument_group("judge (any OpenAI-compatible server; none = embedded local model)")
    g.add_argument("--judge-endpoint", action="append", dest="judge.url", metavar="URL",
                   help="a judge's base URL; repeat for a committee of judges")
    g.add_argument("--judge-model", action="append", dest="judge.model", metavar="MODEL",
                   help="model name per --judge-endpoint, in order (one name applies to all)")
    g.add_argument("--judge-backend", dest="judge.backend", choices=["openai", "hf"], metavar="BACKEND")
    g.add_argument("--judge-api-key-env", dest="judge.api_key_env", metavar="VAR",
                   help="environment variable holding the judge's API key")
    g.add_argument("--judge-concurrency", type=int, dest="judge.concurrency", metavar="N",
                   help="requests in flight per judge endpoint (default 8)")
    g.add_argument("--judge-max-tokens", type=int, dest="judge.max_tokens", metavar="N",
                   help="completion budget per judge request (default 2048)")
    g.add_argument("--judge-temperature", type=float, dest="judge.temperature", metavar="T", help="default 0")


def register(sub, endpoints_factory) -> None:
    """Add `evaluate` and `filter` to the `sciqag` subparsers; ``endpoints_factory(cfg)`` is ``cli.Endpoints``."""
    p = sub.add_parser("evaluate", help="RACAR judge, question diversity, coverage with evidence, numeric "
                                        "validation -> WORK/evaluated.jsonl (one row per QA pair), summary, plots")
    p.add_argument("work", help="work directory")
    p.add_argument("--config", help="YAML config (default: WORK/config.yaml if present)")
    g = p.add_argument_group("metrics")
    g.add_argument("--metrics", type=_csv, dest="evaluate.metrics", metavar="LIST",
                   help=f"comma-separated subset of {','.join(METRICS)} (default all; coverage and numeric "
                        "need no LLM)")
    g.add_argument("--source", choices=["seed", "generated"], dest="evaluate.source", metavar="QA",
                   help="QA file to evaluate: seed | generated (default generated if present)")
    g.add_argument("--combine", choices=["mean", "min", "majority"], dest="evaluate.combine", metavar="MODE",
                   help="how a judge committee's scores combine: mean | min | majority (default mean)")
    g.add_argument("--max-attempts", type=int, dest="evaluate.max_attempts", metavar="N",
                   help="tries per unusable judge reply before the score is recorded missing (default 3)")
    g.add_argument("--context-tokens", type=int, dest="evaluate.context_tokens", metavar="N",
                   help="the judge's context window; longer papers are truncated to fit (default 8192)")
    g.add_argument("--structured", action=argparse.BooleanOptionalAction, dest="evaluate.structured",
                   default=None, help="ask judges for JSON-schema output (default on; falls back if rejected)")
    g.add_argument("--diversity", choices=["embedding", "llm"], dest="evaluate.diversity", metavar="METHOD",
                   help="embedding (cheap, default) | llm (the paper's prompt, one judge call per question pair)")
    g.add_argument("--coverage-definition", choices=["released", "eq1"], dest="evaluate.coverage_definition",
                   metavar="DEF", help="released (the authors' notebook, default) | eq1 (Eq. 1 literally)")
    g.add_argument("--embedding-model", dest="evaluate.embedding_model", metavar="MODEL",
                   help="sentence-transformers model or folder (default all-MiniLM-L6-v2)")
    g.add_argument("--top-context", type=int, dest="evaluate.top_context", metavar="N",
                   help="evidence sentences kept per answer (default 3)")
    g.add_argument("--allow-rounding", action=argparse.BooleanOptionalAction, dest="evaluate.allow_rounding",
                   default=None, help="accept an answer's 3.1 for the paper's 3.14 (default off)")
    g.add_argument("--plots", action=argparse.BooleanOptionalAction, dest="evaluate.plots", default=None,
                   help="write PNG plots under WORK/plots (default on)")
    _add_judge(p)
    p.set_defaults(func=lambda args: cmd_evaluate(args, endpoints_factory))

    p = sub.add_parser("filter", help="keep the evaluated QA pairs that pass thresholds -> WORK/filtered.jsonl")
    p.add_argument("work", help="work directory")
    p.add_argument("--config", help="YAML config (default: WORK/config.yaml if present)")
    g = p.add_argument_group("rules (all must pass; a pair missing a needed score is not kept)")
    g.add_argument("--min-racar", type=float, dest="filter.min_racar", metavar="X",
                   help="minimum mean RACAR score (1-3; all five dimensions must be scored)")
    for d in DIMENSIONS:
        g.add_argument(f"--min-{d}", type=float, dest=f"filter.min_{d}", metavar="X", help=f"minimum {d} score")
    g.add_argument("--drop-source-references", action=argparse.BooleanOptionalAction,
                   dest="filter.drop_source_references", default=None,
                   help='drop questions that cite the source ("Figure 3", "this paper" ...)')
    g.add_argument("--min-numeric-ratio", type=float, dest="filter.min_numeric_ratio", metavar="X",
                   help="minimum share of an answer's numbers found in the paper (answers without numbers pass)")
    g.add_argument("--min-chunk-rate", type=float, dest="filter.min_chunk_rate", metavar="X",
                   help="minimum share of the paper's 10 chunks an answer's evidence covers")
    g.add_argument("--authors-test-set", action=argparse.BooleanOptionalAction, dest="filter.authors_test_set",
                   default=None, help="the authors' rule: 3 on every RACAR dimension but agnosticism, and no "
                                      "source reference in the question")
    p.set_defaults(func=cmd_filter)
