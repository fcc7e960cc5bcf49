"""The contract between training and generation: ``sciqag_generator.json`` beside a model's weights.

`sciqag train` writes it; the generation stage reads it to prompt the model exactly as it was trained
(the prompt style, and so which endpoint, ``/v1/chat/completions`` or ``/v1/completions``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from huggingface_hub import hf_hub_download

from sciqag_dataset.core.errors import UserError

log = logging.getLogger(__name__)

GENERATOR_INFO_FILE = "sciqag_generator.json"
PROMPT_STYLES = ("paper", "alpaca")
#: How the served generator is called for each prompt style.
ENDPOINT_FOR_STYLE = {"paper": "chat", "alpaca": "completion"}


def write_generator_info(model_dir: str | Path, info: dict[str, Any]) -> Path:
    path = Path(model_dir) / GENERATOR_INFO_FILE
    path.write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _info_text(model_dir: str | Path, hub: bool = True) -> str | None:
    local = Path(model_dir)
    if local.is_dir():
        path = local / GENERATOR_INFO_FILE
        return path.read_text(encoding="utf-8") if path.is_file() else None
    if not hub or local.exists() or str(model_dir).count("/") != 1:
        return None  # a file, or not shaped like a Hub repo id
    try:  # a Hub model id: the file is small; offline or absent simply means "no info"
        return Path(hf_hub_download(str(model_dir), GENERATOR_INFO_FILE)).read_text(encoding="utf-8")
    except Exception as exc:
        log.info("no %s for %s (%s)", GENERATOR_INFO_FILE, model_dir, type(exc).__name__)
        return None


def read_generator_info(model_dir: str | Path, *, hub: bool = True) -> dict[str, Any] | None:
    """The generator info stored by `sciqag train` with a model, or None when there is none.

    ``model_dir`` is a local model folder or a Hub model id. Missing optional keys get their
    defaults (n_pairs 10, endpoint from the prompt style); a malformed file raises UserError,
    because prompting a generator the wrong way silently ruins its output.
    """
    text = _info_text(model_dir, hub)
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
        raise UserError(
            f"{model_dir}/{GENERATOR_INFO_FILE}: prompt_style must be one of {PROMPT_STYLES}, not {style!r}"
        )
    n = info.get("n_pairs", 10)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise UserError(f"{model_dir}/{GENERATOR_INFO_FILE}: n_pairs must be a positive integer, not {n!r}")
    return {**info, "prompt_style": style, "n_pairs": n, "endpoint": info.get("endpoint") or ENDPOINT_FOR_STYLE[style]}
