"""Shared helpers for evaluation stages: which QA file to evaluate, and papers joined with their pairs.

Evaluation reads ``WORK/papers.jsonl`` (texts) and one QA file, ``WORK/generated.jsonl`` or
``WORK/seed.jsonl`` (the latest record per id). Only the QA file's id -> line offset map is held in
memory; paper texts are streamed one at a time.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Iterator

from sciqag_dataset.runner import JsonlIndex, iter_latest
from sciqag_dataset.errors import MissingInput, UserError

log = logging.getLogger(__name__)

QA_SOURCES = ("generated", "seed")
#: QA-stage statuses worth evaluating ("unparsed" and "failed" have no usable pairs).
USABLE_STATUSES = ("ok", "short")


def qa_source(work: Path, source: str | None = None) -> str:
    """The QA file to evaluate: ``source`` if given (validated), else generated if present, else seed."""
    work = Path(work)
    if source is None:
        source = "generated" if (work / "generated.jsonl").exists() else "seed"
    if source not in QA_SOURCES:
        raise UserError(f"unknown QA source {source!r}: expected one of {', '.join(QA_SOURCES)}")
    if not (work / f"{source}.jsonl").exists():
        hint = "sciqag generate" if source == "generated" else "sciqag seed"
        raise MissingInput(f"{work}/{source}.jsonl not found: run `{hint}` first")
    if not (work / "papers.jsonl").exists():
        raise MissingInput(f"{work}/papers.jsonl not found: run `sciqag ingest` first")
    return source


def iter_qa_papers(work: Path, source: str) -> Iterator[dict]:
    """Yield papers that have usable QA pairs: {id, title, text, keywords, qa}.

    ``qa`` is the QA record's list of {question, answer, origin}, in its order (metric lists align
    with it). Keywords come from the QA record when it carries them, else from ``keywords.jsonl``.
    """
    work = Path(work)
    source = qa_source(work, source)
    qa_path = work / f"{source}.jsonl"
    offsets = JsonlIndex(qa_path).offsets
    keywords_path = work / "keywords.jsonl"
    keywords: dict[str, list[str]] = {}
    if keywords_path.exists():
        # small per paper (~20 phrases), so a dict is fine; only ids that have QA pairs are kept
        for rec in iter_latest(keywords_path):
            if rec.get("id") in offsets and rec.get("status") != "failed":
                keywords[rec["id"]] = rec.get("keywords") or []
    seen: set[str] = set()
    with qa_path.open("rb") as qa_file:
        for paper in iter_latest(work / "papers.jsonl"):
            off = offsets.get(paper.get("id"))
            if off is None:
                continue
            seen.add(paper["id"])
            qa_file.seek(off)
            rec = json.loads(qa_file.readline())
            if rec.get("status", "ok") not in USABLE_STATUSES or not rec.get("qa"):
                continue
            yield {
                "id": paper["id"],
                "title": paper.get("title") or "",
                "text": paper.get("text") or "",
                "keywords": rec.get("keywords") or keywords.get(paper["id"]) or paper.get("keywords") or [],
                "qa": [{"question": p.get("question") or "", "answer": p.get("answer") or "",
                        "origin": p.get("origin")} for p in rec["qa"]],
            }
    orphans = sorted(set(offsets) - seen)
    if orphans:  # said out loud: these pairs cannot be evaluated without their paper's text
        log.warning("%d %s records have no paper in papers.jsonl and are not evaluated: %s%s", len(orphans),
                    source, ", ".join(orphans[:5]), " ..." if len(orphans) > 5 else "")


def count_qa_papers(work: Path, source: str) -> int:
    """How many papers ``iter_qa_papers`` would yield at most (for a progress bar total)."""
    return len(JsonlIndex(Path(work) / f"{qa_source(work, source)}.jsonl").offsets)
