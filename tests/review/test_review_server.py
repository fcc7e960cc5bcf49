"""`sciqag review` as people run it: which folders it reviews in, the bodies its API takes, its port, a
reviews file written by another tool, and the data it serves changing under it (a real server process)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlparse

import datasets
import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.atomic import replacing
from sciqag_dataset.core.folders import claim
from sciqag_dataset.core.pair_ids import pair_id
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.review.dataset import copy_for_review


def call(url: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    """(status, JSON reply) of a GET, or of a POST of ``body``, to the server behind ``url``."""
    parts = urlparse(url)
    token = parse_qs(parts.query)["token"][0]
    request = urllib.request.Request(
        f"{parts.scheme}://{parts.netloc}{path}",
        data=body,
        headers={"X-Review-Token": token, "Content-Type": "application/json"},
        method="POST" if body is not None else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            status, data = reply.status, reply.read()
    except urllib.error.HTTPError as e:
        status, data = e.code, e.read()
    try:
        return status, json.loads(data)
    except ValueError:  # a plain-text error page
        return status, {"error": data.decode(errors="replace")}


def small_work(folder):
    """A work directory with two evaluated pairs, written by hand."""
    write_jsonl(folder / "papers.jsonl", [{"id": "p1", "title": "P", "text": "The film reached 3.2 eV."}])
    rows = [{"paper_id": "p1", "question": q, "answer": "3.2 eV.", "racar_mean": 2.0} for q in ("A?", "B?")]
    write_jsonl(folder / "evaluated.jsonl", rows)
    return folder


# --- quick -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["70000", "-5"])
def test_a_port_out_of_range_is_a_one_line_error(tmp_path, capsys, port):
    work = small_work(tmp_path / "work")
    assert main(["review", str(work), "--port", port]) == 2
    err = capsys.readouterr().err.strip()
    assert "--port" in err and "0 to 65535" in err and len(err.splitlines()) == 1 and "Traceback" not in err


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


def test_publish_takes_a_reviews_line_with_a_lone_surrogate(review_work, tmp_path, caplog):
    rows = read_jsonl(review_work / "evaluated.jsonl")
    kept = {"reviewer": "ann", "pair_id": rows[1]["pair_id"], "time": "t", "changes": {"keep": True}}
    edit = {
        "reviewer": "ann",
        "pair_id": rows[0]["pair_id"],
        "time": "t",
        "changes": {"answer": "An edit cut here \ud83d."},
    }
    lines = json.dumps(kept) + "\n" + json.dumps(edit) + "\n"  # ASCII JSON: the surrogate written as \\ud83d
    assert "\\ud83d" in lines
    (review_work / "reviews.jsonl").write_text(lines, encoding="utf-8")
    assert main(["publish", str(review_work), "-o", str(tmp_path / "published")]) == 0
    ds = datasets.load_dataset(str(tmp_path / "published"), "evaluated")
    by_id = {r["pair_id"]: r for split in ds.values() for r in split}
    assert by_id[rows[0]["pair_id"]]["answer"] == "An edit cut here \ufffd."
    assert "reviews.jsonl:2: 1 lone surrogate(s) replaced by U+FFFD" in caplog.text


BAD_BODIES = [
    {"reviewer": 7, "changes": {"keep": True}},
    {"reviewer": ["ann"], "changes": {"keep": True}},
    {"reviewer": "ann", "changes": {"relevance": [3]}},
    {"reviewer": "ann", "changes": {"relevance": {"score": 3}}},
    {"reviewer": "ann", "changes": [["relevance", 3]]},
    {"reviewer": "ann", "changes": {"relevance": 4}},
]


def test_a_body_of_the_wrong_shape_is_a_400_not_a_500(served):
    work, url = served
    status, first = call(url, "/api/pair?reviewer=ann&i=0")
    assert status == 200
    for body in BAD_BODIES:
        status, reply = call(url, "/api/review", json.dumps({"pair_id": first["pair_id"], **body}).encode())
        assert status == 400 and reply["error"] and "\n" not in reply["error"], (body, status, reply)
    for raw in (b"[" * 200_000 + b"]" * 200_000, b'{"reviewer": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", b"{"):
        status, reply = call(url, "/api/review", raw)
        assert status == 400 and "not JSON" in reply["error"], (raw[:20], status, reply)
    ok = {"reviewer": "ann", "pair_id": first["pair_id"], "changes": {"relevance": 3, "keep": True}}
    assert call(url, "/api/review", json.dumps(ok).encode())[0] == 200
    assert (work / "reviews.jsonl").read_text().count("\n") == 1  # only the good action was saved


def test_the_server_indexes_evaluated_jsonl_again_when_it_is_rewritten(served):
    work, url = served
    rows = read_jsonl(work / "evaluated.jsonl")
    status, first = call(url, "/api/pair?reviewer=ann&i=0")
    assert status == 200 and first["total"] == 20
    action = {"reviewer": "ann", "pair_id": first["pair_id"], "changes": {d: 2 for d in RACAR_DIMENSIONS}}
    assert call(url, "/api/review", json.dumps(action).encode())[0] == 200

    extra = dict(rows[0], question="What support was the membrane grown on?", answer="An alumina support.")
    extra["pair_id"] = pair_id(extra["paper_id"], extra["question"])
    new_rows = [*reversed(rows), extra]
    with replacing(work / "evaluated.jsonl", durable=True) as out:  # as the merge rewrites it
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in new_rows)
    by_id = {r["pair_id"]: r for r in new_rows}

    seen = set()
    for i in range(21):
        status, pair = call(url, f"/api/pair?reviewer=ann&i={i}")
        assert status == 200, (i, pair)
        row = by_id[pair["pair_id"]]
        assert (pair["question"], pair["answer"], pair["total"]) == (row["question"], row["answer"], 21)
        seen.add(pair["pair_id"])
    assert seen == set(by_id)
    again = next(i for i in range(21) if call(url, f"/api/pair?reviewer=ann&i={i}")[1]["pair_id"] == first["pair_id"])
    assert call(url, f"/api/pair?reviewer=ann&i={again}")[1]["state"] == {d: 2 for d in RACAR_DIMENSIONS}
