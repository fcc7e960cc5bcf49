"""`sciqag seed WORK`: the teacher's QA pairs per paper -> WORK/seed.jsonl."""

from __future__ import annotations

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import add_embedded, add_max_cost, add_section, add_work, command, resolve_config
from sciqag_dataset.cli.work import open_work
from sciqag_dataset.config.config_file import SeedConfig
from sciqag_dataset.llm.endpoint import EndpointConfig
from sciqag_dataset.orchestration import pipeline


def cmd_seed(args) -> int:
    cfg = resolve_config(args)
    with open_work(cfg, args, ["seed"], papers=True), pipeline.Endpoints(cfg) as endpoints:
        return report.summary_line(pipeline.seed(cfg, endpoints))


def add_parser(subparsers) -> None:
    p = command(subparsers, "seed", "teacher QA pairs per paper -> WORK/seed.jsonl")
    add_work(p)
    add_section(p, "teacher", EndpointConfig, title="teacher endpoint (any OpenAI-compatible server)")
    add_section(p, "seed", SeedConfig)
    add_embedded(p)
    add_max_cost(p)
    p.set_defaults(func=cmd_seed)
