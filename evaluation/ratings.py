"""Every rater's scores as one table: the judge (and each judge of a committee), the reviewers of
``WORK/reviews.jsonl``, and ratings imported from CSV or JSONL files.

A rating row is ``{"pair_id", "rater", <five RACAR dimensions>, "reasoning_type", "difficulty", "keep"}``; a
score or difficulty is 1, 2 or 3 or None (not given), a reasoning type one of ``schema.REASONING_TYPES`` or None.
Imported files have the columns ``pair_id, rater, relevance, agnosticism, completeness, accuracy,
reasonableness`` and optionally ``reasoning_type``, ``difficulty`` and ``keep`` (0/1); blanks are allowed.
Only pairs some person rated are read from the judge's files, so the table stays small whatever the corpus.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sciqag_dataset.errors import MissingInput, UserError
from sciqag_dataset.jsonl import JsonlIndex, read_jsonl
from sciqag_dataset.pair_ids import RowIds
from sciqag_dataset.review.store import JUDGE, check_rater, human_ratings, read_reviews
from sciqag_dataset.schema import LABELS, RACAR_DIMENSIONS, SCALED, reasoning_type
from sciqag_dataset.wiring import EVALUATED, REVIEWS

COLUMNS = ("pair_id", "rater", *RACAR_DIMENSIONS, *LABELS, "keep")  # pair_id and rater required


@dataclass
class Ratings:
    rows: list[dict] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # rater -> "judge" | "reviewer" | "imported"

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
        number = float(value)
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


def _records(path: Path) -> Iterator[tuple[str, dict]]:
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            missing = set(COLUMNS[:2]) - set(reader.fieldnames or ())
            if missing:
                raise UserError(
                    f"{path}: the header lacks {', '.join(sorted(missing))} (columns: {', '.join(COLUMNS)})"
                )
            for n, rec in enumerate(reader, start=2):
                yield f"{path}:{n}", rec
        return
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise UserError(f"{path}:{n}: not JSON ({e.msg})") from None
                if not isinstance(rec, dict):
                    raise UserError(f"{path}:{n}: a JSON object per line, please")
                yield f"{path}:{n}", rec


def read_ratings_file(path: str | Path) -> Iterator[dict]:
    """Rating rows of a CSV or JSONL file, checked (UserError naming the file and line)."""
    path = Path(path)
    if not path.exists():
        raise MissingInput(f"ratings file {path} not found")
    for where, rec in _records(path):
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
        yield row


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


def collect(work: str | Path, files: Iterable[str | Path] = ()) -> Ratings:
    """Every rater's rows for the pairs that at least one person rated."""
    work = Path(work)
    out = Ratings()
    log = read_reviews(work / REVIEWS)
    for row in human_ratings(log):
        out.add(row, "reviewer")
    for path in files:
        for row in read_ratings_file(path):
            out.add(row, "imported")
    wanted = {r["pair_id"] for r in out.rows}
    for row in _judge_rows(work, wanted):
        out.add(row, JUDGE)
    return out
