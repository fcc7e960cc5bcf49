"""What the review page shows and saves, independent of the web layer.

Rows and papers are read from their files when a pair is shown (the queue holds offsets), and the reviews
file is tailed before every answer, so what another tab or reviewer saved a moment ago is seen. When
``evaluated.jsonl`` or ``papers.jsonl`` is rewritten or grows (another size, modification time or inode), the
offsets are taken again and the queues rebuilt before answering; the reviews file is kept as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import JsonlIndex
from sciqag_dataset.core.schema import GROUNDING_KINDS, RACAR_DIMENSIONS, REASONING_TYPES, grounding_rank
from sciqag_dataset.core.spans import find_span, merged
from sciqag_dataset.core.wiring import EVALUATED, PAPERS
from sciqag_dataset.review.queue import Entry, build_queue, scan, stratum
from sciqag_dataset.review.store import ReviewLog, append_review, check_changes, check_reviewer, reviewed


class NotInQueue(LookupError):
    """A pair id the reviewer was not given."""


STATUSES = ("all", "todo", "done", "kept", "dropped", "edited")
SCORE_FILTERS = ("all", "low", "mid", "high", "unscored")
ASKED_FROM = ("all", *GROUNDING_KINDS)  # the filter by what a pair was asked from
SHOWN_FIELDS = ("id", "kind", "label", "caption", "content", "content_format", "cells", "header_rows")


def evidence_spans(text: str, evidence: list[str]) -> list[tuple[int, int]]:
    """Where the evidence sentences stand in ``text`` (whitespace may differ), merged and sorted."""
    return merged([s for sentence in evidence or [] if (s := find_span(text, sentence))])


def passage(text: str, evidence: list[str], mentions: list[dict] = ()) -> list[dict]:
    """The paper text as segments, the evidence ones marked and those where the text mentions the pair's
    component (``mentions``: offsets, as a component records them) flagged (the page builds them as text,
    never as HTML)."""
    marks = evidence_spans(text, evidence)
    spans = [(m.get("start"), m.get("end")) for m in mentions or [] if isinstance(m, dict)]
    refs = merged([(a, b) for a, b in spans if isinstance(a, int) and isinstance(b, int) and 0 <= a < b <= len(text)])
    cuts = sorted({0, len(text), *(x for span in marks + refs for x in span)})
    out = []
    for start, end in zip(cuts, cuts[1:]):
        seg = {"text": text[start:end], "mark": any(a <= start and end <= b for a, b in marks)}
        if any(a <= start and end <= b for a, b in refs):
            seg["mention"] = True
        if out and (out[-1]["mark"], out[-1].get("mention")) == (seg["mark"], seg.get("mention")):
            out[-1]["text"] += seg["text"]  # neighbours of one kind are one segment
        else:
            out.append(seg)
    return out


def shown_component(paper: dict, grounding: dict | None) -> dict | None:
    """The table, equation or figure a pair was asked from, as the page shows it (None for a prose pair);
    ``missing`` where the paper record no longer has that component (or the dataset has no papers)."""
    if not isinstance(grounding, dict) or grounding.get("kind") in (None, "prose"):
        return None
    wanted, kind = grounding.get("component_id"), grounding["kind"]
    found = next(
        (c for c in paper.get("components") or [] if wanted and c.get("id") == wanted and c.get("kind") == kind),
        None,
    )
    if found is None:
        return {"id": grounding.get("component_id"), "kind": grounding["kind"], "missing": True}
    return {k: found.get(k) for k in SHOWN_FIELDS} | {"mentions": found.get("mentions") or []}


def _evidence_only(evidence: list[str]) -> list[dict]:
    """Without the paper's text (a dataset published without `papers`), the evidence sentences alone."""
    return [{"text": ("\n\n" if k else "") + e, "mark": True} for k, e in enumerate(evidence)]


def status_of(state: dict, row: dict) -> set[str]:
    tags = {"done" if reviewed(state) else "todo"}
    if state.get("keep") is True:
        tags.add("kept")
    if state.get("keep") is False:
        tags.add("dropped")
    if any(k in state and state[k] != row.get(k) for k in ("question", "answer")):
        tags.add("edited")
    return tags


def _stamp(file) -> tuple | None:
    """What changes when a file is rewritten or appended to: size, modification time, inode (None: absent)."""
    try:
        st = os.fstat(file.fileno()) if hasattr(file, "fileno") else os.stat(file)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class ReviewSession:
    """One work directory under review: queues per reviewer, rows by offset, the reviews file."""

    def __init__(
        self,
        work: Path,
        reviews: Path,
        *,
        sample: int | None = None,
        overlap: int = 0,
        seed: int = 0,
        blind: bool = False,
    ):
        self.work, self.blind = Path(work), blind
        self.params = {"sample": sample, "overlap": overlap, "seed": seed}
        self.stamps: dict[str, tuple | None] = {}
        self._reindex()
        build_queue(self.entries, "check", **self.params)  # bad parameters fail at start, not on first page
        self.log = ReviewLog(Path(reviews)).refresh()

    def _reindex(self) -> None:
        """Offsets of the rows and papers as the files are now; queues are rebuilt when next asked for."""
        self.stamps = {name: _stamp(self.work / name) for name in (EVALUATED, PAPERS)}
        self.entries = scan(self.work)
        self.by_id = {e.pair_id: e for e in self.entries}
        self.papers = JsonlIndex(self.work / PAPERS)
        self.queues: dict[str, list[Entry]] = {}  # the app calls in from one event-loop thread: no lock needed

    def _refresh(self) -> None:
        """Bring the reviews up to date, and the offsets too if the data files changed since they were taken."""
        if any(_stamp(self.work / name) != stamp for name, stamp in self.stamps.items()):
            self._reindex()
        self.log.refresh()

    def queue(self, reviewer: str) -> list[Entry]:
        if reviewer not in self.queues:
            mine = {pid for (r, pid) in self.log.states if r == reviewer}
            self.queues[reviewer] = build_queue(self.entries, reviewer, already=mine, **self.params)
        return self.queues[reviewer]

    def _row(self, entry: Entry) -> dict:
        for _ in range(3):  # the file may be replaced between the check and this read: index it again
            with (self.work / EVALUATED).open("rb") as f:
                if _stamp(f) == self.stamps[EVALUATED]:
                    f.seek(entry.offset)
                    return json.loads(f.readline())
            self._reindex()
            entry = self.by_id.get(entry.pair_id)
            if entry is None:
                raise NotInQueue("this pair is no longer in evaluated.jsonl: reload the page")
        raise UserError(f"{self.work / EVALUATED} keeps changing: try again in a moment")

    def _matches(self, reviewer: str, entry: Entry, status: str, score: str, asked_from: str) -> bool:
        if score != "all" and stratum(entry.mean) != score:
            return False
        if asked_from != "all" and entry.asked_from != asked_from:
            return False
        if status == "all":
            return True
        state = self.log.of(reviewer, entry.pair_id)
        if status in ("todo", "done", "kept", "dropped"):  # no row read needed
            return status in status_of(state, {}) - {"edited"}
        return status in status_of(state, self._row(entry))

    def find(
        self, reviewer: str, start: int, step: int, status: str = "all", score: str = "all", asked_from: str = "all"
    ) -> int | None:
        """The first index from ``start`` (inclusive) going by ``step`` whose pair passes the filters."""
        reviewer = check_reviewer(reviewer)
        if self.blind and score != "all":
            raise UserError("a blind review does not filter by the judge's score")
        self._refresh()
        q = self.queue(reviewer)
        i = start
        while 0 <= i < len(q):
            if self._matches(reviewer, q[i], status, score, asked_from):
                return i
            i += step
        return None

    def show(self, reviewer: str, index: int) -> dict:
        """Everything the page needs for the reviewer's ``index``-th pair."""
        reviewer = check_reviewer(reviewer)
        self._refresh()
        q = self.queue(reviewer)
        if not q:
            return {"total": 0, "done": 0, "reviewer": reviewer, "blind": self.blind, "asked_from": []}
        index = min(max(index, 0), len(q) - 1)
        entry = q[index]
        row = self._row(entry)
        paper = self.papers.get(entry.paper_id) or {}
        state = self.log.of(reviewer, entry.pair_id)
        done = sum(reviewed(self.log.of(reviewer, e.pair_id)) for e in q)
        evidence = row.get("context") or []
        component = shown_component(paper, row.get("grounding"))
        judge = None
        if not self.blind and any(row.get(d) is not None for d in RACAR_DIMENSIONS):
            reasons = row.get("racar_reasons") or {}
            judge = {d: {"score": row.get(d), "reason": reasons.get(d)} for d in RACAR_DIMENSIONS}
            judge["difficulty"] = {"score": row.get("difficulty"), "reason": None}
            judge["reasoning_type"] = {"score": row.get("reasoning_type"), "reason": None}
        return {
            "reviewer": reviewer,
            "index": index,
            "total": len(q),
            "done": done,
            "pair_id": entry.pair_id,
            "paper_id": entry.paper_id,
            "title": row.get("title") or paper.get("title") or entry.paper_id,
            "doi": row.get("doi"),
            "question": row.get("question"),
            "answer": row.get("answer"),
            "passage": (
                passage(paper["text"], evidence, (component or {}).get("mentions"))
                if paper.get("text")
                else _evidence_only(evidence)
            ),
            "component": component and {k: v for k, v in component.items() if k != "mentions"},
            "asked_from": sorted({e.asked_from for e in q}, key=grounding_rank),
            "text_missing": not paper.get("text"),
            "judge": judge,
            "reasoning_types": list(REASONING_TYPES),
            "blind": self.blind,
            "state": {k: v for k, v in state.items() if k != "time"},
            "status": sorted(status_of(state, row)),
        }

    def save(self, reviewer: str, pair_id: str, changes: dict) -> dict:
        """Append one action for a pair of the reviewer's queue; returns the pair's state after it."""
        reviewer = check_reviewer(reviewer)
        changes = check_changes(changes)
        self._refresh()
        entry = next((e for e in self.queue(reviewer) if e.pair_id == pair_id), None)
        if entry is None:
            raise NotInQueue(f"{pair_id} is not in {reviewer}'s queue")
        texts = {k for k in ("question", "answer") if isinstance((changes or {}).get(k), str)}
        if texts:  # an edit back to the generated text is no edit
            row = self._row(entry)
            changes = {k: (None if k in texts and v == row.get(k) else v) for k, v in changes.items()}
        append_review(self.log.path, reviewer, pair_id, changes)
        self.log.refresh()
        state = self.log.of(reviewer, pair_id)
        done = sum(reviewed(self.log.of(reviewer, e.pair_id)) for e in self.queue(reviewer))
        return {"state": {k: v for k, v in state.items() if k != "time"}, "done": done}
