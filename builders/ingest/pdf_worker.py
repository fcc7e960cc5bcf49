"""PyMuPDF in a process of its own. Its native code can crash on a real paper (a segmentation fault in MuPDF's text
extraction, seen on a published PDF); in its own process that ends the worker, not the run: the file is reported
as ``Crashed`` (and read by another backend, ``pdf.py``), and the next PDF starts a new worker. One worker per
reading process, started by the first PDF and kept, so the layout model loads once; stopped at exit, and killed
when the caller is interrupted mid-file (a file's time limit, Ctrl-C).

The worker runs ``main(IN, OUT)`` in a new Python: it reads (path, password) requests on file descriptor IN and
answers ("ok", (metadata, pages)) or ("error", message) on OUT, pickled."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from multiprocessing.connection import Connection

from sciqag_dataset.builders.ingest import pdf_mupdf
from sciqag_dataset.builders.ingest.errors import IngestError


class Crashed(IngestError):
    """The reading process died on this file."""


class _Worker:
    def __init__(self) -> None:
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the parent's code
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import main; main({from_parent}, {to_parent})"],
            pass_fds=(from_parent, to_parent),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # PyMuPDF prints notices; the answers go through OUT
            env=env,
            start_new_session=True,  # Ctrl-C interrupts the caller, which stops the worker: no second traceback
        )
        os.close(from_parent)
        os.close(to_parent)
        self.requests = Connection(to_child, readable=False)
        self.answers = Connection(from_child, writable=False)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.requests.close()
        self.answers.close()


_worker: _Worker | None = None
_lock = threading.Lock()  # one file at a time through the one worker, whichever thread asks


def read_document(path: str, password: str = "") -> tuple[dict, list]:
    """``pdf_mupdf.read_document`` in the worker process."""
    with _lock:
        return _read(path, password)


def _read(path: str, password: str) -> tuple[dict, list]:
    global _worker
    if _worker is None or _worker.proc.poll() is not None:
        _stop()
        _worker = _Worker()
    try:
        _worker.requests.send((os.path.abspath(path), password))  # the worker keeps the directory it started in
        status, value = _worker.answers.recv()
    except (EOFError, OSError):
        code = _worker.proc.wait()
        _stop()
        raise Crashed(f"the PDF reader (PyMuPDF) crashed on this file (exit status {code})") from None
    except BaseException:  # interrupted mid-file: the worker may be busy for long, start afresh
        _stop()
        raise
    if status == "error":
        raise IngestError(value)
    return value


def _stop() -> None:
    global _worker
    if _worker is not None:
        _worker.stop()
        _worker = None


atexit.register(_stop)


def main(fd_in: int, fd_out: int) -> None:
    requests, answers = Connection(fd_in, writable=False), Connection(fd_out, readable=False)
    while True:
        try:
            path, password = requests.recv()
        except EOFError:
            return
        try:
            answer = ("ok", pdf_mupdf.read_document(path, password))
        except IngestError as exc:
            answer = ("error", str(exc))
        except Exception as exc:  # PyMuPDF raises many types on damaged files
            answer = ("error", f"invalid PDF: {type(exc).__name__}" + (f": {exc}" if str(exc) else ""))
        answers.send(answer)
