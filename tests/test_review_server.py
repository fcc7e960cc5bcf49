"""`sciqag review` as people run it: which folders it reviews in, the bodies its API takes, its port, a
reviews file written by another tool, and the data it serves changing under it (a real server process)."""

from __future__ import annotations

import subprocess
import sys

from helpers import read_jsonl, write_jsonl

from sciqag_dataset.config import Config
from sciqag_dataset.folders import claim
from sciqag_dataset.publish import write_folder
from sciqag_dataset.review.dataset import copy_for_review

# --- slow: an evaluated work directory, a published folder, a real server ---------------------------------------


def test_a_pipeline_work_dir_is_refused_as_a_review_dir_and_left_as_it_was(review_work, tmp_path):
    published = write_folder(review_work, tmp_path / "published", Config(work_dir=str(review_work)))
    other = claim(tmp_path / "other-work", "work", option="work_dir")  # as `sciqag run` makes it
    papers = [{"id": f"o{k}", "title": f"Other {k}", "text": f"Other paper {k}."} for k in range(12)]
    write_jsonl(other / "papers.jsonl", papers)
    before = {p.name: p.read_bytes() for p in other.iterdir()}

    # a subprocess with a time limit: had the folder been taken, the server would run until stopped
    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "review", str(published), "--review-dir", str(other)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "work directory of the pipeline" in err and len(err.splitlines()) == 1, err
    assert {p.name: p.read_bytes() for p in other.iterdir()} == before  # nothing replaced, nothing added

    empty = tmp_path / "empty"
    empty.mkdir()
    assert copy_for_review(str(published), empty) == empty and len(read_jsonl(empty / "evaluated.jsonl")) == 20
