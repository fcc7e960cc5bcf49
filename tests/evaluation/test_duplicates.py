"""`sciqag filter --drop-duplicates`: a planted paraphrase within a paper and a copy across papers are found,
the better-scored pair of each is kept, and the others carry `duplicate_of`."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import read_jsonl
from review_samples import QA, evaluated_work

from sciqag_dataset.evaluation.duplicates import find_duplicates


def test_paraphrase_within_a_paper_and_copy_across_papers(tmp_path):
    zeolite = list(QA["zeolite"])
    # pair 2 (judge mean 2.6) now asks what pair 1 (mean 3.0) asks, in other words
    zeolite[1] = ("At room temperature, how much water does the zeolite membrane adsorb?", "0.21 g per g.")
    zeolite[4] = ("What is the paper's main figure about?", "The membrane.")  # as battery's pair 5 asks
    work = evaluated_work(tmp_path, {"zeolite": zeolite, "battery": QA["battery"]})
    rows = read_jsonl(work / "evaluated.jsonl")
    by_q = {(r["paper_id"], r["question"]): r for r in rows}

    dups = find_duplicates(work)
    first, paraphrase = by_q["zeolite", zeolite[0][0]], by_q["zeolite", zeolite[1][0]]
    assert dups.duplicate_of[paraphrase["pair_id"]] == first["pair_id"]  # the better-scored one is kept
    figure_z = by_q["zeolite", zeolite[4][0]]["pair_id"]
    figure_b = by_q["battery", QA["battery"][4][0]]["pair_id"]
    assert {dups.duplicate_of.get(figure_z), dups.duplicate_of.get(figure_b)} - {None} in ({figure_z}, {figure_b})
    assert len(dups.duplicate_of) == 2 and dups.embedding_links >= 1 and dups.minhash_links >= 1

    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "filter", str(work), "--drop-duplicates"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((work / "filter_summary.json").read_text())
    assert summary["kept"] == 8 and summary["duplicates"]["dropped"] == 2
    assert any("near-duplicate" in r for r in summary["rules_described"])
    verdicts = {v["id"]: v for v in read_jsonl(work / "filter_verdicts.jsonl")}
    assert verdicts["zeolite"]["duplicate_of"][1] == first["pair_id"]
