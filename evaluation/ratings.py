"""Every rater's scores as one table: the judge (and each judge of a committee), the reviewers of
``WORK/reviews.jsonl``, and ratings imported from CSV or JSONL files.

A rating row is ``{"pair_id", "rater", <five RACAR dimensions>, "reasoning_type", "difficulty", "keep"}``; a
score or difficulty is 1, 2 or 3 or None (not given), a reasoning type one of ``schema.REASONING_TYPES`` or None.
Imported files (CSV or JSONL, as ``rating_files`` reads them) have the columns ``pair_id`` and ``rater`` and any
of ``relevance, agnosticism, completeness, accuracy, reasonableness``, ``reasoning_type``, ``difficulty`` and
``keep`` (0/1); blanks are allowed.
Only pairs some person rated are read from the judge's files, so the table stays small whatever the corpus.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.jsonl import JsonlIndex, read_jsonl
from sciqag_dataset.core.pair_ids import RowIds
from sciqag_dataset.core.schema import LABELS, RACAR_DIMENSIONS, SCALED, reasoning_type
from sciqag_dataset.core.wiring import EVALUATED, REVIEWS
from sciqag_dataset.evaluation.rating_files import FileFormat, records
from sciqag_dataset.review.store import JUDGE, check_rater, human_ratings, read_reviews

COLUMNS = ("pair_id", "rater", *RACAR_DIMENSIONS, *LABELS, "keep")  # pair_id and rater required
FIELDS = COLUMNS[2:]


@dataclass
class Ratings:
    rows: list[dict] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # rater -> "judge" | "reviewer" | "imported"
    inputs: list[dict] = field(default_factory=list)  # per source of people's ratings: its counts and notes

    def add(self, row: dict, kind: str) -> None:
        self.rows.append(row)
        self.kinds.setdefault(row["rater"], kind)

    def humans(self) -> list[str]:
        return sorted(r for r, k in self.kinds.items() if k != JUDGE)

    def judges(self) -> list[str]:
        return sorted(r for r, k in self.kinds.items() if k == JUDGE)


def _score(value, where: str, column: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value.replace(",", ".") if isinstance(value, str) else value)  # "3,0": a decimal comma
    except (TypeError, ValueError):
        raise UserError(f"{where}: {column} must be 1, 2 or 3 or blank, not {value!r}") from None
    if math.isnan(number):
        return None
    if number not in (1, 2, 3):
        raise UserError(f"{where}: {column} must be 1, 2 or 3 or blank, not {value!r}")
    return int(number)


def _reasoning_type(value, where: str) -> str | None:
    try:
        return reasoning_type(value)
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None


def _keep(value, where: str) -> bool | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "yes", "keep"):
        return True
    if text in ("0", "0.0", "false", "no", "drop"):
        return False
    raise UserError(f"{where}: keep must be 0 or 1 or blank, not {value!r}")


def open_ratings_file(path: str | Path) -> tuple[FileFormat, Iterator[tuple[str, dict]]]:
    """How a CSV or JSONL ratings file is written, and its rating rows as ``(file:line, row)``, checked
    (UserError naming the file and line)."""
    path = Path(path)
    if not path.is_file():
        raise MissingInput(f"ratings file {path} not found")
    fmt, recs = records(path, COLUMNS[:2], COLUMNS)
    return fmt, (_checked(where, rec) for where, rec in recs)


def read_ratings_file(path: str | Path) -> Iterator[dict]:
    """Rating rows of a CSV or JSONL file, checked (UserError naming the file and line)."""
    for _, row in open_ratings_file(path)[1]:
        yield row


def _checked(where: str, rec: dict) -> tuple[str, dict]:
    pid, rater = str(rec.get("pair_id") or "").strip(), str(rec.get("rater") or "").strip()
    if not pid or not rater:
        raise UserError(f"{where}: pair_id and rater are required")
    try:
        row = {"pair_id": pid, "rater": check_rater(rater)}
    except UserError as e:
        raise UserError(f"{where}: {e}") from None
    row.update({d: _score(rec.get(d), where, d) for d in SCALED})
    row["reasoning_type"] = _reasoning_type(rec.get("reasoning_type"), where)
    row["keep"] = _keep(rec.get("keep"), where)
    return where, row


def _judge_rows(work: Path, wanted: set[str]) -> Iterator[dict]:
    """The judge's scores of the wanted pairs: the combined one as ``judge``, each committee member's as
    ``judge:<name>`` (from racar.jsonl, by the pair's position in its paper)."""
    path = work / EVALUATED
    if not path.exists():
        return
    racar = JsonlIndex(work / "racar.jsonl")
    position: dict[str, int] = {}
    ids = RowIds()
    for row in read_jsonl(path):
        k = position[row["paper_id"]] = position.get(row["paper_id"], -1) + 1
        pid = ids(row)
        if pid in wanted and any(row.get(d) is not None for d in RACAR_DIMENSIONS):
            yield {"pair_id": pid, "rater": JUDGE, **_judged(row.get)}
            rec = racar.get(row["paper_id"]) or {}
            members = rec.get("judge_scores") or {}
            if len(members) > 1:
                for name, scores in members.items():
                    yield {
                        "pair_id": pid,
                        "rater": f"{JUDGE}:{name}",
                        **_judged(lambda c, s=scores, k=k: _at(s.get(c), k)),
                    }


def _judged(value) -> dict:
    """A judge's scores and labels of one pair, ``value(column)`` reading them."""
    out = {c: _rounded(value(c)) for c in SCALED}
    return out | {"reasoning_type": value("reasoning_type")}


def _at(values, k: int):
    return values[k] if isinstance(values, list) and k < len(values) else None


def _rounded(score) -> int | None:
    """A committee mean such as 2.5 as an ordinal score (half up); None stays None."""
    return None if score is None else int(math.floor(float(score) + 0.5))


def known_pairs(work: Path) -> set[str] | None:
    """The pair ids of WORK's evaluated.jsonl (None without one: nothing to check ids against)."""
    path = work / EVALUATED
    if not path.exists():
        return None
    ids = RowIds()
    return {ids(row) for row in read_jsonl(path) if isinstance(row, dict) and "paper_id" in row}


@dataclass
class _Fold:
    """Rating rows folded to one per pair and rater, with what each source brought counted."""

    known: set[str] | None
    work: Path
    merged: dict[tuple[str, str], dict] = field(default_factory=dict)
    clashes: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # rater -> the kind of the first source naming them

    def add(self, source: dict, rows: Iterable[tuple[str, dict]]) -> None:
        counts = dict.fromkeys(("rows", "duplicates", "contradictory", "unknown"), 0)
        unknown, clashing = [], []
        for where, row in rows:
            counts["rows"] += 1
            key = (row["pair_id"], row["rater"])
            if self.known is not None and row["pair_id"] not in self.known:
                counts["unknown"] += 1
                unknown.append(row["pair_id"])
                continue
            self.kinds.setdefault(row["rater"], source["kind"])
            prev = self.merged.get(key)
            if prev is None:
                self.merged[key] = dict(row)
                continue
            clash = {f for f in FIELDS if prev.get(f) is not None and row[f] is not None and prev[f] != row[f]}
            if clash:
                counts["contradictory"] += 1
                self.clashes.setdefault(key, set()).update(clash)
                clashing.append(f"{where} ({row['rater']}, {row['pair_id']}: {', '.join(sorted(clash))})")
            else:
                counts["duplicates"] += 1
            prev.update({f: row[f] for f in FIELDS if prev.get(f) is None and row[f] is not None})
        counts["used"] = counts["rows"] - counts["duplicates"] - counts["contradictory"] - counts["unknown"]
        source.update(counts)
        source["notes"] = self._notes(counts, unknown, clashing)
        if counts["rows"] and counts["unknown"] == counts["rows"] and source["kind"] == "imported":
            raise UserError(
                f"{source['source']}: none of its {counts['rows']} rows names a pair of {self.work} "
                f"(e.g. {unknown[0]!r}): pair ids are the pair_id column of {self.work / EVALUATED}"
            )

    def _notes(self, counts: dict, unknown: list[str], clashing: list[str]) -> list[str]:
        notes = []
        if counts["duplicates"]:
            notes.append(
                f"{plural(counts['duplicates'], 'row')} repeating a pair and rater with the same values: counted once"
            )
        if counts["contradictory"]:
            notes.append(
                f"{plural(counts['contradictory'], 'row')} rating a pair its rater rated before with other values: "
                f"those values are left out (e.g. {clashing[0]})"
            )
        if counts["unknown"]:
            shown = ", ".join(repr(p) for p in sorted(set(unknown))[:3])
            notes.append(
                f"{plural(counts['unknown'], 'row')} naming pairs not in {self.work / EVALUATED}: "
                f"left out (e.g. {shown})"
            )
        return notes

    def rows(self) -> Iterator[dict]:
        for key, row in self.merged.items():
            yield row | dict.fromkeys(self.clashes.get(key, ()))


def collect(work: str | Path, files: Iterable[str | Path] = ()) -> Ratings:
    """Every rater's rows for the pairs that at least one person rated: one row per pair and rater (a repeat
    adds the values it alone gives; values two rows give differently are left out), rows of pairs that are
    not in WORK left out; ``inputs`` says what each source brought."""
    work = Path(work)
    out = Ratings()
    fold = _Fold(known_pairs(work), work)
    log = read_reviews(work / REVIEWS)
    reviews = [(f"{work / REVIEWS}", row) for row in human_ratings(log)]
    sources = [({"source": str(work / REVIEWS), "kind": "reviewer", "format": None}, reviews)] if reviews else []
    for path in files:
        fmt, rows = open_ratings_file(path)
        sources.append(({"source": str(path), "kind": "imported", "format": fmt.describe()}, rows))
    for source, rows in sources:
        fold.add(source, rows)
        out.inputs.append(source)
    for row in fold.rows():
        out.add(row, fold.kinds[row["rater"]])
    wanted = {r["pair_id"] for r in out.rows}
    for row in _judge_rows(work, wanted):
        out.add(row, JUDGE)
    return out
