"""The model side of a training run: hardware choices (attention implementation, QLoRA), the tokenizer, the
model and its PEFT config, and the finished weights (an adapter merged, serving defaults). ``sft`` runs the
training with these.

Light to import: torch, transformers, TRL and PEFT are imported inside the functions that need them.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.trainers.config import TrainConfig

log = logging.getLogger(__name__)


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
                "back to sdpa."
            )
        return requested
    if requested != "auto":
        log.info("attention: %s (as configured)", requested)
        return requested
    if flash_attn_available() and bf16:
        log.info("attention: flash_attention_2 (flash-attn importable on CUDA)")
        return "flash_attention_2"
    why = (
        "no CUDA GPU"
        if not _cuda()
        else "flash-attn not installed"
        if not flash_attn_available()
        else "flash-attn needs bf16/fp16"
    )
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
        raise TrainingUnavailable(
            "method qlora (4-bit base model) needs "
            + " and ".join(missing)
            + ". Use method lora or longlora, which run anywhere, including CPU."
        )


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
        kwargs.update(
            dtype=compute,
            device_map={"": PartialState().local_process_index},
            quantization_config=get_quantization_config(m),
        )
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


def upcast_trainable(model) -> None:
    """Trainable copies of bf16 modules (LongLoRA embeddings, norms) learn in fp32: a 2e-5 step is
    below bf16 resolution. Not under DeepSpeed, which keeps fp32 master weights itself."""
    import torch  # heavy: see _cuda

    for p in model.parameters():
        if p.requires_grad and p.dtype in (torch.bfloat16, torch.float16):
            p.data = p.data.float()


# --- the finished weights -------------------------------------------------------------------------


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
