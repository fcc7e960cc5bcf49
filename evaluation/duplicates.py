"""Near-duplicate questions for `sciqag filter --drop-duplicates`: within a paper by embedding similarity, across
the corpus by MinHash (datasketch's LSH), keeping the better-scored pair of each group.

Two questions of one paper are near-duplicates when their embeddings (the evaluation's embedder) have cosine at
least ``threshold``; two questions of any papers when the MinHash LSH finds their word shingles (words and word
pairs) with an estimated Jaccard similarity of at least ``jaccard``. Groups are the connected pairs; each keeps
the pair with the highest RACAR mean (a pair without one ranks last; ties keep the first in file order) and the
others get ``duplicate_of`` = the kept pair's id. One pass over ``evaluated.jsonl``, paper by paper; memory holds
the pair ids, the LSH's band keys and each pair's mean, not the rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from sciqag_dataset.errors import Unavailable
from sciqag_dataset.pair_ids import RowIds
from sciqag_dataset.stage import digest

from .embedder import DEFAULT_MODEL, load_embedder
from .filter import evaluated_papers

NUM_PERM = 64
_WORD = re.compile(r"\w+")


def _lsh(jaccard: float):
    try:
        from datasketch import MinHash, MinHashLSH  # the `evaluate` extra
    except ImportError as exc:
        raise Unavailable("--drop-duplicates needs datasketch: pip install 'sciqag-hf[evaluate]'") from exc
    return MinHash, MinHashLSH(threshold=jaccard, num_perm=NUM_PERM)


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

    ids, order = RowIds(), 0
    for paper in evaluated_papers(work):
        pids, questions = [], []
        for row in paper["rows"]:
            pid = ids(row)
            mean = row.get("racar_mean")
            rank[pid] = (mean is None, -(mean or 0), order)
            parent[pid], order = pid, order + 1
            pids.append(pid)
            questions.append(row.get("question") or "")
        if len(questions) > 1:
            emb = model.encode(questions, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
            sims = emb @ emb.T
            for i, j in combinations(range(len(questions)), 2):
                if sims[i, j] >= threshold and root(pids[i]) != root(pids[j]):
                    link(pids[i], pids[j])
                    out.embedding_links += 1
        for pid, q in zip(pids, questions):
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch([s.encode() for s in shingles(q)])
            for other in lsh.query(m):
                if root(other) != root(pid):
                    link(other, pid)
                    out.minhash_links += 1
            lsh.insert(pid, m)
    for pid in parent:
        keeper = root(pid)
        if keeper != pid:
            out.duplicate_of[pid] = keeper
    return out
