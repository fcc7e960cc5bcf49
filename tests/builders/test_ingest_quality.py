"""What ingest tells about each paper it read (quality signals, per-format counts), and partial reads: marked,
kept out of publish, replaced by a complete copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
from helpers import write_jsonl

from sciqag_dataset.builders.ingest import read_file, run_ingest
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.hub.publish import write_folder

FIX = Path(__file__).parents[1] / "fixtures" / "ingest"


def test_every_record_carries_its_quality_signals_and_the_report_counts_them_per_format(tmp_path):
    rec = read_file(FIX / "jats_article.xml")[0]
    q = rec["ingest"]
    assert q["extractor"].startswith("jats") and q["partial"] is False and q["has_abstract"] is True
    assert q["words"] == len(rec["text"].split()) and q["n_sections"] == len(rec["sections"]) > 1
    src = tmp_path / "src"
    src.mkdir()
    for name in ("jats_article.xml", "zeolite_adsorption.txt", "perovskite_notes.md"):
        shutil.copy(FIX / name, src / name)
    (src / "broken.xml").write_text("<article><front>", encoding="utf-8")  # found to be JATS, then fails
    (src / "empty.tex").write_text("", encoding="utf-8")  # empty: named .tex, its content says nothing
    run_ingest([src], tmp_path / "work")
    formats = json.loads((tmp_path / "work" / "ingest_report.json").read_text())["formats"]
    # a file that fails counts on the row its papers would have: one row per kind of file
    assert {f: (c["ok"], c["partial"], c["failed"]) for f, c in formats.items()} == {
        "jats": (1, 0, 1),
        "latex": (0, 0, 1),
        "md": (1, 0, 0),
        "txt": (1, 0, 0),
    }


def test_a_partial_read_is_marked_kept_out_of_publish_and_replaced_by_a_complete_copy(tmp_path, caplog):
    full = (FIX / "jats_article.xml").read_bytes()
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    cut.mkdir()
    whole.mkdir()
    (cut / "article.xml").write_bytes(full[: int(len(full) * 0.6)])  # a download that stopped
    shutil.copy(FIX / "zeolite_adsorption.txt", cut / "zeolite.txt")
    (whole / "article.xml").write_bytes(full)
    work = tmp_path / "work"
    run_ingest([cut], work)
    papers = {r["source_path"].rsplit("/", 1)[1]: r for r in iter_latest(work / "papers.jsonl")}
    q = papers["article.xml"]["ingest"]
    assert q["partial"] is True and "recovery mode" in q["partial_reason"] and q["warnings"]
    report = json.loads((work / "ingest_report.json").read_text())
    assert report["formats"]["jats"]["partial"] == 1

    # kept out of publish unless asked for
    pid, other = papers["article.xml"]["id"], papers["zeolite.txt"]["id"]
    write_jsonl(
        work / "seed.jsonl",
        [
            {"id": i, "status": "ok", "qa": [{"question": "Q?", "answer": "A.", "origin": "teacher"}]}
            for i in (pid, other)
        ],
    )
    cfg = Config(work_dir=str(work))
    cfg.publish.train = cfg.publish.validation = 0.0
    cfg.publish.configs = ["papers", "seed"]

    def published(out) -> set[str]:
        folder = write_folder(work, out, cfg)
        return {r["id"] for r in datasets.load_dataset(str(folder), "seed")["test"]}

    assert published(tmp_path / "pub") == {other}
    assert "partial (read in part" in (tmp_path / "pub" / "README.md").read_text()
    cfg.publish.allow_partial = True
    assert published(tmp_path / "pub2") == {pid, other}

    # the complete file arrives: it replaces the partial record (same id), and says so
    with caplog.at_level("WARNING"):
        summary = run_ingest([cut, whole], work)
    assert summary.counts["replaced partial"] == 1
    latest = {r["id"]: r for r in iter_latest(work / "papers.jsonl")}
    assert latest[pid]["ingest"]["partial"] is False and latest[pid]["source_path"].endswith("whole/article.xml")
    assert len(latest[pid]["text"]) > len(papers["article.xml"]["text"])
    assert any("replaces the partial record" in r.message for r in caplog.records)
    # and later runs keep the complete one: the partial copy is skipped, even where copies are kept or refused
    for mode in ("skip", "keep", "error"):
        summary = run_ingest([cut, whole], work, on_duplicate=mode)
        assert summary.counts["replaced partial"] == 0 and summary.counts["duplicate"] == 0, mode
    latest = list(iter_latest(work / "papers.jsonl"))
    assert [r["ingest"]["partial"] for r in latest if r["id"].startswith(pid)] == [False]


@pytest.mark.parametrize(
    "name",
    [
        "jats_article.xml",
        "elsevier_article.xml",
        "article_page.html",
        "zeolite_adsorption.txt",
        "perovskite_notes.md",
        "generic_paper.json",
    ],
)
def test_the_extractor_is_named(name):
    rec = next(r for r in read_file(FIX / name) if "id" in r)
    assert rec["ingest"]["extractor"] and rec["ingest"]["words"] > 20
