"""The model card of a trained generator (from `cards/model_card.md`) and its loss curve.

``cfg`` is the run's training config (``trainers.config.TrainConfig``: its ``args``, ``sft`` and ``model``);
``deepspeed`` the name of the DeepSpeed preset it used, if any."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from sciqag_dataset.cards import CITATION

LOSS_CURVE = "loss_curve.png"


def plot_loss(log_history: list[dict], path: str | Path) -> Path:
    """Training (and evaluation) loss against the optimizer step, as a PNG."""
    import matplotlib  # heavy: loaded only when a card is written

    matplotlib.use("Agg")  # no display on training machines; set before pyplot is imported
    import matplotlib.pyplot as plt

    train = [(h["step"], h["loss"]) for h in log_history if "loss" in h and "step" in h]
    evals = [(h["step"], h["eval_loss"]) for h in log_history if "eval_loss" in h and "step" in h]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    if train:
        ax.plot(*zip(*train), label="train", linewidth=1.2)
    if evals:
        ax.plot(*zip(*evals), "o-", label="eval", linewidth=1.2)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("loss")
    ax.set_title("SciQAG generator fine-tuning")
    ax.grid(alpha=0.3)
    if train or evals:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def _is_hub_id(name: str | None) -> bool:
    return bool(name) and not Path(name).exists() and name.count("/") == 1 and not name.startswith((".", "/"))


def hyperparameters(cfg, deepspeed: str | None = None) -> list[tuple[str, object]]:
    a, sft, model = cfg.args, cfg.sft, cfg.model
    schedule = getattr(sft.lr_scheduler_type, "value", sft.lr_scheduler_type)
    rows = [("method", a.method), ("epochs", sft.num_train_epochs)]
    if sft.max_steps > 0:
        rows.append(("max steps", sft.max_steps))
    rows += [
        ("learning rate", sft.learning_rate),
        ("scheduler", schedule),
        ("warm-up steps", sft.warmup_steps),
        ("weight decay", sft.weight_decay),
        ("per-device batch", sft.per_device_train_batch_size),
        ("gradient accumulation", sft.gradient_accumulation_steps),
        ("max length", sft.max_length),
        ("packing", sft.packing),
        ("gradient checkpointing", sft.activation_checkpointing),
    ]
    if a.method != "full":
        rows += [
            ("LoRA r / alpha / dropout", f"{model.lora_r} / {model.lora_alpha} / {model.lora_dropout}"),
            (
                "LoRA targets",
                model.lora_target_modules
                if isinstance(model.lora_target_modules, str)
                else ", ".join(model.lora_target_modules or []),
            ),
        ]
    if model.lora_modules_to_save:
        rows.append(("trained in full", ", ".join(model.lora_modules_to_save)))
    if deepspeed:
        rows.append(("DeepSpeed", deepspeed))
    return rows


def render_model_card(cfg, result, deepspeed: str | None = None) -> ModelCard:
    a, sft, base = cfg.args, cfg.sft, cfg.model.model_name_or_path
    losses = [h["loss"] for h in result.log_history if "loss" in h]
    evals = [h["eval_loss"] for h in result.log_history if "eval_loss" in h]
    weights = result.info.get("weights", "full")
    data = ModelCardData(
        base_model=base if _is_hub_id(base) else None,
        datasets=[a.dataset] if _is_hub_id(a.dataset) else None,
        library_name="peft" if weights == "adapter" else "transformers",
        license=a.license,
        language=["en"],
        pipeline_tag="text-generation",
        tags=["sciqag", "question-generation", "science", "trl", "sft"] + (["lora"] if a.method != "full" else []),
    )
    hub = sft.hub_model_id if sft.push_to_hub else None
    template = resources.files("sciqag_dataset.cards").joinpath("model_card.md")
    with resources.as_file(template) as path:
        return ModelCard.from_template(
            data,
            template_path=str(path),
            model_name=hub or cfg.output_dir.name,
            repo_id=hub or str(cfg.output_dir),
            base_model=base,
            base_model_link=f"https://huggingface.co/{base}" if _is_hub_id(base) else base,
            dataset=a.dataset,
            dataset_link=f"https://huggingface.co/datasets/{a.dataset}" if _is_hub_id(a.dataset) else None,
            dataset_config=a.dataset_config,
            train_split=a.train_split,
            eval_split=a.eval_split,
            prompt_style=a.prompt_style,
            n_pairs=a.n_pairs,
            method=a.method,
            weights=weights,
            deepspeed=deepspeed,
            max_length=sft.max_length,
            seed=sft.seed,
            completion_only_loss=sft.completion_only_loss or sft.assistant_only_loss,
            racar_threshold=a.augment_racar_threshold,
            hyperparameters=hyperparameters(cfg, deepspeed),
            data=result.data,
            runtime=result.runtime,
            loss_curve=LOSS_CURVE,
            final_loss=losses[-1] if losses else None,
            eval_loss=evals[-1] if evals else None,
            citation=CITATION.strip(),
        )


def write_model_card(cfg, result, deepspeed: str | None = None) -> Path:
    out = Path(result.output_dir)
    plot_loss(result.log_history, out / LOSS_CURVE)
    render_model_card(cfg, result, deepspeed).save(out / "README.md")
    return out / "README.md"
