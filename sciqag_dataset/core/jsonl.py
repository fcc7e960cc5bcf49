"""JSON Lines, the work directory's storage: append-only, one record per line, latest line per id wins.

A stage appends one finished record per line and flushes at once, so a kill loses only the records in
flight; a line torn by a kill is skipped on reading and cut off before the next append. Readers hold
line offsets, never records, so memory does not grow with a corpus.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from array import array
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from sciqag_dataset.core.atomic import replacing
from sciqag_dataset.core.text_repair import repair

log = logging.getLogger(__name__)


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Yield records; a torn last line (a kill mid-write) is skipped with a warning."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s:%d: skipping an incomplete line (interrupted write)", path, lineno)


def iter_latest(path: str | Path) -> Iterator[dict]:
    """Stream the last record per id, keeping one line offset per id rather than the records."""
    path = Path(path)
    if not path.exists():
        return
    last = JsonlIndex(path).offsets
    with path.open("rb") as f:
        for off in last.values():
            f.seek(off)
            yield json.loads(f.readline())


class JsonlIndex:
    """Random access to the latest record per id of a JSONL file, holding only line offsets."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.offsets: dict[str, int] = {}
        self._file = None
        if self.path.exists():
            with self.path.open("rb") as f:
                offset = 0
                for line in f:
                    try:
                        self.offsets[json.loads(line)["id"]] = offset
                    except (json.JSONDecodeError, KeyError, TypeError):
                        pass
                    offset += len(line)

    def __contains__(self, key: str) -> bool:
        return key in self.offsets

    def get(self, key: str) -> dict | None:
        off = self.offsets.get(key)
        if off is None:
            return None
        if self._file is None:  # one handle for all lookups (a join makes one per paper)
            self._file = self.path.open("rb")
        self._file.seek(off)
        return json.loads(self._file.readline())

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            self._file.close()


def key_hash(*parts: str | None) -> int:
    """A nonzero 8-byte hash of an id (and more): what memory-flat bookkeeping keeps instead of the strings."""
    return (
        int.from_bytes(
            hashlib.blake2b("\0".join(map(str, parts)).encode("utf-8", "surrogatepass"), digest_size=8).digest(),
            "little",
        )
        or 1
    )


def compact(path: str | Path) -> int:
    """Rewrite ``path`` with one line per id (the latest, in the order ids first appeared), atomically; return
    lines dropped. Holds 16 bytes per line (an id hash and an offset), not the ids or the records."""
    path = Path(path)
    if not path.exists():
        return 0
    hashes, offsets, lines = array("Q"), array("Q"), 0
    with path.open("rb") as f:
        offset = 0
        for line in f:
            if line.strip():
                lines += 1
                try:
                    hashes.append(key_hash(json.loads(line)["id"]))
                    offsets.append(offset)
                except (json.JSONDecodeError, KeyError, TypeError):
                    pass  # a torn or foreign line: dropped
            offset += len(line)
    ids = np.frombuffer(hashes, dtype=np.uint64)
    _, first = np.unique(ids, return_index=True)
    _, last_from_end = np.unique(ids[::-1], return_index=True)  # the same sorted ids: the arrays align
    if lines == len(first):
        return 0
    latest = (len(ids) - 1 - last_from_end)[np.argsort(first)]
    with path.open("rb") as f, replacing(path, durable=True) as out:
        for off in np.frombuffer(offsets, dtype=np.uint64)[latest].tolist():
            f.seek(off)
            out.write(json.dumps(json.loads(f.readline()), ensure_ascii=False) + "\n")
    return lines - len(first)


class JsonlWriter:
    """Append-only JSONL with a flush per record; repairs a torn tail before appending."""

    def __init__(self, path: str | Path, fsync: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair_tail()
        self._f = self.path.open("ab")
        self.fsync = fsync

    def _repair_tail(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            data = f.seek(0) or f.read()
            cut = data.rfind(b"\n") + 1  # drop the partial last line
            f.truncate(cut)
            log.warning("%s: removed an incomplete last line left by an interrupted run", self.path)

    def write(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: repaired here rather than crashing the run
            record, n = repair(record)
            log.warning(
                "%s: record %s had %d unencodable character(s); written as U+FFFD", self.path.name, record.get("id"), n
            )
            data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        self._f.write(data)
        self._f.flush()
        if self.fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
