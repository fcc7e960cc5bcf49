"""`sciqag agreement` and the ratings files people bring: spreadsheet encodings and separators, every --ratings
file used, repeated, contradictory and unknown rows counted and said, the plots in a folder of their own, a
statistic the judge cannot take part in left null, the printed summary; and the size `sciqag review` states."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from helpers import write_jsonl

from sciqag_dataset.cards.review_section import agreement_rows
from sciqag_dataset.cli import main
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import claim
from sciqag_dataset.core.pair_ids import pair_id
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.evaluation.agreement import agreement
from sciqag_dataset.evaluation.ratings import Ratings, open_ratings_file, read_ratings_file

HEADER = ["pair_id", "rater", *RACAR_DIMENSIONS]
JUDGE_SCORES = [3, 2, 1, 3, 2, 1, 3, 2]


def work_dir(tmp_path, judged: bool = True):
    """A work directory with eight evaluated pairs (the judge's scores in JUDGE_SCORES, or none)."""
    work = claim(tmp_path / "work", "work", option="work_dir")
    rows = []
    for k, score in enumerate(JUDGE_SCORES):
        q = f"Question {k}?"
        rows.append(
            {"paper_id": "p", "question": q, "answer": "A.", "pair_id": pair_id("p", q)}
            | {d: score if judged else None for d in RACAR_DIMENSIONS}
        )
    write_jsonl(work / "evaluated.jsonl", rows)
    return work, [r["pair_id"] for r in rows]


def table(rows, sep=",") -> str:
    return "".join(sep.join(map(str, r)) + "\n" for r in [HEADER, *rows])


def agree(*args) -> int:
    return main(["agreement", *map(str, args), "--bootstrap", "0"])


def test_spreadsheet_encodings_and_separators_are_read_and_named(tmp_path):
    rows = [["p#1", "José", 3, 2, "", 1, 3]]
    files = {
        "cp1252.csv": (table(rows, ";").encode("cp1252"), "Windows-1252, semicolon-separated"),
        "utf16.csv": (table(rows, "\t").encode("utf-16"), "UTF-16, tab-separated"),
        "bom.csv": (table(rows).encode("utf-8-sig"), "UTF-8 with BOM, comma-separated"),
        "plain.txt": (table(rows).encode(), "UTF-8, comma-separated"),
    }
    for name, (data, described) in files.items():
        (tmp_path / name).write_bytes(data)
        fmt, read = open_ratings_file(tmp_path / name)
        assert fmt.describe() == described
        assert [row for _, row in read] == [
            {"pair_id": "p#1", "rater": "José", "relevance": 3, "agnosticism": 2, "completeness": None,
             "accuracy": 1, "reasonableness": 3, "difficulty": None, "reasoning_type": None, "keep": None}
        ]  # fmt: skip
    decimal = tmp_path / "decimal.csv"
    decimal.write_text("pair_id;rater;relevance\np#1;ann;3,0\n", encoding="utf-8")
    assert next(read_ratings_file(decimal))["relevance"] == 3
    neither = tmp_path / "neither.csv"
    neither.write_bytes(b"pair_id,rater\np#1,\x81\x8d\n")  # bytes UTF-8 and Windows-1252 both lack
    with pytest.raises(UserError, match="neither.csv: neither UTF-8 nor Windows-1252.*CSV UTF-8"):
        list(read_ratings_file(neither))
    no_bom = tmp_path / "nobom.csv"
    no_bom.write_bytes(table(rows).encode("utf-16-le"))
    with pytest.raises(UserError, match="nobom.csv: looks like UTF-16 without a byte-order mark"):
        list(read_ratings_file(no_bom))


def test_a_jsonl_line_holding_a_line_separator_in_a_string_is_one_row(tmp_path):
    path = tmp_path / "ratings.jsonl"
    rows = [
        {"pair_id": "p#1", "rater": "ann", "relevance": 3, "note": "first\u2028second"},
        {"pair_id": "p#2", "rater": "ann"},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert [row["pair_id"] for row in read_ratings_file(path)] == ["p#1", "p#2"]


def test_every_ratings_file_is_used_and_the_summary_names_raters_and_statistics(tmp_path, capsys):
    work, ids = work_dir(tmp_path)
    ann = tmp_path / "ann.csv"
    ann.write_bytes(table([[p, "José", *[s] * 5] for p, s in zip(ids, JUDGE_SCORES)], ";").encode("cp1252"))
    bob = tmp_path / "bob.csv"
    bob.write_text(table([[p, "bob", *[4 - s] * 5] for p, s in zip(ids, JUDGE_SCORES)]), encoding="utf-8")
    assert agree(work, "--ratings", ann, "--ratings", bob) == 0
    result = json.loads((work / "agreement.json").read_text())
    assert {r: v["kind"] for r, v in result["raters"].items()} == {
        "José": "imported",
        "bob": "imported",
        "judge": "judge",
    }
    assert result["pairs"] == 8
    printed = capsys.readouterr().out
    assert "Agreement of 2 people and the judge over 8 pairs" in printed
    assert f"{ann} (Windows-1252, semicolon-separated): 8 rows, 8 used" in printed
    assert "relevance: kappa José–bob " in printed and "José–judge 1.00 (8)" in printed
    relevance = result["dimensions"]["relevance"]
    assert relevance["alpha_humans"]["value"] < 0  # the two people rate opposite ways
    shown = [f"{relevance[k]['value']:.2f}" for k in ("alpha_humans", "alpha_all")]
    assert f"alpha people {shown[0]}, people + judge {shown[1]}" in printed
    assert "Warning: relevance: the judge agrees weakly with bob (kappa" in printed


def test_help_names_the_required_and_optional_columns(capsys):
    with pytest.raises(SystemExit):
        main(["agreement", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Required columns: pair_id, rater. Optional: relevance," in text
    assert all(column in text for column in ("difficulty (1-3)", "reasoning_type (", "keep (0/1)"))


def test_duplicate_contradictory_and_unknown_rows_are_counted_said_and_left_out(tmp_path, capsys):
    work, ids = work_dir(tmp_path)
    rows = [[p, "ann", *[s] * 5] for p, s in zip(ids, JUDGE_SCORES)]
    rows.append(rows[0])  # the same rating again
    rows.append([ids[1], "ann", 1, 2, 2, 2, 2])  # relevance 1 where the first row said 2
    rows += [["elsewhere#1", "ann", 3, 3, 3, 3, 3], ["elsewhere#2", "ann", 3, 3, 3, 3, 3]]
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(table(rows))
    assert agree(work, "--ratings", ratings) == 0
    result = json.loads((work / "agreement.json").read_text())
    [source] = result["inputs"]
    assert {k: source[k] for k in ("rows", "used", "duplicates", "contradictory", "unknown")} == {
        "rows": 12, "used": 8, "duplicates": 1, "contradictory": 1, "unknown": 2,
    }  # fmt: skip
    dims = result["dimensions"]
    assert dims["relevance"]["pairs"][0]["n"] == 7  # the contradicted value is left out
    assert dims["accuracy"]["pairs"][0]["n"] == 8 and dims["accuracy"]["pairs"][0]["exact"]["value"] == 1.0
    assert result["raters"]["ann"]["pairs"] == 8
    printed = capsys.readouterr().out
    assert "1 row repeating a pair and rater with the same values: counted once" in printed
    assert (
        f"1 row rating a pair its rater rated before with other values: those values are left out (e.g. {ratings}:11"
        in printed
    )
    assert "2 rows naming pairs not in" in printed and "'elsewhere#1'" in printed

    strangers = tmp_path / "strangers.csv"
    strangers.write_text(table(rows[-2:]))
    before = (work / "agreement.json").read_text()
    assert agree(work, "--ratings", strangers) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "strangers.csv: none of its 2 rows names a pair of" in err
    assert (work / "agreement.json").read_text() == before


def test_plots_go_to_a_folder_of_their_own_and_a_users_files_are_left_alone(tmp_path, capsys):
    work, ids = work_dir(tmp_path)
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(table([[p, "ann", *[s] * 5] for p, s in zip(ids, JUDGE_SCORES)]))
    mine = tmp_path / "results"
    (mine / "plots" / "agreement").mkdir(parents=True)
    (mine / "plots" / "agreement" / "relevance.png").write_bytes(b"my own picture")
    assert agree(work, "--ratings", ratings, "-o", mine / "agreement.json") == 0
    assert (mine / "plots" / "agreement" / "relevance.png").read_bytes() == b"my own picture"
    result = json.loads((mine / "agreement.json").read_text())
    assert sorted(result["plots"]) == [f"agreement_plots/{d}.png" for d in sorted(RACAR_DIMENSIONS)]
    assert all((mine / rel).stat().st_size > 2000 for rel in result["plots"])
    assert f"5 plots in {mine / 'agreement_plots'}" in capsys.readouterr().out
    assert agree(work, "--ratings", ratings, "-o", mine / "agreement.json") == 0  # a rerun replaces its own

    (tmp_path / "other" / "agreement_plots").mkdir(parents=True)
    (tmp_path / "other" / "agreement_plots" / "notes.txt").write_text("mine")
    assert agree(work, "--ratings", ratings, "-o", tmp_path / "other" / "agreement.json") == 2
    assert "not created by sciqag" in capsys.readouterr().err
    assert not (tmp_path / "other" / "agreement.json").exists()
    (tmp_path / "notes.json").write_text('{"my": "notes"}')
    assert agree(work, "--ratings", ratings, "-o", tmp_path / "notes.json") == 2
    assert "not a result of `sciqag agreement`" in capsys.readouterr().err
    assert (tmp_path / "notes.json").read_text() == '{"my": "notes"}'


def test_without_a_judge_score_the_plots_show_people_against_each_other(tmp_path, capsys):
    work, ids = work_dir(tmp_path, judged=False)
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(table([[p, r, *[s] * 5] for p, s in zip(ids, JUDGE_SCORES) for r in ("ann", "bob")]))
    assert agree(work, "--ratings", ratings) == 0
    result = json.loads((work / "agreement.json").read_text())
    assert "judge" not in result["raters"] and len(result["plots"]) == 5
    assert all("one person's score against another's over 8 pairs" in c for c in result["plots"].values())
    assert (work / "agreement_plots" / "relevance.png").stat().st_size > 2000


def test_alpha_with_the_judge_is_null_where_the_judge_gives_no_such_rating():
    ratings = Ratings()
    for k, s in enumerate(JUDGE_SCORES):
        ratings.add({"pair_id": f"p#{k}", "rater": "judge", "relevance": s}, "judge")
        for person, keep in (("ann", s > 1), ("bob", s > 2)):
            ratings.add({"pair_id": f"p#{k}", "rater": person, "relevance": s, "keep": keep}, "reviewer")
    result = agreement(ratings, rounds=0)
    keep = result["dimensions"]["keep"]
    assert keep["alpha_humans"]["value"] is not None and keep["alpha_all"] is None
    assert result["dimensions"]["relevance"]["alpha_all"]["raters"] == ["ann", "bob", "judge"]
    rows = [r for r in agreement_rows(result) if r["dimension"] == "keep"]
    assert rows and all(r["alpha_all"] == "–" and r["alpha_humans"] != "–" for r in rows)


def test_review_states_the_number_of_pairs_it_really_reviews(tmp_path):
    work, _ = work_dir(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sciqag_dataset.cli", "review", str(work), "--sample", "100", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert first.startswith(f"Reviewing 8 pairs of the 8 in {work};"), first
