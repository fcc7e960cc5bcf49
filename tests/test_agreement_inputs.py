"""Ratings files as spreadsheets save them: their encodings and separators."""

from __future__ import annotations

import pytest

from sciqag_dataset.errors import UserError
from sciqag_dataset.evaluation.ratings import open_ratings_file, read_ratings_file
from sciqag_dataset.schema import RACAR_DIMENSIONS

HEADER = ["pair_id", "rater", *RACAR_DIMENSIONS]
JUDGE_SCORES = [3, 2, 1, 3, 2, 1, 3, 2]


def table(rows, sep=",") -> str:
    return "".join(sep.join(map(str, r)) + "\n" for r in [HEADER, *rows])


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
