"""Files a reader never sees half-written: each is written beside its target and renamed over it
(``os.replace`` is atomic within a filesystem). A write that fails (a full disk, text that is not valid
Unicode, a kill) leaves the old file and no temporary one."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


@contextmanager
def replacing(path: str | Path, *, durable: bool = False) -> Iterator[TextIO]:
    """A text file to write ``path``'s new content into; it replaces ``path`` when the block ends without an
    error. ``durable``: flushed to disk before the rename (a file whose loss costs model calls)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # two processes never share a temporary file
    try:
        with tmp.open("w", encoding="utf-8") as f:
            yield f
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_whole(path: str | Path, text: str) -> Path:
    with replacing(path) as f:
        f.write(text)
    return Path(path)


def write_json(path: str | Path, data: Any) -> Path:
    return write_whole(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
