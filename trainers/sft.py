"""Fine-tune a SciQAG generator with TRL's SFTTrainer (+ PEFT, DeepSpeed, flash-attn).

One function, `train(cfg)`, runs the same on one CPU, one GPU or many GPUs. For
several GPUs launch it with accelerate (or torchrun); DeepSpeed is selected by
the config, not by the launcher::

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
import importlib.util
import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciqag_dataset.errors import Unavailable, UserError
from sciqag_dataset.folders import MODEL_SIGNS, claim
from sciqag_dataset.generator_info import write_generator_info

from .card import push_model, write_model_card
from .config import RESOLVED_CONFIG_FILE, TrainConfig, generator_info
from .data import Prepared, load_splits, pick_split, prepare_examples

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
ADAPTER_SUBDIR = "adapter"
TRAINING_LOG = "training_log.json"


class TrainingUnavailable(Unavailable):
    """An option this machine cannot run (QLoRA without CUDA, flash-attn without the package)."""


# --- hardware choices ---------------------------------------------------------------------------

def _cuda() -> bool:
    import torch  # heavy (as are transformers, trl, peft below): imported only when training runs

    return torch.cuda.is_available()


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


# --- building blocks ------------------------------------------------------------------------------

def load_tokenizer(cfg: TrainConfig):
    from transformers import AutoTokenizer  # heavy: see _cuda

    tok = AutoTokenizer.from_pretrained(cfg.model.model_name_or_path)
    template = cfg.sft.chat_template_path
    if template:
        src = Path(template)
        if src.is_file() and src.suffix in (".jinja", ".j2"):
            tok.chat_template = src.read_text(encoding="utf-8")
        else:
            tok.chat_template = AutoTokenizer.from_pretrained(template).chat_template
    if tok.pad_token is None:  # batches need one; EOS is the usual stand-in
        tok.pad_token = tok.eos_token
    return tok


def peft_config_for(cfg: TrainConfig, model):
    """TRL's LoraConfig from ModelConfig; LongLoRA also trains ``lora_modules_to_save`` (embeddings, norms)."""
    if cfg.args.method == "full":
        return None
    from trl import get_peft_config  # heavy: see _cuda

    peft = get_peft_config(cfg.model)
    if cfg.model.lora_modules_to_save and getattr(model.config, "tie_word_embeddings", False):
        peft.ensure_weight_tying = True  # a trained embedding must stay the output layer too
    return peft


def load_model(cfg: TrainConfig, attn: str, bf16: bool):
    import torch  # heavy: see _cuda
    from accelerate import PartialState
    from transformers import AutoModelForCausalLM
    from trl import get_quantization_config

    half = torch.bfloat16 if bf16 else torch.float32
    kwargs: dict[str, Any] = {"attn_implementation": attn, "revision": cfg.model.model_revision}
    if cfg.args.method == "qlora":  # QLoRA's recipe: NF4, double quantisation, compute and storage in half
        compute = torch.bfloat16 if bf16 else torch.float16
        m = cfg.model
        m.dtype, m.bnb_4bit_quant_storage, m.use_bnb_nested_quant = compute, compute, True
        kwargs.update(dtype=compute, device_map={"": PartialState().local_process_index},
                      quantization_config=get_quantization_config(m))
    elif cfg.args.method == "full" and not cfg.sft.deepspeed:
        kwargs["dtype"] = torch.float32  # fp32 master weights; bf16 comes from autocast
    else:
        kwargs["dtype"] = half  # DeepSpeed keeps fp32 master copies; LoRA adapters are fp32 anyway
    model = AutoModelForCausalLM.from_pretrained(cfg.model.model_name_or_path, **kwargs)
    if cfg.args.method == "qlora":
        from peft import prepare_model_for_kbit_training  # heavy, GPU-only: bitsandbytes is loaded with it

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=cfg.sft.activation_checkpointing)
    # Training never decodes; without a cache, packed rows are kept apart by position_ids under sdpa too.
    model.config.use_cache = False
    return model


def trainer_args(cfg: TrainConfig, *, has_eval: bool, checkpoints: Path):
    """The user's SFTConfig, with what this run decides: checkpoints in OUTPUT/checkpoints, the resolved
    DeepSpeed file, the loss mask, and no Hub push from the Trainer (the finished folder is pushed)."""
    sft = cfg.sft
    return dataclasses.replace(
        sft, output_dir=str(checkpoints), deepspeed=sft.deepspeed,
        per_device_eval_batch_size=sft.per_device_train_batch_size,
        completion_only_loss=False if sft.assistant_only_loss else sft.completion_only_loss,
        save_total_limit=1, data_seed=sft.seed, eval_strategy="epoch" if has_eval else "no",
        push_to_hub=False, hub_model_id=None)


def _upcast_trainable(model) -> None:
    """Trainable copies of bf16 modules (LongLoRA embeddings, norms) learn in fp32: a 2e-5 step is
    below bf16 resolution. Not under DeepSpeed, which keeps fp32 master weights itself."""
    import torch  # heavy: see _cuda

    for p in model.parameters():
        if p.requires_grad and p.dtype in (torch.bfloat16, torch.float16):
            p.data = p.data.float()


# --- outputs --------------------------------------------------------------------------------------

def merge_adapter(base_model: str, adapter_dir: Path, out: Path, bf16: bool) -> None:
    """Fold the adapter into a freshly loaded base model (full precision, never the 4-bit one)."""
    import torch  # heavy: see _cuda
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(base_model, dtype=torch.bfloat16 if bf16 else torch.float32)
    merged = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    merged.save_pretrained(out)


def finalise_weights(out: Path) -> None:
    """Serving defaults: the KV cache back on, and the paper's sampling (temperature 0.6, top_p 0.9)."""
    from transformers import AutoConfig, GenerationConfig  # heavy: see _cuda

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
    from transformers import set_seed  # heavy: see _cuda
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
        log.warning("packing with %s: packed rows are kept apart by a block-diagonal mask computed over the "
                    "whole row (quadratic in max_length); bench/train.py measured packing 3-8x slower than no "
                    "packing this way on CPU. Packing pays with flash-attn's variable-length kernels.", attn)
    tokenizer = load_tokenizer(cfg)
    dsd = load_splits(a.dataset, a.dataset_config)
    rows = pick_split(dsd, a.train_split, required=True)
    if a.max_examples:
        rows = rows.select(range(min(a.max_examples, len(rows))))
    rows = list(rows) + list(extra_rows or [])
    prep_kw = dict(n_default=a.n_pairs, messages_form=sft.assistant_only_loss)
    train_data = prepare_examples(rows, a.prompt_style, tokenizer, sft.max_length, **prep_kw)
    if train_data.dataset is None:
        raise UserError(f"no usable training example in {a.dataset} ({a.dataset_config}/{a.train_split}); "
                        f"skipped: {train_data.skipped[:5]}")
    eval_rows = pick_split(dsd, a.eval_split, required=False)
    eval_data = (prepare_examples(eval_rows, a.prompt_style, tokenizer, sft.max_length, **prep_kw)
                 if eval_rows is not None and len(eval_rows) else Prepared(None))

    # The SFTConfig comes before the model: under ZeRO-3 it makes from_pretrained shard the weights.
    args = trainer_args(cfg, has_eval=eval_data.dataset is not None, checkpoints=cfg.output_dir / CHECKPOINTS)
    model = load_model(cfg, attn, bf16)
    trainer = SFTTrainer(model=model, args=args, train_dataset=train_data.dataset, eval_dataset=eval_data.dataset,
                         processing_class=tokenizer, peft_config=peft_config_for(cfg, model))
    if bf16 and not args.deepspeed and a.method in ("lora", "longlora"):
        _upcast_trainable(trainer.model)
    return Built(trainer, train_data, eval_data, attn, bf16)


def train(cfg: TrainConfig, extra_rows: list[dict] | None = None, *, write_card: bool = True) -> TrainResult | None:
    """Fine-tune ``cfg.model.model_name_or_path`` on the dataset (plus ``extra_rows`` in the seed-config shape).

    Returns the result on the main process, None on the other ranks of a distributed run.
    """
    from transformers.integrations.deepspeed import unset_hf_deepspeed_config  # heavy: see _cuda
    from transformers.trainer_utils import get_last_checkpoint

    started = time.time()
    built = build_trainer(cfg, extra_rows)
    trainer, train_data, eval_data, attn, bf16 = (built.trainer, built.train_data, built.eval_data, built.attn,
                                                  built.bf16)
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
    runtime = {"attn_implementation": attn, "bf16": bf16, "deepspeed": cfg.sft.deepspeed, "versions": _versions(),
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
        write_model_card(cfg, result)
    if cfg.sft.push_to_hub:
        result.runtime["hub_url"] = push_model(out, cfg.sft.hub_model_id, private=bool(cfg.sft.hub_private_repo))
        log.info("uploaded to %s", result.runtime["hub_url"])
    log.info("model saved to %s (%s, %.0f s)", out, "adapter" if peft and a.save == "adapter" else "weights",
             seconds)
    return result


def _free_accelerator_memory() -> None:
    import torch  # heavy: see _cuda

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
