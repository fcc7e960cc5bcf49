"""Ingest on many ranks: rank i of n parses the input files whose path hashes into slice i and writes what the
readers yielded to ``WORK/.ingest/shard-i-of-n.jsonl``; one merge then stores them, walking the inputs in the
same order as a plain ingest, so ids, duplicates and the report are the plain run's (``run_ingest(parsed_by=n)``).

Parsing (PDF above all) is the cost, storing is cheap: this is what spreads. The slices stay after the merge,
so that a rerun parses only files that are new or changed (size and time, or the store's ETag, differ); a file
a rank did not finish (a kill) is parsed again, and one no rank parsed is parsed by the merge itself.
Each file's lines are framed: ``{"path", "stamp", "start"}``, its items, ``{"path", "stamp", "done"}``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from sciqag_dataset import __version__
from sciqag_dataset.builders.ingest.files import read_path
from sciqag_dataset.builders.ingest.inputs import expand, path_key
from sciqag_dataset.core import remote
from sciqag_dataset.core.jsonl import JsonlWriter, read_jsonl
from sciqag_dataset.core.runner import Summary, in_shard

CACHE_DIR = ".ingest"  # hidden: never walked as input, even when the work dir is inside an input folder


def slice_path(work: str | os.PathLike, i: int, n: int) -> Path:
    return Path(work) / CACHE_DIR / f"shard-{i}-of-{n}.jsonl"


def stamp(path: str) -> str | None:
    """What says a file is as it was parsed: this version's readers, and its size and time (or the store's
    tag); None when that cannot be told, and then the file is parsed again."""
    try:
        if remote.is_remote(path):
            found = remote.stamp(path)
        else:
            st = os.stat(path)
            found = f"{st.st_size}:{st.st_mtime_ns}"
    except Exception:  # unreadable now: parsed again (and failed with its reason) rather than trusted
        return None
    return f"{__version__}|{found}" if found else None


def excluded(work: str | os.PathLike) -> frozenset[str]:
    """What ingest never reads as a paper: the work dir (when inside an input folder) and its two files."""
    work = Path(work)
    return frozenset(
        {
            path_key(str(work / "papers.jsonl")),
            path_key(str(work / "ingest_report.json")),
            path_key(os.path.realpath(work)),
        }
    )


def listing(paths, work: str | os.PathLike, follow_symlinks: bool = False) -> list[list]:
    """Every input with its stamp, as the ranks will see it: what decides whether their work is current."""
    return [
        [path_key(path), verdict and verdict[1], None if verdict else stamp(path)]
        for path, verdict in expand(paths, excluded(work), follow_symlinks)
    ]


def parse_slice(
    paths,
    work: str | os.PathLike,
    shard: tuple[int, int],
    exclude: frozenset[str] = frozenset(),
    follow_symlinks: bool = False,
    read: Callable[[str], Iterator[dict]] = read_path,
    reader: str = "",
) -> Summary:
    """Rank ``shard = (i, n)``: parse this slice's files that the slice file does not hold at their stamp.
    ``reader`` names reader settings that change what a file yields (the PDF backend): part of the stamp."""
    i, n = shard
    out = slice_path(work, i, n)
    done = {rec["path"]: rec["stamp"] for rec in read_jsonl(out) if rec.get("done")}
    summary = Summary("ingest")
    with JsonlWriter(out) as writer:
        for path, verdict in expand(paths, exclude, follow_symlinks):
            key = path_key(path)
            if verdict or not in_shard(key, i, n):  # notes on skipped entries are the merge's to report
                continue
            st = stamp(path)
            st = f"{reader}|{st}" if st is not None and reader else st
            if st is not None and done.get(key) == st:
                summary.counts["skipped"] += 1
                continue
            writer.write({"path": key, "stamp": st, "start": True})
            failed = False
            for item in read(path):
                failed = failed or "error" in item
                writer.write({"path": key, "item": item})
            # a failure may pass (a dead host, a file being written): never trusted, so a rerun reads it again
            writer.write({"path": key, "stamp": None if failed else st, "done": True})
            summary.counts["parsed"] += 1
    return summary


def slice_reader(
    work: str | os.PathLike, n: int, read_file: Callable[[str], Iterator[dict]] = read_path
) -> Callable[[str], Iterator[dict]]:
    """``read(path)`` for the merge: the items a rank stored for the file, else the file parsed now."""
    index: dict[str, tuple[Path, list[int]]] = {}
    for i in range(n):
        path = slice_path(work, i, n)
        if not path.exists():
            continue
        with path.open("rb") as f:
            key, offsets = None, []
            for offset, line in _lines(f):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a torn last line
                if rec.get("start"):
                    key, offsets = rec["path"], []
                elif rec.get("done") and rec["path"] == key:
                    index[key] = (path, offsets)
                elif rec["path"] == key:
                    offsets.append(offset)

    def read(path: str) -> Iterator[dict]:
        hit = index.get(path_key(path))
        if hit is None:
            yield from read_file(path)
            return
        with hit[0].open("rb") as f:
            for offset in hit[1]:
                f.seek(offset)
                yield json.loads(f.readline())["item"]

    return read


def _lines(f) -> Iterator[tuple[int, bytes]]:
    offset = 0
    for line in f:
        yield offset, line
        offset += len(line)
