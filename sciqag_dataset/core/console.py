"""What a command shows the user: one line for a user error, a traceback for a bug, redacted logs.

Shared by `sciqag` and `sciqag train` (``sciqag_dataset/cli/train.py``) so both behave the same.
Everything printed here goes through ``redact`` (no key or URL password reaches a terminal or a log).
"""

from __future__ import annotations

import logging
import sys
import traceback

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.redact import install_log_redaction, redact

EXIT_OK, EXIT_FAILED, EXIT_USER_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def plural(n: int, noun: str, many: str | None = None) -> str:
    """A count and its noun: ``plural(1, "paper")`` is "1 paper", ``plural(3, "paper")`` "3 papers"."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()


def run_command(
    func, args, name: str, interrupted: str = "finished papers are saved; rerun the same command to resume"
) -> int:
    """``func(args)``: a UserError -> its message on one line, exit 2; any other exception is a bug ->
    its traceback, exit 1; Ctrl-C (or SIGTERM turned into it) -> exit 130."""
    try:
        return func(args)
    except KeyboardInterrupt:
        print(f"Interrupted: {interrupted}.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except UserError as exc:
        print(redact(f"{name}: error: {' '.join(str(exc).split())}"), file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception:
        print(redact(traceback.format_exc()), file=sys.stderr, end="")
        print(f"{name}: internal error (a bug: please report it with the traceback above)", file=sys.stderr)
        return EXIT_FAILED
