"""`sciqag`: one subcommand per stage over a work directory, and `sciqag run` for all of them.

The CLI parses, calls the pipeline (``orchestration.pipeline``) and reports. Options come from, in rising
order: defaults, the YAML config (``--config``, or ``WORK/config.yaml`` written by an earlier run), then
flags, and every option, key variable and output folder is checked before any work starts. Each command is a
module of ``sciqag_dataset/cli/``; installed packages add theirs through the ``sciqag.commands`` entry points.

Exit status: 0 all done; 1 some papers failed (a rerun retries them) or a bug (shown with its
traceback); 2 a user error, on one line; 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import io
import logging
import signal
import sys
from pathlib import Path

import yaml

from sciqag_dataset import __version__
from sciqag_dataset.cli import (
    agreement,
    benchmark,
    evaluate,
    export,
    export_task,
    generate,
    ingest,
    keywords,
    publish,
    review,
    run,
    seed,
    serve,
    train,
)
from sciqag_dataset.cli import filter as filter_
from sciqag_dataset.cli.flags import Parser, _csv, config_path, option
from sciqag_dataset.core.console import run_command, setup_logging
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.metrics import load_plugins

log = logging.getLogger(__name__)

#: Every built-in command, in `sciqag --help` order: a module whose ``add_parser(subparsers)`` adds it.
COMMANDS = [
    ingest,
    keywords,
    seed,
    generate,
    evaluate,
    filter_,
    publish,
    run,
    benchmark,
    export_task,
    export,
    review,
    agreement,
    serve,
    train,
]
#: The entry point group of other packages' commands: ``name = "package.module"``, a module with ``add_parser``.
ENTRY_POINTS = "sciqag.commands"
VERBOSE = ("-v", "-vv", "--verbose")


@functools.cache
def plugin_commands() -> tuple:
    """The command modules installed packages declare in the ``sciqag.commands`` entry point group; one that
    cannot be imported is skipped with a note, so every other command still runs."""
    found = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            found.append(entry.load())
        except Exception as exc:  # a broken plugin of someone else's must not take the CLI down
            print(
                f"sciqag: the command {entry.name} ({entry.value}) cannot be loaded, left out: {exc}", file=sys.stderr
            )
    return tuple(found)


def build_parser() -> argparse.ArgumentParser:
    """`sciqag` with every command: the built-in ones, then those of the ``sciqag.commands`` entry points."""
    parser = Parser(prog="sciqag", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sciqag-hf {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(subparsers)
    for module in plugin_commands():
        before, listed = dict(subparsers.choices), list(subparsers._choices_actions)
        try:
            module.add_parser(subparsers)
            taken = [f"{n} is taken" for n, p in before.items() if subparsers.choices[n] is not p]
        except argparse.ArgumentError as exc:  # a name a built-in command has (Python 3.11+ says so itself)
            taken = [str(exc)]
        if taken:  # Python 3.10 replaces a command silently: the built-in one is put back
            subparsers.choices.clear()
            subparsers.choices.update(before)
            subparsers._choices_actions[:] = listed
            print(f"sciqag: the command of {module.__name__} is left out: {'; '.join(taken)}", file=sys.stderr)
    return parser


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def plugins_named(args: argparse.Namespace) -> list[str]:
    """The plugin modules a command line names: --plugins, and the `plugins:` of the config it reads."""
    named = list(option(args, "plugins") or [])
    path = config_path(args)
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            data = None  # the config is read again, and any fault in it named, when the command runs
        plugins = data.get("plugins") if isinstance(data, dict) else None
        named += _csv(plugins) if isinstance(plugins, str) else [p for p in plugins or [] if isinstance(p, str)]
    return named


def _first_pass(argv: list[str]) -> argparse.Namespace | None:
    """``argv`` parsed quietly, without --help and whatever a plugin adds: enough to name the plugins."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return build_parser().parse_known_args([a for a in argv if a not in ("-h", "--help")])[0]
        except SystemExit:
            return None


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line parsed in two passes: the first finds the plugins it names (--plugins, the config's
    `plugins:`) and imports them, so that the second, the real one, has the flags their metrics add (a rule of
    `sciqag filter`) and their names in the help."""
    plugin_commands()  # its notes, if any, before the quiet first pass
    first = _first_pass(argv)
    if first is not None and (named := plugins_named(first)):
        with contextlib.suppress(UserError):
            load_plugins(named)  # one that cannot be imported is named when the command reads its config
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    take = getattr(args, "extra_args", None)
    if extra and not (take and take(args, extra)):
        parser.parse_args(argv)  # the usual error, with its nearest-flag suggestion
    return args


def _sigterm(signum, frame):
    raise KeyboardInterrupt  # run the same cleanup as Ctrl-C: stop the local server, close files


def main(argv: list[str] | None = None) -> int:
    """`sciqag ARGS`: parse, run the command, and return its exit status (a command with its own parser, such as
    `sciqag train`, gets its arguments as they are)."""
    signal.signal(signal.SIGTERM, _sigterm)
    argv = list(sys.argv[1:] if argv is None else argv)
    at = next((i for i, a in enumerate(argv) if a not in VERBOSE), len(argv))
    own = subcommands(build_parser()).get(argv[at]) if at < len(argv) else None
    if own is not None and own.get_default("takes_argv"):  # `sciqag train`: TRL's own parser, its flags, its --help
        return own.get_default("takes_argv")(argv[:at] + argv[at + 1 :])
    args = parse(argv)
    args.argv = argv
    setup_logging(args.verbose)
    for note in getattr(args, "deprecated", []):
        log.warning(note)
    return run_command(args.func, args, f"sciqag {args.command}")


if __name__ == "__main__":
    sys.exit(main())
