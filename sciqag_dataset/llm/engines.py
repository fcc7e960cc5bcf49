"""The local engines that can serve the embedded model, declared once each and kept in a registry.

An engine is a server program on loopback (llama.cpp, ``transformers serve``). Each declares its name (the
value of ``embedded.backend``), whether it is installed here, how its server is launched, the tag its replies
carry in the response cache, what it serves, and its rank: ``auto`` takes the installed engine of lowest rank,
and the installed engines after it, in rank order, take over when it keeps dying (``supervisor``). The
choice (``embedded.choose``), the fallback chain and the config's choices all read the registry.

Adding an engine: a module that builds its ``Engine`` (see ``llama_cpp_engine.py``), listed in
``embedded.ENGINES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciqag_dataset.core.registry import Registry as _Registry
from sciqag_dataset.llm.server import LocalServer


def _no_notes(dtype: str, flags: set[str]) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Engine:
    """One local engine. ``launch(choice, log_path)`` returns its server with the model prepared, not yet
    started (the server's ``command()`` is the command line)."""

    name: str  # the value of `embedded.backend` (and of `--embedded-backend`)
    rank: int  # auto: the installed engine of lowest rank serves; the later ones are its fallbacks
    dtypes: tuple[str, ...]  # what it serves; the first is the default (embedded.dtype auto)
    installed: Callable[[], bool]
    launch: Callable[[Any, str | Path | None], LocalServer]  # (embedded.Choice, log path) -> server
    tag: str  # names its replies in the response cache: another engine writes other text
    json_schema: bool = True  # whether it takes `response_format` of type json_schema (judges ask in text if not)
    missing: str = ""  # the error when it is asked for by name and is not installed: what to install
    # the note when `auto` passes over it because it is not installed; {instead} is the engine that serves
    passed_over: str = ""
    # warnings about serving `dtype` on a CPU with `flags` (quality, speed)
    notes: Callable[[str, set[str]], tuple[str, ...]] = _no_notes

    def __repr__(self) -> str:
        return f"Engine({self.name!r})"


class Registry(_Registry[Engine]):
    """Engines by name, iterated in rank order."""

    def __init__(self, *engines: Engine):
        super().__init__("engine")
        for engine in engines:
            self.register(engine)

    def register(self, engine: Engine) -> Engine:
        if engine.name == "auto":
            raise ValueError("`auto` names the choice among the engines, not an engine")
        return super().register(engine)

    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self)

    def __iter__(self) -> Iterator[Engine]:
        return iter(sorted(self.items(), key=lambda e: e.rank))

    def installed(self) -> set[str]:
        """The names of the engines installed here."""
        return {e.name for e in self if e.installed()}
