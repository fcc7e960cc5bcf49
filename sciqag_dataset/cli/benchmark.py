"""`sciqag benchmark DATA`: the published test split as a closed-book QA benchmark of models."""

from __future__ import annotations

import shlex
import sys
from dataclasses import fields, replace
from pathlib import Path

from sciqag_dataset.cli.flags import add_embedded, add_judge, add_section, command, option, resolve_config, sets
from sciqag_dataset.config.config_file import BenchmarkConfig
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import claim
from sciqag_dataset.core.redact import redact
from sciqag_dataset.evaluation.benchmark import items, update_card
from sciqag_dataset.evaluation.benchmark.card import check_card
from sciqag_dataset.llm.endpoint import ModelEndpointConfig
from sciqag_dataset.orchestration import benchmark_run, pipeline

EXIT_OK, EXIT_FAILED_RECORDS = 0, 1


def _model_template(args) -> dict:
    """The model options given as flags (all but --endpoint and --model): they apply to every model."""
    return {
        f.name: v
        for f in fields(ModelEndpointConfig)
        if f.name not in ("url", "model") and (v := option(args, f"model.{f.name}")) is not None
    }


def cmd_benchmark(args) -> int:
    cfg = resolve_config(args)
    b = cfg.benchmark
    if not b.data:
        raise UserError("name the DATA to benchmark on: a published folder or Hub id, or a JSON/JSONL/parquet file")
    flags = _model_template(args)
    urls, names = option(args, "model.url"), option(args, "model.model")
    if urls or names:
        b.models = benchmark_run.benchmark_models(replace(ModelEndpointConfig(), **flags), urls, names)
    else:  # the config's models, or the embedded one
        b.models = [replace(m, **flags) for m in b.models or [ModelEndpointConfig()]]
    cfg.validate()
    for i, m in enumerate(b.models):
        m.api_key(f"benchmark.models[{i}].api_key_env")
    judging = b.judge if b.judge is not None else bool(cfg.judge.url)
    if judging:
        for i, judge in enumerate(pipeline.judges(cfg)):
            judge.api_key("judge.api_key_env" if i == 0 else f"evaluate.judges[{i - 1}].api_key_env")
    benchmark_run.general_knowledge_endpoint(cfg)  # its options and key refused now, not after the models ran
    if b.update_card:
        check_card(b.update_card)  # refused now, not after the benchmark
    results = claim(b.output_dir, "benchmark", option="benchmark.output_dir")
    cfg.work_dir = str(results)  # the reply cache and the embedded server's log live with the results
    cfg.save(results / "config.yaml")
    with pipeline.Endpoints(cfg) as endpoints:
        run = benchmark_run.benchmark(cfg, endpoints)
    if b.update_card:
        command = "sciqag " + " ".join(shlex.quote(redact(a)) for a in args.argv)
        print(f"Benchmark section updated: {update_card(b.update_card, run.board, command)}")
    return print_board(results, run)


def print_board(results: Path, run) -> int:
    failed = 0
    for model, summaries in run.summaries.items():
        print(f"{model}: " + "; ".join(s.line() for s in summaries))
        failed += sum(s.failed for s in summaries)
    print()
    print((results / "leaderboard.md").read_text(encoding="utf-8"))
    analysis = run.board.get("item_analysis")
    if analysis:
        print(items.markdown(analysis))
    more = ", items.jsonl, item_analysis.json, item_analysis.png" if analysis else ""
    print(f"Results: {results.resolve()} (leaderboard.json, leaderboard.png{more}, models/*/predictions.jsonl)")
    if failed:
        print(
            f"  {plural(failed, 'question or batch', 'questions or batches')} failed; rerun the same command to "
            "retry them (finished ones are not asked again).",
            file=sys.stderr,
        )
        return EXIT_FAILED_RECORDS
    return EXIT_OK


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "benchmark",
        "closed-book QA: ask models the published test split's questions, score the "
        "answers -> RESULTS (predictions per model, leaderboard)",
    )
    p.add_argument(
        "data",
        nargs="?",
        metavar="DATA",
        help="a published folder or Hub id, or a JSON/JSONL/parquet file of question/answer pairs",
    )
    sets(p, "data", "benchmark.data")
    p.add_argument("--config", help="YAML config (its benchmark:, judge: and embedded: sections)")
    add_section(p, "benchmark", BenchmarkConfig)
    add_section(
        p,
        "model",
        ModelEndpointConfig,
        repeat=("model",),
        title="models under benchmark (each --model pairs with an --endpoint in order; one --model for "
        "several endpoints: its replicas; none: the embedded model)",
    )
    add_section(
        p,
        "benchmark.general_knowledge_endpoint",
        ModelEndpointConfig,
        prefix="general-knowledge-",
        title="general-knowledge check's endpoint (--general-knowledge-endpoint implies --general-knowledge; "
        "none: the embedded model)",
    )
    add_judge(
        p,
        title="judge endpoint (each --judge-endpoint is a judge of its own; with none, --judge uses the "
        "embedded model)",
    )
    add_embedded(p, "benchmark")
    p.set_defaults(func=cmd_benchmark)
