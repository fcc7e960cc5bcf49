"""`sciqag filter WORK`: keep the evaluated QA pairs that pass every rule -> WORK/filtered.jsonl.

Its rule flags come from the metrics' registry (``core.metrics.rules()``): every registered rule, a plugin
metric's too, is a field of the `filter:` section and takes that field's flag, help and range
(``--min-racar``; `--max-question-words 25` with ``--plugins sciqag_dataset.examples.custom_metric``).
The plugins are imported before the flags are made (``cli.parse``), so their rules are there.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import add_field, add_section, add_work, command, resolve_config
from sciqag_dataset.cli.work import open_work
from sciqag_dataset.config.config_file import FilterConfig
from sciqag_dataset.core import metrics
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.wiring import FILTER_SUMMARY
from sciqag_dataset.evaluation.calibrate import calibrate
from sciqag_dataset.orchestration import pipeline

RULES_TITLE = "rules (all must pass; a pair missing a needed score is not kept)"


def cmd_filter(args) -> int:
    cfg = resolve_config(args)
    with open_work(cfg, args, save=False, papers=True):
        return filter_work(cfg, args)


def filter_work(cfg, args) -> int:
    if args.clear:
        if [o for o in cfg.set_options if o.startswith("filter.")]:
            raise UserError("--clear undoes the filter: give it no rule")
        gone = pipeline.clear_filter(cfg)
        print(f"Filter cleared ({', '.join(gone) or 'there was none'}): the next publish takes every evaluated pair.")
        return 0
    calibration = None
    if args.calibrate:
        if cfg.filter.min_racar is not None:
            raise UserError("--calibrate chooses --min-racar from the reviews: give one or the other")
        calibration = calibrate(cfg.work_dir)
        report.calibration(calibration)
        cfg.filter.min_racar = calibration["threshold"]
    result = pipeline.filter_evaluated(cfg)
    if calibration:  # the card says where the threshold came from
        result["calibration"] = calibration
        write_json(Path(cfg.work_dir) / FILTER_SUMMARY, result)
    return report.filtered(Path(cfg.work_dir), result)


def add_rules(parser, group) -> None:
    """One flag per registered filter rule, in the registry's order."""
    fields = {f.name: f for f in dataclasses.fields(FilterConfig)}
    hints = typing.get_type_hints(FilterConfig)
    for name in metrics.rules():
        add_field(parser, group, "filter", fields[name], hints[name])


def add_parser(subparsers) -> None:
    p = command(subparsers, "filter", "keep the evaluated QA pairs that pass thresholds -> WORK/filtered.jsonl")
    add_work(p)
    rules = p.add_argument_group(RULES_TITLE)
    add_rules(p, rules)
    add_section(p, "filter", FilterConfig, group=rules, skip=tuple(metrics.rules()))  # its other options
    p.add_argument("--clear", action="store_true", help="undo the filter: the next publish takes every evaluated pair")
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="choose --min-racar as the threshold that best reproduces the reviewers' keep/drop decisions "
        "(`sciqag review`); prints precision and recall per threshold",
    )
    p.set_defaults(func=cmd_filter)
