"""Folders this project writes into. The rule: never delete or overwrite a file it did not create.

A folder becomes ours when we create it, or when it is empty and we claim it; a marker file
(``.sciqag.json``) then says which kind it is (a work directory, a publish folder, a model folder) and,
for a publish folder, which files we wrote. A non-empty folder without the marker is refused with a
one-line reason, before any work starts.

Publishing replaces only the files of the previous publish: the new files are built in a staging folder
beside the target, moved in one by one (``os.replace`` is atomic per file), the card last, since it
names the data files; then the previous publish's files that are no longer used are removed. At every
moment the folder holds a complete publish, and the marker lists every file we may have put there.
A staging folder left by a killed run is removed by the next run.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from sciqag_dataset import __version__
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import UserError

log = logging.getLogger(__name__)

MARKER = ".sciqag.json"
STAGING_PREFIX = ".sciqag-staging-"
_STAGING_MARKER = ".sciqag-staging"

#: What a work directory written by earlier versions (without a marker) may hold: such a folder is adopted.
WORK_LAYOUT = {
    "papers.jsonl",
    "ingest_report.json",
    "keywords.jsonl",
    "seed.jsonl",
    "seed_manifest.json",
    "generated.jsonl",
    "generated_manifest.json",
    "racar.jsonl",
    "diversity.jsonl",
    "coverage.jsonl",
    "numeric.jsonl",
    "evaluated.jsonl",
    "evaluation_summary.json",
    "filtered.jsonl",
    "filter_summary.json",
    "cache.sqlite",
    "cache.sqlite-wal",
    "cache.sqlite-shm",
    "config.yaml",
    "dataset",
    "plots",
    "local_server.log",
}
#: The same for a model folder written by `sciqag train` before markers existed.
MODEL_SIGNS = {"sciqag_generator.json", "train_config.yaml"}


def _read_marker(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_marker(folder: Path, data: dict) -> None:
    write_json(folder / MARKER, {**data, "version": __version__})


def _own_entries(folder: Path) -> list[str]:
    """Entries other than our marker, its temporary copies and our write probes (so that several
    processes claiming one folder at once, like the ranks of a training run, all succeed)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith((MARKER, ".sciqag-probe-")))


def holds_only_marker(folder: Path) -> bool:
    """Whether ``folder`` is empty but for our marker (a folder claimed and not written to yet)."""
    return not _own_entries(folder)


def check_writable(folder: Path, option: str) -> None:
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".sciqag-probe-"):
            pass
    except OSError as exc:
        raise UserError(f"{option}: cannot write to {folder} ({exc.strerror or exc})") from None


def claim(folder: str | os.PathLike, kind: str, *, option: str, adopt: Iterable[str] = ()) -> Path:
    """Make ``folder`` a folder of ours of ``kind``, creating it if needed; UserError if it is someone else's.

    ``adopt``: names that mark an older folder of ours written before markers existed (adopted if every
    entry is one of them for a work directory, or if any is present for a model folder).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{option}: {folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{option}: cannot create {folder} ({exc.strerror or exc})") from None
    marker = _read_marker(folder)
    if marker is not None:
        if marker.get("kind") != kind:
            raise UserError(f"{option}: {folder} is a sciqag {marker.get('kind')} folder, not a {kind} folder")
    else:
        try:
            entries = _own_entries(folder)
        except OSError as exc:
            raise UserError(f"{option}: cannot read {folder} ({exc.strerror or exc})") from None
        adopt = set(adopt)
        ours = (
            not entries
            or (kind == "model" and adopt & set(entries))
            or (kind != "model" and adopt and set(entries) <= adopt)
        )
        if not ours:
            shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
            raise UserError(
                f"{option}: {folder} is not empty and was not created by sciqag ({shown}); "
                "choose a new or empty folder"
            )
        check_writable(folder, option)
        _write_marker(folder, {"kind": kind, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    check_writable(folder, option)
    return folder


# ---------------------------------------------------------------- publishing


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_publish_target(out: Path, work: Path, option: str = "publish.output_dir") -> None:
    """Refuse a publish folder that is someone else's, or that overlaps the work directory.

    The work directory's own ``dataset/`` folder is the default target and part of its layout; any other
    folder inside the work directory, the work directory itself, or a folder holding it is refused.
    """
    out, work = out.resolve(), work.resolve()
    if _inside(work, out):
        raise UserError(
            f"{option}: {out} {'is' if out == work else 'contains'} the work directory {work}; "
            "publish to a folder of its own"
        )
    if _inside(out, work) and out != work / "dataset":
        raise UserError(
            f"{option}: {out} is inside the work directory {work}; publish to WORK/dataset "
            "(the default) or a folder outside it"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"{option}: {out} is a file, not a folder")
    if out.is_dir():
        marker = _read_marker(out)
        if marker is not None and marker.get("kind") != "publish":
            raise UserError(f"{option}: {out} is a sciqag {marker.get('kind')} folder, not a publish folder")
        if marker is None and _own_entries(out):
            entries = _own_entries(out)
            shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
            raise UserError(
                f"{option}: {out} is not empty and holds no earlier publish ({shown}); choose a new or empty folder"
            )
        check_writable(out, option)
    else:
        parent = next((p for p in out.parents if p.exists()), None)
        if parent is None or not parent.is_dir():
            raise UserError(f"{option}: cannot create {out}")
        check_writable(parent, option)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_staging(parent: Path) -> None:
    """Remove staging folders of ours whose process is gone (a publish killed before it finished)."""
    if not parent.is_dir():
        return
    for entry in parent.iterdir():
        if STAGING_PREFIX not in entry.name:
            continue
        try:
            pid = int((entry / _STAGING_MARKER).read_text().strip())
        except (OSError, ValueError):
            continue  # no marker of ours: not ours to delete
        if not _pid_alive(pid):
            log.info("removing %s, left by an interrupted publish", entry)
            shutil.rmtree(entry, ignore_errors=True)


def _new_folder(prefix: str, parent: Path) -> Path:
    """``tempfile.mkdtemp``, with the mode a folder made by ``mkdir`` gets (mkdtemp's is 0700): it becomes the
    published folder or the model folder, which other users of a shared machine must be able to read."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    return folder


def new_staging(out: Path) -> Path:
    """An empty staging folder beside ``out`` (same file system, so files move in atomically)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(out.parent)
    staging = _new_folder(f".{out.name}{STAGING_PREFIX}", out.parent)
    (staging / _STAGING_MARKER).write_text(str(os.getpid()))
    return staging


def _files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name not in (MARKER, _STAGING_MARKER)
    )


def install_publish(staging: Path, out: Path, last: str = "README.md", kind: str = "publish") -> list[str]:
    """Move the files built in ``staging`` into ``out``, replacing only an earlier publish's files.

    ``last`` (the card, which names the data files) moves in after every data file, so a reader sees
    either the old publish or the new one. ``kind``: the folder's kind in its marker (an export folder is
    replaced the same way). Returns the files now published.
    """
    new = _files(staging)
    marker = _read_marker(out) if out.is_dir() else None
    if marker is None and out.is_dir() and _own_entries(out):  # filled by someone since it was checked
        raise UserError(f"{out} is not empty and holds no earlier publish; nothing was changed there")
    previous = (marker or {}).get("files", [])
    if not out.is_dir() or not _own_entries(out):
        if out.is_dir():
            shutil.rmtree(out)  # empty but for our marker
        (staging / _STAGING_MARKER).unlink()
        _write_marker(staging, {"kind": kind, "files": new})
        os.rename(staging, out)  # the whole folder appears at once
        return new
    # the marker first lists old and new files: a kill from here on leaves nothing of ours unlisted
    _write_marker(out, {"kind": kind, "files": sorted(set(previous) | set(new))})
    for rel in sorted(new, key=lambda r: r == last):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, target)
    for rel in sorted(set(previous) - set(new)):
        path = out / rel
        if path.is_file():
            path.unlink()
        parent = path.parent
        while parent != out and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    _write_marker(out, {"kind": kind, "files": new})
    shutil.rmtree(staging, ignore_errors=True)
    return new


# ---------------------------------------------------------------- cached artifacts


def build_once(out: Path, build) -> Path:
    """``out`` built by ``build(tmp_folder)`` exactly once, even when several processes ask at once.

    The first process takes a lock, builds into a temporary folder and renames it into place (so ``out``
    exists only whole); the others wait on the lock and reuse the result. A temporary folder left by a
    killed build is removed by the next one.
    """
    out = Path(out)
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "a") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also on a kill
        except ImportError:  # not POSIX: the rename below still keeps `out` whole
            pass
        if out.exists():
            return out
        for stale in out.parent.glob(f".{out.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)  # a build killed mid-way (we hold the lock)
        tmp = _new_folder(f".{out.name}.tmp-", out.parent)
        try:
            build(tmp)
            os.rename(tmp, out)
        except OSError:
            if not out.exists():
                raise
            log.info("%s was built by another process; reusing it", out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out
