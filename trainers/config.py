"""`sciqag train`'s options: TRL's own ``SFTConfig`` and ``ModelConfig``, plus ``TrainArgs`` for what they lack.

The training run (epochs, learning rate, batch, ``max_length``, ``packing``, ``deepspeed``, ``output_dir``,
Hub ...) is TRL's ``SFTConfig``; the model and its adapters (``model_name_or_path``,
``attn_implementation``, ``lora_r`` ...) are TRL's ``ModelConfig``; ``TrainArgs`` holds the SciQAG parts
(the dataset, the prompt style, the method, the augmentation round). They are parsed together by TRL's
``TrlParser`` from a YAML file (its fields at the top level or under ``train:``) and flags, so a TRL user
finds every option under its usual name.

The defaults are the SciQAG paper's (vicuna-7b-v1.5-16k, LongLoRA's SFT recipe): 15 epochs, lr 2e-5, no
weight decay, 20 warm-up steps, constant_with_warmup, per-device batch 1, gradient accumulation 8, bf16
where the hardware has it, max length 12,288, LoRA r 8 / alpha 16 on the attention projections.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sciqag_dataset.config.generator_info import ENDPOINT_FOR_STYLE, PROMPT_STYLES
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.options import read_yaml
from sciqag_dataset.core.registry import did_you_mean

if TYPE_CHECKING:  # annotations only: TRL loads torch, which only training needs
    from trl import ModelConfig, SFTConfig, TrlParser

log = logging.getLogger(__name__)

RESOLVED_CONFIG_FILE = "train_config.yaml"
METHODS = ("lora", "longlora", "qlora", "full")
SAVE_MODES = ("merged", "adapter")
DEEPSPEED_PRESETS = ("zero2", "zero3", "zero3_offload")
LONGLORA_TRAINABLE = ["embed_tokens", "norm"]


def _f(default, help: str, **meta):
    """A field whose metadata TRL's parser passes to argparse: help, choices (ranges are checked in
    ``TrainConfig.validate``)."""
    return dataclasses.field(default=default, metadata={"help": help, **meta})


#: TRL fields set to the paper's values before a YAML file or flags are read (they override these).
PAPER_DEFAULTS: dict[str, Any] = {
    "output_dir": "sciqag-generator",
    "num_train_epochs": 15.0,
    "learning_rate": 2e-5,
    "weight_decay": 0.0,
    "warmup_steps": 20,
    "lr_scheduler_type": "constant_with_warmup",
    "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "max_length": 12288,
    "activation_checkpointing": True,
    "logging_steps": 1,
    "save_strategy": "epoch",
    "completion_only_loss": True,
    "report_to": "none",
    "seed": 42,
    "lora_r": 8,
    "lora_alpha": 16,
    "lora_dropout": 0.05,
    "lora_target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
}


@dataclass
class TrainArgs:
    """What `sciqag train` adds to TRL's SFTConfig and ModelConfig."""

    dataset: str | None = _f(
        None, help="the published SciQAG dataset: a local `sciqag publish` folder or a Hub dataset id (required)"
    )
    dataset_config: str = _f("seed", help="dataset config to train on")
    train_split: str = _f("train", help="split to train on")
    eval_split: str | None = _f("validation", help="split evaluated each epoch when the dataset has it; none to skip")
    max_examples: int | None = _f(None, help="use at most this many training examples (quick runs)")
    prompt_style: str = _f(
        "paper",
        choices=PROMPT_STYLES,
        help="paper: the paper's prompt as chat messages (served via /v1/chat/completions); "
        "alpaca: the released generator's raw template (served via /v1/completions)",
    )
    n_pairs: int = _f(10, help="QA pairs the served generator is asked for (in sciqag_generator.json)")
    method: str = _f(
        "longlora",
        choices=METHODS,
        help="lora; longlora (LoRA + trainable embeddings and norms: lora_modules_to_save); qlora "
        "(4-bit base, CUDA + bitsandbytes only); full (all weights)",
    )
    save: str = _f(
        "merged",
        choices=SAVE_MODES,
        help="merged: adapters folded into the weights, ready to serve; adapter: the PEFT adapter only",
    )
    resume: bool = _f(True, help="resume from the last checkpoint under OUTPUT/checkpoints when there is one")
    keep_checkpoints: bool = _f(False, help="keep OUTPUT/checkpoints after a successful run")
    license: str = _f("apache-2.0", help="license in the model card (mind the base model's)")
    augment: bool = _f(
        False,
        help="the paper's two rounds: an intermediate generator writes pairs for extra "
        "papers, and the final generator trains on seed + generated pairs",
    )
    augment_work: str | None = _f(
        None,
        help="work directory holding the extra papers (papers.jsonl + "
        "keywords.jsonl from `sciqag ingest` and `sciqag keywords`)",
    )
    augment_papers: int = _f(150, help="extra papers to generate for (the paper: ~150)")
    augment_max_tokens: int = _f(2048, help="completion budget per generation request")
    augment_min_pairs: int = _f(
        1,
        help="stop with an error when fewer generated pairs survive (0: train "
        "the final model on the seed data alone then)",
    )
    augment_racar_threshold: float | None = _f(
        None, help="keep only generated pairs whose mean RACAR score is at least this; none: keep every parsed pair"
    )
    augment_judge_url: str | None = _f(None, help="judge endpoint of the RACAR filter; none: the embedded model")
    augment_judge_model: str | None = _f(None, help="model name the judge endpoint serves")
    augment_judge_api_key_env: str | None = _f(
        None,
        help="environment variable holding the judge's key (must be "
        "set when named; none: OPENAI_API_KEY for api.openai.com)",
    )


def machine_defaults() -> dict[str, Any]:
    """bf16 where the hardware has it (the paper trains in bf16); CPU training where there is no GPU."""
    import torch  # heavy (as is trl below): loaded only when a training config is built

    cuda = torch.cuda.is_available()
    return {"bf16": bool(cuda and torch.cuda.is_bf16_supported()), "use_cpu": not cuda}


def parser():
    """TRL's parser over TrainArgs, SFTConfig and ModelConfig, with the paper's defaults set."""
    from trl import ModelConfig, SFTConfig, TrlParser  # heavy: see machine_defaults

    p = TrlParser([TrainArgs, SFTConfig, ModelConfig], prog="sciqag train", description=__doc__)
    p.set_defaults(**PAPER_DEFAULTS, **machine_defaults())
    return p


@dataclass
class TrainConfig:
    """The three parts of a training run, as ``TrlParser`` gives them."""

    args: TrainArgs
    sft: SFTConfig
    model: ModelConfig

    @classmethod
    def parse(cls, argv: list[str]) -> TrainConfig:
        """From flags, and a YAML file given first (its fields at the top level or under ``train:``)."""
        argv = list(argv)
        p = parser()
        if argv and not argv[0].startswith("-"):
            values = _checked_section(load_yaml(argv.pop(0)), p)
            if values.get("deepspeed"):
                values["deepspeed"] = deepspeed_config(values["deepspeed"])
            p.set_defaults(**values)
        try:
            args, sft, model = p.parse_args_into_dataclasses(_with_presets(argv))
        except ValueError as exc:  # TRL and transformers check values in __post_init__
            raise UserError(" ".join(str(exc).split())) from None
        return cls(args, sft, model).validate()

    @classmethod
    def from_dict(cls, values: dict, where: str = "train") -> TrainConfig:
        """From a mapping (a ``train:`` section), over the paper's defaults; unknown keys refused."""
        if not isinstance(values, dict):
            raise UserError(f"{where}: must be a mapping of training options")
        p = parser()
        _checked_section(values, p, where)
        defaults = vars(p.parse_known_args([])[0])  # the parser's defaults (the paper's), as argparse resolves them
        if values.get("deepspeed"):
            values = {**values, "deepspeed": deepspeed_config(values["deepspeed"])}
        try:
            args, sft, model = p.parse_dict({**defaults, **values})
        except (ValueError, TypeError) as exc:
            raise UserError(f"{where}: {' '.join(str(exc).split())}") from None
        return cls(args, sft, model).validate(partial=True)

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        """A YAML file: its fields at the top level or under ``train:`` (e.g. a resolved train_config.yaml)."""
        return cls.from_dict(load_yaml(path), str(path))

    def validate(self, partial: bool = False) -> TrainConfig:
        """UserError for a missing or inconsistent option (``partial``: the required ones may be missing)."""
        a = self.args
        if a.eval_split in ("none", "null", ""):  # a flag cannot say None
            a.eval_split = None
        for f in dataclasses.fields(a):
            choices = f.metadata.get("choices")
            if choices and getattr(a, f.name) not in choices:
                raise UserError(f"{f.name} must be one of {', '.join(choices)}, not {getattr(a, f.name)!r}")
        for name, low in (
            ("max_examples", 1),
            ("n_pairs", 1),
            ("augment_papers", 1),
            ("augment_max_tokens", 1),
            ("augment_min_pairs", 0),
        ):
            value = getattr(a, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise UserError(f"{name} must be an integer of at least {low}, got {value!r}")
        if a.augment_racar_threshold is not None and not 1 <= a.augment_racar_threshold <= 3:
            raise UserError("augment_racar_threshold is a mean RACAR score between 1 and 3")
        missing = [
            name
            for name, value in (("model_name_or_path", self.model.model_name_or_path), ("dataset", self.args.dataset))
            if not value
        ]
        if missing and not partial:
            raise UserError(
                "missing required option(s): "
                + ", ".join(missing)
                + " (set them in the YAML config or with --model_name_or_path / --dataset)"
            )
        if self.sft.assistant_only_loss and self.args.prompt_style != "paper":
            raise UserError("assistant_only_loss needs chat data: use prompt_style paper")
        if self.sft.push_to_hub and not self.sft.hub_model_id:
            raise UserError("push_to_hub needs hub_model_id: the Hub model repo to upload the finished folder to")
        if self.args.method == "full" and self.args.save == "adapter":
            raise UserError("save: adapter needs a PEFT method (lora, longlora, qlora), not full fine-tuning")
        method = self.args.method
        self.model.use_peft = method != "full"
        self.model.load_in_4bit = method == "qlora"
        if method == "longlora" and not self.model.lora_modules_to_save:
            self.model.lora_modules_to_save = list(LONGLORA_TRAINABLE)
        return self

    def replace(self, *, args: dict | None = None, sft: dict | None = None) -> TrainConfig:
        """A copy with some fields changed (the augmentation rounds)."""
        return TrainConfig(
            dataclasses.replace(self.args, **(args or {})),
            dataclasses.replace(self.sft, **(sft or {})),
            dataclasses.replace(self.model),
        )

    @property
    def output_dir(self) -> Path:
        return Path(self.sft.output_dir)

    def to_dict(self) -> dict[str, Any]:
        """Every TrainArgs field, the paper's defaults, and whatever else differs from a default run: what
        ``from_dict`` reloads as this config. Tokens are never written."""
        out = dataclasses.asdict(self.args)
        baseline = TrainConfig.from_dict({})
        for obj, base in ((self.model, baseline.model), (self.sft, baseline.sft)):
            given, default = _as_dict(obj), _as_dict(base)
            for name, value in given.items():
                if name.endswith("_token") or not _plain(value):
                    continue
                if value != default.get(name) or name in PAPER_DEFAULTS or name == "model_name_or_path":
                    out[name] = value
        if out.get("deepspeed"):
            out["deepspeed"] = preset_name(out["deepspeed"])
        return out

    def save_yaml(self, path: str | Path, extra: dict | None = None) -> None:
        """Write the resolved config; ``extra`` (runtime facts) follows as YAML comments, not read back."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if extra:
            text += "\n# Resolved at run time (informational; not read back):\n"
            text += "".join("# " + line + "\n" for line in yaml.safe_dump(extra, sort_keys=False).splitlines())
        Path(path).write_text(text, encoding="utf-8")


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
        raise UserError(f"DeepSpeed config {value!r} is neither a preset ({', '.join(DEEPSPEED_PRESETS)}) nor a file")
    if "optimizer" in json.loads(path.read_text(encoding="utf-8")):
        log.warning(
            "%s has an `optimizer` block: DeepSpeed will build its own optimizer (fused Adam needs a "
            "CUDA toolchain); the shipped presets leave it out so the HF AdamW is used",
            path,
        )
    return str(path)


def preset_name(path: str | None) -> str | None:
    """The shipped preset a DeepSpeed file is, for the resolved config (else the path itself)."""
    return next((name for name in DEEPSPEED_PRESETS if path and deepspeed_config(name) == path), path)


def _with_presets(argv: list[str]) -> list[str]:
    """``--deepspeed zero3`` -> the shipped file (TRL checks the path when the config is built)."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--deepspeed" and i + 1 < len(out):
            out[i + 1] = deepspeed_config(out[i + 1])
        elif arg.startswith("--deepspeed="):
            out[i] = "--deepspeed=" + deepspeed_config(arg.split("=", 1)[1])
    return out


def _as_dict(obj) -> dict[str, Any]:
    init = {f.name for f in dataclasses.fields(obj) if f.init}
    given = obj.to_dict() if hasattr(obj, "to_dict") else dataclasses.asdict(obj)
    return {k: v for k, v in given.items() if k in init}


def _plain(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (str, int, float, bool))
        or (
            isinstance(value, (list, dict))
            and all(_plain(v) for v in (value.values() if isinstance(value, dict) else value))
        )
    )


def load_yaml(path: str | Path) -> dict:
    """The training fields of a YAML file: its ``train:`` section if it has one (one file for every stage),
    else its top level."""
    data = read_yaml(path)
    return data["train"] if isinstance(data.get("train"), dict) else data


def _checked_section(values: dict, p: TrlParser, where: str = "config") -> dict:
    if "api_key" in values:
        raise UserError(f"{where}: put keys in an environment variable, never in the config")
    known = {a.dest for a in p._actions}
    unknown = sorted(set(values) - known)
    if unknown:
        named = [k + did_you_mean(k, sorted(known)) for k in unknown]
        raise UserError(
            f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(named)} "
            "(TrainArgs, TRL SFTConfig and ModelConfig fields)"
        )
    return values


def generator_info(cfg: TrainConfig, **extra) -> dict[str, Any]:
    """What the generation stage needs to prompt this model exactly as it was trained."""
    a = cfg.args
    return {
        "prompt_style": a.prompt_style,
        "endpoint": ENDPOINT_FOR_STYLE[a.prompt_style],
        "n_pairs": a.n_pairs,
        "title_in_prompt": True,  # the paper's title heads its text, as `builders.qagen` sends it
        "base_model": cfg.model.model_name_or_path,
        "dataset": a.dataset,
        "dataset_config": a.dataset_config,
        "max_length": cfg.sft.max_length,
        "method": a.method,
        "weights": "adapter" if a.save == "adapter" and a.method != "full" else "full",
        "temperature": 0.6,  # the paper's inference settings
        "top_p": 0.9,
        **extra,
    }
