"""The one runner: every stage (``stage.Stage``) runs through ``run_stage``.

It gives each stage the same guarantees:

- **resume by fingerprint**: an input record whose output line carries the same fingerprint (same input,
  same parameters) is skipped; a changed one is redone; a failed one is retried;
- **shards**: ``shard=(i, n)`` takes hash slice i of n of the ids (i counts from 0) and writes
  ``<output>.shard-i-of-n``; ``merge_shards`` folds them into the output, which then equals an unsharded run's;
- **one driver per kind**: in-process, worker processes (bounded window, workers die with the parent),
  or async with at most ``concurrency`` records in flight, pulled lazily so memory stays flat;
- **isolation**: a record whose function raises becomes a ``failed`` line with the error, and the run goes on;
  a ``StopRun`` (a local server down for good, the cost cap reached) is no record's fault: it stops the stage
  and marks nothing, so that a rerun asks again;
- a tqdm bar with rates, and a manifest (``<output stem>_manifest.json``) with counts, time and parameters.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import itertools
import json
import logging
import resource
import time
from array import array
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import MissingInput, StopRun, UserError
from sciqag_dataset.core.jsonl import JsonlWriter, compact, iter_latest, key_hash, read_jsonl
from sciqag_dataset.core.processes import WorkerInit
from sciqag_dataset.core.redact import redact
from sciqag_dataset.core.stage import Stage, digest, fingerprint

log = logging.getLogger(__name__)

FAILED = "failed"

__all__ = ["FAILED", "Finished", "Summary", "in_shard", "merge_shards", "output_path", "parse_shard", "run_stage"]
__all__ += ["shard_files"]


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


def status_of(rec: dict) -> str:
    return rec.get("status") or "ok"


# ---------------------------------------------------------------- shards


def parse_shard(shard: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """``"i/n"`` (or ``(i, n)``) -> ``(i, n)``; UserError when malformed."""
    if shard is None or isinstance(shard, tuple):
        if shard is not None and not 0 <= shard[0] < shard[1]:
            raise UserError(f"shard {shard[0]}/{shard[1]}: need 0 <= i < n")
        return shard
    try:
        i, n = (int(x) for x in str(shard).split("/"))
    except ValueError:
        raise UserError(f"--shard must look like i/n (e.g. 0/4), not {shard!r}") from None
    return parse_shard((i, n))


def in_shard(record_id: str, i: int, n: int) -> bool:
    """The hash slice of an id: stable across machines and as the corpus grows."""
    return int(hashlib.sha256(record_id.encode()).hexdigest()[:8], 16) % n == i


def output_path(work: Path, output: str, shard: tuple[int, int] | None = None) -> Path:
    if shard is None:
        return work / output
    stem, _, ext = output.rpartition(".")
    return work / f"{stem}.shard-{shard[0]}-of-{shard[1]}.{ext}"


def shard_files(work: Path, output: str, n: int | None = None) -> list[Path]:
    stem, _, ext = output.rpartition(".")
    return sorted(work.glob(f"{stem}.shard-*-of-{n or '*'}.{ext}"))


def merge_shards(work: str | Path, output: str, n: int | None = None) -> Summary:
    """Fold ``<output>.shard-*`` (of ``n`` shards, or of any count) into ``<output>`` (latest line per id wins),
    as if run unsharded."""
    work = Path(work)
    shards = shard_files(work, output, n)
    if not shards:
        raise MissingInput(f"no {output.rpartition('.')[0]}.shard-*-of-{n or '*'}.jsonl files in {work}")
    counts = sorted({p.name.rpartition("-of-")[2].split(".")[0] for p in shards})
    if len(counts) > 1:  # slices of two splittings overlap: which line is newer cannot be told
        raise UserError(
            f"{work} holds shard files of {' and '.join(counts)} shards for {output}: remove the "
            f"set you do not want (or pass its count), then merge"
        )
    summary = Summary(f"merge {output}")
    with JsonlWriter(work / output) as writer:
        for path in shards:
            for rec in iter_latest(path):
                writer.write(rec)
                summary.counts[status_of(rec)] += 1
    compact(work / output)
    _merge_manifests(work, output, shards)
    return summary


def _merge_manifests(work: Path, output: str, shards: list[Path]) -> None:
    """The stage's manifest, as an unsharded run writes it: the shards' counts and usage summed."""
    parts = []
    for path in shards:
        manifest = manifest_path(path.parent, path.name)
        if manifest.exists():
            parts.append(json.loads(manifest.read_text(encoding="utf-8")))
    if not parts:
        return
    merged: dict[str, Any] = {**parts[0], "output": output, "shards": len(shards)}
    merged.pop("shard", None)
    merged["counts"] = dict(sum((Counter(p.get("counts") or {}) for p in parts), Counter()))
    for key in ("seconds", "peak_rss_mb"):
        merged[key] = max(p.get(key) or 0 for p in parts)
    merged["cpu_seconds"] = round(sum(p.get("cpu_seconds") or 0 for p in parts), 2)
    usages = [p["usage"] for p in parts if isinstance(p.get("usage"), dict)]
    if usages:
        merged["usage"] = {k: sum(u.get(k) or 0 for u in usages) for k in usages[0]}
    merged["finished"] = max(p.get("finished") or "" for p in parts)
    write_json(manifest_path(work, output), merged)


# ---------------------------------------------------------------- resume


class Finished:
    """What an output file holds finished, as sorted arrays of 8-byte hashes of (id, fingerprint) pairs and of
    ids, not the records or the id strings: a resume keeps 16 bytes per record (a million records: 16 MB) and
    looks each input up by bisection (~3 µs; a set would be faster and four times the size).

    A record is finished when its latest line is not a failure and carries that fingerprint. Two different
    ids sharing a hash (odds about n²/2⁶⁵: 3·10⁻⁸ at a million records) would skip one of them.
    """

    def __init__(self, path: Path):
        ids, keys = array("Q"), array("Q")
        if path.exists():
            with path.open("rb") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                        record_id = rec["id"]
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue
                    ids.append(key_hash(record_id))
                    keys.append(0 if status_of(rec) == FAILED else key_hash(record_id, rec.get("fingerprint")))
        order = np.frombuffer(ids, dtype=np.uint64)[::-1]  # the latest line first
        unique, first = np.unique(order, return_index=True)
        latest = np.frombuffer(keys, dtype=np.uint64)[::-1][first]
        self.ids = array("Q", unique.tobytes())
        self.keys = array("Q", np.sort(latest[latest != 0]).tobytes())
        self.duplicates = len(ids) - len(self.ids)  # lines that a compaction drops

    @staticmethod
    def _holds(values: array, value: int) -> bool:
        i = bisect.bisect_left(values, value)
        return i < len(values) and values[i] == value

    def has(self, record_id: str, fp: str) -> bool:
        return self._holds(self.keys, key_hash(record_id, fp))

    def has_id(self, record_id: str) -> bool:
        return self._holds(self.ids, key_hash(record_id))

    def __len__(self) -> int:
        return len(self.keys)


def _latest_of(path: Path, ids: set[str]) -> Iterator[dict]:
    """The latest line of each of ``ids`` in ``path``, in one pass that keeps only those."""
    latest: dict[str, dict] = {}
    if ids:
        for rec in read_jsonl(path):
            if rec.get("id") in ids:
                latest[rec["id"]] = rec
    return iter(latest.values())


def _failure(rec: dict, exc: BaseException) -> dict:
    return {"id": rec["id"], "status": FAILED, "error": redact(f"{type(exc).__name__}: {exc}")}


class _Safe:
    """Picklable wrapper turning an exception into a failed record (a bad paper never stops the others)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, rec: dict) -> dict:
        try:
            return self.fn(rec)
        except StopRun:
            raise
        except Exception as exc:
            return _failure(rec, exc)


# ---------------------------------------------------------------- the runner


def run_stage(
    stage: Stage, work: str | Path, *, shard: str | tuple[int, int] | None = None, progress: bool = True
) -> Summary:
    """Run ``stage`` over its inputs in ``work``; see the module docstring for what every stage gets."""
    work = Path(work)
    shard = parse_shard(shard)
    out = output_path(work, stage.output_file, shard)
    started, cpu_started = time.monotonic(), time.process_time()
    summary = Summary(stage.name)
    done = Finished(out)
    # a sharded run: what the unsharded output already holds finished (an earlier plain run, or a merge) is
    # finished too; when the shard file holds an older line for it, the record is copied over, so that the
    # next merge cannot bring the older line back
    merged = Finished(work / stage.output_file) if shard is not None else None
    stale: set[str] = set()  # ids finished in the unsharded output whose shard line is older: copied over
    inputs = iter(stage.inputs(work))
    first = next(inputs, None)  # a missing input fails here, before an output file or a progress bar
    total = stage.count(work) if stage.count and shard is None else None
    rewritten = False  # a record that already had a line here got another one: compact at the end
    with JsonlWriter(out) as writer, tqdm(total=total, desc=stage.name, unit=stage.unit, disable=not progress) as bar:

        def todo() -> Iterator[tuple[dict, str]]:
            for rec in itertools.chain([first] if first is not None else [], inputs):
                if shard is not None and not in_shard(rec["id"], *shard):
                    continue
                fp = fingerprint(stage.params, rec)
                if done.has(rec["id"], fp):
                    summary.counts["skipped"] += 1
                    bar.update(1)
                    continue
                if merged is not None and merged.has(rec["id"], fp):
                    if done.has_id(rec["id"]):
                        stale.add(rec["id"])
                    summary.counts["skipped"] += 1
                    bar.update(1)
                    continue
                yield rec, fp

        def record(rec: dict, fp: str, result: dict) -> None:
            nonlocal rewritten
            if not isinstance(result, dict):  # e.g. a coroutine from a process that is not `async def`
                raise TypeError(f"stage {stage.name}: process returned {type(result).__name__}, not a record dict")
            result = {**result, "id": rec["id"]} if result.get("id") != rec["id"] else result
            result.update(fingerprint=fp, input_hash=digest(rec))
            writer.write(result)
            rewritten = rewritten or done.has_id(rec["id"])
            summary.counts[status_of(result)] += 1
            bar.update(1)
            if stage.progress:
                bar.set_postfix(stage.progress(), refresh=False)

        try:
            if stage.is_async:
                asyncio.run(_drive_async(stage, todo(), record))
            elif stage.workers > 1:
                _drive_processes(stage, todo(), record)
            else:
                if stage.setup:
                    stage.setup()
                safe = _Safe(stage.process)
                for rec, fp in todo():
                    record(rec, fp, safe(rec))
        finally:  # a run stopped early (a dead server, Ctrl-C) must not let a merge restore an older line
            for rec in _latest_of(work / stage.output_file, stale):
                writer.write(rec)
                rewritten = True
    if rewritten or done.duplicates:  # a first run or a resume that only added records leaves nothing to drop
        compact(out)
    _write_manifest(
        work, stage, out, summary, time.monotonic() - started, shard, cpu=time.process_time() - cpu_started
    )
    return summary


async def _drive_async(stage: Stage, todo: Iterator[tuple[dict, str]], record) -> None:
    """At most ``stage.concurrency`` records in flight; inputs pulled only as slots free up."""

    async def one(rec: dict) -> dict:
        try:
            return await stage.process(rec)
        except StopRun:
            raise
        except Exception as exc:
            return _failure(rec, exc)

    in_flight: dict[asyncio.Task, tuple[dict, str]] = {}
    stop: StopRun | None = None
    try:
        exhausted = False
        while in_flight or not exhausted:
            while not exhausted and stop is None and len(in_flight) < max(1, stage.concurrency):
                item = next(todo, None)
                if item is None:
                    exhausted = True
                else:
                    in_flight[asyncio.ensure_future(one(item[0]))] = item
            if not in_flight:
                break
            finished, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                rec, fp = in_flight.pop(task)
                try:
                    result = task.result()
                except StopRun as exc:  # no new record; those in flight finish (sent, paid for) and are kept
                    stop = stop or exc
                    continue
                record(rec, fp, result)
        if stop is not None:  # and a paper's requests sent beside the one that stopped (gather leaves them running)
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await asyncio.gather(*others, return_exceptions=True)
            raise stop
    finally:
        if stage.close:
            await stage.close()


def _drive_processes(stage: Stage, todo: Iterator[tuple[dict, str]], record) -> None:
    """Worker processes, results in input order, a bounded window of records submitted at a time."""
    safe = _Safe(stage.process)
    window = stage.workers * 4
    with ProcessPoolExecutor(stage.workers, initializer=WorkerInit(stage.setup)) as pool:
        pending: deque = deque()
        for rec, fp in todo:
            pending.append((rec, fp, pool.submit(safe, rec)))
            if len(pending) >= window:
                r, f, fut = pending.popleft()
                record(r, f, fut.result())
        while pending:
            r, f, fut = pending.popleft()
            record(r, f, fut.result())


def manifest_path(work: Path, output: str) -> Path:
    """``WORK/<output stem>_manifest.json``: what a stage's run recorded (counts, model, usage, settings)."""
    return work / (output.removesuffix(".jsonl") + "_manifest.json")


def _write_manifest(
    work: Path,
    stage: Stage,
    out: Path,
    summary: Summary,
    seconds: float,
    shard: tuple[int, int] | None,
    cpu: float = 0.0,
) -> None:
    manifest: dict[str, Any] = {
        "stage": stage.name,
        "output": out.name,
        "counts": dict(summary.counts),
        "params": stage.params,
        **(stage.describe() if stage.describe else {}),
        "seconds": round(seconds, 1),
        # this process only (worker processes of a stage are not counted): the cost
        # per paper that sizes a scaled-out run (docs/SCALING.md, bench/scale.py)
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if shard is not None:
        manifest["shard"] = f"{shard[0]}/{shard[1]}"
    usage = manifest.get("usage") or {}
    if usage.get("completion_tokens") is not None:
        manifest["completion_tokens_per_s"] = round(usage["completion_tokens"] / max(seconds, 1e-9), 1)
    write_json(manifest_path(out.parent, out.name), manifest)
