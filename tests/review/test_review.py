"""The human review loop: stable pair ids, the append-only reviews file, the sample, the page's API, publish
applying the reviews, `sciqag agreement` and `sciqag filter --calibrate`."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

import datasets
import pytest
from helpers import read_jsonl, write_jsonl
from starlette.testclient import TestClient

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.pair_ids import RowIds, pair_id, pair_ids, paper_of
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.evaluation.agreement import agreement
from sciqag_dataset.evaluation.merge import merge_evaluation
from sciqag_dataset.evaluation.ratings import Ratings, collect, read_ratings_file
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.review.app import create_app
from sciqag_dataset.review.dataset import copy_for_review
from sciqag_dataset.review.queue import Entry, build_queue, stratified, stratum
from sciqag_dataset.review.session import ReviewSession, passage
from sciqag_dataset.review.store import append_review, decisions, read_reviews

ALL3 = {d: 3 for d in RACAR_DIMENSIONS}


def sciqag(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


# --- quick: ids, the reviews file, the sample, the statistics -------------------------------------------------


def test_pair_ids_are_stable_unique_and_name_their_paper():
    a = pair_id("p1", "What is the band gap?")
    assert a == pair_id("p1", "  what is   the band GAP?") != pair_id("p2", "What is the band gap?")
    assert pair_ids("p1", ["Q one?", "Q two?", "q one?"]) == [
        pair_id("p1", "Q one?"),
        pair_id("p1", "Q two?"),
        a2 := pair_id("p1", "Q one?") + "-2",
    ]
    assert a2.endswith("-2") and paper_of(a) == "p1" and paper_of(pair_id("doi:10.1/x#y", "q")) == "doi:10.1/x#y"


def _append_many(path, reviewer, n):
    for k in range(n):
        append_review(path, reviewer, f"p#{k % 7}", {"relevance": 1 + k % 3, "comment": "x" * 3000})


def test_concurrent_writers_lose_nothing_and_a_half_written_line_waits(tmp_path):
    path = tmp_path / "reviews.jsonl"
    procs = [multiprocessing.Process(target=_append_many, args=(path, r, 150)) for r in ("ann", "bob", "cy")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    lines = path.read_text().splitlines()
    assert len(lines) == 450 and all(json.loads(line)["changes"]["relevance"] in (1, 2, 3) for line in lines)
    log = read_reviews(path)
    assert log.skipped == 0 and log.reviewers() == ["ann", "bob", "cy"]
    assert log.of("ann", "p#6")["relevance"] == 1 + 146 % 3  # the last of ann's actions on p#6 (k = 146)

    with path.open("a") as f:  # a writer in the middle of a line: the reader leaves it for later
        f.write('{"reviewer": "dee", "pair_id": "p#0", "time": "t", "changes": {"keep"')
    log.refresh()
    assert "dee" not in log.reviewers()
    with path.open("a") as f:
        f.write(": false}}\n")
    assert log.refresh().of("dee", "p#0")["keep"] is False


def test_bad_actions_are_refused_and_null_clears(tmp_path):
    path = tmp_path / "reviews.jsonl"
    for bad in ({"relevance": 4}, {"keep": "yes"}, {"colour": "red"}, {}, {"accuracy": True}):
        with pytest.raises(UserError):
            append_review(path, "ann", "p#1", bad)
    with pytest.raises(UserError):
        append_review(path, "<script>", "p#1", {"keep": True})
    append_review(path, "ann", "p#1", {"accuracy": 2, "keep": False})
    append_review(path, "ann", "p#1", {"keep": None})
    assert read_reviews(path).of("ann", "p#1") == {"accuracy": 2, "time": read_reviews(path).of("ann", "p#1")["time"]}


def test_the_newest_edit_wins_even_if_its_author_acted_since(tmp_path):
    path = tmp_path / "reviews.jsonl"
    append_review(path, "ann", "p#1", {"answer": "ann's answer"})
    append_review(path, "bob", "p#1", {"answer": "bob's answer"})
    append_review(path, "ann", "p#1", {"accuracy": 2})  # ann's newest action, but not an edit
    assert decisions(read_reviews(path))["p#1"].answer == "bob's answer"
    with pytest.raises(UserError, match="empty answer"):
        append_review(path, "ann", "p#1", {"answer": "  "})
    for name in ("judge", "judge:gpt"):
        with pytest.raises(UserError, match="reserved"):
            append_review(path, name, "p#1", {"keep": True})


def test_a_line_torn_by_a_killed_writer_is_dropped_and_the_next_action_kept(tmp_path):
    path = tmp_path / "reviews.jsonl"
    append_review(path, "ann", "p#1", {"keep": True})
    with path.open("a") as f:
        f.write('{"reviewer": "ann", "pair_id": "p#2", "chan')  # the writer was killed here
    append_review(path, "ann", "p#3", {"keep": False})
    log = read_reviews(path)
    assert log.skipped == 0 and set(log.states) == {("ann", "p#1"), ("ann", "p#3")}


def test_row_ids_number_repeats_as_merge_does():
    rows = [{"paper_id": "p", "question": q} for q in ("Same?", "Other?", "same?")]
    ids = RowIds()
    assert [ids(r) for r in rows] == pair_ids("p", [r["question"] for r in rows])
    assert RowIds()({"paper_id": "p", "question": "x", "pair_id": "given"}) == "given"


def test_decisions_majority_latest_edit_and_mean_scores(tmp_path):
    path = tmp_path / "reviews.jsonl"
    append_review(path, "ann", "p#1", {**ALL3, "keep": False, "question": "Edited by ann?"})
    append_review(path, "bob", "p#1", {"relevance": 1, "keep": False})
    append_review(path, "cy", "p#1", {"keep": True, "question": "Edited by cy?"})
    append_review(path, "ann", "p#2", {"keep": False})
    append_review(path, "bob", "p#2", {"keep": True})
    d = decisions(read_reviews(path))
    assert (
        d["p#1"].keep is False and d["p#1"].question == "Edited by cy?" and d["p#1"].reviewers == ["ann", "bob", "cy"]
    )
    assert d["p#1"].scores["relevance"] == 2 and d["p#1"].scores["accuracy"] == 3
    assert d["p#2"].keep is True  # a tie keeps the pair


def entries(n_papers=6, per_paper=10):
    means = [3.0, 2.8, 2.4, 1.6, None]
    return [
        Entry(f"p{p}#{k}", f"p{p}", means[(p + k) % len(means)], 0) for p in range(n_papers) for k in range(per_paper)
    ]


def test_sample_is_stratified_spread_and_shares_its_overlap():
    es = entries()
    a = build_queue(es, "ann", sample=15, overlap=5, seed=7)
    b = build_queue(es, "bob", sample=15, overlap=5, seed=7)
    assert len(a) == len(b) == 15 and len({e.pair_id for e in a}) == 15
    assert a == build_queue(es, "ann", sample=15, overlap=5, seed=7)  # the same sample when resumed
    overlap = {e.pair_id for e in stratified(es, 5, "7/overlap")}
    assert len(overlap) == 5 and overlap <= {e.pair_id for e in a} and overlap <= {e.pair_id for e in b}
    assert {e.pair_id for e in a} != {e.pair_id for e in b}  # the rest is each reviewer's own
    assert {stratum(e.mean) for e in a} == {"low", "mid", "high", "unscored"}
    assert len({e.paper_id for e in a}) == 6  # spread over every paper
    reviewed = {"p5#9", "p4#8"}  # what ann reviewed before stays in her queue
    assert reviewed <= {e.pair_id for e in build_queue(es, "ann", sample=15, overlap=5, seed=8, already=reviewed)}
    with pytest.raises(UserError):
        build_queue(es, "ann", sample=5, overlap=6)
    assert len(build_queue(es, "ann")) == 60


def test_passage_marks_evidence_even_across_other_whitespace():
    text = "First sentence here.\nThe film   reached 3.2 eV. Last one."
    segs = passage(text, ["The film reached 3.2 eV.", "not in the text"])
    assert "".join(s["text"] for s in segs) == text
    assert [s["text"] for s in segs if s["mark"]] == ["The film   reached 3.2 eV."]


def _ratings(rows):
    r = Ratings()
    for row in rows:
        r.add(row, "judge" if row["rater"] == "judge" else "reviewer")
    return r


def test_agreement_known_answers():
    scores = [1, 2, 3, 3, 2, 1, 3, 2, 1, 3]
    rows = []
    for k, s in enumerate(scores):
        rows.append({"pair_id": f"p#{k}", "rater": "judge", **{d: s for d in RACAR_DIMENSIONS}})
        rows.append({"pair_id": f"p#{k}", "rater": "ann", **{d: s for d in RACAR_DIMENSIONS}, "keep": s > 1})
        rows.append({"pair_id": f"p#{k}", "rater": "bob", **{d: 4 - s for d in RACAR_DIMENSIONS}, "keep": s < 3})
    out = agreement(_ratings(rows), rounds=30, seed=1)
    rel = {(p["a"], p["b"]): p for p in out["dimensions"]["relevance"]["pairs"]}
    same, reverse = rel[("ann", "judge")], rel[("bob", "judge")]
    assert same["kappa"]["value"] == 1.0 and same["spearman"]["value"] == 1.0 and same["exact"]["value"] == 1.0
    assert same["n"] == 10 and same["kappa"]["low"] == 1.0
    assert reverse["kappa"]["value"] < 0 and reverse["spearman"]["value"] == -1.0
    assert reverse["kappa"]["low"] <= reverse["kappa"]["value"] <= reverse["kappa"]["high"]
    alpha = out["dimensions"]["relevance"]["alpha_humans"]
    assert alpha["raters"] == ["ann", "bob"] and alpha["value"] < 0 and alpha["n"] == 10
    assert any("bob" in w and "relevance" in w for w in out["warnings"])
    assert not any("ann" in w for w in out["warnings"])
    assert "keep" in out["dimensions"] and out["raters"]["ann"] == {"kind": "reviewer", "pairs": 10}


def test_imported_ratings_allow_blanks_and_name_a_bad_line(tmp_path):
    good = tmp_path / "experts.csv"
    good.write_text(
        "pair_id,rater,relevance,agnosticism,completeness,accuracy,reasonableness,keep\n"
        "p#1,expert1,3,,2,3,3,1\np#2,expert1,1,1,1,1,1,0\n"
    )
    rows = list(read_ratings_file(good))
    assert rows[0]["agnosticism"] is None and rows[0]["keep"] is True and rows[1]["keep"] is False
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"pair_id": "p#1", "rater": "x", "relevance": 3}\n{"pair_id": "p#2", "rater": "x", "accuracy": 5}\n'
    )
    with pytest.raises(UserError, match="bad.jsonl:2: accuracy"):
        list(read_ratings_file(bad))


# --- slow: on an evaluated work directory -------------------------------------------------------------------


def test_evaluated_rows_carry_pair_ids_that_survive_a_rerun(review_work):
    rows = read_jsonl(review_work / "evaluated.jsonl")
    ids = [r["pair_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 20 and all(
        i == pair_id(r["paper_id"], r["question"]) for i, r in zip(ids, rows)
    )
    texts = {p["id"]: p["text"] for p in read_jsonl(review_work / "papers.jsonl")}
    assert all(texts[r["paper_id"]][q["start"] : q["end"]] == q["text"] for r in rows for q in r["quotes"])
    assert sum(len(r["quotes"]) for r in rows) >= 40  # coverage's evidence, located in the paper
    merge_evaluation(review_work, plots=False)
    assert [r["pair_id"] for r in read_jsonl(review_work / "evaluated.jsonl")] == ids


def test_the_api_needs_its_token_and_loopback_and_saves_each_action(review_work):
    session = ReviewSession(review_work, review_work / "reviews.jsonl", sample=8, overlap=3, seed=1)
    client = TestClient(create_app(session, "secret-token"), base_url="http://127.0.0.1:9")
    assert client.get("/?token=wrong").status_code == 403
    assert client.get("/api/pair?reviewer=ann").status_code == 403
    assert client.get("/api/pair?reviewer=ann&token=sécret").status_code == 403  # not ASCII: refused, no crash
    other = TestClient(create_app(session, "secret-token"), base_url="http://attacker.example:9")
    assert other.get("/api/pair?reviewer=ann", headers={"X-Review-Token": "secret-token"}).status_code == 403
    h = {"X-Review-Token": "secret-token"}
    assert "SciQAG review" in client.get("/?token=secret-token").text
    first = client.get("/api/pair?reviewer=ann&i=0", headers=h).json()
    assert first["total"] == 8 and first["judge"]["relevance"]["score"] in (1, 2, 3)
    assert any(s["mark"] for s in first["passage"])  # the answer's evidence is highlighted
    r = client.post("/api/review", headers=h, json={"reviewer": "ann", "pair_id": first["pair_id"], "changes": ALL3})
    assert r.status_code == 200 and r.json()["done"] == 1
    bad = client.post(
        "/api/review", headers=h, json={"reviewer": "ann", "pair_id": first["pair_id"], "changes": {"accuracy": 9}}
    )
    assert bad.status_code == 400
    assert (
        client.post("/api/review", headers=h, json={"reviewer": "ann", "pair_id": "x#y", "changes": ALL3}).status_code
        == 404
    )
    assert client.get("/api/pair?reviewer=ann&i=0", headers=h).json()["state"] == ALL3
    todo = client.get("/api/find?reviewer=ann&from=0&step=1&status=todo", headers=h).json()["i"]
    assert todo == 1
    # an edit back to the generated text is no edit
    second = client.get("/api/pair?reviewer=ann&i=1", headers=h).json()
    back = {"reviewer": "ann", "pair_id": second["pair_id"], "changes": {"question": second["question"]}}
    assert client.post("/api/review", headers=h, json=back).json()["state"] == {}
    blind = ReviewSession(review_work, review_work / "reviews.jsonl", blind=True)
    assert blind.show("ann", 0)["judge"] is None and blind.show("ann", 0)["blind"]
    with pytest.raises(UserError, match="blind"):
        blind.find("ann", 0, 1, score="high")


def test_publish_applies_reviews_and_the_card_reports_agreement(review_work, tmp_path):
    rows = read_jsonl(review_work / "evaluated.jsonl")
    dropped, edited, kept = rows[0], rows[1], rows[2]
    path = review_work / "reviews.jsonl"
    append_review(path, "ann", dropped["pair_id"], {**ALL3, "keep": False})
    append_review(path, "ann", edited["pair_id"], {"question": "A clearer question?", "accuracy": 2, "keep": True})
    append_review(path, "bob", edited["pair_id"], {"accuracy": 3})
    for r in rows[2:12]:
        append_review(path, "ann", r["pair_id"], {d: round(r[d]) for d in RACAR_DIMENSIONS})
    experts = tmp_path / "experts.csv"
    experts.write_text(
        "pair_id,rater,relevance,agnosticism,completeness,accuracy,reasonableness\n"
        + "".join(f"{r['pair_id']},expert,3,3,3,3,3\n" for r in rows[2:12])
    )
    proc = sciqag("agreement", str(review_work), "--ratings", str(experts), "--bootstrap", "100", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((review_work / "agreement.json").read_text())
    assert result["raters"]["expert"]["kind"] == "imported" and result["raters"]["judge"]["pairs"] == 12
    judge_ann = next(p for p in result["dimensions"]["relevance"]["pairs"] if {p["a"], p["b"]} == {"ann", "judge"})
    assert judge_ann["kappa"]["value"] == 1.0 and judge_ann["n"] == 11
    assert (review_work / "agreement_plots/relevance.png").stat().st_size > 2000
    assert collect(review_work).humans() == ["ann", "bob"]

    out = write_folder(review_work, tmp_path / "published", Config(work_dir=str(review_work)))
    ds = datasets.concatenate_datasets(list(datasets.load_dataset(str(out), "evaluated").values()))
    by_id = {r["pair_id"]: r for r in ds}
    assert len(ds) == 19 and dropped["pair_id"] not in by_id
    e = by_id[edited["pair_id"]]
    assert e["question"] == "A clearer question?" and e["original_question"] == edited["question"]
    assert e["reviewed_by"] == ["ann", "bob"] and e["human_accuracy"] == 2.5 and e["original_answer"] is None
    assert by_id[kept["pair_id"]]["human_relevance"] == round(kept["relevance"])
    assert ds.features["human_relevance"].dtype == "float32"
    card = (out / "README.md").read_text()
    assert (
        "## Human review" in card and "People reviewed 12 pairs" in card and "| relevance | ann – judge | 11 |" in card
    )
    assert "plots/agreement/relevance.png" in card and (out / "plots/agreement/relevance.png").exists()


def test_filter_calibrate_picks_the_threshold_people_agree_with(review_work, tmp_path):
    rows = read_jsonl(review_work / "evaluated.jsonl")
    path = review_work / "reviews.jsonl"
    for r in rows:  # people keep exactly the pairs with a judge mean of at least 2.6
        append_review(path, "ann", r["pair_id"], {"keep": r["racar_mean"] >= 2.6})
    proc = sciqag("filter", str(review_work), "--calibrate", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "<- chosen" in proc.stdout and "precision" in proc.stdout
    summary = json.loads((review_work / "filter_summary.json").read_text())
    assert summary["calibration"]["threshold"] == 2.6 and summary["rules"]["min_racar"] == 2.6
    assert summary["kept"] == 12  # means 3.0, 2.6 and 2.8 of each of the four papers
    chosen = next(t for t in summary["calibration"]["table"] if t["threshold"] == 2.6)
    assert chosen["precision"] == chosen["recall"] == chosen["agreement"] == 1.0
    refused = sciqag("filter", str(review_work), "--calibrate", "--min-racar", "2", cwd=tmp_path)
    assert refused.returncode == 2 and "one or the other" in refused.stderr


def test_ten_thousand_pairs_page_one_at_a_time(tmp_path):
    work = tmp_path / "work"
    papers = [
        {"id": f"p{k}", "title": f"Paper {k}", "text": f"Sentence one of {k}. The value is {k} K."} for k in range(100)
    ]
    write_jsonl(work / "papers.jsonl", papers)
    with (work / "evaluated.jsonl").open("w") as f:
        for n in range(10_000):
            pid, q = f"p{n % 100}", f"Question {n}?"
            row = {"paper_id": pid, "question": q, "answer": f"{n} K.", "racar_mean": 1 + (n % 5) / 2}
            row["context"] = [f"The value is {n % 100} K."]
            if n % 2:  # half the rows come from an older merge without pair ids
                row["pair_id"] = pair_id(pid, q)
            f.write(json.dumps(row) + "\n")
    session = ReviewSession(work, work / "reviews.jsonl")
    last = session.show("ann", 9_999)
    assert (
        last["total"] == 10_000
        and last["question"] == "Question 9999?"
        and last["pair_id"] == pair_id("p99", "Question 9999?")
    )
    assert [s["text"] for s in last["passage"] if s["mark"]] == ["The value is 99 K."]
    session.save("ann", last["pair_id"], {"keep": False})
    assert session.find("ann", 0, 1, status="dropped") == 9_999
    assert session.find("ann", 9_998, -1, status="done") is None


def test_a_published_dataset_is_reviewed_from_a_copy_of_its_pairs(review_work, tmp_path):
    out = write_folder(review_work, tmp_path / "published", Config(work_dir=str(review_work)))
    folder = copy_for_review(str(out), tmp_path / "review")
    session = ReviewSession(folder, folder / "reviews.jsonl")
    pair = session.show("ann", 0)
    assert session.entries and len(session.entries) == 20 and pair["text_missing"]  # `papers` is not published
    assert pair["passage"] and all(s["mark"] for s in pair["passage"])  # the evidence sentences alone
    assert copy_for_review(str(out), tmp_path / "review") == folder  # a rerun reuses the copy
    with pytest.raises(UserError):
        copy_for_review(str(tmp_path / "nothing-here"), tmp_path / "review2")
