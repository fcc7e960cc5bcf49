"""The one error class a user can fix: the CLI prints its message on one line and exits 2.

Everything else that escapes a command is a bug in this project (or in a library) and is shown with
its traceback (exit 1), so that it can be reported rather than mistaken for a bad option.
"""

from __future__ import annotations


class UserError(ValueError):
    """A bad option or config value, a missing input, a refused output folder, an unreachable endpoint.

    A ``ValueError`` so that library callers that already catch ``ValueError`` keep working.
    """


class MissingInput(UserError, FileNotFoundError):
    """A stage's input is not there yet (e.g. ``papers.jsonl`` before ``sciqag ingest``)."""


class Unavailable(UserError, RuntimeError):
    """Something the run needs is not installed or cannot run here (a package, a model, a GPU, a server)."""


class StopRun(UserError):
    """The run stops cleanly, and no record is to blame (a dead server, the cost cap): the runner stops the
    stage and marks nothing failed, so a rerun picks up where this one stopped."""


class ServerDown(Unavailable, StopRun):
    """A local model server this run started is down for good (it died, was restarted, and died again).

    Not the paper's fault: the runner stops the stage and marks no record failed, so a rerun asks again.
    """
