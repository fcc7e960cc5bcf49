"""The one join of a work directory's records, and the one definition of which records are usable.

Every stage, the `datasets` builder and training read papers, keywords and QA pairs through here, so
they agree on what a paper's keywords are, which QA records count, and what a removed paper is. Joins
stream one side and hold only line offsets of the others (``JsonlIndex``), so memory does not grow with
the text of a corpus.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.jsonl import JsonlIndex, iter_latest
from sciqag_dataset.core.wiring import KEYWORDS, PAPERS, QA_FILES  # noqa: F401  (re-exported: the join's files)

log = logging.getLogger(__name__)

#: Statuses of a QA record whose pairs are used (evaluated, published, trained on).
USABLE = ("ok", "short")
#: A paper whose source file changed so that it no longer yields this id.
REMOVED = "removed"


def usable(rec: dict | None) -> bool:
    """A QA record whose pairs count: a usable status and at least one pair."""
    return rec is not None and (rec.get("status") or "ok") in USABLE and bool(rec.get("qa"))


def live(paper: dict | None) -> bool:
    return paper is not None and paper.get("status") not in (REMOVED, "failed")


def keywords_for(paper: dict, kw_rec: dict | None, qa_rec: dict | None = None) -> list[str]:
    """A paper's keywords: those its QA pairs were asked with, else the keywords stage's phrases unless it
    failed, else those the source carried."""
    found = kw_rec.get("keywords") if kw_rec and kw_rec.get("status") != "failed" else None
    return (qa_rec or {}).get("keywords") or found or paper.get("keywords") or []


def qa_pairs(rec: dict) -> list[dict]:
    """A record's pairs with text fields as strings (so hashes and alignments agree everywhere), and the
    ``grounding`` of those that record one (a pair without it reads as before: metric records computed on it
    still fit)."""
    return [
        {
            "question": p.get("question") or "",
            "answer": p.get("answer") or "",
            "origin": p.get("origin"),
            **({"grounding": p["grounding"]} if p.get("grounding") else {}),
        }
        for p in rec.get("qa") or []
    ]


def qa_hash(pairs: Sequence[dict]) -> str:
    """Identifies the judged pairs, so a metric line can be checked against a regenerated QA file."""
    blob = json.dumps([[p.get("question"), p.get("answer")] for p in pairs], ensure_ascii=False)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def require(work: Path, name: str, hint: str) -> Path:
    path = Path(work) / name
    if not path.exists():
        raise MissingInput(f"{path} not found: run `{hint}` first")
    return path


def papers(work: str | Path) -> Iterator[dict]:
    """The latest record of every paper that is still there."""
    for paper in iter_latest(require(Path(work), PAPERS, "sciqag ingest")):
        if live(paper):
            yield paper


def count_papers(work: str | Path) -> int:
    return sum(1 for _ in JsonlIndex(Path(work) / PAPERS).offsets)


def with_keywords(work: str | Path, sections: bool = False, components: bool = False) -> Iterator[dict]:
    """Papers with their keywords: what a model is asked to write QA pairs from (seed, generate). With
    ``sections``, also where each section starts in the text (``section_starts``), for a stage that asks about
    chunks of the paper; with ``components``, the paper's tables, equations and figures, for a stage that asks
    about them; without them the record holds nothing more, so a stage that reads the whole paper keeps its
    records' fingerprints."""
    work = Path(work)
    kw = JsonlIndex(work / KEYWORDS)
    for paper in papers(work):
        text = paper.get("text") or ""
        yield {
            "id": paper["id"],
            "title": paper.get("title") or "",
            "text": text,
            "keywords": keywords_for(paper, kw.get(paper["id"])),
            "existing_qa": paper.get("existing_qa") or [],
            **({"section_starts": section_starts(text, paper.get("sections"))} if sections else {}),
            **({"components": paper.get("components") or []} if components else {}),
        }


def keyword_inputs(work: str | Path) -> Iterator[dict]:
    """What the keywords stage reads per paper: its text and the keywords its source carried."""
    for paper in papers(work):
        yield {"id": paper["id"], "text": paper.get("text") or "", "keywords": paper.get("keywords") or []}


def qa_source(work: str | Path, source: str | None = None) -> str:
    """The QA file to evaluate: ``source`` if given, else generated if present, else seed."""
    work = Path(work)
    if source is None:
        source = "generated" if (work / QA_FILES["generated"]).exists() else "seed"
    if source not in QA_FILES:
        raise UserError(f"unknown QA source {source!r}: expected one of {', '.join(QA_FILES)}")
    require(work, QA_FILES[source], "sciqag generate" if source == "generated" else "sciqag seed")
    require(work, PAPERS, "sciqag ingest")
    return source


def qa_papers(work: str | Path, source: str | None = None) -> Iterator[dict]:
    """Papers that have usable QA pairs in ``source`` (see ``qa_source``): {id, title, text, keywords, qa,
    source}, and the paper's ``components`` where it has any (a pair may be about a table), in paper order.
    ``qa`` keeps the QA record's order: every metric list aligns with it."""
    work = Path(work)
    source = qa_source(work, source)
    qa_index = JsonlIndex(work / QA_FILES[source])
    kw = JsonlIndex(work / KEYWORDS)
    seen: set[str] = set()
    for paper in papers(work):
        seen.add(paper["id"])
        rec = qa_index.get(paper["id"])
        if usable(rec):
            yield {
                "id": paper["id"],
                "title": paper.get("title") or "",
                "text": paper.get("text") or "",
                "keywords": keywords_for(paper, kw.get(paper["id"]), rec),
                "qa": qa_pairs(rec),
                "source": source,
                **({"components": paper["components"]} if paper.get("components") else {}),
            }
    orphans = sorted(set(qa_index.offsets) - seen)
    if orphans:  # said out loud: these pairs cannot be evaluated without their paper's text
        log.warning(
            "%d %s records have no paper in papers.jsonl and are not evaluated: %s%s",
            len(orphans),
            source,
            ", ".join(orphans[:5]),
            " ..." if len(orphans) > 5 else "",
        )


def count_qa(work: str | Path, source: str | None = None) -> int:
    """At most how many papers ``qa_papers`` yields (for a progress bar)."""
    return len(JsonlIndex(Path(work) / QA_FILES[qa_source(work, source)]).offsets)


def stage_records(work: str | Path, stage_file: str) -> Iterator[dict]:
    """A stage's records (latest per id) merged over their paper, with the paper's keywords; records
    whose paper is gone are left out. What the `datasets` builder publishes."""
    work = Path(work)
    paper_index, kw = JsonlIndex(work / PAPERS), JsonlIndex(work / KEYWORDS)
    for rec in iter_latest(work / stage_file):
        paper = paper_index.get(rec["id"])
        if not live(paper):
            continue
        merged = {**paper, **{k: v for k, v in rec.items() if v is not None}}
        merged["keywords"] = keywords_for(paper, kw.get(rec["id"]), rec)
        yield merged


def seen_share(recs: Iterator[dict] | Sequence[dict]) -> float | None:
    """The share of their papers' words that the model was shown, over QA records that say (``seen_words``)."""
    seen = total = 0
    for rec in recs:
        if rec.get("seen_words") is not None and rec.get("paper_words"):
            seen, total = seen + rec["seen_words"], total + rec["paper_words"]
    return seen / total if total else None


def section_starts(text: str, sections: list[dict]) -> list[int]:
    """Where each section's text begins in the paper's ``text`` (character offsets; a section whose opening is
    not found there is left out)."""
    out, at = [], 0
    for section in sections or []:
        opening = (section.get("text") or "").strip()[:60]
        found = text.find(opening, at) if opening else -1
        if found >= 0:
            out.append(found)
            at = found + len(opening)
    return out
