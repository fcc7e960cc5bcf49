"""A time limit on reading one file: a PDF that pdfminer never finishes must not hold up the corpus.

SIGALRM, so only in the main thread of a POSIX process (a plain run, and each datatrove rank); elsewhere the
file is read without a limit. An alarm already set (pytest-timeout's, an outer limit) is kept: ours only
applies when it comes first, and the other is set again, less the time spent, when ours ends."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class TimedOut(BaseException):
    """BaseException: a reader's ``except Exception`` (one bad page must not lose the others) must not
    swallow it."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise TimedOut()

    old_handler = signal.signal(signal.SIGALRM, expired)
    if old_handler is None:  # installed outside Python: nothing of ours to give back but the default
        old_handler = signal.SIG_DFL
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    if old_delay and old_delay <= seconds:  # the alarm already set comes first: it stays as it was
        signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)
        signal.signal(signal.SIGALRM, old_handler)
        yield
        return
    start = time.monotonic()
    try:
        yield
    finally:
        # no alarm may land half-way through putting things back: ours would escape, the outer one be lost
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_delay:
                signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - start), 0.001), old_interval)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
