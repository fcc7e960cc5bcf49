"""Flags from the config's dataclasses: one style for every subcommand.

Each config field declares its help, its flag name (``flag``, ``short``) and its constraints in its
metadata (``config/config_file.py``), so a YAML key, a flag and a default are the same option: ``--concurrency`` of
`sciqag seed` sets ``teacher.concurrency``. A flag stores its value under its own name (``concurrency``) and
each command keeps one table, ``config_keys``, of which option each of its flags sets (``sets``, ``option``).
Options resolve in rising order: defaults, the YAML config (``--config``, or ``WORK/config.yaml`` written by an
earlier run), then flags; the result is checked before any work starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from pathlib import Path

from sciqag_dataset.config.config_file import Config, EmbeddedConfig
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.registry import did_you_mean, nearest
from sciqag_dataset.llm.embedded import ENGINES
from sciqag_dataset.llm.endpoint import JudgeEndpointConfig
from sciqag_dataset.orchestration import pipeline

#: The judge flags of every command that may call a judge (evaluate, run, benchmark): one definition.
JUDGE_TITLE = (
    "judge endpoint (each --judge-endpoint is a judge of its own: several make a committee; "
    "--judge-model pairs with them in order, or one applies to all)"
)


class Parser(argparse.ArgumentParser):
    """Every parser of the CLI, subcommands too: a flag is spelled out in full (``--config`` is not a prefix of
    ``--configs``), and a misspelt one is answered with the nearest flag of its command."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self._subcommand(getattr(parsed, "command", None)) or self
            command.error(command.unknown(extra))
        return parsed

    def unknown(self, extra: list[str]) -> str:
        """What is wrong with arguments this command does not take: each unknown option with the nearest
        option of the command; the words after an unknown option are taken for its value."""
        options = list(dict.fromkeys(a.split("=")[0] for a in extra if a.startswith("-")))
        if not options:
            return f"unexpected argument{'s' if len(extra) > 1 else ''} {' '.join(extra)}"
        known = list(self._option_string_actions)
        if len(options) == 1:
            near = nearest(options[0], known)
            return f"unknown option {options[0]}" + (f"; did you mean {near}?" if near else "")
        return "unknown options " + ", ".join(a + did_you_mean(a, known) for a in options)

    def error(self, message: str):
        """One line and exit 2, as every user error of the CLI: the usage is left to --help."""
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")

    def _subcommand(self, name: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(name)
        return None


class Deprecated(argparse.Action):
    """An old spelling that still works: kept out of --help, it stores its value as before and leaves a note,
    which `main` logs once logging is set up."""

    def __init__(self, option_strings, dest, note: str = "", **kwargs):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.note = note

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.deprecated = [*getattr(namespace, "deprecated", []), self.note.format(flag=option_string)]


def command(sub, name: str, summary: str, **kwargs) -> argparse.ArgumentParser:
    """A subcommand with its one-line summary both in `sciqag --help` and atop its own --help."""
    return sub.add_parser(name, help=summary, description=summary, **kwargs)


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _mapping(value_type):
    """The parser of a mapping flag: ``table=2,figure=1`` -> {"table": 2, "figure": 1}, each value of
    ``value_type``; an empty string is the empty mapping."""

    def parse(text: str) -> dict:
        out = {}
        for item in _csv(text):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE")
            try:
                out[key.strip()] = value_type(value.strip())
            except ValueError:
                raise argparse.ArgumentTypeError(f"{item!r}: {value.strip()!r} is not {value_type.__name__}") from None
        return out

    parse.__name__ = "mapping"  # what argparse names in its message about a value it refused
    return parse


def _base(hint):
    """``X | None`` -> X; ``str | list[str]`` (a URL or replicas) -> list[str]."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        lists = [a for a in args if typing.get_origin(a) is list]
        return lists[0] if lists else args[0]
    return hint


def config_keys(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The command's table of the flags that set config options: flag destination -> option
    (``"concurrency": "teacher.concurrency"``, ``"inputs": "inputs"``)."""
    return parser.get_default("config_keys") or {}


#: Names the CLI itself keeps in the parsed arguments: no flag that sets an option stores its value there.
OWN_NAMES = frozenset(
    {"command", "func", "work", "config", "config_flag", "verbose", "argv", "deprecated", "config_keys"}
    | {"extra_args", "takes_argv"}
)


def sets(parser: argparse.ArgumentParser, dest: str, key: str) -> None:
    """Record that the flag stored in ``dest`` sets the config option ``key`` ("section.field", or a top-level
    field; "filter.thresholds.NAME" is one entry of that mapping)."""
    if dest in OWN_NAMES:
        raise ValueError(f"{parser.prog}: a flag that sets {key} cannot store its value in {dest!r}")
    table = config_keys(parser)
    if table.get(dest, key) != key:
        raise ValueError(f"{parser.prog}: the flag stored in {dest!r} would set both {table[dest]} and {key}")
    parser.set_defaults(config_keys={**table, dest: key})


def option(args: argparse.Namespace, key: str):
    """The value given for config option ``key`` by the flag that sets it (None: not given, or no such flag)."""
    dest = next((d for d, k in getattr(args, "config_keys", {}).items() if k == key), None)
    return None if dest is None else getattr(args, dest, None)


def add_field(
    parser, group, section: str, f: dataclasses.Field, hint, *, prefix: str = "", repeat=(), help: str | None = None
) -> None:
    """The flag of one config field, from its metadata: its name, help (or ``help``), type, choices and default."""
    meta = {**f.metadata, **({"help": help} if help is not None else {})}
    flag = prefix + meta.get("flag", f.name.replace("_", "-"))
    names = ["--" + flag]
    if "short" in meta and not prefix:
        names.insert(0, meta["short"])
    kind = _base(hint)
    dest = flag.replace("-", "_")
    kw: dict = {"dest": dest, "default": None, "help": (meta.get("help") or "").replace("%%", "%").replace("%", "%%")}
    if kind is bool:
        kw["action"] = argparse.BooleanOptionalAction
    elif f.name in repeat or (typing.get_origin(kind) is list and meta.get("repeat")):
        kw.update(action="append", metavar=meta.get("metavar", f.name.upper()))
    elif typing.get_origin(kind) is list:
        kw.update(type=_csv, metavar="LIST")
        if "choices" in meta:  # LIST hides them: name them, from the field's own choices
            kw["help"] += f" (any of: {', '.join(meta['choices'])})"
    elif typing.get_origin(kind) is dict:
        kw.update(type=_mapping(typing.get_args(kind)[1]), metavar=meta.get("metavar", "KEY=VALUE,..."))
        if "choices" in meta:  # the keys it takes
            kw["help"] += f" (keys: {', '.join(meta['choices'])})"
    else:
        kw.update(
            type=kind,
            metavar=meta.get("metavar")
            or ("{" + ",".join(meta["choices"]) + "}" if "choices" in meta else f.name.upper()),
        )
    if f.default is not dataclasses.MISSING and f.default is not None and kind is not bool:
        kw["help"] += f" (default {f.default})"
    group.add_argument(*names, **kw)
    sets(parser, dest, f"{section}.{f.name}")


def add_section(
    parser: argparse.ArgumentParser,
    section: str,
    cls,
    *,
    prefix: str = "",
    title: str | None = None,
    skip: tuple[str, ...] = (),
    repeat: tuple[str, ...] = (),
    group=None,
    helps: dict[str, str] | None = None,
) -> None:
    """A flag per field of ``cls``, in an argument group of its own (or ``group``), each recorded as setting
    ``section.field``; ``prefix`` names them apart (``--judge-concurrency``); ``repeat`` makes more fields
    repeatable; ``helps`` replaces a field's help (one made from a registry). Absent flags stay None and leave
    the YAML value alone."""
    group = group or parser.add_argument_group(title or f"{section} options")
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name not in skip and f.metadata.get("cli") is not False:
            help = (helps or {}).get(f.name)
            add_field(parser, group, section, f, hints[f.name], prefix=prefix, repeat=repeat, help=help)


def add_work(parser: argparse.ArgumentParser) -> None:
    """WORK first, as every stage takes it; with --config it may be left out (the config's work_dir)."""
    parser.add_argument(
        "work",
        nargs="?",
        metavar="WORK",
        help="work directory (default: the --config's work_dir, as `sciqag run` takes it)",
    )
    parser.add_argument("--config", help="YAML config (default: WORK/config.yaml if present)")
    add_plugins(parser)
    add_wait(parser)


def add_wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait-turn",
        action="store_true",
        help="when another command is using the work directory, wait for it to finish (default: stop, naming it)",
    )


def add_plugins(parser: argparse.ArgumentParser) -> None:
    sets(parser, "plugins", "plugins")
    parser.add_argument(
        "--plugins",
        type=_csv,
        metavar="MODULES",
        help="Python modules to import first, comma-separated: they register metrics "
        "(examples/custom_metric.py) or stages (examples/custom_pipeline_stage.py) of their own",
    )


def add_max_cost(parser: argparse.ArgumentParser) -> None:
    sets(parser, "max_cost", "max_cost")
    parser.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop before LLM calls could pass this many USD spent in the work dir, all runs together (prices: "
        "--price-prompt-per-m, --price-completion-per-m); finished papers are kept, a higher cap resumes",
    )


def add_judge(parser: argparse.ArgumentParser, title: str = JUDGE_TITLE) -> None:
    """The `judge:` flags (--judge-endpoint, --judge-model, ...); `resolve_config` makes their committee."""
    add_section(parser, "judge", JudgeEndpointConfig, prefix="judge-", repeat=("model",), title=title)


def backend_help() -> str:
    """--embedded-backend's help, from the engines' registry (``llm.embedded.ENGINES``)."""
    names = [e.name for e in ENGINES]
    return (
        f"auto: the first of {', '.join(names)} installed here, in that order (the next installed one takes "
        "over from a server that keeps dying)"
    )


def add_embedded(parser: argparse.ArgumentParser, command_name: str | None = None) -> None:
    """The `embedded:` flags. ``command_name``: a command that asks the embedded model no QA pairs, where
    --embedded-profile changes nothing: it is left out of --help, and still accepted with a note."""
    add_section(
        parser,
        "embedded",
        EmbeddedConfig,
        skip=("profile",) if command_name else (),
        title="embedded model (used by endpoint sections with no url)",
        helps={"backend": backend_help()},
    )
    if command_name:
        parser.add_argument(
            "--embedded-profile",
            "--no-embedded-profile",
            dest="unused_embedded_profile",
            action=Deprecated,
            nargs=0,
            note=f"{{flag}} does nothing in `sciqag {command_name}` (it shapes how seed and "
            "generate ask the embedded model): leave it out",
        )


def config_path(args: argparse.Namespace) -> Path | str | None:
    """The YAML config a command reads: --config (`sciqag run`'s CONFIG), else WORK/config.yaml if present."""
    path = getattr(args, "config", None) or getattr(args, "config_flag", None)
    work = getattr(args, "work", None)
    if path is None and work and (Path(work) / "config.yaml").exists():
        path = Path(work) / "config.yaml"
    return path


def _assign(cfg: Config, key: str, value) -> None:
    *path, name = key.split(".")
    owner = cfg
    for part in path:
        owner = owner[part] if isinstance(owner, dict) else getattr(owner, part)
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


def resolve_config(args: argparse.Namespace) -> Config:
    """Defaults < YAML < flags, then every value checked (UserError naming the option). A stage's WORK, when
    left out, is the config's work_dir, as `sciqag run` takes it. Which option a flag sets is the command's
    ``config_keys`` table."""
    path = config_path(args)
    work = getattr(args, "work", None)
    if "work" in vars(args) and work is None and path is None:
        raise UserError("name the work directory: WORK, or a --config whose work_dir names it")
    cfg = Config.load(path)
    if work:
        cfg.work_dir = str(work)
    elif "work" in vars(args) and "work_dir" not in cfg.set_options:
        raise UserError(f"{path} sets no work_dir: name the work directory (WORK) or add `work_dir:` to it")
    keys = getattr(args, "config_keys", {})
    for dest, key in keys.items():
        value = getattr(args, dest, None)
        if value is None or key in ("judge.url", "judge.model"):
            continue  # the judges: a committee, not replicas (see pipeline.with_committee)
        if key.startswith("model."):
            continue  # the models under benchmark: see cli/benchmark.py
        if key.endswith(".url") and isinstance(value, list) and len(value) == 1:
            value = value[0]
        _assign(cfg, key, value)
        cfg.set_options = sorted({*cfg.set_options, key})
    if "judge.url" in keys.values():  # a command with the judge flags: the committee they name
        cfg = pipeline.with_committee(cfg, option(args, "judge.url"), option(args, "judge.model"))
    return cfg.validate()


def check_port(port: int) -> None:
    """A port a server can listen on (0: any free one); UserError otherwise."""
    if not 0 <= port <= 65535:
        raise UserError(f"--port {port}: a port is 0 to 65535 (0: any free one)")
