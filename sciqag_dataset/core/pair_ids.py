"""Stable QA pair ids: the paper id and a hash of the question.

A pair keeps its id across reruns, merges, publishes and the Hub as long as its paper and its question do:
reviews, imported ratings and agreement join on it. Case and runs of whitespace do not change it; a second
pair of one paper with the same question gets ``-2`` (then ``-3`` ...), so ids are unique within a paper.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable


def _normalized(question: str) -> str:
    return re.sub(r"\s+", " ", question or "").strip().casefold()


def pair_id(paper_id: str, question: str) -> str:
    """The id of the first pair of ``paper_id`` that asks ``question``."""
    return f"{paper_id}#{hashlib.sha256(_normalized(question).encode()).hexdigest()[:12]}"


def pair_ids(paper_id: str, questions: Iterable[str]) -> list[str]:
    """Ids for a paper's pairs in order; repeats of a question are told apart by their rank."""
    seen: Counter[str] = Counter()
    ids = []
    for q in questions:
        base = pair_id(paper_id, q)
        seen[base] += 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


class RowIds:
    """The pair id of each `evaluated` row read in order: its own ``pair_id``, or (a row of an older merge)
    the one ``pair_ids`` would give it, counting repeats of a question within its paper."""

    def __init__(self) -> None:
        self.seen: dict[str, Counter[str]] = {}

    def __call__(self, row: dict) -> str:
        if row.get("pair_id"):
            return row["pair_id"]
        base = pair_id(row["paper_id"], row.get("question") or "")
        n = self.seen.setdefault(row["paper_id"], Counter())
        n[base] += 1
        return base if n[base] == 1 else f"{base}-{n[base]}"


def paper_of(pid: str) -> str:
    """The paper id a pair id was made from."""
    return pid.rpartition("#")[0]
