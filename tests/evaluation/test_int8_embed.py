"""The opt-in int8 route of the coverage embedder (``evaluate.embedder: onnx-int8``), with the real MiniLM
exported to ONNX and run by ONNX Runtime. Closeness, never time (bench/evaluate.py times it).

ONNX Runtime chooses its int8 kernels by the CPU's flags (AVX2, AVX-512 VNNI, AMX) and offers no switch to
force one, so the bounds below are what any of them must meet, not this machine's exact vectors."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "2")

from test_embedding_cache import PAPER, QA, SENTENCES, _encoded, _write  # noqa: E402

from sciqag_dataset.core.errors import Unavailable  # noqa: E402
from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.evaluation import coverage as cov  # noqa: E402
from sciqag_dataset.evaluation import fast_embed as fe  # noqa: E402
from sciqag_dataset.evaluation import int8_embed  # noqa: E402
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, load_embedder  # noqa: E402

# lengths from 3 to past the model's 256-token limit, so batches come with and without padding
TEXTS = SENTENCES + [
    "Annealing at 450 degrees reduced the density of oxygen vacancies in the film by half.",
    "Why?",
    "The measured Seebeck coefficient rose with temperature until the alloy's carriers became intrinsic.",
]


@pytest.fixture(scope="module")
def model():
    return load_embedder()


@pytest.fixture(scope="module")
def int8(model):
    return int8_embed.load(model, "onnx-int8")


def test_the_exported_graph_computes_the_torch_model(model, monkeypatch):
    """The export is traced: a branch taken for the sample input (padding or not) would be frozen into the
    graph. In float32 the ONNX route must give the torch vectors for batches with and without padding."""
    attention = model[0].auto_model.config._attn_implementation
    onnx32 = int8_embed.OnnxEmbedder(model, int8=False)
    for budget in (4096, 300, 1):  # one padded batch; several; one text per batch (no padding at all)
        monkeypatch.setattr(int8_embed, "TOKEN_BUDGET", budget)
        ours = onnx32.encode(TEXTS)
        assert np.abs(ours - fe.encode_sorted(model, TEXTS)).max() < 1e-4, budget
    assert model[0].auto_model.config._attn_implementation == attention  # the shared model is left as it was


def test_int8_vectors_are_close_to_the_float32_ones_but_not_them(model, int8):
    ref = fe.encode_sorted(model, TEXTS)
    ours = fe.encode_sorted(int8, TEXTS)
    assert ours.shape == ref.shape and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = (ours * ref).sum(1)
    assert cos.min() > 0.95 and cos.mean() > 0.98, cos
    assert np.abs(ours - ref).max() > 1e-4  # really quantized: not the float32 graph
    # the ranking coverage needs survives: each query's best sentence is the float32 route's (and the right one)
    queries = cov.queries_for(QA) + ["How do bees tell where flowers are?", "Which membrane's hardness changed?"]

    def best(route) -> list[int]:
        return (fe.encode_sorted(route, queries) @ fe.encode_sorted(route, SENTENCES).T).argmax(1).tolist()

    assert best(int8) == best(model) == [0, 5, 4, 3]


def test_int8_vectors_never_share_a_cache_with_float32_ones(tmp_path, model, int8):
    assert fe.model_key(int8, DEFAULT_MODEL) != fe.model_key(model, DEFAULT_MODEL)
    _write(tmp_path / "papers.jsonl", [{"id": "p", "title": "T", "text": PAPER}])
    _write(tmp_path / "seed.jsonl", [{"id": "p", "status": "ok", "qa": QA}])
    run_stage(cov.stage(), tmp_path)
    first = json.loads((tmp_path / "coverage.jsonl").read_text().splitlines()[-1])
    assert "embedder" not in first["info"]
    # switching the route recomputes the paper and encodes every sentence again (a cache miss, not a reuse)
    summary, encoded = _encoded(lambda: run_stage(cov.stage(embedder="onnx-int8"), tmp_path))
    assert summary.counts == {"ok": 1} and encoded == len(SENTENCES) + len(QA)
    rec = json.loads((tmp_path / "coverage.jsonl").read_text().splitlines()[-1])
    assert rec["info"]["embedder"] == "onnx-int8"
    assert len(rec["pair_metrics"]) == len(QA) and 0 < rec["paper_metrics"]["coverage"] <= 1
    # and back: the float32 rows are still in the cache, nothing is encoded but the record is recomputed
    summary, encoded = _encoded(lambda: run_stage(cov.stage(), tmp_path))
    assert summary.counts == {"ok": 1} and encoded == len(QA)


def test_what_the_route_cannot_run_is_refused_with_the_reason(model, monkeypatch):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense

    with pytest.raises(Unavailable, match="Transformer \\+ Pooling"):
        int8_embed.load(SentenceTransformer(modules=[model[0], model[1], Dense(384, 64)], device="cpu"), "onnx-int8")
    with pytest.raises(Unavailable, match="runs on the CPU"):
        int8_embed.load(model, "onnx-int8", device="cuda")
    with pytest.raises(Unavailable, match="must be one of"):
        int8_embed.load(model, "int4")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # not installed
    with pytest.raises(Unavailable, match=r"\[fast-embed\]"):
        int8_embed.load(model, "onnx-int8")


def test_a_record_depends_on_its_paper_and_pair_alone(tmp_path, int8):
    """int8 activations share one scale per batch, so a text's vector moves with its batch companions. A paper's
    sentences are therefore always encoded together and cached for that paper only, and queries one by one: the
    same paper and pair give the same numbers whatever was cached before, whichever papers ran first, and
    whatever other pairs the paper has."""
    other = {"id": "a", "text": "The garnet electrolyte conducted lithium ions at room temperature. " + PAPER[200:]}
    paper = {"id": "p", "text": PAPER, "qa": QA}
    alone = cov.coverage_record(paper, int8, cache=fe.SentenceCache(tmp_path / "alone.sqlite", "k"))
    shared = fe.SentenceCache(tmp_path / "shared.sqlite", "k")
    cov.coverage_record({**other, "qa": QA[:1]}, int8, cache=shared)  # caches a sentence the paper shares
    cov.coverage_record({**paper, "qa": QA[:1]}, int8, cache=shared)  # the paper with one pair first
    after = cov.coverage_record(paper, int8, cache=shared)  # then with both: its sentences read from the cache
    assert after["pair_metrics"] == alone["pair_metrics"]
    assert cov.coverage_record(paper, int8)["pair_metrics"] == alone["pair_metrics"]  # and with no cache at all


def test_the_cache_key_names_the_recipe_the_runtime_and_the_cpus_int8_instructions(model, int8):
    import onnxruntime

    key = fe.model_key(int8, DEFAULT_MODEL)
    assert int8_embed.RECIPE in key and onnxruntime.__version__ in key and key.endswith(int8_embed.int8_isa())
    # flags as /proc/cpuinfo gives them, for the machines ONNX Runtime has kernels for
    assert int8_embed.int8_isa({"avx2", "fma"}) == "avx2"
    assert int8_embed.int8_isa({"avx2", "avx512f", "avx512bw"}) == "avx512"
    assert int8_embed.int8_isa({"avx2", "avx512bw", "avx512_vnni"}) == "avx512vnni"
    assert int8_embed.int8_isa({"avx2", "avx_vnni"}) == "avxvnni"
    assert int8_embed.int8_isa({"avx512bw", "avx512_vnni", "amx_tile", "amx_int8"}) == "amx"
    assert int8_embed.int8_isa(set()) == "base"
    assert int8_embed.load(model, "onnx-int8") is int8  # built once per model and process
