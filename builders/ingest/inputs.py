"""Finding the input files: paths, folders (walked sorted, hidden entries and links out of them skipped),
remote folders and URLs; what is skipped or cannot be listed becomes a note or a failure with its path."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator

from sciqag_dataset.core import remote

SKIP, FAIL = "warning", "error"

#: Folder documentation, not papers: skipped (with a note) when walking a directory, read if named.
_NOT_PAPERS = re.compile(r"^(?:readme|license|licence|changelog|citation)(?:\.[a-z]+)?$", re.I)


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def expand(
    paths, exclude: frozenset[str] = frozenset(), follow_symlinks: bool = False
) -> Iterator[tuple[str, tuple[str, str] | None]]:
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
                yield err.filename or root, (FAIL, f"cannot read folder: {err.strerror or err}")
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
                    yield (
                        full,
                        (SKIP, "a link that leads out of the input folders; not followed (use --follow-symlinks)"),
                    )
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
                        yield full, (FAIL, "a broken symbolic link")
                        continue
                    if not follow_symlinks and not _inside(real, roots):
                        yield (
                            full,
                            (SKIP, "a link that leads out of the input folders; not followed (use --follow-symlinks)"),
                        )
                        continue
                yield (
                    full,
                    (
                        (SKIP, "not a paper (folder documentation); name the file to ingest it")
                        if _NOT_PAPERS.match(name)
                        else None
                    ),
                )
        for err in errors:  # a folder that failed after the last one listed
            yield err.filename or p, (FAIL, f"cannot read folder: {err.strerror or err}")


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
        yield url, (FAIL, remote.clean(f"cannot list: {type(exc).__name__}: {exc}"))
        return
    for full in found:
        if full not in seen:
            seen.add(full)
            name = full.rstrip("/").rsplit("/", 1)[-1]
            yield (
                full,
                (
                    (SKIP, "not a paper (folder documentation); name the file to ingest it")
                    if _NOT_PAPERS.match(name) and full != url
                    else None
                ),
            )


def path_key(path: str) -> str:
    return path if remote.is_remote(path) else os.path.normcase(os.path.abspath(path))


def not_regular(path: str) -> tuple[str, str] | None:
    """("error"|"warning", why) when ``path`` must not be opened (a FIFO would block forever, a device
    never end), else None. Special files are not papers: skipped with a warning, not failed."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return FAIL, (
            "no such file or directory"
            if isinstance(exc, FileNotFoundError)
            else f"cannot read: {exc.strerror or exc}"
        )
    if stat.S_ISREG(mode):
        return None
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return SKIP, f"{kind}, not a paper file; skipped"
