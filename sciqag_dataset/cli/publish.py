"""`sciqag publish WORK`: parquet configs and the dataset card -> a folder `load_dataset` reads."""

from __future__ import annotations

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import add_section, add_work, command, resolve_config
from sciqag_dataset.cli.work import check_publish_targets, open_work
from sciqag_dataset.config.config_file import PublishConfig
from sciqag_dataset.orchestration import pipeline


def cmd_publish(args) -> int:
    cfg = resolve_config(args)
    check_publish_targets(cfg)
    with open_work(cfg, args, papers=True):  # the config saved: an export of WORK splits as this publish did
        return report.published(*pipeline.publish(cfg))


def add_parser(subparsers) -> None:
    p = command(subparsers, "publish", "parquet configs + dataset card -> a folder `load_dataset` reads")
    add_work(p)
    add_section(p, "publish", PublishConfig)
    p.set_defaults(func=cmd_publish)
