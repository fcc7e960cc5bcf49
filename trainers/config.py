"""`TrainConfig`: every option of `sciqag train`, with the paper's fine-tuning defaults.

Written in the style of TRL's ``SFTConfig``: one dataclass whose fields carry their
help text, so the YAML file, the CLI flags (`trainers/cli.py` derives one flag per
field) and the resolved config written next to the model all speak the same names.

The defaults are the SciQAG paper's (vicuna-7b-v1.5-16k): 15 epochs, lr 2e-5, no
weight decay, 20 warm-up steps, constant_with_warmup, per-device batch 1, gradient
accumulation 8, bf16 where the hardware has it, max length 12,288. Those are the
settings of LongLoRA's supervised fine-tuning recipe, so LongLoRA-style low-rank
training (LoRA plus trainable embeddings and norms) is the default method.

``sciqag_generator.json`` is the contract between training and generation: it
sits next to the weights and says how the model must be prompted.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sciqag_dataset.options import check_fields
from sciqag_dataset.errors import UserError

log = logging.getLogger(__name__)

GENERATOR_INFO_FILE = "sciqag_generator.json"
RESOLVED_CONFIG_FILE = "train_config.yaml"

PROMPT_STYLES = ("paper", "alpaca")
METHODS = ("lora", "longlora", "qlora", "full")
SAVE_MODES = ("merged", "adapter")
ATTENTION = ("auto", "flash_attention_2", "sdpa", "eager")
DEEPSPEED_PRESETS = ("zero2", "zero3", "zero3_offload")
#: How the served generator is called for each prompt style.
ENDPOINT_FOR_STYLE = {"paper": "chat", "alpaca": "completion"}


def _f(default, help: str, **meta):
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata={"help": help, **meta})
    return field(default=default, metadata={"help": help, **meta})


@dataclass
class TrainConfig:
    """Fine-tune a SciQAG generator. Fields group as model/data, prompt, method, the paper's
    hyperparameters, runtime, Hub, and the augmentation round."""

    # --- model and data -----------------------------------------------------------------------
    base_model: str | None = _f(None, "base model: a Hub id or a local folder (the paper: "
                                      "lmsys/vicuna-7b-v1.5-16k)", required=True)
    dataset: str | None = _f(None, "the published SciQAG dataset: a local `sciqag publish` folder or a Hub "
                                   "dataset id", required=True)
    dataset_config: str = _f("seed", "dataset config to train on")
    train_split: str = _f("train", "split to train on")
    eval_split: str | None = _f("validation", "split evaluated each epoch when the dataset has it; null = none")
    max_examples: int | None = _f(None, "use at most this many training examples (quick runs)")
    output_dir: str = _f("sciqag-generator", "folder for the ready-to-serve model", aliases=["-o"])

    # --- prompt -------------------------------------------------------------------------------
    prompt_style: str = _f("paper", "paper: the paper's prompt as chat messages, trained with the base model's "
                                    "chat template (served via /v1/chat/completions); alpaca: the released "
                                    "generator's raw template (served via /v1/completions)", choices=PROMPT_STYLES)
    n_pairs: int = _f(10, "QA pairs the served generator is asked for (stored in sciqag_generator.json)")
    chat_template_path: str | None = _f(None, "a tokenizer or .jinja file whose chat template replaces the base "
                                              "model's (TRL's chat_template_path)")
    completion_only_loss: bool = _f(True, "loss on the generator's answer only, never on the prompt and paper")
    assistant_only_loss: bool = _f(False, "train on `messages` with TRL's assistant-only mask instead "
                                          "(paper style; the chat template needs {% generation %} markers)")

    # --- method -------------------------------------------------------------------------------
    method: str = _f("longlora", "lora; longlora (LoRA + trainable embeddings and norms, the LongLoRA SFT "
                                 "recipe); qlora (4-bit base, CUDA + bitsandbytes only); full (all weights)",
                     choices=METHODS)
    lora_r: int = _f(8, "LoRA rank")
    lora_alpha: int = _f(16, "LoRA alpha")
    lora_dropout: float = _f(0.05, "LoRA dropout")
    lora_target_modules: list[str] = _f(["q_proj", "k_proj", "v_proj", "o_proj"],
                                        "modules that get LoRA adapters (LongLoRA: the attention projections); "
                                        "[all-linear] for every linear layer")
    trainable_modules: list[str] = _f(["embed_tokens", "norm"], "longlora: modules trained in full besides "
                                                                "the adapters (name suffixes)")
    save: str = _f("merged", "merged: adapters folded into the weights, ready to serve; adapter: the PEFT "
                             "adapter only (needs the base model to serve)", choices=SAVE_MODES)

    # --- the paper's hyperparameters ------------------------------------------------------------
    num_train_epochs: float = _f(15.0, "epochs (the paper: 15)", aliases=["--epochs"])
    max_steps: int = _f(-1, "stop after this many optimizer steps (overrides epochs when > 0)")
    learning_rate: float = _f(2e-5, "peak learning rate (the paper: 2e-5)", aliases=["--lr"])
    weight_decay: float = _f(0.0, "AdamW weight decay (the paper: none)")
    warmup_steps: int = _f(20, "linear warm-up steps (the paper: 20)")
    lr_scheduler_type: str = _f("constant_with_warmup", "learning-rate schedule (the paper: constant_with_warmup)")
    per_device_train_batch_size: int = _f(1, "examples per device and step (the paper: 1)", aliases=["--batch-size"])
    gradient_accumulation_steps: int = _f(8, "micro-batches per optimizer step (the paper: 8)",
                                          aliases=["--grad-accum"])
    max_length: int = _f(12288, "tokens per example (the paper: 12,288); longer papers are shortened to fit, "
                                "never the answer")
    bf16: bool | None = _f(None, "bf16 mixed precision; null = where the hardware supports it")
    gradient_checkpointing: bool = _f(True, "recompute activations in the backward pass (long papers need it)")
    packing: bool = _f(False, "pack several examples per sequence (TRL padding-free BFD packing)")

    # --- runtime ------------------------------------------------------------------------------
    attn_implementation: str = _f("auto", "auto: flash_attention_2 when flash-attn is importable on a GPU, else "
                                          "sdpa (logged)", choices=ATTENTION)
    deepspeed: str | None = _f(None, "zero2, zero3, zero3_offload (shipped configs) or a DeepSpeed JSON path")
    seed: int = _f(42, "seed for Python, NumPy, torch and the data order")
    logging_steps: int = _f(1, "log the loss every this many optimizer steps (the card's loss curve)")
    save_strategy: str = _f("epoch", "checkpoints under OUTPUT/checkpoints: no | epoch | steps",
                            choices=("no", "epoch", "steps"))
    save_steps: int = _f(500, "checkpoint interval with save_strategy=steps")
    resume: bool = _f(True, "resume from the last checkpoint under OUTPUT/checkpoints when there is one")
    keep_checkpoints: bool = _f(False, "keep OUTPUT/checkpoints after a successful run")
    report_to: list[str] = _f([], "experiment trackers (tensorboard, wandb, ...); empty = none")
    extra_args: dict[str, Any] = _f({}, "any other SFTConfig / TrainingArguments fields, passed through")

    # --- Hub ----------------------------------------------------------------------------------
    push_to_hub: str | None = _f(None, "upload the model folder to this Hub model repo", metavar="REPO")
    private: bool = _f(False, "create the Hub repo private")
    license: str = _f("apache-2.0", "license in the model card (mind the base model's)")

    # --- augmentation (the paper's two rounds) ------------------------------------------------
    augment: bool = _f(False, "train an intermediate generator, generate for extra papers with it, train the "
                              "final generator on seed + generated pairs")
    augment_work: str | None = _f(None, "work directory holding the extra papers (papers.jsonl + keywords.jsonl "
                                        "from `sciqag ingest` and `sciqag keywords`)")
    augment_papers: int = _f(150, "extra papers to generate for (the paper: ~150)")
    augment_max_tokens: int = _f(2048, "completion budget per generation request")
    augment_min_pairs: int = _f(1, "stop with an error when fewer generated pairs than this survive (0: train "
                                   "the final model on the seed data alone then)")
    augment_racar_threshold: float | None = _f(None, "keep only generated pairs whose mean RACAR score is at "
                                                     "least this (1-3); null = keep every parsed pair")
    augment_judge_url: str | None = _f(None, "judge endpoint for the RACAR filter; null = the embedded local "
                                             "model")
    augment_judge_model: str | None = _f(None, "model name the judge endpoint serves")
    augment_judge_api_key_env: str | None = _f(None, "environment variable holding the judge's API key (must be set "
                                                     "when named; none: OPENAI_API_KEY for api.openai.com only)")

    def __post_init__(self) -> None:
        self.validate(partial=True)

    # -- checks ---------------------------------------------------------------------------------
    def validate(self, partial: bool = False) -> "TrainConfig":
        """Raise UserError on a bad option; ``partial`` skips the required fields (YAML then flags)."""
        check_fields(self)  # types from the annotations, `choices` from the metadata
        choices = {f.name: f.metadata["choices"] for f in dataclasses.fields(self) if "choices" in f.metadata}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise UserError(f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        if not partial:
            missing = [f.name for f in dataclasses.fields(self) if f.metadata.get("required")
                       and not getattr(self, f.name)]
            if missing:
                raise UserError("missing required option(s): " + ", ".join(missing)
                                 + " (set them in the YAML config or with --base-model / --dataset)")
        for name in ("n_pairs", "max_length", "per_device_train_batch_size", "gradient_accumulation_steps",
                     "lora_r", "augment_papers"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise UserError(f"{name} must be a positive integer, not {getattr(self, name)!r}")
        if self.assistant_only_loss and self.prompt_style != "paper":
            raise UserError("assistant_only_loss needs chat data: use prompt_style paper")
        if self.method == "full" and self.save == "adapter":
            raise UserError("save: adapter needs a PEFT method (lora, longlora, qlora), not full fine-tuning")
        if not isinstance(self.augment_min_pairs, int) or self.augment_min_pairs < 0:
            raise UserError(f"augment_min_pairs must be 0 or more, not {self.augment_min_pairs!r}")
        if self.augment_racar_threshold is not None and not 1 <= self.augment_racar_threshold <= 3:
            raise UserError("augment_racar_threshold is a mean RACAR score between 1 and 3")
        if not isinstance(self.extra_args, dict):
            raise UserError("extra_args must be a mapping of SFTConfig field -> value")
        return self

    # -- YAML -----------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict, where: str = "config") -> "TrainConfig":
        if not isinstance(data, dict):
            raise UserError(f"{where}: the train config must be a mapping")
        if "api_key" in data:
            raise UserError(f"{where}: put keys in an environment variable, never in the config")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise UserError(f"{where}: unknown option(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path | None) -> "TrainConfig":
        """A YAML file holding these fields at the top level, or under a ``train:`` section
        (so one file can configure every stage)."""
        if path is None:
            return cls()
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise UserError(f"cannot read the config {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
        if isinstance(data, dict) and isinstance(data.get("train"), dict):
            data = data["train"]
        return cls.from_dict(data, str(path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save_yaml(self, path: str | Path, extra: dict | None = None) -> None:
        """Write the resolved config, reloadable with `load`; ``extra`` (runtime facts such as the
        attention kernel and library versions) follows as YAML comments, so reloading ignores it."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if extra:
            text += "\n# Resolved at run time (informational; not read back):\n"
            text += "".join("# " + line + "\n" for line in yaml.safe_dump(extra, sort_keys=False).splitlines())
        Path(path).write_text(text, encoding="utf-8")


# --- the model-folder contract --------------------------------------------------------------------

def generator_info(cfg: TrainConfig, **extra) -> dict[str, Any]:
    """What the generation stage needs to prompt this model exactly as it was trained."""
    return {
        "prompt_style": cfg.prompt_style,
        "endpoint": ENDPOINT_FOR_STYLE[cfg.prompt_style],
        "n_pairs": cfg.n_pairs,
        "title_in_prompt": True,  # the paper's title heads its text, as `builders.qagen` sends it
        "base_model": cfg.base_model,
        "dataset": cfg.dataset,
        "dataset_config": cfg.dataset_config,
        "max_length": cfg.max_length,
        "method": cfg.method,
        "weights": "adapter" if cfg.save == "adapter" and cfg.method != "full" else "full",
        "temperature": 0.6,  # the paper's inference settings
        "top_p": 0.9,
        **extra,
    }


def write_generator_info(model_dir: str | Path, info: dict[str, Any]) -> Path:
    path = Path(model_dir) / GENERATOR_INFO_FILE
    path.write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _info_text(model_dir: str | Path) -> str | None:
    local = Path(model_dir)
    if local.is_dir():
        path = local / GENERATOR_INFO_FILE
        return path.read_text(encoding="utf-8") if path.is_file() else None
    if local.exists() or str(model_dir).count("/") != 1:
        return None  # a file, or not shaped like a Hub repo id
    try:  # a Hub model id: the file is small; offline or absent simply means "no info"
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(str(model_dir), GENERATOR_INFO_FILE)).read_text(encoding="utf-8")
    except Exception as exc:
        log.info("no %s for %s (%s)", GENERATOR_INFO_FILE, model_dir, type(exc).__name__)
        return None


def read_generator_info(model_dir: str | Path) -> dict[str, Any] | None:
    """The generator info stored by `sciqag train` with a model, or None when there is none.

    ``model_dir`` is a local model folder or a Hub model id. Missing optional keys get their
    defaults (n_pairs 10, endpoint from the prompt style); a malformed file raises ValueError,
    because prompting a generator the wrong way silently ruins its output.
    """
    text = _info_text(model_dir)
    if text is None:
        return None
    try:
        info = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{model_dir}/{GENERATOR_INFO_FILE} is not valid JSON: {exc}") from None
    if not isinstance(info, dict):
        raise UserError(f"{model_dir}/{GENERATOR_INFO_FILE} must hold a JSON object")
    style = info.get("prompt_style") or "paper"
    if style not in PROMPT_STYLES:
        raise UserError(f"{model_dir}/{GENERATOR_INFO_FILE}: prompt_style must be one of {PROMPT_STYLES}, "
                         f"not {style!r}")
    n = info.get("n_pairs", 10)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise UserError(f"{model_dir}/{GENERATOR_INFO_FILE}: n_pairs must be a positive integer, not {n!r}")
    return {**info, "prompt_style": style, "n_pairs": n,
            "endpoint": info.get("endpoint") or ENDPOINT_FOR_STYLE[style]}
