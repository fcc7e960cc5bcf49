"""The fast sentence encoder and the work dir's sentence-vector cache, with the real MiniLM embedder.

Counts texts sent to the model (``fast_embed.Counter``), never time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "2")

from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.evaluation import coverage as cov  # noqa: E402
from sciqag_dataset.evaluation import fast_embed as fe  # noqa: E402
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, encode, load_embedder  # noqa: E402

SENTENCES = [
    "The garnet electrolyte conducted lithium ions at room temperature.",
    "After annealing in argon, the band gap of the titania photoanode fell to 2.9 eV.",
    "Short one.",
    "Grain size grew with sintering time, " + "and the hardness of the zirconia membrane changed, " * 60 + "end.",
    "Honeybees communicate the location of flowers through a waggle dance.",
    "The platinum catalyst converted most of the carbon monoxide into carbon dioxide at low temperature.",
]
PAPER = " ".join(SENTENCES[:3]) + "\n\n" + " ".join(SENTENCES[3:])
QA = [
    {"question": "What conducted ions?", "answer": SENTENCES[0], "origin": "teacher"},
    {"question": "What did the catalyst do?", "answer": SENTENCES[5], "origin": "teacher"},
]


@pytest.fixture(scope="module")
def model():
    return load_embedder()


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _encoded(fn):
    before = fe.Counter.encoded
    out = fn()
    return out, fe.Counter.encoded - before


def test_token_sorted_batches_give_sentence_transformers_vectors(model):
    assert len(model.tokenizer(SENTENCES[3])["input_ids"]) > model.max_seq_length  # the truncation is exercised
    ours = fe.encode_sorted(model, SENTENCES, token_budget=300)  # several batches, one of a single long text
    theirs = encode(model, SENTENCES)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_new_pairs_for_a_paper_do_not_re_encode_it_and_a_changed_text_is(tmp_path, model):
    _write(tmp_path / "papers.jsonl", [{"id": "p", "title": "T", "text": PAPER}])
    _write(tmp_path / "seed.jsonl", [{"id": "p", "status": "ok", "qa": QA[:1]}])
    n = len(cov.split_sentences(PAPER))
    assert n == len(SENTENCES)
    _, first = _encoded(lambda: run_stage(cov.stage(), tmp_path))
    assert first == n + 1  # every sentence, one query
    assert cov.cache_path(tmp_path, DEFAULT_MODEL).is_file()

    # new pairs for the same paper: only the two queries go through the model
    _write(tmp_path / "seed.jsonl", [{"id": "p", "status": "ok", "qa": QA}])
    summary, second = _encoded(lambda: run_stage(cov.stage(), tmp_path))
    assert summary.counts == {"ok": 1} and second == 2
    rec = [json.loads(x) for x in (tmp_path / "coverage.jsonl").read_text().splitlines()][-1]
    fresh = cov.coverage_record({"id": "p", "text": PAPER, "qa": QA}, model)  # no cache
    assert rec["pair_metrics"] == json.loads(json.dumps(fresh["pair_metrics"]))
    assert rec["info"] == fresh["info"]

    # one sentence of the paper changed: that sentence and the queries, nothing else
    changed = PAPER.replace("Short one.", "A short new sentence.")
    _write(tmp_path / "papers.jsonl", [{"id": "p", "title": "T", "text": changed}])
    _, third = _encoded(lambda: run_stage(cov.stage(), tmp_path))
    assert third == 1 + 2
    rec = [json.loads(x) for x in (tmp_path / "coverage.jsonl").read_text().splitlines()][-1]
    fresh = cov.coverage_record({"id": "p", "text": changed, "qa": QA}, model)
    assert rec["pair_metrics"] == json.loads(json.dumps(fresh["pair_metrics"]))


def test_a_killed_writer_or_damaged_rows_never_give_wrong_vectors(tmp_path, model):
    path = tmp_path / "embeddings" / "m.sqlite"
    key = fe.model_key(model, DEFAULT_MODEL)
    truth = encode(model, SENTENCES)
    # a writer killed inside its transaction, with wrong vectors for every sentence: nothing of it is read
    cache = fe.SentenceCache(path, key)
    cache._connect()  # creates the table, as an earlier run would have
    cache.close()
    keys = [cache._hash(s) for s in SENTENCES]
    killer = textwrap.dedent(
        f"""
        import os, signal, sqlite3, zlib
        db = sqlite3.connect({str(path)!r})
        db.execute("BEGIN")
        blob = bytes(4 * 384)  # wrong vectors with a valid length and CRC
        for k in {keys!r}:
            db.execute("INSERT INTO vectors VALUES (?, ?, ?)", (k, zlib.crc32(blob), blob))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert subprocess.run([sys.executable, "-c", killer]).returncode == -9
    cache = fe.SentenceCache(path, key)
    assert cache.get(SENTENCES, 384) == {}
    out, n = _encoded(lambda: fe.embed_sentences(model, SENTENCES, cache))
    assert n == len(SENTENCES) and np.abs(out - truth).max() < 1e-5

    # rows damaged on disk: one with flipped bytes (same length), one cut short -> both re-encoded
    db = cache._connect()
    k0, k1 = cache._hash(SENTENCES[0]), cache._hash(SENTENCES[1])
    (vec,) = db.execute("SELECT vec FROM vectors WHERE key = ?", (k0,)).fetchone()
    with db:
        db.execute("UPDATE vectors SET vec = ? WHERE key = ?", (bytes(b ^ 0xFF for b in vec[:8]) + vec[8:], k0))
        db.execute("UPDATE vectors SET vec = substr(vec, 1, 100) WHERE key = ?", (k1,))
    out, n = _encoded(lambda: fe.embed_sentences(model, SENTENCES, cache))
    assert n == 2 and np.abs(out - truth).max() < 1e-5
    _, n = _encoded(lambda: fe.embed_sentences(model, SENTENCES, cache))
    assert n == 0  # the re-encoded rows replaced the damaged ones
    cache.close()

    # a file that is no database at all (overwritten, truncated): encoded without the cache, still right
    path.write_bytes(b"not a database" * 100)
    for extra in ("-wal", "-shm"):
        path.with_name(path.name + extra).unlink(missing_ok=True)
    broken = fe.SentenceCache(path, key)
    out, n = _encoded(lambda: fe.embed_sentences(model, SENTENCES, broken))
    assert n == len(SENTENCES) and np.abs(out - truth).max() < 1e-5


def test_another_model_key_is_a_miss(tmp_path, model):
    path = tmp_path / "c.sqlite"
    fe.embed_sentences(model, SENTENCES, fe.SentenceCache(path, fe.model_key(model, DEFAULT_MODEL)))
    other = fe.SentenceCache(path, fe.model_key(model, "another/model"))
    assert other.get(SENTENCES, 384) == {}
    assert len(fe.SentenceCache(path, fe.model_key(model, DEFAULT_MODEL)).get(SENTENCES, 384)) == len(SENTENCES)
