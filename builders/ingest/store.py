"""Storing ingested papers in ``WORK/papers.jsonl``: duplicates (by id or content), resume (a paper stored from
the same source with the same content is skipped; one whose source changed is stored again, ``updated``; one
its source no longer yields is marked removed), a partial read replaced by a complete one, and what
``ingest_report.json`` says."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path

from sciqag_dataset.builders.ingest.inputs import path_key
from sciqag_dataset.builders.ingest.registry import format_of_name
from sciqag_dataset.core import runner
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.jsonl import JsonlWriter, iter_latest
from sciqag_dataset.core.records import REMOVED
from sciqag_dataset.core.stage import digest
from sciqag_dataset.core.text_repair import repair

log = logging.getLogger(__name__)

ON_DUPLICATE = ("skip", "keep", "error")
_DUP_SUFFIX = re.compile(r"-dup\d+$")


def _partial(rec: dict) -> bool:
    return bool((rec.get("ingest") or {}).get("partial"))


def _lead(rec: dict) -> str | None:
    """The paper's title and the start of its text: what a partial read (a truncated download, a missing
    page or \\input further on) shares with the whole paper when no DOI gives both one id. None when the
    title is too short to tell papers apart."""
    title = " ".join(re.findall(r"\w+", (rec.get("title") or "").lower()))
    words = re.findall(r"\w+", (rec.get("text") or "").lower())
    if len(title.split()) < 4 or len(words) < 20:
        return None
    return digest(title + "\n" + " ".join(words[:20]))  # 16 hex characters kept per paper, not the words


class Seen:
    """Ids and hashes already stored or met in this run, and what earlier runs stored per source."""

    def __init__(self, out: Path):
        self.ids: dict[str, str] = {}
        self.hashes: dict[str, str] = {}
        # source -> base id -> (content hash, stored id) of earlier runs; a resumed paper consumes one, so a
        # file holding the same id twice resumes both, and what is left unconsumed its source no longer yields
        self.stored: dict[str, dict[str, list[tuple[str, str]]]] = {}
        self.partial: set[str] = set()  # ids stored from a partial read: a complete copy replaces them
        self.leads: dict[str, str] = {}  # title and first words -> id, to find a partial read's whole paper
        for rec in iter_latest(out):  # streamed: a paper's text is never held past its own line
            if rec.get("status") in (runner.FAILED, REMOVED):
                continue
            self.ids.setdefault(rec["id"], rec.get("source_path") or "")
            self._lead(rec)
            if rec.get("content_hash"):
                self.hashes.setdefault(rec["content_hash"], rec.get("source_path") or "")
            by_id = self.stored.setdefault(path_key(rec.get("source_path") or ""), {})
            by_id.setdefault(_DUP_SUFFIX.sub("", rec["id"]), []).append((rec.get("content_hash") or "", rec["id"]))

    def resumed(self, rec: dict) -> str | None:
        """ "same" when an earlier run stored this paper from this source, "changed" when it stored another
        version of it, None when it is new."""
        stored = self.stored.get(path_key(rec["source_path"]), {}).get(rec["id"])
        if not stored:
            return None
        same = next((entry for entry in stored if entry[0] == rec["content_hash"]), None)
        stored.remove(same or stored[0])
        return "same" if same else "changed"

    def gone(self, source: str) -> list[str]:
        """Ids stored from ``source`` that this run did not meet in it."""
        return [stored_id for entries in self.stored.pop(path_key(source), {}).values() for _, stored_id in entries]

    def duplicate_of(self, rec: dict) -> tuple[str, str] | None:
        """(kept source_path, reason) when the id or the text was seen before."""
        if rec["content_hash"] in self.hashes:
            return self.hashes[rec["content_hash"]], "same content"
        if rec["id"] in self.ids:
            return self.ids[rec["id"]], "same id"
        return None

    def completes(self, rec: dict) -> bool:
        """A complete read of a paper stored so far only from a partial one (same id)."""
        return rec["id"] in self.partial and not _partial(rec)

    def same_paper(self, rec: dict) -> str | None:
        """The id of another record with this paper's title and opening (a partial read's other copy)."""
        other = self.leads.get(_lead(rec) or "")
        return other if other != rec["id"] else None

    def _lead(self, rec: dict) -> None:
        if _partial(rec):
            self.partial.add(rec["id"])
        key = _lead(rec)
        if key and (key not in self.leads or self.leads[key] in self.partial and not _partial(rec)):
            self.leads[key] = rec["id"]  # the whole paper's id wins over a partial read's

    def add(self, rec: dict, replace: bool = False) -> None:
        if replace:
            self.ids[rec["id"]] = rec["source_path"]
            self.partial.discard(rec["id"])
        self.ids.setdefault(rec["id"], rec["source_path"])
        self.hashes.setdefault(rec["content_hash"], rec["source_path"])
        self._lead(rec)

    def free_id(self, base: str) -> str:
        n = 2
        while f"{base}-dup{n}" in self.ids:
            n += 1
        return f"{base}-dup{n}"


class Report:
    """What ``ingest_report.json`` says: counts, failures, duplicates, warnings."""

    def __init__(self, on_duplicate: str):
        self.summary = runner.Summary("ingest")
        for key in ("ok", "failed", "skipped", "duplicate"):
            self.summary.counts[key] = 0
        self.on_duplicate = on_duplicate
        self.failures: list[dict] = []
        self.duplicates: list[dict] = []
        self.warnings: list[dict] = []
        self.formats: dict[str, Counter] = {}  # per format: papers ok / partial / failed, words

    def paper(self, rec: dict) -> None:
        """Every paper this run met (stored, resumed or a duplicate), for the per-format table."""
        quality = rec.get("ingest") or {}
        fmt = rec.get("source_format") or "?"
        by = self.formats.setdefault("json" if fmt == "sciqag-json" else fmt, Counter())  # a row per file type
        by["partial" if quality.get("partial") else "ok"] += 1
        by["words"] += quality.get("words") or 0

    def note(self, path: str, message: str) -> None:
        self.warnings.append({"path": path, "warning": message})
        log.warning("%s: %s", path, message)

    def fail(self, item: dict) -> None:
        fmt = item.get("format") or format_of_name(item.get("path") or "")
        self.formats.setdefault(fmt, Counter())["failed"] += 1
        self.failures.append(item)
        self.summary.counts[runner.FAILED] += 1
        log.warning("%s: %s", item["path"], item["error"])

    def write(self, path: Path, papers: Path, complete: bool) -> None:
        report = {
            "counts": dict(self.summary.counts),
            "complete": complete,
            "on_duplicate": self.on_duplicate,
            "papers": str(papers),
            "formats": {
                f: {k: c[k] for k in ("ok", "partial", "failed", "words")} for f, c in sorted(self.formats.items())
            },
            "failures": self.failures,
            "duplicates": self.duplicates,
            "warnings": self.warnings,
        }
        report, _ = repair(report)  # paths that are not UTF-8 must not cost the report
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, report)


def mark_removed(source: str, writer: JsonlWriter, seen: Seen, report: Report) -> None:
    """Papers a source yielded before and does not any more (its text, so its id, changed) drop out."""
    for pid in seen.gone(source):
        writer.write(
            {"id": pid, "status": REMOVED, "source_path": source, "reason": "its source no longer yields this paper"}
        )
        report.summary.counts["removed"] += 1
        report.note(source, f"{pid} is no longer in this file; marked removed")


def store(item: dict, writer: JsonlWriter, seen: Seen, report: Report) -> None:
    """Append one paper unless it resumes an earlier run or duplicates another (then report it)."""
    counts = report.summary.counts
    report.paper(item)
    resumed = seen.resumed(item)
    if resumed == "same":
        counts["skipped"] += 1
        return
    if resumed == "changed":
        writer.write(item)  # the newer line wins: later stages see new input and redo this paper
        counts["updated"] += 1
        report.note(item["source_path"], f"{item['id']} changed since it was stored; stored again")
        return
    dup = seen.duplicate_of(item)
    if dup is not None and seen.completes(item):
        writer.write(item)  # the newer line wins: every later stage redoes this paper from the whole text
        seen.add(item, replace=True)
        counts["replaced partial"] += 1
        report.note(item["source_path"], f"{item['id']}: replaces the partial record read from {dup[0]}")
        return
    other = seen.same_paper(item) if dup is None else None
    if other in seen.partial and not _partial(item):  # the whole paper, under another (sha-) id
        seen.add(item)
        writer.write(item)
        writer.write(
            {
                "id": other,
                "status": REMOVED,
                "source_path": seen.ids[other],
                "reason": f"replaced by the complete read {item['id']} from {item['source_path']}",
            }
        )
        seen.partial.discard(other)
        counts["replaced partial"] += 1
        report.note(
            item["source_path"], f"{item['id']}: replaces the partial record {other} read from {seen.ids[other]}"
        )
        return
    if other is not None and _partial(item):
        counts["skipped"] += 1
        how = "also read in part" if other in seen.partial else "read whole"
        report.note(
            item["source_path"], f"{item['id']}: a partial copy of {other}, {how} from {seen.ids[other]}; skipped"
        )
        return
    if dup is None:
        seen.add(item)
        writer.write(item)
        counts["ok"] += 1
        return
    kept, reason = dup
    if _partial(item) and item["id"] in seen.ids and item["id"] not in seen.partial:
        counts["skipped"] += 1  # a partial copy of a paper read whole: never stored again, never an error
        report.note(item["source_path"], f"{item['id']}: a partial copy of the paper read from {kept}; skipped")
        return
    entry = {"id": item["id"], "kept": kept, "duplicate": item["source_path"], "reason": reason}
    counts["duplicate"] += 1
    if report.on_duplicate == "keep":
        if item["id"] in seen.ids:
            item = {**item, "id": seen.free_id(item["id"])}
        entry["stored_as"] = item["id"]
        seen.add(item)
        writer.write(item)
    log.warning(
        "duplicate %s (%s): %s, first seen in %s%s",
        entry["id"],
        reason,
        entry["duplicate"],
        kept,
        f"; stored as {item['id']}" if report.on_duplicate == "keep" else "; skipped",
    )
    report.duplicates.append(entry)
