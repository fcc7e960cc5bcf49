"""`sciqag filter`: rules that could select nothing are refused, a benchmark file that cannot be read is a
one-line error, questions that lean on their source are judged on their text as published, and a group of
near-duplicates keeps the pair people and scores say is best."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.folders import claim


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
