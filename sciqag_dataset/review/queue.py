"""Which pairs a reviewer sees, in which order: a stratified sample, the same every time it is asked for.

The pairs come from ``WORK/evaluated.jsonl`` and are held as file offsets, not rows, so a queue of 10k pairs
costs little; a row is read when the page asks for it. ``sample`` draws across RACAR-mean strata (low,
mid, high, unscored) in proportion to their size, spreading each stratum's draw over its papers;
``overlap`` pairs are drawn first with the seed alone, so every reviewer gets them (agreement needs pairs
seen by several people); the rest of each reviewer's sample depends on the seed and their name. Pairs a
reviewer already reviewed stay in their queue whatever the sample, so a resumed review hides nothing.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.wiring import EVALUATED

STRATA = ("low", "mid", "high", "unscored")


def stratum(mean: float | None) -> str:
    if mean is None:
        return "unscored"
    return "low" if mean < 2 else "mid" if mean < 8 / 3 else "high"


@dataclass(frozen=True)
class Entry:
    pair_id: str
    paper_id: str
    mean: float | None  # the judge's RACAR mean
    offset: int  # of the row in evaluated.jsonl
    asked_from: str = "prose"  # the pair's grounding kind: "prose", "table", "equation" or "figure"


def scan(work: Path) -> list[Entry]:
    """Every pair of ``WORK/evaluated.jsonl`` (the last row of a pair id wins), in file order."""
    path = work / EVALUATED
    if not path.exists():
        raise MissingInput(f"{path} not found: run `sciqag evaluate {work}` first (review reads its pairs)")
    entries: dict[str, Entry] = {}
    ids = RowIds()  # rows of an older merge have no pair_id
    offset = 0
    with path.open("rb") as f:
        for line in f:
            try:
                row = json.loads(line)
                paper = row["paper_id"]
            except (ValueError, KeyError, TypeError):
                offset += len(line)
                continue
            pid = ids(row)
            entries.pop(pid, None)
            kind = (row.get("grounding") or {}).get("kind") or "prose"  # unrecorded: asked from the text
            entries[pid] = Entry(pid, paper, row.get("racar_mean"), offset, kind)
            offset += len(line)
    return list(entries.values())


def _spread(entries: list[Entry], rng: random.Random) -> list[Entry]:
    """The entries in an order that visits every paper before any paper's second pair."""
    by_paper: dict[str, list[Entry]] = {}
    for e in entries:
        by_paper.setdefault(e.paper_id, []).append(e)
    papers = list(by_paper.values())
    rng.shuffle(papers)
    for p in papers:
        rng.shuffle(p)
    out = []
    for rank in range(max(map(len, papers), default=0)):
        out += [p[rank] for p in papers if rank < len(p)]
    return out


def stratified(entries: list[Entry], n: int, seed: str) -> list[Entry]:
    """``n`` entries drawn across the RACAR strata in proportion to their size (each non-empty one gets at
    least one when ``n`` allows), spread over papers."""
    if n >= len(entries):
        return list(entries)
    rng = random.Random(seed)
    groups = {s: _spread([e for e in entries if stratum(e.mean) == s], rng) for s in STRATA}
    groups = {s: g for s, g in groups.items() if g}
    total = sum(map(len, groups.values()))
    quota = {s: (1 if n >= len(groups) else 0) for s in groups}
    left = n - sum(quota.values())
    shares = {s: left * len(g) / total for s, g in groups.items()}
    for s in groups:
        quota[s] += int(shares[s])
    for s in sorted(groups, key=lambda s: shares[s] - int(shares[s]), reverse=True)[: n - sum(quota.values())]:
        quota[s] += 1  # largest remainders
    picked = []
    for s, g in groups.items():
        picked += g[: quota[s]]
    short = n - len(picked)  # a stratum smaller than its quota: fill from the rest
    if short > 0:
        chosen = {e.pair_id for e in picked}
        picked += [e for e in _spread(entries, rng) if e.pair_id not in chosen][:short]
    return picked


def build_queue(
    entries: list[Entry],
    reviewer: str,
    *,
    sample: int | None = None,
    overlap: int = 0,
    seed: int = 0,
    already: set[str] = frozenset(),
) -> list[Entry]:
    """The reviewer's pairs: all of them without ``sample``; else ``overlap`` shared pairs plus their own."""
    if sample is not None and not 0 < sample:
        raise UserError("--sample must be a positive number of pairs")
    if overlap and (sample is None or not 0 <= overlap <= sample):
        raise UserError("--overlap needs --sample and must be between 0 and the sample size")
    if sample is None:
        return list(entries)
    shared = stratified(entries, overlap, f"{seed}/overlap") if overlap else []
    taken = {e.pair_id for e in shared}
    rest = [e for e in entries if e.pair_id not in taken]
    own = stratified(rest, sample - len(shared), f"{seed}/{reviewer}")
    chosen = {e.pair_id for e in shared + own}
    kept = [e for e in entries if e.pair_id in already and e.pair_id not in chosen]
    order = shared + own + kept

    def rank(e: Entry) -> str:  # a stable, reviewer-specific order mixing shared and own pairs
        return hashlib.sha256(f"{seed}/{reviewer}/{e.pair_id}".encode()).hexdigest()

    return sorted(order, key=rank)
