"""Child processes never outlive the command that started them, even when it is killed with -9.

Worker pools (keywords, coverage) and the embedded model server call ``die_with_parent`` in the child:
on Linux the kernel sends SIGKILL when the parent goes (``PR_SET_PDEATHSIG``), and a watchdog thread
that notices the parent has changed covers other systems and the case where the starting thread, not
the process, ended (PDEATHSIG follows the thread).

A scaled-out run's working processes are not all its children: datatrove's ranks are children of
multiprocessing's fork server (which stays while any rank holds its pipe), Ray's of the raylet. So each rank
calls ``die_with`` with the command's ``this_process()`` and watches that process itself, and ``tied()``
covers the rest for the length of the run: a fork of the command's main thread (datatrove's manager) gets
PDEATHSIG, and a reaper process kills what is left of the command's process tree once it died (Ray's agents,
which otherwise wait a minute for the dead GCS before they exit). Linux only (it reads /proc).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

_prctl = None  # looked up once, in the parent: a child between fork and exec should not load libraries


def _load_prctl():
    global _prctl
    if _prctl is None:
        import ctypes

        _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    return _prctl


def _pdeathsig() -> None:
    try:
        _load_prctl()(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
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


Owner = tuple[int, int]  # pid and start time: pids are reused


def started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot); None when it is gone, a zombie, or without /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] in "ZX" else int(fields[19])


def this_process() -> Owner | None:
    """This process, as ``die_with`` and the reaper know it (None without /proc: nothing is tied)."""
    start = started(os.getpid())
    return None if start is None else (os.getpid(), start)


_watching: set[tuple[int, Owner]] = set()  # (watching pid, owner): a forked child has no watchdog thread


def _watch_owner(owner: Owner, interval: float) -> None:
    while started(owner[0]) == owner[1]:
        time.sleep(interval)
    os._exit(1)


def die_with(owner: Owner | None, interval: float = 0.5) -> None:
    """Call in a process started, however indirectly, by ``owner``: it ends within ``interval`` of the owner's
    end (kill -9 included). Once per process; nothing when it is the owner itself (a rank run in place)."""
    if owner is None or owner[0] == os.getpid() or (os.getpid(), owner) in _watching:
        return
    if started(owner[0]) != owner[1]:
        os._exit(1)
    _watching.add((os.getpid(), owner))
    threading.Thread(target=_watch_owner, args=(owner, interval), daemon=True, name="die-with-owner").start()


_registered = _tie_forks = False
_forker = 0  # the pid of the process forking: read in the child
_main = threading.main_thread().ident  # a child keeps the id of the thread that forked it


def _before_fork() -> None:
    global _forker
    _forker = os.getpid()


def _after_fork_in_child() -> None:
    # the kernel part only: this also runs between fork and exec (subprocess with a preexec_fn)
    if _tie_forks and threading.get_ident() == _main:  # PDEATHSIG follows the forking thread: only the main
        _pdeathsig()  # one lives as long as the process
        if os.getppid() != _forker:
            os._exit(1)


@contextmanager
def tied(interval: float = 1.0):
    """For the block, what this process starts dies with it: forks of its main thread get PDEATHSIG, and a
    reaper kills what is left of its process tree when it dies; a normal end of the block stops the reaper."""
    global _registered, _tie_forks
    owner = this_process()
    if owner is None:
        yield
        return
    if not _registered:  # for good (hooks cannot be removed): ``_tie_forks`` turns them on
        try:
            _load_prctl()
        except Exception:  # no glibc: forks stay untied, the reaper and the ranks' watchdogs still work
            pass
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
        _registered = True
    # its own session: a kill of this process's group leaves it there to clean up; started from the folder
    # that holds this package, wherever this process was started
    reaper = subprocess.Popen(
        [sys.executable, "-m", __name__, *map(str, owner), str(interval)],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=Path(__file__).parents[2],
    )
    was, _tie_forks = _tie_forks, True
    try:
        yield
    finally:
        _tie_forks = was
        reaper.terminate()
        reaper.wait()


def _table() -> dict[int, tuple[int, int]]:
    """Every live process: pid -> (parent pid, start time)."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] not in "ZX":
                out[int(entry.name)] = (int(fields[1]), int(fields[19]))
    return out


def _below(roots: set[int], procs: dict[int, tuple[int, int]]) -> dict[int, int]:
    """``roots`` and every process under them: pid -> start time."""
    found = roots & procs.keys()
    while grown := {p for p, (parent, _) in procs.items() if parent in found} - found:
        found |= grown
    return {p: procs[p][1] for p in found}


def _kill(pid: int, start: int) -> None:
    try:
        fd = os.pidfd_open(pid)  # holds the process checked below: its pid cannot be reused before the signal
    except (AttributeError, OSError):
        fd = None
    try:
        if started(pid) == start:
            if fd is None:
                os.kill(pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        if fd is not None:
            os.close(fd)


def reap(owner: Owner, interval: float) -> None:
    """The reaper: notes the owner's process tree while it lives, then kills what is left of it (orphans are
    no longer below it: they were noted before)."""
    seen: dict[int, int] = {}
    while started(owner[0]) == owner[1]:
        procs = _table()
        seen = {p: s for p, s in seen.items() if procs.get(p, (0, None))[1] == s}
        seen.update(_below({owner[0]}, procs))
        time.sleep(interval)
    for _ in range(100):
        procs = _table()
        left = _below({p for p, s in seen.items() if procs.get(p, (0, None))[1] == s}, procs)  # and their new children
        left.pop(os.getpid(), None)
        if not left:
            return
        for pid, start in left.items():
            _kill(pid, start)
        seen = left
        time.sleep(0.05)


if __name__ == "__main__":  # the reaper of ``tied``: python -m sciqag_dataset.core.processes PID START INTERVAL
    reap((int(sys.argv[1]), int(sys.argv[2])), float(sys.argv[3]))
