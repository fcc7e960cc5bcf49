"""Decontamination: `sciqag filter --decontaminate DATASET` drops pairs whose question a benchmark already asks.

A question is contaminated when it shares a 13-word sequence with a benchmark question (the test used by the
GPT-3 and Llama reports; a question shorter than 13 words must equal a benchmark question word for word,
case and punctuation aside), or when its embedding (the evaluation's embedder) has cosine similarity at least
``threshold`` with one (a paraphrase). DATASET is what `sciqag benchmark` reads: a Hub id or published folder
(its `test` split) or a JSON/JSONL/parquet file of pairs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from sciqag_dataset.stage import digest

from .benchmark.questions import load_questions
from .embedder import DEFAULT_MODEL, load_embedder

NGRAM = 13
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _key(seq: list[str]) -> str:
    return hashlib.blake2b(" ".join(seq).encode(), digest_size=12).hexdigest()


def _grams(seq: list[str]) -> set[str]:
    if len(seq) < NGRAM:
        return {_key(seq)} if seq else set()
    return {_key(seq[i : i + NGRAM]) for i in range(len(seq) - NGRAM + 1)}


@dataclass
class Benchmarks:
    """The benchmark questions held as 13-gram hashes and embeddings (built once per filter run)."""

    sources: list[str]
    threshold: float
    model_name: str = DEFAULT_MODEL
    questions: list[str] = field(default_factory=list)
    grams: dict[str, int] = field(default_factory=dict)  # hash -> index of a benchmark question holding it
    embeddings: np.ndarray | None = None

    def describe(self) -> dict:
        return {
            "sources": self.sources,
            "questions": len(self.questions),
            "ngram": NGRAM,
            "threshold": self.threshold,
            "model": self.model_name,
            "digest": digest(self.questions),
        }

    def encode(self, texts: list[str]) -> np.ndarray:
        model = load_embedder(self.model_name)
        return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def check(self, questions: list[str]) -> list[str | None]:
        """For each question: why it is contaminated, or None."""
        out: list[str | None] = []
        sims = self.encode(questions) @ self.embeddings.T if questions and self.embeddings is not None else None
        for i, q in enumerate(questions):
            seq = words(q)
            hit = next((self.grams[g] for g in _grams(seq) if g in self.grams), None)
            if hit is not None:
                out.append(f"{NGRAM}-gram overlap with {self.questions[hit]!r}")
                continue
            if sims is not None and sims.shape[1]:
                j = int(np.argmax(sims[i]))
                if sims[i, j] >= self.threshold:
                    out.append(f"cosine {sims[i, j]:.2f} with {self.questions[j]!r}")
                    continue
            out.append(None)
        return out


def load_benchmarks(sources: list[str], threshold: float = 0.9, model_name: str = DEFAULT_MODEL) -> Benchmarks:
    """Every question of ``sources`` (UserError for one that cannot be read), indexed."""
    bench = Benchmarks(list(sources), threshold, model_name)
    for source in sources:
        questions, _ = load_questions(source)
        bench.questions += [q["question"] for q in questions]
    for i, q in enumerate(bench.questions):
        seq = words(q)
        if len(seq) < NGRAM:  # a short question matches only whole
            bench.grams.setdefault(_key(seq), i)
        else:
            for g in _grams(seq):
                bench.grams.setdefault(g, i)
    bench.embeddings = bench.encode(bench.questions) if bench.questions else None
    return bench
