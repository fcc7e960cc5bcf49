"""`sciqag train`: fine-tune the generator from a YAML config, with one flag per option.

Options come from, in rising order: `TrainConfig` defaults, the YAML config (its fields
at the top level or under ``train:``), then flags. Every `TrainConfig` field has a flag
(``--learning-rate``, ``--packing/--no-packing``, ``--extra-args KEY=VALUE`` ...).

One GPU or CPU::

    sciqag train train.yaml
    sciqag train --base-model lmsys/vicuna-7b-v1.5-16k --dataset me/sciqag -o my-generator

Several GPUs (DeepSpeed ZeRO-3; ``python -m sciqag_dataset.trainers`` is ``sciqag train``)::

    accelerate launch --multi_gpu --num_processes 8 -m sciqag_dataset.trainers train.yaml --deepspeed zero3
    torchrun --nproc_per_node 8 -m sciqag_dataset.trainers train.yaml --deepspeed zero3
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import types
import typing

import yaml

from sciqag_dataset.console import run_command, setup_logging

from .config import TrainConfig

log = logging.getLogger("sciqag.train")

EXAMPLES = """\
examples:
  sciqag train train.yaml
  sciqag train --base-model lmsys/vicuna-7b-v1.5-16k --dataset me/sciqag -o my-generator --push-to-hub me/gen
  sciqag train train.yaml --augment --augment-work extra_work --augment-papers 150
  accelerate launch --multi_gpu --num_processes 8 -m sciqag_dataset.trainers train.yaml --deepspeed zero3
"""


def _none_or(kind):
    def parse(text: str):
        if text.strip().lower() in ("none", "null", ""):
            return None
        return kind(text)

    parse.__name__ = getattr(kind, "__name__", "value")  # argparse names the type in its errors
    return parse


def _key_value(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), yaml.safe_load(value)


def _base_type(hint):
    """``X | None`` -> (X, True); anything else -> (hint, False)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(hint))
    return hint, False


def add_config_flags(p: argparse.ArgumentParser) -> None:
    """One flag per `TrainConfig` field, named after it; absent flags leave the YAML value alone."""
    hints = typing.get_type_hints(TrainConfig)
    group = p.add_argument_group("training options (TrainConfig; flags override the YAML config)")
    for f in dataclasses.fields(TrainConfig):
        meta = f.metadata
        names = [s for s in meta.get("aliases", []) if s.startswith("-") and len(s) == 2]
        names += ["--" + f.name.replace("_", "-")]
        names += [s for s in meta.get("aliases", []) if s.startswith("--")]
        kind, optional = _base_type(hints[f.name])
        kw: dict = {"dest": f.name, "default": argparse.SUPPRESS, "help": (meta.get("help") or "").replace("%", "%%")}
        origin = typing.get_origin(kind)
        if kind is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif origin is list:
            kw.update(nargs="+", metavar="NAME")
        elif origin is dict:
            kw.update(type=_key_value, action="extend", nargs="+", metavar="KEY=VALUE")
        else:
            kw["type"] = _none_or(kind) if optional else kind
            if "choices" in meta:
                kw["choices"] = meta["choices"]
            kw["metavar"] = meta.get("metavar") or (None if "choices" in meta else f.name.upper())
        group.add_argument(*names, **kw)


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``train`` to the ``sciqag`` subcommands."""
    p = subparsers.add_parser(
        "train", help="fine-tune the generator on the seed config (TRL SFT + PEFT / DeepSpeed) -> model folder",
        description=__doc__, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=cmd_train)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="YAML config: TrainConfig fields at the top level or under `train:`")
    add_config_flags(p)


def resolve_train_config(args: argparse.Namespace) -> TrainConfig:
    cfg = TrainConfig.load(getattr(args, "config", None))
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(args, f.name)}
    if "extra_args" in overrides:
        overrides["extra_args"] = {**cfg.extra_args, **dict(overrides["extra_args"])}
    cfg = dataclasses.replace(cfg, **overrides)
    return cfg.validate()


def cmd_train(args: argparse.Namespace) -> int:
    cfg = resolve_train_config(args)
    if cfg.augment:
        from .augment import run_augment

        result = run_augment(cfg)
    else:
        from .sft import train

        result = train(cfg)
    if result is not None:  # None: a non-main rank of a distributed run
        losses = result.losses
        print(f"Generator saved to {result.output_dir} (prompt style {cfg.prompt_style}, "
              f"{result.data['train']['examples']} training examples"
              + (f", final loss {losses[-1]:.4f}" if losses else "") + ")")
        if result.runtime.get("hub_url"):
            print(f"Uploaded to the Hub: {result.runtime['hub_url']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m sciqag_dataset.trainers``: `sciqag train` without the subcommand word, for launchers."""
    parser = argparse.ArgumentParser(prog="python -m sciqag_dataset.trainers", description=__doc__,
                                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    setup_logging(args.verbose)
    return run_command(cmd_train, args, "sciqag train",
                       interrupted="checkpoints (if any) are under OUTPUT/checkpoints; rerun to resume")


if __name__ == "__main__":
    sys.exit(main())
