"""`sciqag train`: fine-tune the generator; TRL's own SFTConfig and ModelConfig fields, plus TrainArgs.

    sciqag train train.yaml
    sciqag train --model_name_or_path lmsys/vicuna-7b-v1.5-16k --dataset me/sciqag --output_dir my-generator

Several GPUs (DeepSpeed ZeRO-3), with this module as the launched script::

    accelerate launch --multi_gpu --num_processes 8 -m sciqag_dataset.cli.train train.yaml --deepspeed zero3
    torchrun --nproc_per_node 8 -m sciqag_dataset.cli.train train.yaml --deepspeed zero3

A YAML file given first holds the fields at its top level or under ``train:`` (one file for every stage);
flags override it; every flag is a field of TrainArgs, TRL's SFTConfig or ModelConfig
(``sciqag train --help`` lists them; ``--learning_rate`` and ``--learning-rate`` are the same).
"""

from __future__ import annotations

import sys

from sciqag_dataset.cli.flags import command
from sciqag_dataset.core.console import run_command, setup_logging
from sciqag_dataset.orchestration import augmentation
from sciqag_dataset.trainers.augment import run_augment
from sciqag_dataset.trainers.config import TrainConfig, parser
from sciqag_dataset.trainers.sft import train


def cmd_train(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        parser().print_help()
        return 0
    cfg = TrainConfig.parse(argv)
    if cfg.args.augment:
        result = run_augment(cfg, augmentation.augment_generate, augmentation.augment_judge)
    else:
        result = train(cfg)
    if result is not None:  # None: a non-main rank of a distributed run
        losses = result.losses
        print(
            f"Generator saved to {result.output_dir} (prompt style {cfg.args.prompt_style}, "
            f"{result.data['train']['examples']} training examples"
            + (f", final loss {losses[-1]:.4f}" if losses else "")
            + ")"
        )
        if result.runtime.get("hub_url"):
            print(f"Uploaded to the Hub: {result.runtime['hub_url']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m sciqag_dataset.cli.train ARGS`` (for launchers) is ``sciqag train ARGS``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = sum(argv.count(flag) for flag in ("-v", "--verbose")) + 2 * argv.count("-vv")
    argv = [a for a in argv if a not in ("-v", "-vv", "--verbose")]
    setup_logging(verbose)
    return run_command(
        cmd_train,
        argv,
        "sciqag train",
        interrupted="checkpoints (if any) are under OUTPUT/checkpoints; rerun to resume",
    )


def add_parser(subparsers) -> None:
    """Listed in `sciqag --help`; its arguments are TRL's parser's: `sciqag train ARGS` is ``main(ARGS)``."""
    p = command(
        subparsers,
        "train",
        "fine-tune the generator on the seed config (TRL SFT + PEFT / DeepSpeed) -> model folder; "
        "`sciqag train --help` for its options",
        add_help=False,
    )
    p.set_defaults(takes_argv=main)


if __name__ == "__main__":
    sys.exit(main())
