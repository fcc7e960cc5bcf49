"""The transformers engine: ``transformers serve`` on a model folder (``models.default_model_dir``).

The embedded default's fallback, always offered: where its package is missing, starting it fails and the
run stops naming what is missing (``supervisor``). Quality comes before speed: SmolLM2-135M's replies
collapse into repetition in bfloat16, so it serves float32 unless told otherwise.
"""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.llm.engines import Engine
from sciqag_dataset.llm.models import default_model_dir
from sciqag_dataset.llm.server import LocalServer

NAME = "transformers"
BF16_FLAGS = {"avx512_bf16", "amx_bf16"}


def installed() -> bool:
    # the last resort, never passed over: a missing package is named when its server fails to start
    return True


def notes(dtype: str, flags: set[str]) -> tuple[str, ...]:
    if dtype != "bfloat16":
        return ()
    out = ["bfloat16: this 135M model's replies tend to collapse into repetition in bfloat16"]
    if not flags & BF16_FLAGS:
        out.append("this CPU has no avx512_bf16/amx_bf16: bfloat16 runs several times slower than float32")
    return tuple(out)


def launch(choice, log_path: str | Path | None = None) -> LocalServer:
    return LocalServer(
        default_model_dir(), log_path=log_path, continuous_batching=False, dtype=choice.dtype, threads=choice.threads
    )


ENGINE = Engine(
    name=NAME,
    rank=20,
    dtypes=("float32", "bfloat16", "float16"),
    installed=installed,
    launch=launch,
    tag="transformers",
    notes=notes,
)
