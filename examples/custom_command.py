"""A command of your own in one module (docs/ARCHITECTURE.md): `sciqag stats WORK`, the QA pairs per paper.

A command is a module with ``add_parser(subparsers)``, which adds its parser and the function it runs
(``set_defaults(func=...)``: it gets the parsed arguments and returns the exit status). A package makes it a
`sciqag` command by naming the module in its entry points; `sciqag` finds it when it starts:

    # pyproject.toml of your package
    [project.entry-points."sciqag.commands"]
    stats = "sciqag_dataset.examples.custom_command"

    $ sciqag stats sciqag_work
"""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.cli.flags import command
from sciqag_dataset.core import records
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError


def cmd_stats(args) -> int:
    work = Path(args.work)
    if not work.is_dir():
        raise UserError(f"{work} is not a work directory (run `sciqag ingest {work} PAPERS` first)")
    source = records.qa_source(work, args.source)
    pairs = {paper["id"]: len(paper["qa"]) for paper in records.qa_papers(work, source)}
    rows = [(paper["id"], pairs.get(paper["id"], 0), paper.get("title") or "") for paper in records.papers(work)]
    width = max([len("paper"), *(len(pid) for pid, _, _ in rows)])
    print(f"{'pairs':>5}  {'paper':<{width}}  title")
    for pid, n, title in rows:
        print(f"{n:>5}  {pid:<{width}}  {title}")
    none = sum(1 for _, n, _ in rows if not n)
    print(
        f"{plural(sum(pairs.values()), 'pair')} ({source}) over {plural(len(rows), 'paper')}"
        + (f"; {plural(none, 'paper')} without usable pairs" if none else "")
    )
    return 0


def add_parser(subparsers) -> None:
    p = command(subparsers, "stats", "QA pairs per paper of a work directory (an example plugin command)")
    p.add_argument("work", metavar="WORK", help="the work directory")
    p.add_argument(
        "--source",
        choices=tuple(records.QA_FILES),
        help="the QA pairs to count (default: generated if there, else seed)",
    )
    p.set_defaults(func=cmd_stats)
