"""`sciqag export-task HARNESS DATA`: the closed-book benchmark as a lighteval or lm-evaluation-harness task."""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.cli.flags import command
from sciqag_dataset.core.folders import claim
from sciqag_dataset.evaluation.benchmark import export

EXIT_OK = 0


def cmd_export_task(args) -> int:
    claim(args.output, "task", option="--output")  # never writes into a folder of someone else's
    written = export.export_task(
        args.harness,
        args.data,
        args.output,
        config=args.data_config,
        split=args.split,
        system_prompt=args.system_prompt,
        max_tokens=args.max_tokens,
    )
    for path in written:
        print(f"wrote {path}")
    print(export.how_to_run(args.harness, Path(args.output)))
    return EXIT_OK


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "export-task",
        "write the benchmark as a lighteval custom task or an lm-evaluation-harness "
        "task over the published test split",
    )
    p.epilog = "The pairs as training data (OpenAI chat, ShareGPT, Alpaca, LLaMA-Factory, ragas): `sciqag export`."
    p.add_argument("harness", choices=export.HARNESSES)
    p.add_argument("data", metavar="DATA", help="a published folder or Hub id, or a JSON/JSONL/parquet file")
    p.add_argument("-o", "--output", required=True, help="folder for the task files")
    p.add_argument(
        "--data-config",
        choices=("evaluated", "generated", "seed"),
        help="config of a published dataset (default: evaluated, else generated, else seed)",
    )
    p.add_argument("--split", default="test", help="split (default test)")
    p.add_argument("--system-prompt", help="default: the closed-book instruction `sciqag benchmark` uses")
    p.add_argument("--max-tokens", type=int, default=256, help="answer budget (default 256)")
    p.set_defaults(func=cmd_export_task)
