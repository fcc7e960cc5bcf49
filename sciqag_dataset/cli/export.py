"""`sciqag export`: the pairs of a published folder or a work directory in the formats trainers read."""

from __future__ import annotations

from sciqag_dataset.cli.flags import command
from sciqag_dataset.core.console import plural
from sciqag_dataset.hub.exports import CONFIG_ORDER, FORMATS, LLAMA_FACTORY_INFO, export

EXIT_OK = 0


def cmd_export(args) -> int:
    config, written = export(
        args.source, args.output, args.format, config=args.data_config, split=args.split, system=args.system
    )
    for path, n in written.items():
        print(
            f"wrote {path} ({plural(n, 'entry', 'entries') if path.name == LLAMA_FACTORY_INFO else plural(n, 'pair')})"
        )
    print(f"from the `{config}` config of {args.source}")
    if args.format == "llama-factory":
        first = next(iter(written)).stem
        print(f"LLaMA-Factory: dataset_dir: {args.output}, dataset: sciqag_{first}")
    return EXIT_OK


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "export",
        "write the QA pairs for training or evaluation tools (OpenAI chat, ShareGPT, Alpaca, LLaMA-Factory, "
        "ragas), one JSONL file per split, with pair and paper ids",
    )
    p.add_argument("source", metavar="SOURCE", help="a work directory, or a published folder or Hub id")
    p.add_argument("--format", required=True, metavar="FORMAT", help=f"one of {', '.join(FORMATS)}")
    p.add_argument("-o", "--output", required=True, help="folder for the exported files (new, empty or ours)")
    p.add_argument(
        "--data-config",
        metavar="CONFIG",
        help=f"which pairs: {', '.join(CONFIG_ORDER)} (default: the first of these that SOURCE has; "
        "`evaluated` holds the filtered pairs where `sciqag filter` ran)",
    )
    p.add_argument("--split", help="export one split only: train, validation or test (default: each, a file each)")
    p.add_argument("--system", metavar="TEXT", help="a system prompt before each question (chat formats)")
    p.epilog = "The closed-book benchmark as an lm-eval or lighteval task: `sciqag export-task`."
    p.set_defaults(func=cmd_export)
