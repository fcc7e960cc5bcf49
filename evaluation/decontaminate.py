"""Decontamination: `sciqag filter --decontaminate DATASET` drops pairs whose question a benchmark already asks.

A question is contaminated when it shares a run of words with a benchmark question (case and punctuation aside):
13 words in a row (the n-gram test of the GPT-3 report, on words); or, for questions under 13 words, all of the
shorter one (4 words or more) inside the other. Or when its embedding (the evaluation's embedder) has cosine
similarity at least ``threshold`` with one (a paraphrase). DATASET is what `sciqag benchmark` reads: a Hub id
or published folder (its `test` split) or a JSON/JSONL/parquet file of pairs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from sciqag_dataset.core.stage import digest
from sciqag_dataset.evaluation.benchmark.questions import load_questions
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, encode, load_embedder

NGRAM = 13
MIN_RUN = 4  # shorter runs of words ("What is the") are too common to mean anything
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _key(seq: list[str]) -> str:
    return hashlib.blake2b(" ".join(seq).encode(), digest_size=12).hexdigest()


def _runs(seq: list[str], n: int) -> list[str]:
    return [_key(seq[i : i + n]) for i in range(len(seq) - n + 1)]


@dataclass
class Benchmarks:
    """The benchmark questions as hashed word runs and embeddings (built once per filter run).

    Held: every 13-word run of a benchmark question, every shorter run (4 to 12 words, for candidate questions
    that short), and the whole of each question under 13 words; about 10 keys per question word.
    """

    sources: list[str]
    threshold: float
    model_name: str = DEFAULT_MODEL
    questions: list[str] = field(default_factory=list)
    runs: dict[int, dict[str, int]] = field(default_factory=dict)  # run length -> run hash -> first question
    whole: dict[int, dict[str, int]] = field(default_factory=dict)  # the same for questions under 13 words
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

    def add(self, i: int, question: str) -> None:
        seq = words(question)
        if len(seq) < NGRAM:
            self.whole.setdefault(len(seq), {}).setdefault(_key(seq), i)
        for n in range(MIN_RUN, NGRAM + 1):
            for key in _runs(seq, n):
                self.runs.setdefault(n, {}).setdefault(key, i)

    def overlap(self, question: str) -> int | None:
        """The first benchmark question sharing a telling run of words with ``question``, or None: a 13-word run;
        the whole of a shorter benchmark question (4+ words) inside it; or all of it (under 13 words) inside a
        benchmark question."""
        seq = words(question)
        hits = []
        if len(seq) >= NGRAM:
            hits += [i for k in _runs(seq, NGRAM) if (i := self.runs.get(NGRAM, {}).get(k)) is not None]
        elif len(seq) >= MIN_RUN:
            hits += [i for i in [self.runs.get(len(seq), {}).get(_key(seq))] if i is not None]
        else:
            hits += [i for i in [self.whole.get(len(seq), {}).get(_key(seq))] if i is not None]
        for n, table in self.whole.items():
            if MIN_RUN <= n < len(seq):
                hits += [i for k in _runs(seq, n) if (i := table.get(k)) is not None]
        return min(hits) if hits else None

    def check(self, questions: list[str]) -> list[str | None]:
        """For each question: why it is contaminated (naming the benchmark question), or None."""
        out: list[str | None] = []
        model = load_embedder(self.model_name) if questions and self.embeddings is not None else None
        sims = encode(model, questions) @ self.embeddings.T if model is not None else None
        for i, q in enumerate(questions):
            hit = self.overlap(q)
            if hit is not None:
                out.append(f"shares its words with {self.questions[hit]!r}")
            elif sims is not None and sims.shape[1] and sims[i].max() >= self.threshold:
                j = int(np.argmax(sims[i]))
                out.append(f"cosine {sims[i, j]:.2f} with {self.questions[j]!r}")
            else:
                out.append(None)
        return out


def load_benchmarks(sources: list[str], threshold: float = 0.9, model_name: str = DEFAULT_MODEL) -> Benchmarks:
    """Every question of ``sources`` (UserError for one that cannot be read), indexed."""
    bench = Benchmarks(list(sources), threshold, model_name)
    for source in sources:
        questions, _ = load_questions(source)
        bench.questions += [q["question"] for q in questions]
    for i, q in enumerate(bench.questions):
        bench.add(i, q)
    if bench.questions:
        bench.embeddings = encode(load_embedder(model_name), bench.questions)
    return bench
