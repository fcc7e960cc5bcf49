"""The stage contract: every per-paper step of the pipeline is a ``Stage``, run by the one runner.

A stage is a name, the input records it reads (from the one join, ``records.py``), a function from one
input record to its output record (plain, or ``async`` when it waits on a model), and the parameters that,
with the input, decide the output (settings, model names). The runner (``runner.run_stage``) stores with
every output record its **fingerprint**, a hash of those parameters and of the input record: a rerun skips
a record whose fingerprint is unchanged, and redoes one whose input or parameters changed. It also gives
every stage shards, a bounded driver, a progress bar, failure isolation and a manifest.

A stage maps one-to-one onto a datatrove ``PipelineStep``: ``run_stage(stage, work, shard=(rank,
world_size))`` is that step's ``run(data, rank, world_size)`` (see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Stage:
    name: str
    #: the records to process: ``inputs(work)`` yields dicts with an ``id`` (see records.py)
    inputs: Callable[[Path], Iterable[dict]]
    #: one input record -> its output record (``id`` is added if missing); may be ``async``
    process: Callable[[dict], dict | Awaitable[dict]]
    #: what besides the input decides the output: settings, model names (JSON-serialisable)
    params: dict[str, Any] = field(default_factory=dict)
    #: the output file in the work directory (default ``<name>.jsonl``)
    output: str | None = None
    #: async stages: records in flight at once
    concurrency: int = 1
    #: plain stages: worker processes (then ``process`` and ``setup`` must be picklable)
    workers: int = 1
    #: run once per process before its first record (loads a model)
    setup: Callable[[], None] | None = None
    #: how many records ``inputs`` yields, for the progress bar (optional)
    count: Callable[[Path], int] | None = None
    #: live figures shown on the progress bar (tokens/s, cache hits)
    progress: Callable[[], dict] | None = None
    #: what the manifest records besides counts and timing (model, endpoints, token usage)
    describe: Callable[[], dict] | None = None
    #: awaited after an async run (closes HTTP clients)
    close: Callable[[], Awaitable[None]] | None = None
    #: what one input record is, for the progress bar
    unit: str = "paper"

    @property
    def output_file(self) -> str:
        return self.output or f"{self.name}.jsonl"

    @property
    def is_async(self) -> bool:
        fn = self.process
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 - an instance's method


def digest(value: Any) -> str:
    """A short stable hash of a JSON-like value."""
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:16]


def fingerprint(params: dict, record: dict) -> str:
    """What decides a stage's output for ``record``: its parameters and the whole input record."""
    return digest({"params": params, "input": record})
