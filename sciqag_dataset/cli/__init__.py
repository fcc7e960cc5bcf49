"""`sciqag`: one subcommand per stage over a work directory, and `sciqag run` for all of them.

The CLI parses, calls the pipeline (``orchestration.pipeline``) and reports. Options come from, in rising
order: defaults, the YAML config (``--config``, or ``WORK/config.yaml`` written by an earlier run), then
flags, and every option, key variable and output folder is checked before any work starts.

Exit status: 0 all done; 1 some papers failed (a rerun retries them) or a bug (shown with its
traceback); 2 a user error, on one line; 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from sciqag_dataset import __version__
from sciqag_dataset.builders.ingest import format_names, format_table
from sciqag_dataset.cli import benchmark as benchmark_cli
from sciqag_dataset.cli import export as export_cli
from sciqag_dataset.cli import plan as plan_cli
from sciqag_dataset.cli import report
from sciqag_dataset.cli import review as review_cli
from sciqag_dataset.cli import serve as serve_cli
from sciqag_dataset.cli.flags import (
    Deprecated,
    Parser,
    _csv,
    add_embedded,
    add_judge,
    add_max_cost,
    add_plugins,
    add_section,
    add_wait,
    add_work,
    command,
    resolve_config,
)
from sciqag_dataset.cli.train import main as train_main
from sciqag_dataset.cli.work import check_inputs, check_publish_targets, open_work
from sciqag_dataset.config.config_file import (
    STAGES,
    EvaluateConfig,
    ExecutorConfig,
    FilterConfig,
    GenerateConfig,
    IngestConfig,
    KeywordsConfig,
    PublishConfig,
    SeedConfig,
)
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.console import run_command, setup_logging
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.metrics import default_metrics
from sciqag_dataset.core.wiring import FILTER_SUMMARY
from sciqag_dataset.evaluation.calibrate import calibrate
from sciqag_dataset.llm.budget import CostCapReached
from sciqag_dataset.llm.endpoint import EndpointConfig
from sciqag_dataset.orchestration import pipeline, scale
from sciqag_dataset.trainers.config import TrainConfig

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- commands


def cmd_ingest(args) -> int:
    inputs = getattr(args, "root.inputs") or []
    if args.old_work is not None:  # the old spelling `ingest PAPERS... -o WORK`: every positional is a paper
        inputs = [args.work, *inputs] if args.work is not None else inputs
        args.work = args.old_work
    setattr(args, "root.inputs", inputs or None)  # none given: the config's `inputs`
    if args.work is not None and Path(args.work).is_file():
        raise UserError(f"WORK {args.work} is a file: write `sciqag ingest WORK PAPERS...`, the work directory first")
    cfg = resolve_config(args)
    if not cfg.inputs:
        raise UserError("name the PAPERS to ingest after WORK: files, folders or URLs (or `inputs:` in --config)")
    check_inputs(cfg)
    with open_work(cfg, args, ["ingest"]) as work:
        return report.ingested(work, pipeline.ingest(cfg))


def cmd_keywords(args) -> int:
    cfg = resolve_config(args)
    with open_work(cfg, args, save=False, papers=True):
        return report.summary_line(pipeline.keywords(cfg))


def cmd_seed(args) -> int:
    cfg = resolve_config(args)
    with open_work(cfg, args, ["seed"], papers=True), pipeline.Endpoints(cfg) as endpoints:
        return report.summary_line(pipeline.seed(cfg, endpoints))


def cmd_generate(args) -> int:
    cfg = resolve_config(args)
    if args.merge:
        with open_work(cfg, args, save=False):
            return report.summary_line(pipeline.merge_generated(cfg))
    shard = cfg.generate.shard is not None
    with open_work(cfg, args, ["generate"], papers=True, shared=shard), pipeline.Endpoints(cfg) as endpoints:
        return report.summary_line(pipeline.generate(cfg, endpoints))


def cmd_evaluate(args) -> int:
    cfg = resolve_config(args)
    ev = cfg.evaluate
    no_judge = ev.metrics is None and not cfg.judge.url
    ev.resolve_metrics(bool(cfg.judge.url))
    ev.validate()
    with open_work(cfg, args, ["evaluate"], papers=True) as work:
        if no_judge:
            print(
                f"No judge endpoint configured: running {', '.join(default_metrics(False))}; add --judge-endpoint "
                "(or --metrics racar for the embedded model) for RACAR.",
                file=sys.stderr,
            )
        with pipeline.Endpoints(cfg) as endpoints:
            summaries = pipeline.evaluate(cfg, endpoints)
        return report.evaluation(work, summaries)


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


def cmd_publish(args) -> int:
    cfg = resolve_config(args)
    check_publish_targets(cfg)
    with open_work(cfg, args, papers=True):  # the config saved: an export of WORK splits as this publish did
        return report.published(*pipeline.publish(cfg))


def cmd_run(args) -> int:
    if args.config and args.config_flag and args.config != args.config_flag:
        raise UserError(f"two configs given: {args.config} and --config {args.config_flag}")
    args.config = args.config or args.config_flag
    cfg = resolve_config(args)
    if cfg.train:  # one file for every stage: its `train:` section is checked now, as `sciqag train` reads it
        TrainConfig.from_dict(cfg.train, where="train")
    if "ingest" in cfg.stages:
        check_inputs(cfg)
    if plan_cli.wanted(args):  # what the run would send, and nothing written into the work dir
        return plan_cli.show(cfg, args)
    if "publish" in cfg.stages:
        check_publish_targets(cfg)  # refused now, not after an hour of work
    with open_work(cfg, args, cfg.stages):
        return run_work(cfg, args)


def run_work(cfg, args) -> int:
    print(f"Work directory: {Path(cfg.work_dir).resolve()}")

    def show(stage: str, result) -> int:
        if stage == "evaluate":
            return report.evaluation(Path(cfg.work_dir), result)
        if stage == "publish":
            return report.published(*result)
        if stage == "ingest":
            return report.ingested(Path(cfg.work_dir), result)
        return report.summary_line(result)

    if cfg.executor.kind == "plain" and getattr(args, "executor.workers", None):
        cfg.keywords.workers = cfg.executor.workers  # without an executor, --workers is keywords' as it was
    done = pipeline.RunReport()
    try:
        if cfg.executor.kind == "plain":
            status = pipeline.run_all(cfg, show, done)
        else:
            status = scale.run_scaled(cfg, show, done)
    except CostCapReached:
        report.run_summary(Path(cfg.work_dir), done.seconds, done.embedded, None)
        raise  # its message says what was kept and how to go on
    report.run_summary(
        Path(cfg.work_dir), done.seconds, done.embedded, cfg.output_dir if "publish" in cfg.stages else None
    )
    return status


# ---------------------------------------------------------------- the parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="sciqag", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sciqag-hf {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = command(
        sub,
        "ingest",
        f"read papers ({', '.join(format_names())}) into WORK/papers.jsonl",
        epilog=format_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_work(p)
    p.add_argument(
        "root.inputs",
        nargs="*",
        metavar="PAPERS",
        help="files, folders or fsspec URLs (s3://, hf://, https://...) (default: the config's inputs)",
    )
    p.add_argument(
        "-o",
        "--work",
        dest="old_work",
        action=Deprecated,  # `-o` is an output folder elsewhere
        note="{flag} WORK is deprecated: write `sciqag ingest WORK PAPERS...`, the work directory "
        "first, as every stage takes it",
    )
    add_section(p, "ingest", IngestConfig)
    p.set_defaults(func=cmd_ingest)

    p = command(sub, "keywords", "TopicRank keyphrases per paper -> WORK/keywords.jsonl")
    add_work(p)
    add_section(p, "keywords", KeywordsConfig)
    p.set_defaults(func=cmd_keywords)

    p = command(sub, "seed", "teacher QA pairs per paper -> WORK/seed.jsonl")
    add_work(p)
    add_section(p, "teacher", EndpointConfig, title="teacher endpoint (any OpenAI-compatible server)")
    add_section(p, "seed", SeedConfig)
    add_embedded(p)
    add_max_cost(p)
    p.set_defaults(func=cmd_seed)

    p = command(
        sub,
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

    p = command(
        sub,
        "evaluate",
        "RACAR judge, question diversity, coverage with evidence, numeric validation -> "
        "WORK/evaluated.jsonl (one row per QA pair), summary, plots",
    )
    add_work(p)
    add_section(p, "evaluate", EvaluateConfig)
    add_judge(p)
    add_embedded(p, "evaluate")
    add_max_cost(p)
    p.set_defaults(func=cmd_evaluate)

    p = command(sub, "filter", "keep the evaluated QA pairs that pass thresholds -> WORK/filtered.jsonl")
    add_work(p)
    add_section(p, "filter", FilterConfig, title="rules (all must pass; a pair missing a needed score is not kept)")
    p.add_argument("--clear", action="store_true", help="undo the filter: the next publish takes every evaluated pair")
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="choose --min-racar as the threshold that best reproduces the reviewers' keep/drop decisions "
        "(`sciqag review`); prints precision and recall per threshold",
    )
    p.set_defaults(func=cmd_filter)

    p = command(sub, "publish", "parquet configs + dataset card -> a folder `load_dataset` reads")
    add_work(p)
    add_section(p, "publish", PublishConfig)
    p.set_defaults(func=cmd_publish)

    p = command(
        sub, "run", "every stage from one config: ingest -> keywords -> seed -> generate -> evaluate -> publish"
    )
    p.add_argument(
        "config", nargs="?", help="YAML config (default: built-in defaults, sample papers, embedded local model)"
    )
    p.add_argument("--config", dest="config_flag", metavar="CONFIG", help="the same, as the other commands take it")
    p.add_argument("--work", dest="root.work_dir", metavar="WORK", help="work directory (default sciqag_work)")
    p.add_argument(
        "--inputs", nargs="+", dest="root.inputs", metavar="INPUT", help="papers to ingest instead of the samples"
    )
    p.add_argument(
        "--stages", type=_csv, dest="root.stages", metavar="LIST", help="comma-separated subset of " + ",".join(STAGES)
    )
    add_plugins(p)
    add_wait(p)
    add_section(p, "keywords", KeywordsConfig, skip=("workers",))  # --workers: the executor's (YAML: keywords.workers)
    add_section(p, "teacher", EndpointConfig, title="teacher endpoint (any OpenAI-compatible server)")
    add_section(p, "seed", SeedConfig)
    add_section(p, "generator", EndpointConfig, prefix="generator-", title="generator endpoint")
    add_judge(p)
    add_section(
        p, "executor", ExecutorConfig, title="executor (datatrove: each per-paper stage as jobs of --tasks ranks)"
    )
    add_section(p, "publish", PublishConfig)
    add_embedded(p)
    add_max_cost(p)
    plan_cli.add_flags(p)
    p.set_defaults(func=cmd_run)

    benchmark_cli.add_parsers(sub)
    export_cli.add_parsers(sub)
    review_cli.add_parsers(sub)
    serve_cli.add_parsers(sub)

    command(
        sub,
        "train",
        "fine-tune the generator on the seed config (TRL SFT + PEFT / DeepSpeed) -> model folder; "
        "`sciqag train --help` for its options",
        add_help=False,
    )
    return parser


def _sigterm(signum, frame):
    raise KeyboardInterrupt  # run the same cleanup as Ctrl-C: stop the local server, close files


def parse(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "ingest" and not any(a.startswith("-") for a in extra):
        # argparse fills WORK and PAPERS at the first positionals: papers given after an option land here
        setattr(args, "root.inputs", [*(getattr(args, "root.inputs") or []), *extra])
    elif extra:
        parser.parse_args(argv)  # the usual error, with its nearest-flag suggestion
    return args


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    argv = list(sys.argv[1:] if argv is None else argv)
    at = next((i for i, a in enumerate(argv[:2]) if a == "train"), None)
    if at is not None and all(a in ("-v", "-vv", "--verbose") for a in argv[:at]):
        return train_main(argv[:at] + argv[at + 1 :])  # TRL's own parser: its flags, its --help
    args = parse(argv)
    args.argv = argv
    setup_logging(args.verbose)
    for note in getattr(args, "deprecated", []):
        log.warning(note)
    return run_command(args.func, args, f"sciqag {args.command}")


if __name__ == "__main__":
    sys.exit(main())
