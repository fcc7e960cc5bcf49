"""`sciqag evaluate WORK`: the registered metrics per QA pair -> WORK/evaluated.jsonl, summary, plots."""

from __future__ import annotations

import argparse
import sys

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import (
    add_embedded,
    add_judge,
    add_max_cost,
    add_section,
    add_work,
    command,
    resolve_config,
)
from sciqag_dataset.cli.work import open_work
from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core import metrics
from sciqag_dataset.orchestration import pipeline


def cmd_evaluate(args) -> int:
    cfg = resolve_config(args)
    ev = cfg.evaluate
    no_judge = ev.metrics is None and not cfg.judge.url
    ev.resolve_metrics(bool(cfg.judge.url))
    ev.validate()
    with open_work(cfg, args, ["evaluate"], papers=True) as work:
        if no_judge:
            print(
                f"No judge endpoint configured: running {', '.join(metrics.default_metrics(False))}; add "
                "--judge-endpoint (or --metrics racar for the embedded model) for RACAR.",
                file=sys.stderr,
            )
        with pipeline.Endpoints(cfg) as endpoints:
            summaries = pipeline.evaluate(cfg, endpoints)
        return report.evaluation(work, summaries)


def metric_table() -> str:
    """The registered metrics (``core.metrics``), cheapest first, one line each: what --metrics chooses from."""
    ranked = sorted(metrics.registered(), key=lambda m: m.cost)
    width = max((len(m.name) for m in ranked), default=0)
    lines = [f"{m.name:<{width}}  {m.help}" for m in ranked]
    return "metrics (run cheapest first; --metrics picks some):\n" + "\n".join(lines)


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "evaluate",
        f"the metrics ({', '.join(metrics.NAMES)}) per QA pair -> WORK/evaluated.jsonl (one row per QA pair), "
        "summary, plots",
        epilog=metric_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_work(p)
    add_section(p, "evaluate", EvaluateConfig)
    add_judge(p)
    add_embedded(p, "evaluate")
    add_max_cost(p)
    p.set_defaults(func=cmd_evaluate)
