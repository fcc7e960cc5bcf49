"""Uploads to the Hub: a published dataset folder or a trained model folder, as it is (a thin layer over
huggingface_hub; the Hub cannot be reached offline, so tests pass a fake ``api``)."""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset import __version__
from sciqag_dataset.core.folders import MARKER

HUB_IGNORE = ["checkpoints/*", "*.tmp"]  # a model folder's training checkpoints stay local


def push_to_hub(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    api=None,
    repo_type: str = "dataset",
    ignore_patterns: list[str] | None = None,
    message: str | None = None,
) -> str:
    """Upload a folder as it is: the dataset folder, or a model folder (a thin layer over huggingface_hub;
    the Hub cannot be reached offline, so tests pass a fake ``api``)."""
    from huggingface_hub import HfApi

    api = api or HfApi()
    api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
    info = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type=repo_type,
        ignore_patterns=[*(ignore_patterns or []), MARKER],  # the local ownership marker
        commit_message=message or f"Publish with sciqag-hf {__version__}",
    )
    return str(getattr(info, "commit_url", info))


def push_model(folder: str | Path, repo_id: str, *, private: bool = False, api=None) -> str:
    """Upload the model folder as it is, checkpoints left out."""
    return push_to_hub(
        folder,
        repo_id,
        private=private,
        api=api,
        repo_type="model",
        ignore_patterns=HUB_IGNORE,
        message=f"Upload SciQAG generator (sciqag-hf {__version__})",
    )
