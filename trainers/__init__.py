"""Fine-tuning the SciQAG generator: TRL SFTTrainer + PEFT + DeepSpeed (`sciqag train`).

Light to import: the heavy libraries load only when training starts.
"""
from __future__ import annotations

__all__ = ["TrainConfig", "read_generator_info", "train", "run_augment"]


def __getattr__(name: str):
    if name in ("TrainConfig", "read_generator_info"):
        from . import config

        return getattr(config, name)
    if name == "train":
        from .sft import train

        return train
    if name == "run_augment":
        from .augment import run_augment

        return run_augment
    raise AttributeError(name)
