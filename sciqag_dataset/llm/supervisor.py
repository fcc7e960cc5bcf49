"""The embedded model's server for one run: started on first need, watched, restarted once, then replaced.

Every client of the run that asks the embedded model shares one ``EmbeddedServer``. A client calls
``connect`` before its first request the cache cannot answer, and ``recover`` after a connection error. A
server that died (a crash, an OOM kill) is reported once, with its exit status or signal and the last lines
of its log, and started again; an engine that dies twice gives way to the next one of its choice's fallbacks
(llama.cpp to ``transformers serve``, with a warning saying why) when the engine was chosen automatically
(``embedded.choose``); when none is left, ``ServerDown`` stops the stage without marking any paper failed
(the CLI exits 2 with one line).

Ranks of a scaled-out run talk to the server their parent started (``Serving``, its process included) and
cannot restart it: ``AttachedServer`` only tells them whether it is gone.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sciqag_dataset.core.errors import ServerDown, UserError
from sciqag_dataset.core.processes import Owner, started
from sciqag_dataset.llm import embedded
from sciqag_dataset.llm.server import LocalServer, ServerDied

log = logging.getLogger(__name__)

#: Starts of one engine in one run: the first, and one restart after a death.
STARTS_PER_ENGINE = 2


@dataclass(frozen=True)
class Serving:
    """Where a local server answers: all a client needs, and all a rank in another process gets."""

    urls: list[str]
    model: str  # the name requests send
    identity: str  # names its replies in the response cache: another engine writes other text
    process: Owner | None = None  # its pid and start time (pids are reused), for ranks that watch it


class EmbeddedServer:
    """See the module docstring. ``start`` is ``embedded.start`` (tests give a server that crashes)."""

    def __init__(
        self,
        choice: embedded.Choice,
        log_path: str | Path | None = None,
        start: Callable[[embedded.Choice, str | Path | None], LocalServer] = embedded.start,
    ):
        self.plan = choice.plan()
        self.log_path = log_path
        self._start = start
        self._starts: Counter = Counter()
        self._server: LocalServer | None = None
        self._serving: Serving | None = None
        self._down: ServerDown | None = None
        self.choice = choice  # the engine serving now (or last)

    @property
    def started(self) -> bool:
        return self._serving is not None

    def connect(self) -> Serving:
        """A server that answers: the running one, else a new one (a dead one is reported first)."""
        if self._server is not None and self._server.alive():
            return self._serving
        self._bury()
        return self._start_next()

    def recover(self, serving: Serving | None) -> Serving | None:
        """After a connection error to ``serving``: None if the server is alive (retry as usual), else a server
        that answers (another client may have started it already). Raises ``ServerDown`` when none can."""
        if self._server is not None and serving != self._serving and self._server.alive():
            return self._serving
        if self._server is not None and not self._server.ends_within(1.0):  # a crash may still be on its way out
            return None
        return self.connect()

    def dead(self) -> str | None:
        """How the server this run started ended, if it did (for a caller that only sees its effects)."""
        return self._server.death() if self._server is not None and not self._server.alive() else None

    def _bury(self) -> None:
        if self._server is not None:
            self._report(self._server.death())
            self._server.stop()
            self._server = None

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def _start_next(self) -> Serving:
        if self._down is not None:  # nothing is left to try: every later request fails alike, at once
            raise self._down
        reasons = []
        while self.plan:
            choice = self.plan[0]
            if self._starts[choice.engine.name] >= STARTS_PER_ENGINE:
                self._give_up_on(choice, "it died twice")
                continue
            self._starts[choice.engine.name] += 1
            print(f"Starting the embedded {embedded.DEFAULT_MODEL_ID} server: {choice.describe()}", file=sys.stderr)
            try:
                server = self._start(choice, self.log_path)
            except ServerDied as exc:
                self._report(str(exc))
                reasons.append(str(exc).split("\n")[0])
                continue
            except UserError as exc:  # cannot run here at all (a package or the model file is missing)
                reasons.append(str(exc))
                self._give_up_on(choice, str(exc))
                continue
            except Exception as exc:
                reasons.append(f"{type(exc).__name__}: {exc}")
                self._give_up_on(choice, reasons[-1])
                continue
            self._server, self.choice = server, choice
            pid = server.proc.pid
            self._serving = Serving([server.base_url], server.model, choice.identity, (pid, started(pid)))
            return self._serving
        self._down = ServerDown(
            f"the embedded {embedded.DEFAULT_MODEL_ID} server could not be started or kept "
            f"running: {'; '.join(reasons) or 'it died twice'}"
            + (f" (see {self.log_path})" if self.log_path else "")
            + "; no paper was marked failed: rerun to go on, or configure an endpoint"
        )
        raise self._down

    def _give_up_on(self, choice: embedded.Choice, why: str) -> None:
        self.plan.pop(0)
        if self.plan:
            log.warning(
                "embedded model: %s on %s failed (%s): serving with %s instead",
                embedded.DEFAULT_MODEL_ID,
                choice.engine.name,
                why.split("\n")[0],
                self.plan[0].describe(),
            )

    def _report(self, death: str) -> None:
        log.error("embedded model server died: %s", death)


class AttachedServer:
    """A rank's view of the server its parent started: it cannot restart it, only tell whether it is gone."""

    def __init__(self, serving: Serving):
        self.serving = serving

    def connect(self) -> Serving:
        return self.serving

    def recover(self, serving: Serving | None) -> Serving | None:
        process = self.serving.process
        if process is None or started(process[0]) == process[1]:  # alive (or cannot be told): retry as usual
            return None
        raise ServerDown(
            f"the embedded server (pid {process[0]}) that this run started is gone; no paper "
            "was marked failed: rerun to go on"
        )
