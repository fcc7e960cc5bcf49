"""Reading each input file with the registered reader of its format (``inputs.py`` finds the files); whatever
goes wrong with one file becomes a failure record with its path, and the others are read."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any

from sciqag_dataset.builders.ingest import (  # noqa: F401  (formats: the built-in readers, registered on import)
    formats,
    registry,
)
from sciqag_dataset.builders.ingest.deadline import TimedOut, time_limit
from sciqag_dataset.builders.ingest.detect import detect
from sciqag_dataset.builders.ingest.errors import IngestError, SkipFile
from sciqag_dataset.builders.ingest.inputs import expand, not_regular
from sciqag_dataset.builders.ingest.record import to_record
from sciqag_dataset.builders.ingest.registry import Reader, Source
from sciqag_dataset.core import remote

log = logging.getLogger(__name__)


#: A file of many papers whose first this-many records all fail is not a paper collection (e.g. a QA-only JSON
#: file): one failure for the file instead of one per record.
MAX_LEADING_FAILURES = 20


def iter_file(
    path: str, options: Mapping[str, Any] | None = None, timeout: float | None = None, spent: float = 0.0
) -> Iterator[dict]:
    """Papers, ``{"path", "error"}`` failures and ``{"path", "warning"}`` notes for one file, read by the
    registered reader of its format (``options``: reading options, e.g. ``grobid_url`` for PDFs through GROBID).
    A file of one paper that takes more than ``timeout`` seconds to read (``spent`` of them already gone on its
    download) fails; a file of many papers is streamed, without a limit."""
    notes: list[str] = []
    options = options or {}

    def flush() -> Iterator[dict]:
        for note in notes:
            yield {"path": path, "warning": note}
        notes.clear()

    fmt = None
    try:
        found = detect(path)
        fmt = found.format
        reader = registry.named(found.reader.name, options) or found.reader
        if found.guessed:
            notes.append(f"no known extension; read as {reader.title}")
        source = Source(path, fmt, notes.append, options)
        yield from _papers(reader, source, notes, flush, timeout and max(timeout - spent, 0.001))
    except TimedOut:
        yield _failure(
            path,
            fmt,
            f"gave up after {timeout:g} s (ingest.file_timeout): the file may be damaged or far larger than a paper",
        )
    except SkipFile as exc:  # not a failure: e.g. a LaTeX fragment, whose paper is read through the main file
        yield {"path": path, "warning": str(exc)}
    except IngestError as exc:
        yield _failure(path, fmt, str(exc))
    except OSError as exc:
        yield _failure(path, fmt, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a parser bug on one odd file must not stop the batch
        log.exception("unexpected error reading %s", path)
        yield _failure(path, fmt, f"unexpected {type(exc).__name__}: {exc}")
    yield from flush()


def _papers(reader: Reader, source: Source, notes: list[str], flush, limit: float | None) -> Iterator[dict]:
    """The records of one file. A file of one paper is read whole within ``limit`` seconds, and whatever fails
    fails the file; a ``many`` reader's file is streamed, and a record that fails is a failure of its own."""
    items = reader(source)
    if not reader.many:
        with time_limit(limit):
            items = list(items)  # one paper (a LaTeX fragment, none): read within the limit
    papers = failed = 0
    for item in items:
        try:
            if isinstance(item, IngestError):
                raise item
            record = to_record(item, source.path, source.format, source.warn, notes)
        except Exception as exc:
            if not reader.many:
                raise
            failed += 1
            if papers == 0 and failed > MAX_LEADING_FAILURES:
                yield {
                    "path": source.path,
                    "error": f"stopped reading: the first {MAX_LEADING_FAILURES} records "
                    "are not papers (see the failures before this one)",
                }
                return
            yield _record_failure(source.path, item, exc)
        else:
            papers += 1
            yield record
        yield from flush()


def _record_failure(path: str, item, exc: Exception) -> dict:
    """One record of a many-paper file that failed: where it is in the file, and why."""
    where = getattr(exc, "where", None) or (item.get("where") if isinstance(item, dict) else None) or ""
    line = getattr(exc, "line", None) or (item.get("line") if isinstance(item, dict) else None)
    msg = str(exc) if isinstance(exc, IngestError) else f"unexpected {type(exc).__name__}: {exc}"
    return {"path": path, "error": f"{where}: {msg}" if where else msg, **({"line": line} if line else {})}


def _failure(path: str, fmt: str | None, error: str) -> dict:
    """``format``: what the content was found to be (a JATS file that fails counts on the jats row, as its
    papers do), absent when the failure came first."""
    return {"path": path, "error": error, **({"format": fmt} if fmt else {})}


def iter_remote_file(
    url: str, options: Mapping[str, Any] | None = None, timeout: float | None = None, max_mb: float | None = None
) -> Iterator[dict]:
    """``iter_file`` on a temporary copy, every path in what it yields naming the URL. The download counts
    in the file's ``timeout`` and stops past ``max_mb`` megabytes (an endless reply would fill the disk)."""
    start = time.monotonic()
    try:
        with ExitStack() as stack:
            # the copy's own checks run per chunk and stop it cleanly; the alarm, a second later, ends a host
            # that sends nothing at all
            with time_limit(timeout + 1 if timeout else None):
                copy = stack.enter_context(remote.fetched(url, timeout, max_mb))
            for item in iter_file(str(copy), options, timeout, spent=time.monotonic() - start):
                for key in ("path", "source_path", "error", "warning"):
                    if isinstance(item.get(key), str):
                        item[key] = item[key].replace(str(copy), url)
                yield item
    except TimedOut:
        yield {"path": url, "error": remote.too_slow(timeout)}
    except remote.DownloadStopped as exc:
        yield {"path": url, "error": str(exc)}
    except TimeoutError as exc:  # the filesystem's own limit (aiohttp's 5 minutes): its message is empty
        yield {"path": url, "error": f"cannot read: the host did not answer in time ({type(exc).__name__})"}
    except Exception as exc:  # the copy failed (a dead host, a missing key): this file fails
        yield {"path": url, "error": remote.clean(f"cannot read: {type(exc).__name__}: {exc}")}


def read_path(
    path: str, options: Mapping[str, Any] | None = None, timeout: float | None = None, max_mb: float | None = None
) -> Iterator[dict]:
    """The items of one input file found by ``expand``: local or remote (``max_mb``: the most a download may
    bring)."""
    if remote.is_remote(path):
        return iter_remote_file(path, options, timeout, max_mb)
    verdict = not_regular(path)
    return iter([{"path": path, verdict[0]: verdict[1]}]) if verdict else iter_file(path, options, timeout)


def iter_inputs(
    paths,
    exclude: frozenset[str] = frozenset(),
    follow_symlinks: bool = False,
    read: Callable[[str], Iterator[dict]] = read_path,
) -> Iterator[tuple[str, Iterator[dict]]]:
    """(path, its items) per input: papers, ``{"path", "error"}`` failures, ``{"path", "warning"}`` notes."""
    for path, verdict in expand(paths, exclude, follow_symlinks):
        yield path, iter([{"path": path, verdict[0]: verdict[1]}]) if verdict else read(path)


def iter_items(paths, exclude: frozenset[str] = frozenset(), follow_symlinks: bool = False) -> Iterator[dict]:
    for _, items in iter_inputs(paths, exclude, follow_symlinks):
        yield from items


def iter_papers(paths, follow_symlinks: bool = False) -> Iterator[dict]:
    """Stream paper records and ``{"path", "error"}`` failures (a record has ``id``, a failure not).

    ``paths``: a file, a directory (walked recursively), or a list of them. Warnings are logged.
    """
    for item in iter_items(paths, follow_symlinks=follow_symlinks):
        if "warning" in item:
            log.warning("%s: %s", item["path"], item["warning"])
        else:
            yield item


def read_file(path: str | os.PathLike) -> list[dict]:
    """The records of one file, as :func:`iter_papers` yields them (papers and failures)."""
    return list(iter_papers([path]))
