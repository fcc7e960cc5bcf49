"""Finding input files and reading each with the reader for its format; whatever goes wrong with one file
becomes a failure record with its path, and the others are read."""
from __future__ import annotations

import logging
import os
import re
import stat
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Iterable, Iterator

from sciqag_dataset import remote

from .deadline import TimedOut, time_limit
from .detect import decode, detect_format
from .json_papers import read_json_papers
from .markdown import read_md
from .readers import read_grobid, read_html, read_latex, read_pdf, read_xml
from .record import to_record
from .text import IngestError, LatexFragment
from .txt import read_txt

log = logging.getLogger(__name__)


def iter_file(path: str, grobid_url: str | None = None, timeout: float | None = None,
              spent: float = 0.0) -> Iterator[dict]:
    """Papers, ``{"path", "error"}`` failures and ``{"path", "warning"}`` notes for one file; PDFs through the
    GROBID server at ``grobid_url`` when one is given. A file of one paper that takes more than ``timeout``
    seconds to read (``spent`` of them already gone on its download) fails (a JSON file of many papers is
    streamed, without a limit)."""
    notes: list[str] = []
    partial: list[str] = []

    def warn(message: str, partial_read: bool = False) -> None:
        """A reader's note; ``partial_read``: some of the paper could not be read (the record says so)."""
        notes.append(message)
        if partial_read:
            partial.append(message)

    def flush() -> Iterator[dict]:
        for note in notes:
            yield {"path": path, "warning": note}
        notes.clear()
        partial.clear()

    fmt = None
    try:
        fmt = detect_format(path)
        if fmt == "txt" and Path(path).suffix.lower() not in (".txt", ".text"):
            warn("no known extension; read as plain text")
        if fmt == "json":
            yield from read_json_papers(path, warn, flush)
            return
        if fmt == "pdf":
            raws: Iterable[dict] = read_grobid(path, warn, grobid_url) if grobid_url else read_pdf(path, warn)
        elif fmt == "latex":
            raws = read_latex(path, warn)
        else:
            data = Path(path).read_bytes()
            if fmt in ("xml", "jats", "elsevier"):
                raws = read_xml(path, data, warn)
            elif fmt == "html":
                raws = read_html(data, warn)  # the page's own charset (a Latin-1 page keeps its ° and ±)
            else:
                text = decode(data, warn)
                reader = {"txt": read_txt, "md": read_md}[fmt]
                raws = reader(text, warn)
        with time_limit(max(timeout - spent, 0.001) if timeout else None):
            raws = list(raws)  # one paper (a LaTeX fragment, none): read within the limit
        for raw in raws:
            yield to_record(raw, path, fmt, warn, notes, partial)
            yield from flush()
    except TimedOut:
        yield _failure(path, fmt, f"gave up after {timeout:g} s (ingest.file_timeout): the file may be damaged "
                                  "or far larger than a paper")
    except LatexFragment as exc:  # not a failure: its paper is read through the main file
        yield {"path": path, "warning": str(exc)}
    except IngestError as exc:
        yield _failure(path, fmt, str(exc))
    except OSError as exc:
        yield _failure(path, fmt, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a parser bug on one odd file must not stop the batch
        log.exception("unexpected error reading %s", path)
        yield _failure(path, fmt, f"unexpected {type(exc).__name__}: {exc}")
    yield from flush()


def _failure(path: str, fmt: str | None, error: str) -> dict:
    """``format``: what the content was found to be (a JATS file that fails counts on the jats row, as its
    papers do), absent when the failure came first."""
    return {"path": path, "error": error, **({"format": fmt} if fmt else {})}


#: Folder documentation, not papers: skipped (with a note) when walking a directory, read if named.
_NOT_PAPERS = re.compile(r"^(?:readme|license|licence|changelog|citation)(?:\.[a-z]+)?$", re.I)


_SKIP, _FAIL = "warning", "error"


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def expand(paths, exclude: frozenset[str] = frozenset(),
            follow_symlinks: bool = False) -> Iterator[tuple[str, tuple[str, str] | None]]:
    """(path, None) for each file to read, or (path, (kind, reason)) for one skipped ("warning") or failed
    ("error") while finding it. Stable order: folders walked sorted, hidden entries left out, each real
    file once. Folders that cannot be listed are reported, never skipped silently; links that lead out
    of the input folders are skipped (with a warning) unless ``follow_symlinks``."""
    paths = input_list(paths)
    roots = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    seen: set[str] = set()
    for p in paths:
        if remote.is_remote(p):
            yield from _expand_remote(p, seen)
            continue
        if not os.path.isdir(p):
            if path_key(os.path.realpath(p)) not in seen:
                seen.add(path_key(os.path.realpath(p)))
                yield p, None  # named by the user: read even if it is a link
            continue
        walked: set[str] = set()
        errors: list[OSError] = []
        for root, dirs, files in os.walk(p, followlinks=True, onerror=errors.append):
            while errors:
                err = errors.pop(0)
                yield err.filename or root, (_FAIL, f"cannot read folder: {err.strerror or err}")
            real_root = os.path.realpath(root)
            if real_root in walked:  # a link loop, or a folder reached twice through links
                dirs[:] = []
                continue
            walked.add(real_root)
            keep = []
            for d in sorted(d for d in dirs if not d.startswith(".")):
                full = os.path.join(root, d)
                if path_key(os.path.realpath(full)) in exclude:  # the work dir, inside an input folder
                    continue
                if os.path.islink(full) and not follow_symlinks and not _inside(os.path.realpath(full), roots):
                    yield full, (_SKIP, "a link that leads out of the input folders; not followed "
                                        "(use --follow-symlinks)")
                else:
                    keep.append(d)
            dirs[:] = keep
            for name in sorted(files):
                full = os.path.join(root, name)
                if name.startswith(".") or path_key(full) in exclude:
                    continue
                real = os.path.realpath(full)
                if path_key(real) in seen or path_key(real) in exclude:
                    continue
                seen.add(path_key(real))
                if os.path.islink(full):
                    if not os.path.exists(full):
                        yield full, (_FAIL, "a broken symbolic link")
                        continue
                    if not follow_symlinks and not _inside(real, roots):
                        yield full, (_SKIP, "a link that leads out of the input folders; not followed "
                                            "(use --follow-symlinks)")
                        continue
                yield full, ((_SKIP, "not a paper (folder documentation); name the file to ingest it")
                             if _NOT_PAPERS.match(name) else None)
        for err in errors:  # a folder that failed after the last one listed
            yield err.filename or p, (_FAIL, f"cannot read folder: {err.strerror or err}")


def input_list(paths) -> list[str]:
    """The inputs as path strings (``file://`` URLs as paths); UserError for a URL that carries credentials."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [remote.local(os.fspath(p)) for p in paths]
    for p in filter(remote.is_remote, paths):
        remote.check_url(p, "inputs")
    return paths


def _expand_remote(url: str, seen: set[str]) -> Iterator[tuple[str, tuple[str, str] | None]]:
    try:
        found = remote.list_files(url)
    except Exception as exc:  # a missing bucket, a dead host: this input fails, the others are read
        yield url, (_FAIL, remote.clean(f"cannot list: {type(exc).__name__}: {exc}"))
        return
    for full in found:
        if full not in seen:
            seen.add(full)
            name = full.rstrip("/").rsplit("/", 1)[-1]
            yield full, ((_SKIP, "not a paper (folder documentation); name the file to ingest it")
                         if _NOT_PAPERS.match(name) and full != url else None)


def iter_remote_file(url: str, grobid_url: str | None = None, timeout: float | None = None,
                     max_mb: float | None = None) -> Iterator[dict]:
    """``iter_file`` on a temporary copy, every path in what it yields naming the URL. The download counts
    in the file's ``timeout`` and stops past ``max_mb`` megabytes (an endless reply would fill the disk)."""
    start = time.monotonic()
    try:
        with ExitStack() as stack:
            # the copy's own checks run per chunk and stop it cleanly; the alarm, a second later, ends a host
            # that sends nothing at all
            with time_limit(timeout + 1 if timeout else None):
                copy = stack.enter_context(remote.fetched(url, timeout, max_mb))
            for item in iter_file(str(copy), grobid_url, timeout, spent=time.monotonic() - start):
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


def path_key(path: str) -> str:
    return path if remote.is_remote(path) else os.path.normcase(os.path.abspath(path))


def _not_regular(path: str) -> tuple[str, str] | None:
    """("error"|"warning", why) when ``path`` must not be opened (a FIFO would block forever, a device
    never end), else None. Special files are not papers: skipped with a warning, not failed."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _FAIL, ("no such file or directory" if isinstance(exc, FileNotFoundError)
                       else f"cannot read: {exc.strerror or exc}")
    if stat.S_ISREG(mode):
        return None
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return _SKIP, f"{kind}, not a paper file; skipped"


def read_path(path: str, grobid_url: str | None = None, timeout: float | None = None,
              max_mb: float | None = None) -> Iterator[dict]:
    """The items of one input file found by ``expand``: local or remote (``max_mb``: the most a download may
    bring)."""
    if remote.is_remote(path):
        return iter_remote_file(path, grobid_url, timeout, max_mb)
    verdict = _not_regular(path)
    return iter([{"path": path, verdict[0]: verdict[1]}]) if verdict else iter_file(path, grobid_url, timeout)


def iter_inputs(paths, exclude: frozenset[str] = frozenset(), follow_symlinks: bool = False,
                read: Callable[[str], Iterator[dict]] = read_path) -> Iterator[tuple[str, Iterator[dict]]]:
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


