"""The published `papers` config carries each paper's components (tables, equations, figures), a record without
the field loads with none, and the card says what the field holds."""

from __future__ import annotations

from pathlib import Path

import datasets
from helpers import read_jsonl, write_jsonl
from test_seed_publish import seeded_work

from sciqag_dataset.builders.ingest import read_file
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.hub.publish import write_folder

JATS = Path(__file__).resolve().parents[1] / "fixtures" / "components" / "jats_paper.xml"


def test_components_are_published_with_the_papers_and_records_without_them_load_with_none(tmp_path):
    work = seeded_work(tmp_path)
    old = read_jsonl(work / "papers.jsonl")
    assert not any("components" in p for p in old)  # records without the field
    [jats] = read_file(JATS)
    write_jsonl(work / "papers.jsonl", [*old, {**jats, "metadata": {**jats["metadata"], "license": "cc-by-4.0"}}])
    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed", "papers"]
    out = write_folder(work, tmp_path / "pub", cfg)
    papers = datasets.concatenate_datasets(list(datasets.load_dataset(str(out), "papers").values()))
    rows = {r["id"]: r for r in papers}
    assert len(rows) == len(old) + 1
    assert all(rows[p["id"]]["components"] == [] for p in old)
    published = rows[jats["id"]]["components"]
    assert [c["id"] for c in published] == [c["id"] for c in jats["components"]]
    table = next(c for c in published if c["id"] == "T1")
    assert table["cells"][2] == ["BN-1", "1", "12"] and table["header_rows"] == 2
    text = rows[jats["id"]]["text"]
    assert [text[m["start"] : m["end"]] for m in table["mentions"]] == ["Table 1", "Tables 1 and 2"]
    card = (out / "README.md").read_text()
    assert "`components` (list)" in card and '`text[start:end]` reads "Table 2"' in card
