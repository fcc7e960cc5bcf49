"""Local OpenAI-compatible servers on loopback, started and stopped by the project.

``LocalServer`` runs ``transformers serve`` on a model folder (the embedded default's fallback, a freshly
trained generator); an engine's server is a subclass with its own command line (``LlamaCppServer`` in
``llama_cpp_engine.py``). Each binds a free port, waits until it answers, then must answer one tiny
completion (a server that crashes on its first decode is caught before a paper is sent), dies with the
process that started it, and stops on exit. They run without the credentials of this process's
environment: a local model needs none. Which engine the embedded default uses is decided in ``embedded.py``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.core.processes import preexec_die_with_parent
from sciqag_dataset.core.redact import is_secret

log = logging.getLogger(__name__)

#: What a local model server inherits from this process: locale, paths, threads, caches, the accelerator's
#: settings, and our own. Nothing else, so no credential gets there under any name (a key, a token, a proxy
#: URL with a password), whether or not this command resolved it. The model is a local folder (the embedded
#: one is downloaded in this process), so a server never needs HF_TOKEN.
_KEPT = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TZ",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "VIRTUAL_ENV",
    "LD_LIBRARY_PATH",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "TOKENIZERS_PARALLELISM",
    "HF_HUB_DISABLE_TELEMETRY",
}
_KEPT_PREFIXES = (
    "LC_",
    "XDG_",
    "PYTHON",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "KMP_",
    "GOMP_",
    "CUDA_",
    "NVIDIA_",
    "ROCM_",
    "HIP_",
    "GGML_",
    "LLAMA_",
    "TORCH",
    "PYTORCH_",
    "CONDA_",
    "SCIQAG_",
)


_CREDENTIAL_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|CRED|AUTH", re.I)  # within a kept prefix too


def without_credentials(env: dict[str, str]) -> dict[str, str]:
    """``env`` reduced to what a process that serves a local model needs (see ``_KEPT``)."""
    return {
        k: v
        for k, v in env.items()
        if not is_secret(v) and (k in _KEPT or k.startswith(_KEPT_PREFIXES) and not _CREDENTIAL_NAME.search(k))
    }


class ServerDied(Unavailable):
    """The server process ended (a crash, an OOM kill): its exit status and the last lines of its log."""


def cache_dir() -> Path:
    root = os.environ.get("SCIQAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "sciqag"
    )
    return Path(root)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _device(requested: str) -> str:
    if requested != "auto":
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class _PortTaken(Exception):
    pass


class LocalServer:
    """``transformers serve MODEL_DIR`` on a free loopback port, as a context manager."""

    def __init__(
        self,
        model_dir: str | Path,
        port: int | None = None,
        continuous_batching: bool = True,
        startup_timeout: float = 180.0,
        log_path: str | Path | None = None,
        kv_cache_tokens: int = 32768,
        device: str = "auto",
        dtype: str = "auto",
        threads: int | None = None,
    ):
        self.model_dir = str(model_dir)
        self.port = port or free_port()
        self.continuous_batching = continuous_batching
        self.dtype = dtype
        # one request at a time gets every core (docs/MEASUREMENTS.md); a batching server
        # keeps to one thread per process unless told otherwise, as it shares the machine with its client
        self.threads = threads or ((os.cpu_count() or 1) if not continuous_batching else None)
        # Without a cap the paged KV cache claims most of the machine's memory (docs/MEASUREMENTS.md).
        self.kv_cache_tokens = kv_cache_tokens
        self.device = device
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    #: The address it listens on: loopback, unless `sciqag serve --host` opens it wider.
    host = "127.0.0.1"

    @property
    def address(self) -> str:
        """Where this machine reaches it: loopback when it listens on every address."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else "::1" if self.host == "::" else self.host
        return f"[{host}]" if ":" in host else host

    @property
    def base_url(self) -> str:
        return f"http://{self.address}:{self.port}/v1"

    @property
    def model(self) -> str:
        return self.model_dir  # transformers serve expects the served path as the request's model

    name = "transformers serve"
    health_path = "/health"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ends_within(self, seconds: float) -> bool:
        """Whether the process is gone, or goes within ``seconds``."""
        try:
            return self.proc is None or self.proc.wait(timeout=seconds) is not None
        except subprocess.TimeoutExpired:
            return False

    def death(self) -> str:
        """How the process ended, with the last lines of its log: what a user needs to report a crash."""
        code = self.proc.poll() if self.proc else None
        how = (
            "is not running"
            if code is None
            else f"was killed by {_signal_name(-code)}"
            if code < 0
            else f"exited with status {code}"
        )
        tail = _log_tail(self.log_path)
        return f"{self.name} (pid {self.proc.pid if self.proc else '-'}) {how}" + (
            f"; the last lines of {self.log_path}:\n{tail}" if tail else ""
        )

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.address}:{self.port}{self.health_path}", timeout=2) as r:
                return r.status == 200
        except Exception:
            return False

    def start(self, attempts: int = 3) -> LocalServer:
        """Start and wait for /health; a port taken between choosing and binding it is retried."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == attempts - 1:
                    raise Unavailable(f"{self.name} could not bind a free port ({attempts} tries)") from None
                self.port = free_port()
        return self

    def command(self) -> list[str]:
        exe = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")
        cmd = [
            exe,
            "serve",
            self.model_dir,
            "--device",
            _device(self.device),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--dtype",
            self.dtype,
        ]
        if self.continuous_batching:
            block = 256
            cmd += [
                "--continuous-batching",
                "--cb-block-size",
                str(block),
                "--cb-num-blocks",
                str(max(1, self.kv_cache_tokens // block)),
            ]
        return cmd

    def environment(self) -> dict[str, str]:
        # the model is a local folder (embedded.default_model_dir downloads in this process): no HF_TOKEN
        env = without_credentials(dict(os.environ))
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        else:
            env.setdefault("OMP_NUM_THREADS", "1")  # avoid thread thrash beside the client on small machines
        hub_cache = Path(env.get("HF_HUB_CACHE") or cache_dir() / "hub")
        hub_cache.mkdir(parents=True, exist_ok=True)  # /v1/models answers 500 without an existing cache dir
        env["HF_HUB_CACHE"] = str(hub_cache)
        return env

    def _start_once(self) -> LocalServer:
        cmd, env = self.command(), self.environment()
        self._log_file = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        log.info("Starting %s (OMP_NUM_THREADS=%s)", " ".join(cmd), env.get("OMP_NUM_THREADS", "unset"))
        # PR_SET_PDEATHSIG fires when the starting *thread* ends, so only tie the server to the main thread.
        tie = preexec_die_with_parent if threading.current_thread() is threading.main_thread() else None
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=tie
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                if not self.healthy():
                    raise ServerDied(self.death())
                raise _PortTaken()  # someone else answers on our port: try another one
            if self.healthy():
                time.sleep(0.5)  # the answer may be another process that holds the port: ours must be alive
                if self.proc.poll() is None:
                    self._first_completion(deadline)
                    return self
                continue
            time.sleep(0.5)
        self.stop()
        raise Unavailable(f"{self.name} did not become healthy in {self.startup_timeout:.0f}s")

    def _first_completion(self, deadline: float) -> None:
        """One token of a raw completion (no chat template needed): a server that dies on its first decode,
        as llama.cpp on some CPUs did, fails here, named, instead of failing every paper."""
        body = json.dumps({"model": self.model, "prompt": "Hello", "max_tokens": 1, "temperature": 0}).encode()
        req = urllib.request.Request(
            f"{self.base_url}/completions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=max(10.0, deadline - time.monotonic())) as r:
                r.read()
            return
        except Exception as exc:
            error = exc
        time.sleep(0.2)  # a crashing process may still be on its way out
        if not self.alive():
            death = self.death()
            self.stop()
            raise ServerDied(death)
        self.stop()
        raise Unavailable(f"{self.name} did not answer its first completion: {type(error).__name__}: {error}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log_file not in (None, subprocess.DEVNULL):
            self._log_file.close()
        # keep the ended process: its exit status is what a crash report needs
        if self.proc is not None:
            self.proc.poll()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _log_tail(path: str | Path | None, lines: int = 12) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join("    " + line for line in text.splitlines()[-lines:])
