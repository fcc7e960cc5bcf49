"""`sciqag generate WORK`: the trained generator's QA pairs for every paper -> WORK/generated.jsonl."""

from __future__ import annotations

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import add_embedded, add_max_cost, add_section, add_work, command, resolve_config
from sciqag_dataset.cli.work import open_work
from sciqag_dataset.config.config_file import GenerateConfig
from sciqag_dataset.llm.endpoint import EndpointConfig
from sciqag_dataset.orchestration import pipeline


def cmd_generate(args) -> int:
    cfg = resolve_config(args)
    if args.merge:
        with open_work(cfg, args, save=False):
            return report.summary_line(pipeline.merge_generated(cfg))
    shard = cfg.generate.shard is not None
    with open_work(cfg, args, ["generate"], papers=True, shared=shard), pipeline.Endpoints(cfg) as endpoints:
        return report.summary_line(pipeline.generate(cfg, endpoints))


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "generate",
        "generator QA pairs for every paper -> WORK/generated.jsonl (TGI, vLLM, SGLang, "
        "OpenAI, transformers serve; resumable)",
    )
    add_work(p)
    add_section(p, "generator", EndpointConfig, title="generator endpoint (any OpenAI-compatible server)")
    add_section(p, "generate", GenerateConfig)
    p.add_argument("--merge", action="store_true", help="fold generated.shard-*.jsonl into generated.jsonl")
    add_embedded(p)
    add_max_cost(p)
    p.set_defaults(func=cmd_generate)
