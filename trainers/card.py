"""The model card (from `cards/model_card.md`), its loss curve, and the Hub upload."""
from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from sciqag_dataset.builder import CITATION

from .config import TrainConfig

log = logging.getLogger(__name__)

LOSS_CURVE = "loss_curve.png"
HUB_IGNORE = ["checkpoints/*", "*.tmp"]


def plot_loss(log_history: list[dict], path: str | Path) -> Path:
    """Training (and evaluation) loss against the optimizer step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # no display on training machines
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


def hyperparameters(cfg: TrainConfig) -> list[tuple[str, object]]:
    rows = [("method", cfg.method), ("epochs", cfg.num_train_epochs)]
    if cfg.max_steps > 0:
        rows.append(("max steps", cfg.max_steps))
    rows += [("learning rate", cfg.learning_rate), ("scheduler", cfg.lr_scheduler_type),
             ("warm-up steps", cfg.warmup_steps), ("weight decay", cfg.weight_decay),
             ("per-device batch", cfg.per_device_train_batch_size),
             ("gradient accumulation", cfg.gradient_accumulation_steps), ("max length", cfg.max_length),
             ("packing", cfg.packing), ("gradient checkpointing", cfg.gradient_checkpointing)]
    if cfg.method != "full":
        rows += [("LoRA r / alpha / dropout", f"{cfg.lora_r} / {cfg.lora_alpha} / {cfg.lora_dropout}"),
                 ("LoRA targets", ", ".join(cfg.lora_target_modules))]
    if cfg.method == "longlora":
        rows.append(("trained in full", ", ".join(cfg.trainable_modules)))
    if cfg.deepspeed:
        rows.append(("DeepSpeed", cfg.deepspeed))
    return rows


def render_model_card(cfg: TrainConfig, result) -> ModelCard:
    losses = [h["loss"] for h in result.log_history if "loss" in h]
    evals = [h["eval_loss"] for h in result.log_history if "eval_loss" in h]
    weights = result.info.get("weights", "full")
    data = ModelCardData(
        base_model=cfg.base_model if _is_hub_id(cfg.base_model) else None,
        datasets=[cfg.dataset] if _is_hub_id(cfg.dataset) else None,
        library_name="peft" if weights == "adapter" else "transformers",
        license=cfg.license, language=["en"], pipeline_tag="text-generation",
        tags=["sciqag", "question-generation", "science", "trl", "sft"] + (["lora"] if cfg.method != "full" else []),
    )
    repo_id = cfg.push_to_hub or str(cfg.output_dir)
    template = resources.files("sciqag_dataset.cards").joinpath("model_card.md")
    with resources.as_file(template) as path:
        return ModelCard.from_template(
            data, template_path=str(path),
            model_name=(cfg.push_to_hub or Path(cfg.output_dir).name), repo_id=repo_id,
            base_model=cfg.base_model,
            base_model_link=f"https://huggingface.co/{cfg.base_model}" if _is_hub_id(cfg.base_model)
            else cfg.base_model,
            dataset=cfg.dataset, dataset_link=f"https://huggingface.co/datasets/{cfg.dataset}"
            if _is_hub_id(cfg.dataset) else None,
            dataset_config=cfg.dataset_config, train_split=cfg.train_split, eval_split=cfg.eval_split,
            prompt_style=cfg.prompt_style, n_pairs=cfg.n_pairs, method=cfg.method, weights=weights,
            deepspeed=cfg.deepspeed, max_length=cfg.max_length, seed=cfg.seed,
            completion_only_loss=cfg.completion_only_loss or cfg.assistant_only_loss,
            racar_threshold=cfg.augment_racar_threshold,
            hyperparameters=hyperparameters(cfg), data=result.data, runtime=result.runtime,
            loss_curve=LOSS_CURVE, final_loss=losses[-1] if losses else None,
            eval_loss=evals[-1] if evals else None, citation=CITATION.strip(),
        )


def write_model_card(cfg: TrainConfig, result) -> Path:
    out = Path(result.output_dir)
    plot_loss(result.log_history, out / LOSS_CURVE)
    render_model_card(cfg, result).save(out / "README.md")
    return out / "README.md"


def push_model(folder: str | Path, repo_id: str, *, private: bool = False, api=None) -> str:
    """Upload the model folder as it is, checkpoints left out."""
    from sciqag_dataset import __version__
    from sciqag_dataset.publish import push_to_hub

    return push_to_hub(folder, repo_id, private=private, api=api, repo_type="model", ignore_patterns=HUB_IGNORE,
                       message=f"Upload SciQAG generator (sciqag-hf {__version__})")
