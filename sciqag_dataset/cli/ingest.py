"""`sciqag ingest WORK PAPERS...`: read papers, one reader per format, into WORK/papers.jsonl."""

from __future__ import annotations

import argparse
from pathlib import Path

from sciqag_dataset.builders.ingest import format_names, format_table
from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import Deprecated, add_section, add_work, command, resolve_config, sets
from sciqag_dataset.cli.work import check_inputs, open_work
from sciqag_dataset.config.config_file import IngestConfig
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.orchestration import pipeline


def cmd_ingest(args) -> int:
    inputs = args.inputs or []
    if args.old_work is not None:  # the old spelling `ingest PAPERS... -o WORK`: every positional is a paper
        inputs = [args.work, *inputs] if args.work is not None else inputs
        args.work = args.old_work
    args.inputs = inputs or None  # none given: the config's `inputs`
    if args.work is not None and Path(args.work).is_file():
        raise UserError(f"WORK {args.work} is a file: write `sciqag ingest WORK PAPERS...`, the work directory first")
    cfg = resolve_config(args)
    if not cfg.inputs:
        raise UserError("name the PAPERS to ingest after WORK: files, folders or URLs (or `inputs:` in --config)")
    check_inputs(cfg)
    with open_work(cfg, args, ["ingest"]) as work:
        return report.ingested(work, pipeline.ingest(cfg))


def papers_after_options(args, extra: list[str]) -> bool:
    """argparse fills WORK and PAPERS at the first positionals: papers given after an option come back as
    extra arguments, and are papers too (an extra option is still an error)."""
    if any(a.startswith("-") for a in extra):
        return False
    args.inputs = [*(args.inputs or []), *extra]
    return True


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "ingest",
        f"read papers ({', '.join(format_names())}) into WORK/papers.jsonl",
        epilog=format_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_work(p)
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="PAPERS",
        help="files, folders or fsspec URLs (s3://, hf://, https://...) (default: the config's inputs)",
    )
    sets(p, "inputs", "inputs")
    p.add_argument(
        "-o",
        "--work",
        dest="old_work",
        action=Deprecated,  # `-o` is an output folder elsewhere
        note="{flag} WORK is deprecated: write `sciqag ingest WORK PAPERS...`, the work directory "
        "first, as every stage takes it",
    )
    add_section(p, "ingest", IngestConfig)
    p.set_defaults(func=cmd_ingest, extra_args=papers_after_options)
