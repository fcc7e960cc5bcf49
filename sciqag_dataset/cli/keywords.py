"""`sciqag keywords WORK`: TopicRank keyphrases per paper -> WORK/keywords.jsonl."""

from __future__ import annotations

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import add_section, add_work, command, resolve_config
from sciqag_dataset.cli.work import open_work
from sciqag_dataset.config.config_file import KeywordsConfig
from sciqag_dataset.orchestration import pipeline


def cmd_keywords(args) -> int:
    cfg = resolve_config(args)
    with open_work(cfg, args, save=False, papers=True):
        return report.summary_line(pipeline.keywords(cfg))


def add_parser(subparsers) -> None:
    p = command(subparsers, "keywords", "TopicRank keyphrases per paper -> WORK/keywords.jsonl")
    add_work(p)
    add_section(p, "keywords", KeywordsConfig)
    p.set_defaults(func=cmd_keywords)
