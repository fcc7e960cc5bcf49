"""The opt-in int8 route for the coverage embedder (``evaluate.embedder: onnx-int8``).

Why: on a CPU nearly all of coverage's time is the encoder's linear layers, already compute-bound in float32
once batches carry little padding (``fast_embed``). The same weights quantized to int8 do more work
per second (more still where the CPU has VNNI or AMX int8 instructions). The vectors are close to, not equal to,
the float32 ones, and so is coverage (docs/MEASUREMENTS.md; bench/evaluate.py prints both routes side by side).
Hence opt-in.

How: at setup the sentence-transformers model's transformer is exported to ONNX (torch's TorchScript exporter,
eager attention so ONNX Runtime's BERT optimizer can fuse it), optimized, and its weights quantized per channel
to int8 (ONNX Runtime's dynamic quantization: activations quantized at run time, nothing to calibrate). It
takes seconds and happens in a temporary folder per process, so no stale file outlives a changed model.
Pooling (the model's own mean or CLS) and normalisation happen here in numpy.

Two consequences of int8 the rest of the stage accounts for: activations are quantized with one scale per
batch, so a text's vector depends slightly on the texts batched with it (cosine ~0.99 between a sentence alone
and in a batch; ``fast_embed`` then encodes a paper's sentences always together and its queries one by one, so
a record depends on its paper and pair alone); and ONNX Runtime picks its int8 kernels by the CPU's flags, so
the sentence cache keys the vectors by the recipe, ONNX Runtime's release and the CPU's int8 instructions,
apart from the float32 ones and from other machines' (a shared cache on a mixed cluster never mixes them).

optimum is not used: its ONNX export pins transformers < 5 (this project pins 5.x); onnxruntime alone does not.
"""

from __future__ import annotations

import inspect
import logging
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.evaluation.embedder import ROUTES, TORCH
from sciqag_dataset.evaluation.fast_embed import dimension

log = logging.getLogger(__name__)

RECIPE = "onnx-int8/v1"  # bump when the export, fusion or quantization settings change: records recompute
TOKEN_BUDGET = 1024  # padded tokens per run, as fast_embed (the int8 kernels showed no better size: 256-2048)
MAX_TEXTS = 256


def _require():
    try:
        import onnx  # noqa: F401
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as exc:
        raise Unavailable(
            "evaluate.embedder 'onnx-int8' needs ONNX Runtime: pip install 'sciqag-hf[fast-embed]' "
            "(onnxruntime, onnx), or use the default embedder 'torch'"
        ) from exc
    return onnxruntime, quantize_dynamic, QuantType, optimize_model


def _hidden_states(bert, names: list[str]):
    """The transformer alone, hidden states out (pooling stays outside the graph: any mask, any mode)."""
    import torch

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, *inputs):
            return self.bert(**dict(zip(names, inputs))).last_hidden_state

    return Hidden().eval()


def _export(model, folder: Path) -> Path:
    """ONNX file of ``model``'s transformer, batch size and length left dynamic."""
    import torch

    bert = model[0].auto_model
    sample = model.tokenizer(["a short sentence", "two words"], padding=True, return_tensors="pt")
    takes = inspect.signature(bert.forward).parameters  # a tokenizer may return what the model does not take
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample and n in takes]
    path = folder / "fp32.onnx"
    before = getattr(bert.config, "_attn_implementation", None)
    try:
        bert.set_attn_implementation("eager")  # the attention pattern ONNX Runtime's optimizer fuses
    except (AttributeError, ValueError) as exc:  # older or custom models: export as they are
        log.debug("eager attention not set (%s)", exc)
    try:
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            # the TorchScript exporter: it needs no onnxscript, and the optimizer knows its attention pattern
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _hidden_states(bert, names),
                tuple(sample[n] for n in names),
                str(path),
                input_names=names,
                output_names=["hidden"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
                opset_version=17,
                dynamo=False,
            )
    finally:
        if before:
            try:
                bert.set_attn_implementation(before)
            except (AttributeError, ValueError):
                bert.config._attn_implementation = before
    return path


def _graph(model, folder: Path, int8: bool) -> Path:
    """The optimized graph of ``model``'s transformer in ``folder``, its weights int8 unless ``int8`` is False
    (float32: what the tests compare with the torch model, to check the export itself)."""
    _, quantize_dynamic, QuantType, optimize_model = _require()
    import onnx
    from onnxruntime.transformers.optimizer import MODEL_TYPES

    fp32 = _export(model, folder)
    cfg = model[0].auto_model.config
    source = fp32
    if cfg.model_type in MODEL_TYPES:  # fused attention, LayerNorm and GELU; other architectures skip it
        opt = optimize_model(
            str(fp32), model_type=cfg.model_type, num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size
        )
        source = folder / "opt.onnx"
        opt.save_model_to_file(str(source))
    if not int8:
        return source
    out = folder / "int8.onnx"
    hint = _DropHint()  # its advice to pre-process (shape inference) is for static quantization, not this
    logging.getLogger().addFilter(hint)
    try:
        quantize_dynamic(
            str(source),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,  # per-tensor weights lost too much (cosine 0.96 mean to float32's, 0.99 here)
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # fused ops have no inferred type
        )
    finally:
        logging.getLogger().removeFilter(hint)
    return out


class _DropHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


def recipe() -> str:
    """What decides the int8 route's vectors besides the model: this module's recipe and ONNX Runtime's release."""
    import onnxruntime

    return f"{RECIPE}/ort{onnxruntime.__version__}"


def int8_isa(flags: set[str] | None = None) -> str:
    """The CPU's int8 dot-product instructions ONNX Runtime chooses its kernels by (``flags``: /proc/cpuinfo's)."""
    if flags is None:
        try:
            text = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:  # not Linux: the machine's name for them is unknown, say so in the key
            return "unknown"
        flags = {f for line in text.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}
    for isa, needs in (("amx", "amx_int8"), ("avx512vnni", "avx512_vnni"), ("avxvnni", "avx_vnni")):
        if needs in flags:
            return isa
    return "avx512" if "avx512bw" in flags else "avx2" if "avx2" in flags else "base"


class OnnxEmbedder:
    """Encodes like ``model`` (same tokenizer, truncation, pooling, unit length) through ONNX Runtime, with
    int8 weights (``int8=False``: float32, for tests of the export).

    Supports the plain sentence-transformers shape: Transformer, Pooling (mean or cls), optional Normalize,
    without prompts. Anything else is refused at setup with the reason, before any paper is read.
    """

    def __init__(self, model, int8: bool = True, threads: int | None = None):
        ort = _require()[0]
        kinds = [type(m).__name__ for m in model]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            raise Unavailable(f"evaluate.embedder 'onnx-int8' supports Transformer + Pooling models, not {kinds}")
        mode = getattr(model[1], "pooling_mode", None)
        if mode not in ("mean", "cls"):
            raise Unavailable(f"evaluate.embedder 'onnx-int8' supports mean or cls pooling, not {mode!r}")
        if getattr(model, "default_prompt_name", None):
            raise Unavailable("evaluate.embedder 'onnx-int8' does not apply sentence-transformers prompts")
        if mode == "cls" and getattr(model.tokenizer, "padding_side", "right") == "left":
            raise Unavailable("evaluate.embedder 'onnx-int8' takes CLS pooling with right padding only")
        self.batch_dependent = int8
        self.cache_tag = f"{recipe()}/{int8_isa()}" if int8 else "onnx-fp32"
        self.tokenizer, self.mode = model.tokenizer, mode
        self.max_seq_length = model.max_seq_length
        self.lower = bool(getattr(model[0], "do_lower_case", False))
        self.dim = dimension(model)
        import torch

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()  # what torch was given: the cores
        options.inter_op_num_threads = 1
        # idle threads sleep rather than spin between runs (tokenizing, pooling): a rank's cores stay its own
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        with tempfile.TemporaryDirectory(prefix="sciqag-int8-") as tmp:
            try:
                path = _graph(model, Path(tmp), int8)
                # the session holds the graph in memory: the folder can go
                self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            except Unavailable:
                raise
            except Exception as exc:  # an architecture the exporter or the optimizer cannot take
                raise Unavailable(
                    f"evaluate.embedder 'onnx-int8' cannot convert this model ({type(exc).__name__}: {exc}); "
                    "use evaluate.embedder: torch"
                ) from exc
        self.inputs = [i.name for i in self.session.get_inputs()]

    def get_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: list[str], **_) -> np.ndarray:
        """Unit-length float32 vectors of ``texts`` in order, batched by token count like ``fast_embed``."""
        texts = [t.lower() for t in texts] if self.lower else list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        cut = {"truncation": True, "max_length": self.max_seq_length}
        lengths = [len(x) for x in self.tokenizer(texts, **cut)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        start = 0
        while start < len(order):
            idx = order[start : start + max(1, min(MAX_TEXTS, TOKEN_BUDGET // max(lengths[order[start]], 1)))]
            batch = self.tokenizer([texts[i] for i in idx], padding=True, return_tensors="np", **cut)
            feed = {n: batch[n].astype(np.int64) for n in self.inputs}
            hidden = self.session.run(None, feed)[0]
            if self.mode == "cls":
                emb = hidden[:, 0]
            else:
                mask = batch["attention_mask"][..., None].astype(np.float32)
                emb = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            out[idx] = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
            start += len(idx)
        return out


def load(model, backend: str = TORCH, device: str = "cpu"):
    """``model`` itself (backend ``torch``) or its int8 counterpart (``onnx-int8``, CPU only)."""
    if backend not in ROUTES:
        raise Unavailable(f"evaluate.embedder must be one of {ROUTES}, not {backend!r}")
    if backend == TORCH:
        return model
    if device != "cpu":
        raise Unavailable(f"evaluate.embedder 'onnx-int8' runs on the CPU; evaluate.device is {device!r}")
    _require()  # before the per-process build cache, which would hide a missing runtime
    return _built(model)


@lru_cache(maxsize=2)
def _built(model) -> OnnxEmbedder:
    """One int8 graph per loaded model and process: reruns and later stages do not build it again."""
    return OnnxEmbedder(model)
