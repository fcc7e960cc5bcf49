"""Fine-tune a SciQAG generator with TRL's SFTTrainer (+ PEFT, DeepSpeed, flash-attn).

One function, `train(cfg)`, runs the same on one CPU, one GPU or many GPUs (the model side, attention
and PEFT included, is in ``modeling.py``). For several GPUs launch it with accelerate (or torchrun);
DeepSpeed is selected by the config, not by the launcher::

    accelerate launch --multi_gpu --num_processes 8 -m sciqag_dataset.cli.train train.yaml --deepspeed zero3
    # or
    torchrun --nproc_per_node 8 -m sciqag_dataset.cli.train train.yaml --deepspeed zero3

(`python -m sciqag_dataset.cli.train ARGS` is `sciqag train ARGS`.) ``--deepspeed`` takes
zero2, zero3, zero3_offload (configs shipped in ``trainers/deepspeed/``, no optimizer
block: the HF AdamW is used, so nothing is JIT-compiled) or a path to your own JSON.
zero3_offload keeps parameters and optimizer states in CPU memory and lets the HF AdamW
step them there (``zero_force_ds_cpu_optimizer: false``); on a machine with a CUDA
toolchain, a copy with an ``"optimizer": {"type": "AdamW", "params": {"lr": "auto",
"weight_decay": "auto"}}`` block uses DeepSpeed's faster CPU Adam instead.

The output folder is ready to serve: merged weights (or the adapter, by option),
the tokenizer, ``sciqag_generator.json`` (how to prompt the model), the resolved
``train_config.yaml``, ``training_log.json``, ``loss_curve.png`` and a model card.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.metadata
import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciqag_dataset.cards.model_card import write_model_card
from sciqag_dataset.config.generator_info import write_generator_info
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import MODEL_SIGNS, claim
from sciqag_dataset.hub.upload import push_model
from sciqag_dataset.trainers.config import RESOLVED_CONFIG_FILE, TrainConfig, generator_info, preset_name
from sciqag_dataset.trainers.data import Prepared, load_splits, pick_split, prepare_examples
from sciqag_dataset.trainers.modeling import (
    check_method_available,
    finalise_weights,
    load_model,
    load_tokenizer,
    merge_adapter,
    peft_config_for,
    pick_attention,
    upcast_trainable,
)

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
ADAPTER_SUBDIR = "adapter"
TRAINING_LOG = "training_log.json"


# --- the trainer ---------------------------------------------------------------------------------


def trainer_args(cfg: TrainConfig, *, has_eval: bool, checkpoints: Path):
    """The user's SFTConfig, with what this run decides: checkpoints in OUTPUT/checkpoints, the resolved
    DeepSpeed file, the loss mask, and no Hub push from the Trainer (the finished folder is pushed)."""
    sft = cfg.sft
    return dataclasses.replace(
        sft,
        output_dir=str(checkpoints),
        deepspeed=sft.deepspeed,
        per_device_eval_batch_size=sft.per_device_train_batch_size,
        completion_only_loss=False if sft.assistant_only_loss else sft.completion_only_loss,
        save_total_limit=1,
        data_seed=sft.seed,
        eval_strategy="epoch" if has_eval else "no",
        push_to_hub=False,
        hub_model_id=None,
    )


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("torch", "transformers", "trl", "peft", "accelerate", "deepspeed", "datasets", "sciqag-hf"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


@dataclass
class TrainResult:
    output_dir: Path
    log_history: list[dict]
    metrics: dict[str, Any]
    data: dict[str, Any]
    info: dict[str, Any]
    runtime: dict[str, Any] = field(default_factory=dict)

    @property
    def losses(self) -> list[float]:
        return [h["loss"] for h in self.log_history if "loss" in h]


@dataclass
class Built:
    """A ready SFTTrainer and what went into it."""

    trainer: Any
    train_data: Prepared
    eval_data: Prepared
    attn: str
    bf16: bool


def build_trainer(cfg: TrainConfig, extra_rows: list[dict] | None = None) -> Built:
    """Data, model and TRL SFTTrainer for ``cfg``, not yet trained (tests inspect its batches)."""
    from transformers import set_seed  # heavy (as are trl, torch below): imported only when training runs
    from trl import SFTTrainer

    cfg.validate()
    a, sft = cfg.args, cfg.sft
    check_method_available(a.method)
    set_seed(sft.seed)
    bf16 = bool(sft.bf16)
    attn = pick_attention(cfg.model.attn_implementation or "auto", bf16)
    # after the checks above, before anything is written: a new or empty folder, or one `sciqag train`
    # wrote before; never a folder of the user's
    claim(cfg.output_dir, "model", option="output_dir", adopt=MODEL_SIGNS)

    if sft.packing and attn != "flash_attention_2":
        log.warning(
            "packing with %s: TRL lays a whole batch end to end in one row, and its examples are kept apart "
            "by a block-diagonal mask over that row (quadratic in batch x max_length); bench/train.py measured "
            "packing 3-8x slower than no packing this way on CPU. Packing pays with flash-attn's "
            "variable-length kernels.",
            attn,
        )
    tokenizer = load_tokenizer(cfg)
    dsd = load_splits(a.dataset, a.dataset_config)
    rows = pick_split(dsd, a.train_split, required=True)
    if a.max_examples:
        rows = rows.select(range(min(a.max_examples, len(rows))))
    rows = list(rows) + list(extra_rows or [])
    prep_kw = dict(n_default=a.n_pairs, messages_form=sft.assistant_only_loss)
    train_data = prepare_examples(rows, a.prompt_style, tokenizer, sft.max_length, **prep_kw)
    if train_data.dataset is None:
        raise UserError(
            f"no usable training example in {a.dataset} ({a.dataset_config}/{a.train_split}); "
            f"skipped: {train_data.skipped[:5]}"
        )
    eval_rows = pick_split(dsd, a.eval_split, required=False)
    eval_data = (
        prepare_examples(eval_rows, a.prompt_style, tokenizer, sft.max_length, **prep_kw)
        if eval_rows is not None and len(eval_rows)
        else Prepared(None)
    )

    # The SFTConfig comes before the model: under ZeRO-3 it makes from_pretrained shard the weights.
    args = trainer_args(cfg, has_eval=eval_data.dataset is not None, checkpoints=cfg.output_dir / CHECKPOINTS)
    model = load_model(cfg, attn, bf16)
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=train_data.dataset,
        eval_dataset=eval_data.dataset,
        processing_class=tokenizer,
        peft_config=peft_config_for(cfg, model),
    )
    if bf16 and not args.deepspeed and a.method in ("lora", "longlora"):
        upcast_trainable(trainer.model)
    return Built(trainer, train_data, eval_data, attn, bf16)


def train(cfg: TrainConfig, extra_rows: list[dict] | None = None, *, write_card: bool = True) -> TrainResult | None:
    """Fine-tune ``cfg.model.model_name_or_path`` on the dataset (plus ``extra_rows`` in the seed-config shape).

    Returns the result on the main process, None on the other ranks of a distributed run.
    """
    from transformers.integrations.deepspeed import unset_hf_deepspeed_config  # heavy: see build_trainer
    from transformers.trainer_utils import get_last_checkpoint

    started = time.time()
    built = build_trainer(cfg, extra_rows)
    trainer, train_data, eval_data, attn, bf16 = (
        built.trainer,
        built.train_data,
        built.eval_data,
        built.attn,
        built.bf16,
    )
    tokenizer = trainer.processing_class
    a, out = cfg.args, cfg.output_dir
    checkpoints = out / CHECKPOINTS
    resume = get_last_checkpoint(str(checkpoints)) if a.resume and checkpoints.is_dir() else None
    if resume:
        log.info("resuming from %s", resume)
    output = trainer.train(resume_from_checkpoint=resume)

    peft = a.method != "full"
    weights_dir = out / ADAPTER_SUBDIR if peft and a.save == "merged" else out
    trainer.save_model(str(weights_dir))  # every rank takes part: ZeRO-3 gathers the shards here
    trainer.accelerator.wait_for_everyone()
    if not trainer.is_world_process_zero():
        return None

    log_history = list(trainer.state.log_history)
    global_step = trainer.state.global_step
    del trainer, built
    _free_accelerator_memory()
    unset_hf_deepspeed_config()  # else the merge below would load the base model as empty ZeRO-3 shards
    tokenizer.save_pretrained(out)
    if peft and a.save == "merged":
        merge_adapter(cfg.model.model_name_or_path, weights_dir, out, bf16)
    if not (peft and a.save == "adapter"):
        finalise_weights(out)
    if checkpoints.exists() and not a.keep_checkpoints:
        shutil.rmtree(checkpoints, ignore_errors=True)

    seconds = time.time() - started
    runtime = {
        "attn_implementation": attn,
        "bf16": bf16,
        "deepspeed": cfg.sft.deepspeed,
        "versions": _versions(),
        "seconds": round(seconds, 1),
        "global_step": global_step,
        "train_runtime": output.metrics.get("train_runtime"),
        "num_tokens": next((h["num_tokens"] for h in reversed(log_history) if "num_tokens" in h), None),
    }
    data = {
        "train": train_data.summary(),
        "eval": eval_data.summary() if eval_data.dataset is not None else None,
        "extra_rows": len(extra_rows or []),
    }
    info = generator_info(
        cfg,
        training={
            "train_loss": output.metrics.get("train_loss"),
            "global_step": global_step,
            "examples": train_data.used,
            "attn_implementation": attn,
            "bf16": bf16,
        },
    )
    write_generator_info(out, info)
    cfg.save_yaml(out / RESOLVED_CONFIG_FILE, extra={"runtime": runtime, "data": data})
    (out / TRAINING_LOG).write_text(json.dumps(log_history, indent=1))
    result = TrainResult(out, log_history, dict(output.metrics), data, info, runtime)
    if write_card:
        write_model_card(cfg, result, preset_name(cfg.sft.deepspeed))
    if cfg.sft.push_to_hub:
        result.runtime["hub_url"] = push_model(out, cfg.sft.hub_model_id, private=bool(cfg.sft.hub_private_repo))
        log.info("uploaded to %s", result.runtime["hub_url"])
    log.info("model saved to %s (%s, %.0f s)", out, "adapter" if peft and a.save == "adapter" else "weights", seconds)
    return result


def _free_accelerator_memory() -> None:
    import torch  # heavy: see build_trainer

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
