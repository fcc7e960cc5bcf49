"""Embedding many short texts fast on a CPU, and a cache of paper sentences' vectors in the work directory.

Why not ``SentenceTransformer.encode``: it sorts by character length and runs fixed batches of
``batch_size`` texts, so a batch of 64 sentences of 10 to 250 tokens is mostly padding. Here every text is
tokenized once, the texts are sorted by token count and cut into batches of at most ``TOKEN_BUDGET`` padded
tokens (many short sentences, few long ones: little padding), and each batch goes through the model's own modules
(the same forward, pooling and normalisation ``encode`` runs, under ``torch.inference_mode``): the same
vectors to float rounding (tested), in less time (docs/MEASUREMENTS.md, bench/evaluate.py).

``SentenceCache``: unit vectors keyed by a hash of (model key, sentence text) in one SQLite file, so new QA
pairs for a paper, or a rerun after a crash, do not embed its sentences again. Rows are written in one
transaction per paper, so a killed run leaves whole rows or none; each row also holds its length and a
CRC of its bytes, and a row that fails either check (or a file SQLite cannot read) counts as a miss and
is re-encoded, never returned.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import zlib
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# Padded tokens per forward. Padding, not matrix size, is what costs here: on 8 of the authors' papers (1 thread,
# CPU s) a paper's sentences took 16-17.5 at 256-1024, 18.7 at 2048, 22.7 at 4096, 30.7 at 8192; encode: 36.5.
TOKEN_BUDGET = 1024
MAX_TEXTS = 256  # texts per forward, however short


class Counter:
    """Texts that went through the model (what the cache tests count: not time)."""

    encoded = 0


def dimension(model) -> int:
    """The embedding size (sentence-transformers 6 renamed the method; older releases have the old name)."""
    fn = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(fn() or 0)


def _fast_route(model) -> bool:
    """The token-budget route needs a SentenceTransformer (``preprocess``) whose tokenizer is a transformers one
    (callable; a static model's ``tokenizers.Tokenizer`` is not)."""
    return callable(getattr(model, "tokenizer", None)) and hasattr(model, "preprocess")


def encode_sorted(model, texts: list[str], token_budget: int = TOKEN_BUDGET) -> np.ndarray:
    """Unit-length float32 embeddings of ``texts``, in order (batches by token count, see the module doc)."""
    Counter.encoded += len(texts)
    if not texts:
        return np.zeros((0, dimension(model)), dtype=np.float32)
    if not _fast_route(model):  # another kind of model: its own encode
        return np.asarray(
            model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False),
            dtype=np.float32,
        )
    import torch

    # token counts only to sort and cut the batches; each batch is then prepared by the model's own
    # ``preprocess`` (its truncation, lower-casing), as ``encode`` prepares it without a prompt
    lengths = [
        len(x) for x in model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length)["input_ids"]
    ]
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    out: np.ndarray | None = None
    model.eval()
    with torch.inference_mode():
        start = 0
        while start < len(order):
            longest = lengths[order[start]]  # sorted: the first is the longest of the batch
            idx = order[start : start + max(1, min(MAX_TEXTS, token_budget // max(longest, 1)))]
            features = model.preprocess([texts[i] for i in idx])
            features = {k: v.to(model.device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
            emb = model(features)["sentence_embedding"]
            emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1).cpu().numpy()
            if out is None:
                out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
            out[idx] = emb
            start += len(idx)
    return out


def model_key(model, model_name: str) -> str:
    """What decides a sentence's vector besides its text: the model, its truncation length and dimension, and
    the route (the int8 route's vectors are not the float32 ones: never mixed in one cache)."""
    key = f"{model_name}|{getattr(model, 'max_seq_length', '')}|{dimension(model)}"
    tag = getattr(model, "cache_tag", "")
    return f"{key}|{tag}" if tag else key


class SentenceCache:
    """Sentence vectors in ``path`` (SQLite), keyed by hash of (model key, text). See the module doc."""

    def __init__(self, path: str | Path, key: str):
        self.path, self.key = Path(path), key
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30)
                db.execute("PRAGMA journal_mode=WAL")  # ranks share the file; readers never block the writer
                db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, crc INTEGER, vec BLOB)")
                self._db = db
            except sqlite3.DatabaseError as exc:  # not a database (truncated, overwritten): work without it
                log.warning("embedding cache %s unreadable (%s): encoding without it", self.path, exc)
                self._db = False  # type: ignore[assignment]
        return self._db or None

    def _hash(self, text: str, scope: str = "") -> bytes:
        key = f"{self.key}\0{scope}\0{text}" if scope else f"{self.key}\0{text}"
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:16]

    def get(self, texts: list[str], dim: int, scope: str = "") -> dict[str, np.ndarray]:
        """The cached vectors among ``texts`` (of ``scope``, see ``embed_sentences``): only rows of the right
        length whose CRC matches."""
        db = self._connect()
        if db is None or not texts:
            return {}
        by_hash = {self._hash(t, scope): t for t in texts}
        found: dict[str, np.ndarray] = {}
        keys = list(by_hash)
        try:
            for i in range(0, len(keys), 500):  # SQLite's limit on bound parameters
                part = keys[i : i + 500]
                q = f"SELECT key, crc, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})"
                for k, crc, vec in db.execute(q, part):
                    if len(vec) == dim * 4 and zlib.crc32(vec) == crc:
                        found[by_hash[k]] = np.frombuffer(vec, dtype=np.float32)
        except sqlite3.DatabaseError as exc:
            log.warning("embedding cache %s unreadable (%s): re-encoding", self.path, exc)
            return {}
        return found

    def put(self, texts: list[str], vectors: np.ndarray, scope: str = "") -> None:
        """Store rows in one transaction: a killed run commits all of them or none."""
        db = self._connect()
        if db is None or not texts:
            return
        rows = []
        for t, v in zip(texts, np.asarray(vectors, dtype=np.float32)):
            blob = v.tobytes()
            rows.append((self._hash(t, scope), zlib.crc32(blob), blob))
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:  # full disk, locked past the timeout: the vectors are still right
            log.warning("embedding cache %s not written (%s)", self.path, exc)

    def close(self) -> None:
        if self._db:
            self._db.close()
        self._db = None


def _batch_dependent(model) -> bool:
    """A text's vector depends on the texts batched with it (the int8 route: activations are quantized with
    one scale per batch), so vectors are only reused with the same companions."""
    return bool(getattr(model, "batch_dependent", False))


def embed_sentences(model, sentences: list[str], cache: SentenceCache | None = None) -> np.ndarray:
    """Vectors of a paper's sentences: cached ones read, the rest encoded (once per distinct text) and stored.

    For a batch-dependent model the cache rows are scoped to the paper's whole sentence list, which is always
    encoded together in the same batches: a paper's vectors then depend on its sentences alone, never on
    which other paper first cached a sentence they share, or on what a crash left cached."""
    if cache is None:  # the same batches as a cold cache would make: the distinct texts
        unique = list(dict.fromkeys(sentences))
        vectors = dict(zip(unique, encode_sorted(model, unique)))
        return np.vstack([vectors[s] for s in sentences]) if sentences else encode_sorted(model, [])
    scope = ""
    if _batch_dependent(model):
        scope = hashlib.sha256("\0".join(sentences).encode("utf-8", "surrogatepass")).hexdigest()
    dim = dimension(model)
    have = cache.get(sentences, dim, scope)
    missing = list(dict.fromkeys(s for s in sentences if s not in have))
    if scope and missing:  # all or nothing, so the batches are always the same ones
        missing, have = list(dict.fromkeys(sentences)), {}
    if missing:
        new = encode_sorted(model, missing)
        cache.put(missing, new, scope)
        have.update(zip(missing, new))
    return np.vstack([have[s] for s in sentences]).astype(np.float32, copy=False)


def encode_queries(model, queries: list[str]) -> np.ndarray:
    """A paper's Q+A texts; one at a time for a batch-dependent model, so a pair's vector (and its numbers)
    does not change when other pairs are added to the paper."""
    if not _batch_dependent(model) or len(queries) < 2:
        return encode_sorted(model, queries)
    return np.vstack([encode_sorted(model, [q]) for q in queries])
