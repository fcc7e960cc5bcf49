"""The benchmark's questions: a published folder or Hub id, or a file of pairs -> ``RESULTS/questions.jsonl``.

A published dataset is read with ``load_dataset`` (config ``evaluated``, else ``generated``, else ``seed``;
split ``test``): the `evaluated` config has a row per pair, the others a row per paper with its ``qa`` list.
A file is JSON (a list of pairs), JSON Lines or parquet, with ``question``/``answer`` or ``Q``/``A`` keys.
Only what a closed-book model may see and what scoring needs is kept: an id, the question, the reference
answer, the paper id and what the pair was asked from (``asked_from``: prose, table, equation or figure, which the
leaderboard breaks scores down by); never the paper's text or keywords. The pair's (or its paper's) keywords, where the
data has them, go to ``RESULTS/question_keywords.jsonl`` apart, for the general-knowledge check to mask.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.jsonl import read_jsonl
from sciqag_dataset.core.stage import digest
from sciqag_dataset.core.text_repair import repair
from sciqag_dataset.evaluation.evaluated_pairs import pair_verdict

log = logging.getLogger(__name__)

QUESTIONS = "questions.jsonl"
QUESTIONS_INFO = "questions.json"
QUESTION_KEYWORDS = "question_keywords.jsonl"  # each question's domain terms, apart from what a model is shown
CONFIG_ORDER = ("evaluated", "generated", "seed")
FILE_SUFFIXES = (".json", ".jsonl", ".parquet")


def _pick(row: dict, *keys: str) -> str:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # a surrogate written out as bytes, or another encoding: repaired, as ingest does
        log.warning("%s: not valid UTF-8; the invalid bytes are read as U+FFFD", path)
        return data.decode("utf-8", "replace")


def _file_rows(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as exc:  # not parquet, or a damaged file
            raise UserError(f"{path}: not a readable parquet file ({' '.join(str(exc).split())})") from None
    if path.suffix == ".jsonl":
        rows = []
        for n, line in enumerate(_read_text(path).splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise UserError(f"{path}, line {n}: not valid JSON ({exc})") from None
        return rows
    try:
        data = json.loads(_read_text(path))
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from None
    if isinstance(data, dict):  # {"data": [...]} or any one list of pairs inside an object
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise UserError(f"{path}: expected a list of question/answer pairs (or an object holding one list)")
        data = lists[0]
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a list of question/answer pairs")
    return data


def _from_file(path: Path) -> tuple[list[dict], dict]:
    questions, bad = [], []
    for n, row in enumerate(_file_rows(path)):
        q = _pick(row, "question", "Q", "q") if isinstance(row, dict) else ""
        a = _pick(row, "answer", "A", "a") if isinstance(row, dict) else ""
        if not (q and a):
            bad.append(n)
            continue
        qid = str(row.get("id") or f"q{n:05d}")
        questions.append(
            {
                "id": qid,
                "question": q,
                "reference": a,
                "paper_id": row.get("paper_id"),
                **_asked_from(row),
                **_keywords(row),
            }
        )
    return questions, {"data": str(path), "format": path.suffix.lstrip("."), "rows_without_pair": bad}


def _asked_from(*rows: dict) -> dict:
    """``{"asked_from": kind}``: what the pair was asked from (its ``grounding`` kind; "prose" where it records
    none: pairs were asked from the text before components were)."""
    for row in rows:
        grounding = row.get("grounding") if isinstance(row, dict) else None
        kind = grounding.get("kind") if isinstance(grounding, dict) else None
        if isinstance(kind, str) and kind:
            return {"asked_from": kind}
    return {"asked_from": "prose"}


def _keywords(*rows: dict) -> dict:
    """``{"keywords": [...]}`` from the first of ``rows`` that has a list of them, else nothing."""
    for row in rows:
        words = row.get("keywords") if isinstance(row, dict) else None
        if isinstance(words, list) and words:
            return {"keywords": [str(w) for w in words if w]}
    return {}


def _configs(data: str) -> list[str]:
    from datasets import get_dataset_config_names

    try:
        return list(get_dataset_config_names(data))
    except Exception as exc:  # not a dataset folder, no such Hub repo, no network
        raise UserError(
            f"cannot read {data!r} as a published dataset (a folder with a README.md declaring "
            f"`configs:`, or a Hub id): {type(exc).__name__}: {exc}"
        ) from None


def _pairs_of(config: str, rows) -> Iterator[tuple[str, dict, dict]]:
    """(id, pair, the row it came from) in dataset order; ids are ``paper#k``, k counting within the paper."""
    if config == "evaluated":
        seen: dict[str, int] = {}
        for row in rows:
            k = seen.get(row["paper_id"], 0)
            seen[row["paper_id"]] = k + 1
            yield f"{row['paper_id']}#{k}", row, row
    else:
        for row in rows:
            for k, pair in enumerate(row.get("qa") or []):
                yield f"{row['id']}#{k}", pair, row


def _from_dataset(data: str, config: str | None, split: str, authors_test_set: bool) -> tuple[list[dict], dict]:
    from datasets import load_dataset

    available = _configs(data)
    if config is None:
        config = next((c for c in CONFIG_ORDER if c in available), None)
        if config is None:
            raise UserError(f"{data}: none of the configs {', '.join(CONFIG_ORDER)} (it has: {', '.join(available)})")
    elif config not in available:
        raise UserError(f"{data}: no config {config!r} (it has: {', '.join(available)})")
    if authors_test_set and config != "evaluated":
        raise UserError(
            "--authors-test-set keeps pairs by their RACAR scores: it needs the `evaluated` config, "
            f"which {data} does not have"
        )
    try:
        rows = load_dataset(data, config, split=split)
    except ValueError as exc:
        raise UserError(f"{data} ({config}): no split {split!r} ({exc}); choose another with --split") from None
    questions, empty, verdicts = [], [], {"kept": 0, "dropped": 0, "unscored": 0}
    for qid, pair, row in _pairs_of(config, rows):
        if authors_test_set:
            failed, missing = pair_verdict(row, authors_test_set=True)
            if failed or missing:
                verdicts["unscored" if missing and not failed else "dropped"] += 1
                continue
            verdicts["kept"] += 1
        q, a = _pick(pair, "question"), _pick(pair, "answer")
        if q and a:
            questions.append(
                {
                    "id": qid,
                    "question": q,
                    "reference": a,
                    "paper_id": row.get("paper_id", row.get("id")),
                    **_asked_from(pair),
                    **_keywords(pair, row),
                }
            )
        else:
            empty.append(qid)
    if empty:
        log.warning(
            "%s: %d pair(s) without a question or an answer were left out (%s)",
            data,
            len(empty),
            ", ".join(empty[:10]),
        )
    info: dict[str, Any] = {"data": data, "config": config, "split": split, "pairs_without_text": empty}
    if authors_test_set:
        info["authors_test_set"] = verdicts
    return questions, info


def load_questions(
    data: str,
    *,
    config: str | None = None,
    split: str = "test",
    limit: int | None = None,
    authors_test_set: bool = False,
) -> tuple[list[dict], dict]:
    """The benchmark's questions from ``data`` and a description of where they came from."""
    path = Path(data)
    if path.is_file() and path.suffix in FILE_SUFFIXES:
        if authors_test_set:
            raise UserError("--authors-test-set needs a published `evaluated` config, not a file of pairs")
        questions, info = _from_file(path)
        if info["rows_without_pair"]:
            log.warning(
                "%s: %d row(s) without a question and an answer were left out (rows %s)",
                path,
                len(info["rows_without_pair"]),
                info["rows_without_pair"][:10],
            )
    elif path.is_file():
        raise UserError(f"{data}: a file of pairs must be {', '.join(FILE_SUFFIXES)}")
    elif not path.exists() and (data.startswith((".", "/")) or data.count("/") > 1):
        raise MissingInput(f"{data} not found")
    else:
        questions, info = _from_dataset(data, config, split, authors_test_set)
    # lone surrogates (JSON escapes such as "\ud800", a file name that is not UTF-8) cannot be written out
    (questions, info), repaired = repair((questions, info))
    if repaired:
        log.warning("%s: %d lone surrogate(s) (not valid Unicode) in the pairs; read as U+FFFD", data, repaired)
    ids = [q["id"] for q in questions]
    if len(set(ids)) != len(ids):
        raise UserError(f"{data}: question ids repeat; give each row a unique `id`")
    if not questions:
        raise UserError(f"{data}: no question-answer pairs to ask")
    if limit is not None:
        questions = questions[:limit]
    info.update(
        questions=len(questions),
        limit=limit,
        digest=digest([[q["id"], q["question"], q["reference"]] for q in questions]),
    )
    return questions, info


def write_questions(results: Path, questions: list[dict], info: dict) -> None:
    """The question set, written whole (it is derived from DATA, and the answer stages read it)."""
    results.mkdir(parents=True, exist_ok=True)
    shown = [{k: v for k, v in q.items() if k != "keywords"} for q in questions]
    write_whole(results / QUESTIONS, "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in shown))
    terms = [{"id": q["id"], "keywords": q["keywords"]} for q in questions if q.get("keywords")]
    write_whole(results / QUESTION_KEYWORDS, "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in terms))
    write_whole(results / QUESTIONS_INFO, json.dumps(info, indent=2, ensure_ascii=False) + "\n")


def read_questions(results: Path) -> list[dict]:
    path = results / QUESTIONS
    if not path.exists():
        raise MissingInput(f"{path} not found: run `sciqag benchmark DATA -o {results}` first")
    return list(read_jsonl(path))
