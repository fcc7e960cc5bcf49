"""`sciqag run [CONFIG]`: every stage from one config, ingest to publish, here or as datatrove jobs."""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.cli import report
from sciqag_dataset.cli.flags import (
    _csv,
    add_embedded,
    add_judge,
    add_max_cost,
    add_plugins,
    add_section,
    add_wait,
    command,
    option,
    resolve_config,
    sets,
)
from sciqag_dataset.cli.work import check_inputs, check_publish_targets, open_work
from sciqag_dataset.config.config_file import STAGES, ExecutorConfig, KeywordsConfig, PublishConfig, SeedConfig
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.wiring import PLAN
from sciqag_dataset.llm.budget import CostCapReached, ledger_rows
from sciqag_dataset.llm.endpoint import EndpointConfig
from sciqag_dataset.orchestration import pipeline, plan, plan_render, scale
from sciqag_dataset.trainers.config import TrainConfig


def cmd_run(args) -> int:
    if args.config and args.config_flag and args.config != args.config_flag:
        raise UserError(f"two configs given: {args.config} and --config {args.config_flag}")
    args.config = args.config or args.config_flag
    cfg = resolve_config(args)
    if cfg.train:  # one file for every stage: its `train:` section is checked now, as `sciqag train` reads it
        TrainConfig.from_dict(cfg.train, where="train")
    if "ingest" in cfg.stages:
        check_inputs(cfg)
    if args.plan or args.plan_json:  # what the run would send, and nothing written into the work dir
        return show_plan(cfg, args.plan_json)
    if "publish" in cfg.stages:
        check_publish_targets(cfg)  # refused now, not after an hour of work
    with open_work(cfg, args, cfg.stages):
        if not args.record_plan:
            return run_work(cfg, args)
        made = record_plan(cfg)
        try:
            return run_work(cfg, args)
        finally:  # the planned run's rows end here: a later run's are not compared with this plan
            made["ledger_end"] = len(ledger_rows(cfg.work_dir))
            write_json(Path(cfg.work_dir) / PLAN, made)


def show_plan(cfg, plan_json: str | None) -> int:
    """Make the plan, print it, and write it where ``--plan-json`` says (never inside the work dir)."""
    target = Path(plan_json) if plan_json else None
    if target is not None and target.resolve().is_relative_to(Path(cfg.work_dir).resolve()):
        raise UserError(f"--plan-json {target} is inside the work dir, which --plan leaves as it is")
    made = plan.make_plan(cfg)
    print(plan_render.render(made))
    if target is not None:
        write_json(target, made)
        print(f"Plan written to {target}")
    return 0


def record_plan(cfg) -> dict:
    """Plan the run before it starts, print the plan, and keep it in the work dir (``wiring.PLAN``) with the
    ledger's length, so that the card compares the plan with what the run then sent (the ledger rows after it,
    up to ``ledger_end`` once the run has ended)."""
    made = plan.make_plan(cfg)
    print(plan_render.render(made))
    made["ledger_rows"] = len(ledger_rows(cfg.work_dir))
    write_json(Path(cfg.work_dir) / PLAN, made)
    return made


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

    if cfg.executor.kind == "plain" and option(args, "executor.workers"):
        cfg.keywords.workers = cfg.executor.workers  # without an executor, --workers sets keywords' workers
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


def add_parser(subparsers) -> None:
    p = command(subparsers, "run", "every stage from one config: " + " -> ".join(STAGES))
    p.add_argument(
        "config", nargs="?", help="YAML config (default: built-in defaults, sample papers, embedded local model)"
    )
    p.add_argument("--config", dest="config_flag", metavar="CONFIG", help="the same, as the other commands take it")
    p.add_argument("--work", dest="work_dir", metavar="WORK", help="work directory (default sciqag_work)")
    p.add_argument("--inputs", nargs="+", metavar="INPUT", help="papers to ingest instead of the samples")
    p.add_argument("--stages", type=_csv, metavar="LIST", help="comma-separated subset of " + ",".join(STAGES))
    for dest in ("work_dir", "inputs", "stages"):
        sets(p, dest, dest)
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
    p.add_argument(
        "--plan",
        action="store_true",
        help="print what the run would send (papers; requests, prompt tokens, cost and time per LLM stage) "
        "without calling a model or writing into the work dir",
    )
    p.add_argument("--plan-json", metavar="PATH", help="with --plan (implied): the plan as JSON into PATH")
    p.add_argument(
        "--record-plan",
        action="store_true",
        help=f"plan the run as --plan does, keep the plan in WORK/{PLAN}, then run: the dataset card compares the "
        "planned requests and prompt tokens of each stage with those sent",
    )
    p.set_defaults(func=cmd_run)
