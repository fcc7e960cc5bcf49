"""Fine-tune a SciQAG generator with TRL's SFTTrainer (+ PEFT, DeepSpeed, flash-attn).

One function, `train(cfg)`, runs the same on one CPU, one GPU or many GPUs. For
several GPUs launch it with accelerate (or torchrun); DeepSpeed is selected by
the config, not by the launcher::

    accelerate launch --multi_gpu --num_processes 8 -m sciqag_dataset.trainers train.yaml --deepspeed zero3
    # or
    torchrun --nproc_per_node 8 -m sciqag_dataset.trainers train.yaml --deepspeed zero3

(`python -m sciqag_dataset.trainers ARGS` is `sciqag train ARGS`.) ``--deepspeed`` takes
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
import importlib.util
import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sciqag_dataset.errors import MissingInput, Unavailable, UserError
from sciqag_dataset.folders import MODEL_SIGNS, claim

from .config import (DEEPSPEED_PRESETS, RESOLVED_CONFIG_FILE, TrainConfig, generator_info,
                     write_generator_info)
from .data import Prepared, load_splits, pick_split, prepare_examples

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
ADAPTER_SUBDIR = "adapter"
TRAINING_LOG = "training_log.json"


class TrainingUnavailable(Unavailable):
    """An option this machine cannot run (QLoRA without CUDA, flash-attn without the package)."""


# --- hardware choices ---------------------------------------------------------------------------

def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def resolve_bf16(requested: bool | None) -> bool:
    """bf16 where the hardware has it (the paper trains in bf16); fp32 on CPU unless asked."""
    if requested is not None:
        return bool(requested)
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def flash_attn_available() -> bool:
    return _cuda() and importlib.util.find_spec("flash_attn") is not None


def pick_attention(requested: str = "auto", bf16: bool = True) -> str:
    """flash_attention_2 when importable on a GPU (and in half precision), else sdpa; logged."""
    if requested == "flash_attention_2":
        if not flash_attn_available():
            raise TrainingUnavailable(
                "attn_implementation=flash_attention_2 needs the flash-attn package on a CUDA GPU "
                f"(CUDA available: {_cuda()}, flash_attn importable: "
                f"{importlib.util.find_spec('flash_attn') is not None}). Use attn_implementation auto to fall "
                "back to sdpa.")
        return requested
    if requested != "auto":
        log.info("attention: %s (as configured)", requested)
        return requested
    if flash_attn_available() and bf16:
        log.info("attention: flash_attention_2 (flash-attn importable on CUDA)")
        return "flash_attention_2"
    why = ("no CUDA GPU" if not _cuda() else "flash-attn not installed" if not flash_attn_available()
           else "flash-attn needs bf16/fp16")
    log.warning("attention: sdpa (flash_attention_2 unavailable: %s)", why)
    return "sdpa"


def check_method_available(method: str) -> None:
    """QLoRA needs bitsandbytes on CUDA: say so before anything heavy is loaded."""
    if method != "qlora":
        return
    missing = []
    if not _cuda():
        missing.append("a CUDA GPU (this machine has none)")
    if importlib.util.find_spec("bitsandbytes") is None:
        missing.append("the bitsandbytes package (pip install bitsandbytes)")
    if missing:
        raise TrainingUnavailable("method qlora (4-bit base model) needs " + " and ".join(missing)
                                  + ". Use method lora or longlora, which run anywhere, including CPU.")


def deepspeed_config(value: str | None) -> str | None:
    """A shipped preset name (zero2, zero3, zero3_offload) or a JSON path -> a file path."""
    if not value:
        return None
    if value in DEEPSPEED_PRESETS:
        ref = resources.files("sciqag_dataset.trainers").joinpath("deepspeed", f"{value}.json")
        with resources.as_file(ref) as path:
            return str(path)
    path = Path(value)
    if not path.is_file():
        raise MissingInput(f"DeepSpeed config {value!r} is neither a preset ({', '.join(DEEPSPEED_PRESETS)}) "
                                "nor a file")
    if "optimizer" in json.loads(path.read_text()):
        log.warning("%s has an `optimizer` block: DeepSpeed will build its own optimizer (fused Adam needs a "
                    "CUDA toolchain); the shipped presets leave it out so the HF AdamW is used", path)
    return str(path)


# --- building blocks ------------------------------------------------------------------------------

def load_tokenizer(cfg: TrainConfig):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(cfg.base_model)
    if cfg.chat_template_path:
        src = Path(cfg.chat_template_path)
        if src.is_file() and src.suffix in (".jinja", ".j2"):
            tok.chat_template = src.read_text(encoding="utf-8")
        else:
            tok.chat_template = AutoTokenizer.from_pretrained(cfg.chat_template_path).chat_template
    if tok.pad_token is None:  # batches need one; EOS is the usual stand-in
        tok.pad_token = tok.eos_token
    return tok


def peft_config_for(cfg: TrainConfig, model):
    if cfg.method == "full":
        return None
    from peft import LoraConfig

    targets = cfg.lora_target_modules
    kwargs: dict[str, Any] = {}
    if cfg.method == "longlora":
        kwargs["modules_to_save"] = list(cfg.trainable_modules)
        if getattr(model.config, "tie_word_embeddings", False):
            kwargs["ensure_weight_tying"] = True  # a trained embedding must stay the output layer too
    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules="all-linear" if list(targets) == ["all-linear"] else list(targets),
                      task_type="CAUSAL_LM", **kwargs)


def load_model(cfg: TrainConfig, attn: str, bf16: bool):
    import torch
    from transformers import AutoModelForCausalLM

    half = torch.bfloat16 if bf16 else torch.float32
    kwargs: dict[str, Any] = {"attn_implementation": attn}
    if cfg.method == "qlora":
        from accelerate import PartialState
        from transformers import BitsAndBytesConfig

        compute = torch.bfloat16 if bf16 else torch.float16
        kwargs.update(dtype=compute, device_map={"": PartialState().local_process_index},
                      quantization_config=BitsAndBytesConfig(
                          load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                          bnb_4bit_compute_dtype=compute, bnb_4bit_quant_storage=compute))
    elif cfg.method == "full" and not cfg.deepspeed:
        kwargs["dtype"] = torch.float32  # fp32 master weights; bf16 comes from autocast
    else:
        kwargs["dtype"] = half  # DeepSpeed keeps fp32 master copies; LoRA adapters are fp32 anyway
    model = AutoModelForCausalLM.from_pretrained(cfg.base_model, **kwargs)
    if cfg.method == "qlora":
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=cfg.gradient_checkpointing)
    # Training never decodes; without a cache, packed rows are kept apart by position_ids under sdpa too.
    model.config.use_cache = False
    return model


def build_sft_config(cfg: TrainConfig, *, bf16: bool, has_eval: bool, checkpoints: Path):
    from trl import SFTConfig

    kwargs: dict[str, Any] = dict(
        output_dir=str(checkpoints),
        num_train_epochs=cfg.num_train_epochs, max_steps=cfg.max_steps,
        learning_rate=cfg.learning_rate, weight_decay=cfg.weight_decay, warmup_steps=cfg.warmup_steps,
        lr_scheduler_type=cfg.lr_scheduler_type,
        per_device_train_batch_size=cfg.per_device_train_batch_size,
        per_device_eval_batch_size=cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        bf16=bf16, fp16=False, gradient_checkpointing=cfg.gradient_checkpointing,
        max_length=cfg.max_length, packing=cfg.packing,
        completion_only_loss=False if cfg.assistant_only_loss else cfg.completion_only_loss,
        assistant_only_loss=cfg.assistant_only_loss,
        logging_steps=cfg.logging_steps, save_strategy=cfg.save_strategy, save_steps=cfg.save_steps,
        save_total_limit=1, seed=cfg.seed, data_seed=cfg.seed,
        eval_strategy="epoch" if has_eval else "no",
        report_to=list(cfg.report_to) or "none",
        deepspeed=deepspeed_config(cfg.deepspeed),
        use_cpu=not _cuda(),  # also makes torchrun on CPU-only machines real DDP (gloo), not N copies
    )
    unknown = set(cfg.extra_args) - {f.name for f in dataclasses.fields(SFTConfig)}
    if unknown:
        raise UserError(f"extra_args: {sorted(unknown)} are not SFTConfig fields")
    kwargs.update(cfg.extra_args)
    return SFTConfig(**kwargs)


def _upcast_trainable(model) -> None:
    """Trainable copies of bf16 modules (LongLoRA embeddings, norms) learn in fp32: a 2e-5 step is
    below bf16 resolution. Not under DeepSpeed, which keeps fp32 master weights itself."""
    import torch

    for p in model.parameters():
        if p.requires_grad and p.dtype in (torch.bfloat16, torch.float16):
            p.data = p.data.float()


# --- outputs --------------------------------------------------------------------------------------

def merge_adapter(base_model: str, adapter_dir: Path, out: Path, bf16: bool) -> None:
    """Fold the adapter into a freshly loaded base model (full precision, never the 4-bit one)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(base_model, dtype=torch.bfloat16 if bf16 else torch.float32)
    merged = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    merged.save_pretrained(out)


def finalise_weights(out: Path) -> None:
    """Serving defaults: the KV cache back on, and the paper's sampling (temperature 0.6, top_p 0.9)."""
    from transformers import AutoConfig, GenerationConfig

    config = AutoConfig.from_pretrained(out)
    config.use_cache = True
    config.save_pretrained(out)
    try:
        gen = GenerationConfig.from_pretrained(out)
    except OSError:
        gen = GenerationConfig.from_model_config(config)
    gen.do_sample, gen.temperature, gen.top_p = True, 0.6, 0.9
    gen.save_pretrained(out)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for pkg in ("torch", "transformers", "trl", "peft", "accelerate", "deepspeed", "datasets", "sciqag-hf"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
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
    from transformers import set_seed
    from trl import SFTTrainer

    cfg.validate()
    check_method_available(cfg.method)
    set_seed(cfg.seed)
    bf16 = resolve_bf16(cfg.bf16)
    attn = pick_attention(cfg.attn_implementation, bf16)
    # after the checks above, before anything is written: a new or empty folder, or one `sciqag train`
    # wrote before; never a folder of the user's
    claim(cfg.output_dir, "model", option="output_dir", adopt=MODEL_SIGNS)

    if cfg.packing and attn != "flash_attention_2":
        log.warning("packing with %s: packed rows are kept apart by a block-diagonal mask computed over the "
                    "whole row (quadratic in max_length); bench/train.py measured packing 3-8x slower than no "
                    "packing this way on CPU. Packing pays with flash-attn's variable-length kernels.", attn)
    tokenizer = load_tokenizer(cfg)
    dsd = load_splits(cfg.dataset, cfg.dataset_config)
    rows = pick_split(dsd, cfg.train_split, required=True)
    if cfg.max_examples:
        rows = rows.select(range(min(cfg.max_examples, len(rows))))
    rows = list(rows) + list(extra_rows or [])
    prep_kw = dict(n_default=cfg.n_pairs, messages_form=cfg.assistant_only_loss)
    train_data = prepare_examples(rows, cfg.prompt_style, tokenizer, cfg.max_length, **prep_kw)
    if train_data.dataset is None:
        raise UserError(f"no usable training example in {cfg.dataset} ({cfg.dataset_config}/{cfg.train_split}); "
                         f"skipped: {train_data.skipped[:5]}")
    eval_rows = pick_split(dsd, cfg.eval_split, required=False)
    eval_data = (prepare_examples(eval_rows, cfg.prompt_style, tokenizer, cfg.max_length, **prep_kw)
                 if eval_rows is not None and len(eval_rows) else Prepared(None))

    # The SFTConfig comes before the model: under ZeRO-3 it makes from_pretrained shard the weights.
    args = build_sft_config(cfg, bf16=bf16, has_eval=eval_data.dataset is not None,
                            checkpoints=Path(cfg.output_dir) / CHECKPOINTS)
    model = load_model(cfg, attn, bf16)
    trainer = SFTTrainer(model=model, args=args, train_dataset=train_data.dataset, eval_dataset=eval_data.dataset,
                         processing_class=tokenizer, peft_config=peft_config_for(cfg, model))
    if bf16 and not args.deepspeed and cfg.method in ("lora", "longlora"):
        _upcast_trainable(trainer.model)
    return Built(trainer, train_data, eval_data, attn, bf16)


def train(cfg: TrainConfig, extra_rows: list[dict] | None = None, *, write_card: bool = True) -> TrainResult | None:
    """Fine-tune ``cfg.base_model`` on the dataset (plus ``extra_rows`` in the seed-config shape).

    Returns the result on the main process, None on the other ranks of a distributed run.
    """
    from transformers.trainer_utils import get_last_checkpoint

    started = time.time()
    built = build_trainer(cfg, extra_rows)
    trainer, train_data, eval_data, attn, bf16 = (built.trainer, built.train_data, built.eval_data, built.attn,
                                                  built.bf16)
    tokenizer = trainer.processing_class
    out = Path(cfg.output_dir)
    checkpoints = out / CHECKPOINTS
    resume = get_last_checkpoint(str(checkpoints)) if cfg.resume and checkpoints.is_dir() else None
    if resume:
        log.info("resuming from %s", resume)
    output = trainer.train(resume_from_checkpoint=resume)

    peft = cfg.method != "full"
    weights_dir = out / ADAPTER_SUBDIR if peft and cfg.save == "merged" else out
    trainer.save_model(str(weights_dir))  # every rank takes part: ZeRO-3 gathers the shards here
    trainer.accelerator.wait_for_everyone()
    if not trainer.is_world_process_zero():
        return None

    log_history = list(trainer.state.log_history)
    global_step = trainer.state.global_step
    del trainer, built
    _free_accelerator_memory()
    from transformers.integrations.deepspeed import unset_hf_deepspeed_config

    unset_hf_deepspeed_config()  # else the merge below would load the base model as empty ZeRO-3 shards
    tokenizer.save_pretrained(out)
    if peft and cfg.save == "merged":
        merge_adapter(cfg.base_model, weights_dir, out, bf16)
    if not (peft and cfg.save == "adapter"):
        finalise_weights(out)
    if checkpoints.exists() and not cfg.keep_checkpoints:
        shutil.rmtree(checkpoints, ignore_errors=True)

    seconds = time.time() - started
    runtime = {"attn_implementation": attn, "bf16": bf16, "deepspeed": cfg.deepspeed, "versions": _versions(),
               "seconds": round(seconds, 1), "global_step": global_step,
               "train_runtime": output.metrics.get("train_runtime"),
               "num_tokens": next((h["num_tokens"] for h in reversed(log_history) if "num_tokens" in h), None)}
    data = {"train": train_data.summary(), "eval": eval_data.summary() if eval_data.dataset is not None else None,
            "extra_rows": len(extra_rows or [])}
    info = generator_info(cfg, training={"train_loss": output.metrics.get("train_loss"),
                                         "global_step": global_step, "examples": train_data.used,
                                         "attn_implementation": attn, "bf16": bf16})
    write_generator_info(out, info)
    cfg.save_yaml(out / RESOLVED_CONFIG_FILE, extra={"runtime": runtime, "data": data})
    (out / TRAINING_LOG).write_text(json.dumps(log_history, indent=1))
    result = TrainResult(out, log_history, dict(output.metrics), data, info, runtime)
    if write_card:
        from .card import write_model_card

        write_model_card(cfg, result)
    if cfg.push_to_hub:
        from .card import push_model

        result.runtime["hub_url"] = push_model(out, cfg.push_to_hub, private=cfg.private)
        log.info("uploaded to %s", result.runtime["hub_url"])
    log.info("model saved to %s (%s, %.0f s)", out, "adapter" if peft and cfg.save == "adapter" else "weights",
             seconds)
    return result


def _free_accelerator_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
