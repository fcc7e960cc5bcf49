"""Papers read from, and the publish folder written to, any fsspec path: s3://, gs://, az://, hf://, http(s)://...

The work dir stays a POSIX folder (this machine's disk, or a cluster's shared filesystem): the runner appends
records line by line and the response cache is SQLite, and object stores do neither. What crosses to storage
is whole files: each input paper is copied to a temporary file and read there; the publish folder is built in
the work dir and then copied up, with the same ownership rule as a local one (a marker lists our files; a
non-empty folder without it is refused; only files of our earlier publish are replaced or removed).

Credentials come from the filesystem's own settings (AWS_* variables or ~/.aws for s3fs, HF_TOKEN for hf://,
GOOGLE_APPLICATION_CREDENTIALS for gcsfs, ~/.netrc for http): a URL that carries them (``user:password@``, or a
query string as in a signed URL) is refused, since a paper's source path is written into its records.
"""

from __future__ import annotations

import json
import posixpath
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sciqag_dataset import __version__
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import MARKER
from sciqag_dataset.core.redact import redact

_GLOB = set("*?[")


def is_remote(path) -> bool:
    """A URL of a filesystem other than this machine's (``file://`` paths are local)."""
    return isinstance(path, str) and "://" in path and not path.startswith("file://")


def local(path):
    """``file:///x`` (or ``file://localhost/x``, %-escapes decoded) -> ``/x``; anything else unchanged."""
    if isinstance(path, str) and path.startswith("file://"):
        parts = urlsplit(path)
        return unquote(parts.path) if parts.netloc in ("", "localhost") else path
    return path


def check_url(url: str, option: str) -> None:
    """UserError for a URL that carries credentials, in any link of a chained URL (``simplecache::s3://...``)."""
    for link in url.split("::"):
        parts = urlsplit(link)
        if "@" in parts.netloc or parts.query:
            raise UserError(
                f"{option}: a URL with a user:password part or a query string would be written into "
                "records and logs; give the filesystem its credentials through its environment "
                "(AWS_*, HF_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, ~/.netrc)"
            )


_URL_TAIL = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]*?)\?[^\s'\"<>]*")


def clean(message: str) -> str:
    """An error text with no URL credentials and no query strings (a redirect to a signed URL shows it)."""
    return redact(_URL_TAIL.sub(r"\1?***", message))


def filesystem(url: str):
    """(fsspec filesystem, path inside it); a clear error when the protocol's package is missing."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:  # fsspec's message names the package (s3fs, gcsfs, adlfs...)
        raise UserError(f"{url}: {exc}") from None
    except ValueError as exc:
        raise UserError(f"{url}: {exc}") from None


def _hidden(path: str, root: str) -> bool:
    rel = posixpath.relpath(path, root) if path.startswith(root) else posixpath.basename(path)
    return any(part.startswith(".") for part in rel.split("/"))


#: url -> stamp, from the listings of this process (an object store's LIST carries size and ETag: no HEAD each)
_stamps: dict[str, str] = {}


def list_files(url: str) -> list[str]:
    """The files under a folder URL (recursively, hidden entries left out), those a glob matches, or the file
    itself; sorted, as full URLs. Over http(s) a URL is a folder only when it ends with "/" (a page has links
    too)."""
    fs, path = filesystem(url)
    web = url.split("::")[-1].startswith(("http://", "https://"))
    if set(path) & _GLOB:
        root = path[: min(path.index(c) for c in _GLOB if c in path)].rsplit("/", 1)[0]
        found = {p: i for p, i in fs.glob(path, detail=True).items() if i.get("type") != "directory"}
    elif path.endswith("/") if web else fs.isdir(path):
        root = path.rstrip("/")
        found = fs.find(path, detail=True)
    elif web or fs.isfile(path):
        root, found = None, {path: fs.info(path)}  # named: read even if hidden
    else:
        raise FileNotFoundError(f"no such file or folder: {url}")
    out = []
    for p, info in found.items():
        if root is not None and _hidden(p, root):
            continue
        full = p if "://" in p else fs.unstrip_protocol(p)
        if (st := _stamp(info)) is not None:
            _stamps[full] = st
        out.append(full)
    return sorted(out)


def _stamp(info: dict) -> str | None:
    tag = next(
        (
            info[k]
            for k in (
                "ETag",
                "etag",
                "md5Hash",
                "version_id",
                "blob_id",
                "mtime",
                "LastModified",
                "last_modified",
                "Last-Modified",
                "updated",
                "created",
            )
            if info.get(k)
        ),
        None,
    )
    if tag is None:
        return None  # no version tag or time: a same-size edit would pass unseen, so never trusted
    return f"{info.get('size')}:{tag}"


def stamp(url: str) -> str | None:
    """What changes when the file does (size and the store's version tag or time); None when the store says
    nothing of the kind."""
    if url in _stamps:
        return _stamps[url]
    fs, path = filesystem(url)
    return _stamp(fs.info(path))


class DownloadStopped(Exception):
    """A copy stopped by one of its limits; the message names the limit, on one line."""


def too_slow(seconds: float) -> str:
    return (
        f"download gave up after {seconds:g} s (ingest.file_timeout): the host sends too slowly, or the file "
        "is far larger than a paper"
    )


def too_large(max_mb: float) -> str:
    return f"download exceeds ingest.max_file_mb={max_mb:g}: far larger than a paper, or a reply without end"


def _limits(seconds: float | None, max_mb: float | None):
    """A check of a copy's size and time so far: raises DownloadStopped."""
    deadline = time.monotonic() + seconds if seconds else None

    def check(size: int | None, value: int, **_) -> None:
        if max_mb and max(size or 0, value) > max_mb * 1e6:  # the announced size fails before a byte is written
            raise DownloadStopped(too_large(max_mb))
        if deadline is not None and time.monotonic() > deadline:
            raise DownloadStopped(too_slow(seconds))

    return check


@contextmanager
def fetched(url: str, seconds: float | None = None, max_mb: float | None = None) -> Iterator[Path]:
    """The file copied to a temporary folder under its own name (readers tell formats by extension).
    DownloadStopped when the copy takes over ``seconds`` or passes ``max_mb`` megabytes (0 or None: no
    limit); the partial copy is deleted."""
    from fsspec.callbacks import Callback

    fs, path = filesystem(url)
    with tempfile.TemporaryDirectory(prefix="sciqag-input-") as tmp:
        name = posixpath.basename(path.rstrip("/")) or "paper"
        stem, dot, ext = name.rpartition(".")
        if len(name.encode()) > 200:  # object keys may be longer than a file name can be
            name = (stem[:150] + dot + ext[:20]) if dot else name[:180]
        target = Path(tmp) / name
        check = _limits(seconds, max_mb)
        # called by the filesystem's own copy loop on each chunk: raised there, the copy ends inside that loop
        # (an async filesystem's coroutine too), so nothing left behind goes on writing. A host that sends
        # nothing at all never calls it: the caller's alarm ends that one.
        fs.get_file(path, str(target), callback=Callback(hooks={"limits": check}))
        check(None, target.stat().st_size)  # a filesystem that never calls back is checked once, after
        yield target


def _marker(fs, root: str) -> dict | None:
    try:
        with fs.open(posixpath.join(root, MARKER), "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_target(url: str, option: str = "publish.output_dir") -> None:
    """Refuse a remote publish folder that holds files and no earlier publish of ours, before any work."""
    check_url(url, option)
    if url.startswith("hf://"):  # a Hub repo is not a folder of ours: it has its own history and card
        raise UserError(
            f"{option}: publish to the Hub with publish.push_to_hub (--push-to-hub ORG/NAME), "
            "which uploads the folder in one commit"
        )
    fs, root = filesystem(url)
    try:
        entries = fs.ls(root, detail=False) if fs.isdir(root) else []
    except FileNotFoundError:
        entries = []
    except OSError as exc:
        raise UserError(f"{option}: cannot read {url} ({exc})") from None
    if fs.isfile(root):
        raise UserError(f"{option}: {url} is a file, not a folder")
    marker = _marker(fs, root)
    if entries and (marker is None or marker.get("kind") != "publish"):
        names = [posixpath.basename(e.rstrip("/")) for e in entries]
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise UserError(
            f"{option}: {url} is not empty and holds no earlier publish ({shown}); choose a new or empty folder"
        )


def upload_folder(folder: Path, url: str, last: str = "README.md") -> list[str]:
    """Copy a local publish folder to ``url``: data files first, the card (which names them) last, then the
    marker; files of the earlier publish no longer used are removed. Returns the files now published."""
    check_target(url)
    fs, root = filesystem(url)
    previous = (_marker(fs, root) or {}).get("files", [])
    new = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != MARKER)
    fs.makedirs(root, exist_ok=True)
    _write_marker(fs, root, sorted(set(previous) | set(new)))  # a kill from here on leaves nothing unlisted
    for rel in sorted(new, key=lambda r: r == last):
        fs.put_file(str(folder / rel), posixpath.join(root, rel))
    for rel in sorted(set(previous) - set(new)):
        if fs.isfile(posixpath.join(root, rel)):
            fs.rm_file(posixpath.join(root, rel))
    _write_marker(fs, root, new)
    return new


def _write_marker(fs, root: str, files: list[str]) -> None:
    with fs.open(posixpath.join(root, MARKER), "w", encoding="utf-8") as f:
        json.dump({"kind": "publish", "files": files, "version": __version__}, f, indent=1)
