"""Local OpenAI-compatible servers on loopback, started and stopped by the project.

``LocalServer`` runs ``transformers serve`` on a model folder (the embedded default's fallback, a freshly
trained generator); ``LlamaCppServer`` runs llama-cpp-python's server on a GGUF file (the embedded
default where it is installed). Both bind a free port, wait until they answer, die with the process that
started them, and stop on exit. Which one the embedded default uses is decided in ``embedded.py``.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from ..errors import Unavailable
from ..processes import preexec_die_with_parent

log = logging.getLogger(__name__)


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

    def __init__(self, model_dir: str | Path, port: int | None = None, continuous_batching: bool = True,
                 startup_timeout: float = 180.0, log_path: str | Path | None = None,
                 kv_cache_tokens: int = 32768, device: str = "auto", dtype: str = "auto",
                 threads: int | None = None):
        self.model_dir = str(model_dir)
        self.port = port or free_port()
        self.continuous_batching = continuous_batching
        self.dtype = dtype
        # one request at a time gets every core (1.6x faster than one thread on 2 cores); a batching server
        # keeps to one thread per process unless told otherwise, as it shares the machine with its client
        self.threads = threads or ((os.cpu_count() or 1) if not continuous_batching else None)
        # Without a cap the paged KV cache claims most of the machine's memory (14 GB seen on a 24 GB box).
        self.kv_cache_tokens = kv_cache_tokens
        self.device = device
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        return self.model_dir  # transformers serve expects the served path as the request's model

    name = "transformers serve"
    health_path = "/health"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{self.health_path}", timeout=2) as r:
                return r.status == 200
        except Exception:
            return False

    def start(self, attempts: int = 3) -> "LocalServer":
        """Start and wait for /health; a port taken between choosing and binding it is retried."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == attempts - 1:
                    raise Unavailable(f"{self.name} could not bind a free port ({attempts} tries)")
                self.port = free_port()
        return self

    def command(self) -> list[str]:
        exe = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")
        cmd = [exe, "serve", self.model_dir, "--device", _device(self.device), "--host", "127.0.0.1",
               "--port", str(self.port), "--dtype", self.dtype]
        if self.continuous_batching:
            block = 256
            cmd += ["--continuous-batching", "--cb-block-size", str(block),
                    "--cb-num-blocks", str(max(1, self.kv_cache_tokens // block))]
        return cmd

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        else:
            env.setdefault("OMP_NUM_THREADS", "1")  # avoid thread thrash beside the client on small machines
        hub_cache = Path(env.get("HF_HUB_CACHE") or cache_dir() / "hub")
        hub_cache.mkdir(parents=True, exist_ok=True)  # /v1/models answers 500 without an existing cache dir
        env["HF_HUB_CACHE"] = str(hub_cache)
        return env

    def _start_once(self) -> "LocalServer":
        cmd, env = self.command(), self.environment()
        self._log_file = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        log.info("Starting %s (OMP_NUM_THREADS=%s)", " ".join(cmd), env.get("OMP_NUM_THREADS", "unset"))
        # PR_SET_PDEATHSIG fires when the starting *thread* ends, so only tie the server to the main thread.
        tie = preexec_die_with_parent if threading.current_thread() is threading.main_thread() else None
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=tie)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.stop()
                if not self.healthy():
                    raise Unavailable(f"{self.name} exited with {code}; see {self.log_path}")
                raise _PortTaken()  # someone else answers on our port: try another one
            if self.healthy():
                time.sleep(0.5)  # the answer may be another process that holds the port: ours must be alive
                if self.proc.poll() is None:
                    return self
                continue
            time.sleep(0.5)
        self.stop()
        raise Unavailable(f"{self.name} did not become healthy in {self.startup_timeout:.0f}s")

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
        self.proc = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class LlamaCppServer(LocalServer):
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on one GGUF file.

    One request at a time with every core: on a 2-core CPU it decoded SmolLM2-135M at ~88 tokens/s against
    ~19 for ``transformers serve`` (DESIGN.md section 2).
    """

    name = "llama.cpp server"
    health_path = "/v1/models"

    def __init__(self, gguf: str | Path, alias: str, *, context_tokens: int = 8192, threads: int | None = None,
                 port: int | None = None, startup_timeout: float = 180.0, log_path: str | Path | None = None):
        super().__init__(gguf, port=port, continuous_batching=False, startup_timeout=startup_timeout,
                         log_path=log_path, threads=threads)
        self.alias = alias
        self.context_tokens = context_tokens

    @property
    def model(self) -> str:
        return self.alias

    def command(self) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", self.model_dir, "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.context_tokens),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]

    def environment(self) -> dict[str, str]:
        return dict(os.environ)
