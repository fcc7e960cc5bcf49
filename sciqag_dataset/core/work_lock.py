"""One command at a time per work directory.

A command that writes a work directory holds an advisory lock on ``WORK/.sciqag.lock`` (``flock``) while it
runs; a second one is refused with the holder's pid and command, or waits for it (``--wait-turn``). The kernel
drops the lock when its process ends, however it ends, so a lock left by a killed run never blocks the
next one: the file still names the dead holder, and the next command notes that it takes over.

Runs of one stage's shards (``sciqag generate --shard i/n``, which write files of their own) share the lock
with each other; any other command excludes them. `sciqag review`, `sciqag agreement` and `sciqag export` take
no lock: they read the pipeline's files and write only their own. A scaled run submitted to Slurm without
waiting (``executor.wait: false``) holds the lock only while it submits; its jobs go on writing after that.
A file system that cannot lock (some network mounts) runs the command unlocked, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sciqag_dataset.core.errors import UserError

try:
    import fcntl
except ImportError:  # not POSIX: commands run unlocked
    fcntl = None

log = logging.getLogger(__name__)

LOCK_FILE = ".sciqag.lock"


def _read_holder(handle) -> dict | None:
    handle.seek(0)
    try:
        data = json.loads(handle.read() or "null")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def describe(holder: dict | None) -> str:
    """Who holds the lock, for a message: "pid 123 (sciqag run cfg.yaml), since 10:02:11 UTC"."""
    if not holder:  # shard runs name nobody; another command names itself as soon as it holds the lock
        return "another sciqag command (shard runs of `sciqag generate --shard` name nobody)"
    where = "" if holder.get("host") in (None, socket.gethostname()) else f" on {holder['host']}"
    return f"pid {holder.get('pid')}{where} ({holder.get('command', '?')}), since {holder.get('since', '?')}"


def _try(handle, mode: int) -> bool | None:
    """True: locked; False: another process holds it; None: this file system cannot lock."""
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # ENOLCK, ENOSYS, EOPNOTSUPP: a mount without locks (Lustre without -o flock, ...)
        log.warning("%s cannot be locked (%s): running without the one-command-at-a-time check", handle.name, exc)
        return None
    return True


@contextmanager
def hold(work: str | os.PathLike, command: str, *, shared: bool = False, wait: bool = False) -> Iterator[None]:
    """Hold ``work``'s lock for the body; UserError naming the holder when it is taken (unless ``wait``).

    ``command``: what the holder is doing, shown to a command refused meanwhile. ``shared``: a shard run, which
    may run beside other shard runs of the same work directory.
    """
    if fcntl is None:
        yield
        return
    path = Path(work) / LOCK_FILE
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    with open(path, "a+", encoding="utf-8") as handle:
        locked = _try(handle, mode)
        if locked is None:
            yield
            return
        if not locked:
            holder = _read_holder(handle)
            if not wait:
                raise UserError(
                    f"{work} is in use by {describe(holder)}: one command at a time per work directory. "
                    "Wait for it to finish, or add --wait-turn to start when it has"
                )
            print(f"Waiting for {describe(holder)} to finish with {work} ...", file=sys.stderr, flush=True)
            fcntl.flock(handle, mode)
        stale = _read_holder(handle)
        if stale and stale.get("pid") != os.getpid():
            # a holder clears the file when it finishes: this one ended without finishing (killed, crashed)
            log.warning("%s: taking over the lock of %s, which ended without releasing it", work, describe(stale))
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": command,
            "since": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        }
        if shared:
            if stale:
                handle.truncate(0)  # shard runs name nobody: several hold the lock at once
        else:
            handle.seek(0)
            handle.truncate(0)
            handle.write(json.dumps(mine))
            handle.flush()
        try:
            yield
        finally:
            if not shared:
                handle.truncate(0)
                handle.flush()
