"""`sciqag filter`: rules that could select nothing are refused, a benchmark file that cannot be read is a
one-line error, questions that lean on their source are judged on their text as published, and a group of
near-duplicates keeps the pair people and scores say is best."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import datasets
import pytest
from helpers import read_jsonl, write_jsonl
from review_samples import PAPERS

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config, EvaluateConfig
from sciqag_dataset.core.folders import claim
from sciqag_dataset.evaluation.duplicates import find_duplicates
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.review.store import append_review


def one_line_error(capsys, *words: str) -> None:
    err = capsys.readouterr().err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith(("WARNING ", "INFO "))]
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture
def work(tmp_path) -> Path:
    work = claim(tmp_path / "work", "work", option="work_dir")
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "T", "text": "Body. " * 20}])
    return work


@pytest.mark.parametrize(
    "args,words",
    [
        (["--reasoning-types", ""], ["filter.reasoning_types", "no reasoning type"]),
        (["--min-difficulty", "3", "--max-difficulty", "1"], ["filter.min_difficulty", "filter.max_difficulty"]),
        (["--min-grounding", "nan"], ["filter.min_grounding", "nan"]),
        (["--min-racar", "nan"], ["filter.min_racar", "nan"]),
    ],
)
def test_rules_that_select_nothing_are_refused(work, capsys, args, words):
    assert main(["filter", str(work), *args]) == 2
    one_line_error(capsys, *words)
    assert not (work / "filter_summary.json").exists()


def test_a_benchmark_file_that_is_not_parquet_is_a_user_error_naming_it(work, tmp_path, capsys):
    bench = tmp_path / "x.parquet"
    bench.write_text('{"question": "Q?", "answer": "A."}\n')
    assert main(["filter", str(work), "--decontaminate", str(bench)]) == 2
    one_line_error(capsys, "x.parquet", "parquet")


ZEOLITE = [
    ("How much water does a zeolite membrane adsorb at room temperature?", "Seven litres of mercury, said the moon."),
    (
        "How much water does the zeolite membrane adsorb at room temperature?",
        "0.21 grams of water per gram of zeolite.",
    ),
    (
        "At room temperature, how much water does the zeolite membrane adsorb?",
        "About 0.21 grams, weighed after a week in a jar.",
    ),
    ("What does the study focus on?", "Water uptake of a zeolite membrane between 20 and 80 degrees Celsius."),
    ("Why did thin membranes crack?", "Membranes thinner than 2 micrometres cracked after ten cycles."),
]
CATALYST = [
    ("What is the objective of the study?", "To test nickel particles on ceria for dry reforming of methane."),
    ("What is a case-control study?", "A study that compares people with a condition to people without it."),
    ("Which nickel particles resist coking?", "Particles smaller than 5 nanometres resisted coking for 100 hours."),
    ("What role does ceria play?", "Ceria releases oxygen that burns carbon deposits away."),
]
BATTERY = [
    ("How much do silicon anodes swell?", "About 300 percent when they take up lithium."),
    ("What capacity did cells with the new binder keep?", "80 percent after 500 cycles at C/2."),
]


def unjudged_work(tmp_path: Path) -> Path:
    """Three papers' pairs evaluated without a judge (coverage and its grounding only)."""
    work = claim(tmp_path / "work", "work", option="work_dir")
    qa = {"zeolite": ZEOLITE, "catalyst": CATALYST, "battery": BATTERY}
    write_jsonl(
        work / "papers.jsonl",
        [{"id": pid, "title": PAPERS[pid][0], "text": PAPERS[pid][1], "metadata": {}} for pid in qa],
    )
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": pid,
                "status": "ok",
                "model": "test-generator",
                "qa": [{"question": q, "answer": a} for q, a in qa_],
                "seen_words": 30,
                "paper_words": 100,
            }
            for pid, qa_ in qa.items()
        ],
    )
    run_evaluate(work, EvaluateConfig(metrics=["coverage"]))
    return work


def test_filter_and_publish_judge_questions_as_they_stand_and_the_card_counts_what_is_published(tmp_path, capsys):
    work = unjudged_work(tmp_path)
    rows = {r["question"]: r for r in read_jsonl(work / "evaluated.jsonl")}
    assert not any(r.get("racar_mean") for r in rows.values())
    worst, best, weaker = (rows[q] for q, _ in ZEOLITE[:3])
    assert worst["grounded"] < weaker["grounded"] < best["grounded"]
    reviews = work / "reviews.jsonl"
    append_review(reviews, "ann", worst["pair_id"], {"keep": False})
    append_review(
        reviews, "ann", rows[ZEOLITE[4][0]]["pair_id"], {"question": "Why did the membranes in the study crack?"}
    )

    # people's decision, then grounding: the dropped pair never wins its group, the better grounded one does
    dups = find_duplicates(work)
    assert dups.duplicate_of[worst["pair_id"]] == best["pair_id"]
    assert dups.duplicate_of[weaker["pair_id"]] == best["pair_id"]

    bench = write_jsonl(tmp_path / "bench.jsonl", [{"question": "How much do silicon anodes swell?", "answer": "3x"}])
    argv = ["filter", str(work), "--drop-source-references", "--drop-duplicates", "--decontaminate", str(bench)]
    assert main(argv) == 0, capsys.readouterr().err
    kept = [r["question"] for r in read_jsonl(work / "filtered.jsonl")]
    assert sorted(kept) == sorted([ZEOLITE[1][0], CATALYST[1][0], CATALYST[2][0], CATALYST[3][0], BATTERY[1][0]]), (
        kept
    )  # the study's questions went, the one a reviewer made about the study too; a general one stayed

    # a review after the filter: an edit that makes a kept question cite its source leaves it out of publish
    append_review(reviews, "bob", rows[CATALYST[3][0]]["pair_id"], {"question": "What do the authors say ceria does?"})
    out = write_folder(work, tmp_path / "published", Config(work_dir=str(work)))
    published = [r for split in datasets.load_dataset(str(out), "evaluated").values() for r in split]
    assert len(published) == 4 and "What do the authors say ceria does?" not in {r["question"] for r in published}
    card = (out / "README.md").read_text()
    table = sum(
        int(line.split("|")[4]) for line in card.splitlines() if line.startswith("| `evaluated` |")
    )  # the QA pairs column of the counts table
    assert table == 4
    assert (
        "The `evaluated` config holds 4 of these pairs: `sciqag filter` kept 5 of 11 pairs (6 failed a rule)" in card
    )
    assert "1 pair was edited by a reviewer into a question that cites its source" in card
    assert "The model that wrote these pairs saw 30 % of their papers' words" in card
    assert "The plots describe all 11 evaluated pairs, before the filter and the review" in card
    assert "(bench.jsonl: 1 question;" in card and str(bench) not in card and "1 pair dropped" in card
    assert "2 pairs dropped" in card  # the near-duplicates
    assert "1 was dropped by their reviewers" in card and "2 were edited" in card
    assert not re.search(r"\b1 (?:pairs|were)\b", card)


def test_the_filter_counts_what_it_kept_of_each_kind_of_pair(grounded_review_work, tmp_path, capsys):
    work = Path(shutil.copytree(grounded_review_work, tmp_path / "work"))
    # the scripted judge's RACAR means of pairs 0-4 of each paper: 3.0, 2.6, 1.8, 2.8, 1.2; the zeolite paper's
    # first three were asked from a table, an equation and a figure, the rest of the pairs from the text
    assert main(["filter", str(work), "--min-racar", "2.5"]) == 0
    out = capsys.readouterr().out
    assert len(read_jsonl(work / "filtered.jsonl")) == 6
    by = json.loads((work / "filter_summary.json").read_text())["by_asked_from"]
    assert by == {
        "prose": {"pairs": 7, "kept": 4, "dropped": 3, "missing": 0},
        "table": {"pairs": 1, "kept": 1, "dropped": 0, "missing": 0},
        "equation": {"pairs": 1, "kept": 1, "dropped": 0, "missing": 0},
        "figure": {"pairs": 1, "kept": 0, "dropped": 1, "missing": 0},
    }
    assert "asked from table: 1 of 1 pair kept" in out and "asked from prose: 4 of 7 pairs kept" in out
