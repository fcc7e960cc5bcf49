"""Near-duplicate questions for `sciqag filter --drop-duplicates`: within a paper by embedding similarity, across
the corpus by MinHash (datasketch's LSH), keeping the best pair of each group.

Two questions of one paper are near-duplicates when their embeddings (the evaluation's embedder) have cosine at
least ``threshold``; two questions of any papers when their word shingles (words and word pairs) have a MinHash
Jaccard estimate of at least ``jaccard``: the LSH (tuned for recall) proposes candidates, and each is checked on
the two signatures. A question without a word is never a duplicate. Groups are the connected pairs (so A~B and
B~C group A with C); each keeps its best pair by what is known of it, before the other filter rules: people's
decisions first (a pair its reviewers kept, then an unreviewed one, then one they dropped), then the judge's RACAR
mean, then coverage's ``grounded`` (a missing value ranks below any value; ties keep the first in file order). The
others get ``duplicate_of`` = the kept pair's id. One pass over ``evaluated.jsonl``, paper by paper; memory holds
the pair ids, each pair's rank and 64 32-bit MinHash values (~0.4 KB a pair with the LSH's keys), not the rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.stage import digest
from sciqag_dataset.core.wiring import REVIEWS
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, encode, load_embedder
from sciqag_dataset.evaluation.evaluated_pairs import evaluated_papers
from sciqag_dataset.review.store import decisions, read_reviews

NUM_PERM = 64
_WORD = re.compile(r"\w+")


def _lsh(jaccard: float):
    try:
        from datasketch import MinHash, MinHashLSH  # the `evaluate` extra
    except ImportError as exc:
        raise Unavailable("--drop-duplicates needs datasketch: pip install 'sciqag-hf[evaluate]'") from exc
    # weighted for recall: a missed pair is never found again, a false candidate is checked below
    return MinHash, MinHashLSH(threshold=jaccard, num_perm=NUM_PERM, weights=(0.1, 0.9))


def shingles(question: str) -> set[str]:
    words = _WORD.findall(question.lower())
    return set(words) | {f"{a} {b}" for a, b in zip(words, words[1:])}


@dataclass
class Duplicates:
    threshold: float
    jaccard: float
    duplicate_of: dict[str, str] = field(default_factory=dict)  # pair id -> the kept pair of its group
    embedding_links: int = 0  # groups joined by embedding similarity within a paper
    minhash_links: int = 0  # groups joined by MinHash (across papers, or within one)

    def describe(self) -> dict:
        return {
            "threshold": self.threshold,
            "jaccard": self.jaccard,
            "duplicates": len(self.duplicate_of),
            "embedding_links": self.embedding_links,
            "minhash_links": self.minhash_links,
            "digest": digest(sorted(self.duplicate_of.items())),
        }


def find_duplicates(
    work: str | Path, threshold: float = 0.9, jaccard: float = 0.8, model_name: str = DEFAULT_MODEL
) -> Duplicates:
    MinHash, lsh = _lsh(jaccard)
    model = load_embedder(model_name)
    out = Duplicates(threshold, jaccard)
    parent: dict[str, str] = {}
    rank: dict[str, tuple] = {}  # pair id -> sort key: best first

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def link(a: str, b: str) -> None:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb, key=rank.get)] = min(ra, rb, key=rank.get)  # the root is the group's best

    people = {pid: d.keep for pid, d in decisions(read_reviews(Path(work) / REVIEWS)).items()}
    signatures: dict[str, np.ndarray] = {}
    ids, order = RowIds(), 0
    for paper in evaluated_papers(work):
        pids, questions = [], []
        for row, question in zip(paper["rows"], paper["questions"]):  # questions as reviewers left them
            pid = ids(row)
            mean, grounded = row.get("racar_mean"), row.get("grounded")
            kept = people.get(pid)
            rank[pid] = (
                0 if kept is True else 2 if kept is False else 1,
                mean is None,
                -(mean or 0),
                grounded is None,
                -(grounded or 0),
                order,
            )
            parent[pid], order = pid, order + 1
            pids.append(pid)
            questions.append(question)
        worded = [k for k, q in enumerate(questions) if shingles(q)]
        if len(worded) > 1:
            emb = encode(model, [questions[k] for k in worded])
            sims = emb @ emb.T
            for a, b in combinations(range(len(worded)), 2):
                i, j = worded[a], worded[b]
                if sims[a, b] >= threshold and root(pids[i]) != root(pids[j]):
                    link(pids[i], pids[j])
                    out.embedding_links += 1
        for k in worded:
            pid, m = pids[k], MinHash(num_perm=NUM_PERM)
            m.update_batch([s.encode() for s in shingles(questions[k])])
            mine = m.hashvalues.astype(np.uint32)  # datasketch's values are below 2**32
            for other in lsh.query(m):
                if float(np.mean(signatures[other] == mine)) >= jaccard and root(other) != root(pid):
                    link(other, pid)
                    out.minhash_links += 1
            if pid not in signatures:  # a paper split in two runs of rows would repeat its ids
                lsh.insert(pid, m)
                signatures[pid] = mine
    for pid in parent:
        keeper = root(pid)
        if keeper != pid:
            out.duplicate_of[pid] = keeper
    return out
