"""Child processes never outlive the command that started them, even when it is killed with -9.

Worker pools (keywords, coverage) and the embedded model server call ``die_with_parent`` in the child:
on Linux the kernel sends SIGKILL when the parent goes (``PR_SET_PDEATHSIG``), and a watchdog thread
that notices the parent has changed covers other systems and the case where the starting thread, not
the process, ended (PDEATHSIG follows the thread).
"""
from __future__ import annotations

import os
import signal
import threading
import time


def _pdeathsig() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the watchdog below still works
        pass


def _watch(parent: int, interval: float) -> None:
    while True:
        time.sleep(interval)
        if os.getppid() != parent:
            os._exit(1)


def die_with_parent(interval: float = 1.0) -> None:
    """Call in a child process: it ends when its parent does."""
    parent = os.getppid()
    _pdeathsig()
    if parent == 1 or os.getppid() != parent:  # the parent died before we were tied to it
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, interval), daemon=True, name="die-with-parent").start()


def preexec_die_with_parent() -> None:
    """For ``subprocess.Popen(preexec_fn=...)``: the kernel part only (no threads between fork and exec)."""
    _pdeathsig()


class WorkerInit:
    """A pool initializer (picklable) that ties the worker to its parent, then runs ``fn(*args)``."""

    def __init__(self, fn=None, args: tuple = ()):
        self.fn, self.args = fn, args

    def __call__(self) -> None:
        die_with_parent()
        if self.fn is not None:
            self.fn(*self.args)
