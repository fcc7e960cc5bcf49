"""The one runner pattern every stage uses: stream, checkpoint, resume.

A stage is a transform on paper records. Its output is a JSONL file in the
work directory, appended one finished record per line and flushed at once,
so a killed run loses only the records in flight. On rerun the ids already
finished are skipped; a failed record is retried and its newer line wins.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Iterator

from tqdm.auto import tqdm

from .processes import WorkerInit
from .redact import redact
from .text_repair import repair

log = logging.getLogger(__name__)

FAILED = "failed"


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


def latest_by_id(path: str | Path) -> dict[str, dict]:
    """Last record per id, in first-seen order: what a stage's output means."""
    out: dict[str, dict] = {}
    for rec in read_jsonl(path):
        out[rec["id"]] = rec
    return out


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


def compact(path: str | Path) -> int:
    """Rewrite ``path`` with one line per id (the latest), atomically; return lines dropped."""
    path = Path(path)
    index = JsonlIndex(path)
    lines = sum(1 for line in path.open("rb") if line.strip()) if path.exists() else 0
    if lines == len(index.offsets):
        return 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for rec in iter_latest(path):
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    return lines - len(index.offsets)


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
            log.warning("%s: record %s had %d unencodable character(s); written as U+FFFD", self.path.name,
                        record.get("id"), n)
            data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        self._f.write(data)
        self._f.flush()
        if self.fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class Summary:
    stage: str
    counts: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> int:
        return self.counts[FAILED]

    def line(self) -> str:
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()) if n)
        return f"{self.stage}: {parts or 'nothing to do'}"


def _status(rec: dict) -> str:
    return rec.get("status") or "ok"


def finished_ids(out: str | Path) -> set[str]:
    """Ids whose latest line in ``out`` is not a failure."""
    status: dict[str, bool] = {}
    for rec in read_jsonl(out):
        status[rec["id"]] = _status(rec) != FAILED
    return {i for i, ok in status.items() if ok}


def pending(records: Iterable[dict], out: str | Path, summary: Summary, bar=None) -> Iterator[dict]:
    """Records whose id has no finished (non-failed) line in ``out`` yet."""
    done = finished_ids(out)
    for rec in records:
        if rec["id"] in done:
            summary.counts["skipped"] += 1
            if bar is not None:
                bar.update(1)
        else:
            yield rec


def _failure(rec: dict, exc: BaseException) -> dict:
    return {"id": rec["id"], "status": FAILED, "error": redact(f"{type(exc).__name__}: {exc}")}


def run_processes(stage: str, records: Iterable[dict], fn: Callable[[dict], dict], out: str | Path, *,
                  workers: int = 1, initializer: Callable | None = None, initargs: tuple = (),
                  total: int | None = None, chunksize: int = 4) -> Summary:
    """Apply a CPU-bound ``fn`` in worker processes, writing results in input order as they finish.

    ``fn`` must return a record with ``id``; an exception inside it becomes a failed record.
    """
    summary = Summary(stage)
    safe = _Safe(fn)
    with JsonlWriter(out) as writer, tqdm(total=total, desc=stage, unit="paper") as bar:
        todo = pending(records, out, summary, bar)
        if workers <= 1:
            if initializer:
                initializer(*initargs)
            results: Iterable[dict] = map(safe, todo)
            for res in results:
                _record(writer, summary, res, bar)
        else:  # workers end with this process, even on kill -9 (see processes.py)
            with ProcessPoolExecutor(workers, initializer=WorkerInit(initializer, initargs)) as pool:
                for res in pool.map(safe, todo, chunksize=chunksize):
                    _record(writer, summary, res, bar)
    return summary


class _Safe:
    """Picklable wrapper turning an exception into a failed record."""

    def __init__(self, fn: Callable[[dict], dict]):
        self.fn = fn

    def __call__(self, rec: dict) -> dict:
        try:
            return self.fn(rec)
        except Exception as exc:  # a bad paper must not take the others down
            return _failure(rec, exc)


def _record(writer: JsonlWriter, summary: Summary, res: dict, bar) -> None:
    writer.write(res)
    summary.counts[_status(res)] += 1
    bar.update(1)


async def run_async(stage: str, records: Iterable[dict], fn: Callable[[dict], Awaitable[dict]],
                    out: str | Path, *, concurrency: int = 8, total: int | None = None,
                    postfix: Callable[[], dict[str, Any]] | None = None) -> Summary:
    """Apply an async ``fn`` with at most ``concurrency`` records in flight.

    Records are pulled lazily from ``records``, so memory stays flat with corpus size.
    """
    summary = Summary(stage)
    with JsonlWriter(out) as writer, tqdm(total=total, desc=stage, unit="paper") as bar:
        todo = iter(pending(records, out, summary, bar))

        async def one(rec: dict) -> dict:
            try:
                return await fn(rec)
            except Exception as exc:
                return _failure(rec, exc)

        in_flight: set[asyncio.Task] = set()
        exhausted = False
        while in_flight or not exhausted:
            while not exhausted and len(in_flight) < concurrency:
                rec = next(todo, None)
                if rec is None:
                    exhausted = True
                else:
                    in_flight.add(asyncio.ensure_future(one(rec)))
            if not in_flight:
                break
            finished, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                _record(writer, summary, task.result(), bar)
            if postfix:
                bar.set_postfix(postfix(), refresh=False)
    return summary
