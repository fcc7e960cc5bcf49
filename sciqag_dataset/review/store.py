"""``WORK/reviews.jsonl``: every reviewer action, appended as it happens, never rewritten.

One line per action: ``{"reviewer", "pair_id", "time", "changes": {field: value}}``; a value of ``null``
clears the field. A reviewer's view of a pair is the fold of their lines in file order, so a reload, a
second tab, a second reviewer or a second server on the same file lose nothing: each append holds an
exclusive lock, and a reader takes only whole lines, tailing the file from where it stopped.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import JsonlWriter
from sciqag_dataset.core.schema import LABELS, RACAR_DIMENSIONS, REASONING_TYPES, SCALED, majority
from sciqag_dataset.core.text_repair import repair

log = logging.getLogger(__name__)

SCORES = {1, 2, 3}
TEXT_FIELDS = ("question", "answer", "comment")
FIELDS = (*RACAR_DIMENSIONS, *LABELS, "keep", *TEXT_FIELDS)
RATED = (*RACAR_DIMENSIONS, *LABELS)  # what a rater gives a pair besides keep/drop
MAX_TEXT = 20_000


JUDGE = "judge"  # the judge's name as a rater (a committee member: judge:<name>); no person may take it


def check_rater(name: str) -> str:
    """A person's name as a rater: not the judge's."""
    name = (name or "").strip()
    if name == JUDGE or name.startswith(JUDGE + ":"):
        raise UserError(f"rater name {name!r} is reserved for the LLM judge: choose another")
    return name


def check_reviewer(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 64 or not name.isprintable() or any(c in name for c in "<>&\"'"):
        raise UserError(f"reviewer name {name!r}: 1 to 64 printable characters, none of < > & \" '")
    return check_rater(name)


def check_changes(changes: object) -> dict:
    """The changes of one action, checked: RACAR scores and difficulty 1-3, a reasoning type, keep true/false,
    texts; null clears."""
    if not isinstance(changes, dict) or not changes:
        raise UserError("changes must be a non-empty object")
    for k, v in changes.items():
        if k not in FIELDS:
            raise UserError(f"unknown field {k!r}: one of {', '.join(FIELDS)}")
        if v is None:
            continue
        if k in SCALED and (isinstance(v, bool) or v not in SCORES):
            raise UserError(f"{k} must be 1, 2 or 3 (or null), not {v!r}")
        if k == "reasoning_type" and v not in REASONING_TYPES:
            raise UserError(f"reasoning_type must be one of {', '.join(REASONING_TYPES)} (or null), not {v!r}")
        if k == "keep" and not isinstance(v, bool):
            raise UserError(f"keep must be true or false (or null), not {v!r}")
        if k in TEXT_FIELDS and (not isinstance(v, str) or len(v) > MAX_TEXT):
            raise UserError(f"{k} must be text of at most {MAX_TEXT} characters")
        if k in ("question", "answer") and not v.strip():
            raise UserError(f"an empty {k}: send null to go back to the generated one")
    return dict(changes)


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def append_review(path: Path, reviewer: str, pair_id: str, changes: dict) -> dict:
    """Append one checked action under an exclusive lock, flushed to disk before returning."""
    event = {
        "reviewer": check_reviewer(reviewer),
        "pair_id": str(pair_id),
        "time": now(),
        "changes": check_changes(changes),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one writer at a time, across tabs, reviewers and servers
        with JsonlWriter(path, fsync=True) as out:  # it drops a line a killed writer left half-written
            out.write(event)
    finally:
        os.close(lock)  # closing releases the lock
    return event


@dataclass
class ReviewLog:
    """The folded state of a reviews file, brought up to date by ``refresh`` (reads only new lines)."""

    path: Path
    offset: int = 0
    states: dict[tuple[str, str], dict] = field(default_factory=dict)  # (reviewer, pair_id) -> fields + time
    edited: dict[tuple[str, str], dict] = field(default_factory=dict)  # the same -> {"question": time, ...}
    skipped: int = 0  # lines that were not a review action (reported, never fatal)
    lines: int = 0  # whole lines read so far

    def refresh(self) -> ReviewLog:
        if not self.path.exists():
            return self
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        for raw in data[:end].splitlines():
            self._apply(raw)
        self.offset += end
        return self

    def _apply(self, raw: bytes) -> None:
        self.lines += 1
        try:
            event, repaired = repair(json.loads(raw))
            if repaired:  # an escaped lone surrogate ("\\ud83d") written by another tool: not text
                log.warning("%s:%d: %d lone surrogate(s) replaced by U+FFFD", self.path, self.lines, repaired)
            key = (check_reviewer(event["reviewer"]), str(event["pair_id"]))
            changes = check_changes(event["changes"])
        except (ValueError, KeyError, TypeError, UserError):
            self.skipped += 1
            return
        state = self.states.setdefault(key, {})
        for k, v in changes.items():
            if v is None:
                state.pop(k, None)
            else:
                state[k] = v
            if k in ("question", "answer"):
                self.edited.setdefault(key, {})[k] = event.get("time") or ""
        state["time"] = event.get("time")

    def of(self, reviewer: str, pair_id: str) -> dict:
        return self.states.get((reviewer, pair_id), {})

    def reviewers(self) -> list[str]:
        return sorted({r for r, _ in self.states})


def read_reviews(path: Path) -> ReviewLog:
    return ReviewLog(Path(path)).refresh()


def reviewed(state: dict) -> bool:
    """A pair counts as reviewed by someone once they scored every dimension or decided keep/drop."""
    return "keep" in state or all(d in state for d in RACAR_DIMENSIONS)


@dataclass
class Decision:
    """What the reviewers of one pair decided together."""

    reviewers: list[str]
    scores: dict[str, float]  # mean human score per dimension and difficulty, where someone gave it
    keep: bool | None  # None: nobody decided; False when more reviewers dropped it than kept it
    question: str | None  # the latest edit, if any
    answer: str | None
    reasoning_type: str | None = None  # the type most reviewers chose (a tie: the newest choice)


def _time(item: tuple[str, dict]) -> str:
    return item[1].get("time") or ""


def decisions(log: ReviewLog) -> dict[str, Decision]:
    """Per pair id, the reviewers' combined decision."""
    by_pair: dict[str, list[tuple[str, dict]]] = {}
    for (reviewer, pid), state in log.states.items():
        if state.keys() - {"time", "comment"}:  # a comment alone decides nothing
            by_pair.setdefault(pid, []).append((reviewer, state))
    out = {}
    for pid, states in by_pair.items():
        scores = {}
        for d in SCALED:
            given = [s[d] for _, s in states if d in s]
            if given:
                scores[d] = sum(given) / len(given)
        votes = [s["keep"] for _, s in states if "keep" in s]
        keep = None if not votes else votes.count(False) <= votes.count(True)
        edit = {}
        for k in ("question", "answer"):  # the newest edit of each text, whoever made it
            made = [(log.edited.get((r, pid), {}).get(k, ""), s[k]) for r, s in states if k in s]
            if made:
                edit[k] = max(made)[1]
        out[pid] = Decision(
            reviewers=sorted(r for r, _ in states),
            scores=scores,
            keep=keep,
            question=edit.get("question"),
            answer=edit.get("answer"),
            # the type most reviewers chose; a tie goes to the newest choice
            reasoning_type=majority(s.get("reasoning_type") for _, s in sorted(states, key=_time, reverse=True)),
        )
    return out


def human_ratings(log: ReviewLog) -> Iterator[dict]:
    """One rating row per reviewer and pair: ``pair_id, rater`` and the scores and keep they gave."""
    for (reviewer, pid), state in sorted(log.states.items()):
        row = {"pair_id": pid, "rater": reviewer}
        row.update({d: state.get(d) for d in RATED})
        row["keep"] = state.get("keep")
        if any(row[k] is not None for k in (*RATED, "keep")):
            yield row


def apply_decision(row: dict, decision: Decision | None) -> dict | None:
    """An `evaluated` row as people left it: None if they dropped it; their edit in place of the generated
    text (kept in ``original_question``/``original_answer``); who reviewed it, their mean scores and
    difficulty, and the reasoning type most of them chose."""
    if decision is None:
        return row
    if decision.keep is False:
        return None
    row = dict(row, reviewed_by=decision.reviewers)
    row.update({f"human_{d}": decision.scores.get(d) for d in SCALED})
    row["human_reasoning_type"] = decision.reasoning_type
    for key in ("question", "answer"):
        edit = getattr(decision, key)
        if edit is not None and edit != row.get(key):
            row[f"original_{key}"], row[key] = row.get(key), edit
    return row
