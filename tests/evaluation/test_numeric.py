"""Numeric source validation (Eq. 2): extraction table, value comparison, a hand-checked paper, the stage."""

from __future__ import annotations

import json

import pytest

from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.evaluation import numeric as num

EXTRACT_CASES = [
    # decimals, separators, signs
    ("The gap is 3.5 eV, not .5 eV.", ["3.5", "0.5"]),
    ("After 1,200 cycles and 12,345.6 h", ["1200", "12345.6"]),
    ("Onset at −0.61 V and -5 °C, then +3 V", ["-0.61", "-5", "3"]),
    ("0.50 and 0.5 and 000.5", ["0.5", "0.5", "0.5"]),
    # scientific notation
    ("1.2 × 10^-3", ["0.0012"]),
    ("1.2×10−3 S/cm", ["0.0012"]),
    ("1.2 x 10^-3", ["0.0012"]),
    ("1.2 * 10^(-3)", ["0.0012"]),
    ("1.2e-3 and 3E5", ["0.0012", "300000"]),
    ("10^19 cm^-3 carriers", ["1e19"]),
    # LaTeX, as tables and equations keep it
    (r"$2\times10^{-7}$ and $9 \times 10^{-7}$ s$^{-1}$", ["2e-7", "9e-7"]),
    (r"5 \pm 0.2 mm, 12\,\% and 10^{19} cm^{-3}", ["5", "0.2", "12", "1e19"]),
    (r"$\sigma = A \sigma^{n}$", []),
    ("a pressure of 10⁻³ Pa", ["0.001"]),
    ("4.1 × 10^20 cm^-3 and 1.5e-9", ["4.1e20", "1.5e-9"]),
    # percentages, ranges, units glued on the right
    ("54 % and 54%", ["54", "54"]),
    ("3–5 nm, 3-5 nm, 300 - 400 K, 3 to 5", ["3", "5", "3", "5", "300", "400", "3", "5"]),
    ("98.2–98.9 %", ["98.2", "98.9"]),
    ("25°C, 10nm, 723K, 5 ± 0.2 mm", ["25", "10", "723", "5", "0.2"]),
    ("2.35 W m^-1 K^-1 and 7.64 g/cm^3", ["2.35", "7.64"]),  # unit powers are not values
    # formulas, identifiers, citations, ordinals, cross-references
    ("TiO2, Li7La3Zr2O12, CoSb3, (Bi,Sb)2Te3, Yb0.3Co4Sb12", []),
    ("as reported [12], [3, 4] and [5–7]", []),
    ("see Fig. 3, Figure S2, Table 2, Eq. (1), Section 4 and Ref. 12", []),
    ("the 1st, 2nd, 3rd and 4th runs", []),
    ("no numbers here", []),
    ("", []),
]


@pytest.mark.parametrize("text,expected", EXTRACT_CASES)
def test_extract_numbers(text, expected):
    assert num.extract_numbers(text) == expected


@pytest.mark.parametrize(
    "a,b",
    [
        ("0.50", "0.5"),
        ("1,200", "1200"),
        ("1.2e-3", "1.2 × 10^-3"),
        ("1e19", "10^19"),
        ("54%", "54"),
        ("-0.61", "−0.61"),
        (2, "2.0"),
    ],
)
def test_supported_compares_values(a, b):
    assert num.supported(a, [b]) and num.supported(b, [a])


def test_supported_is_strict_unless_rounding_allowed():
    assert not num.supported("3.1", ["3.14", "31"])
    assert num.supported("3.1", ["3.14"], allow_rounding=True)
    assert not num.supported("3.2", ["3.14"], allow_rounding=True)
    assert not num.supported("-5", ["5"])


SOURCE = (
    "Zinc oxide nanorods grown at 90 °C for 6 h reached lengths of 1.5 μm. "
    "Their band gap was 3.27 eV and the photocurrent rose by 40 % under 1,000 W m^-2 illumination. "
    "The donor density was 2.1 × 10^18 cm^-3."
)
QA = [
    # numbers 90, 6, 1.5 -> all in the source: 3/3
    {"question": "How were the rods grown?", "answer": "At 90°C for 6 h, giving 1.5 μm rods."},
    # numbers 3.27, 3.3 -> 3.3 is not in the source: 1/2
    {"question": "What is the gap?", "answer": "3.27 eV, close to the 3.3 eV of bulk ZnO."},
    # no numbers -> ratio None
    {"question": "Why rods?", "answer": "Rods give direct paths for electrons."},
    # 2.1e18 (other notation), 1000 (separator), 40, 55 (not in source), 40 again (counted once): 3/4
    {"question": "Key figures?", "answer": "2.1e18 cm^-3 donors, 1000 W m^-2, a 40 % rise (not 55 %), 40 %."},
]


def test_eq2_on_a_hand_case():
    rec = num.numeric_record({"id": "zno", "title": "ZnO rods", "text": SOURCE, "qa": QA})
    pm = rec["pair_metrics"]
    assert pm[0] == {"numbers": ["90", "6", "1.5"], "unsupported_numbers": [], "numeric_ratio": 1.0}
    assert pm[1] == {"numbers": ["3.27", "3.3"], "unsupported_numbers": ["3.3"], "numeric_ratio": 0.5}
    assert pm[2] == {"numbers": [], "unsupported_numbers": [], "numeric_ratio": None}
    assert pm[3] == {"numbers": ["2.1e18", "1000", "40", "55"], "unsupported_numbers": ["55"], "numeric_ratio": 0.75}
    # dataset: 3 of 4 answers have numbers; 7 of their 9 numbers found in the source (3.3 and 55 not)
    summary = num.numeric_summary([rec])
    assert summary == {
        "answers": 4,
        "answers_with_numbers": 0.75,
        "numbers": 9,
        "supported_ratio": pytest.approx(7 / 9),
    }


def test_run_numeric_stage(tmp_path):
    (tmp_path / "papers.jsonl").write_text(json.dumps({"id": "zno", "title": "ZnO rods", "text": SOURCE}) + "\n")
    (tmp_path / "generated.jsonl").write_text(json.dumps({"id": "zno", "status": "ok", "qa": QA}) + "\n")
    summary = run_stage(num.stage(), tmp_path)  # generated.jsonl exists, so it is the default source
    assert summary.counts == {"ok": 1}
    rec = json.loads((tmp_path / "numeric.jsonl").read_text())
    assert rec["id"] == "zno" and [p["numeric_ratio"] for p in rec["pair_metrics"]] == [1.0, 0.5, None, 0.75]
    assert run_stage(num.stage(), tmp_path).counts == {"skipped": 1}
    assert num.numeric_summary([]) == {
        "answers": 0,
        "answers_with_numbers": None,
        "numbers": 0,
        "supported_ratio": None,
    }


# a film whose table holds numbers its text does not give
TABLE_TEXT = "Films were annealed at three temperatures; Table 1 lists their resistivity."
TABLE = {
    "id": "T1",
    "kind": "table",
    "label": "Table 1",
    "caption": "Resistivity of the films after 2 h anneals.",
    "content": "| Anneal (°C) | Resistivity (mΩ cm) |\n| --- | --- |\n| 350 | 4.7 |\n| 420 | 2.9 |",
    "content_format": "markdown",
    "cells": [["Anneal (°C)", "Resistivity (mΩ cm)"], ["350", "4.7"], ["420", "2.9"]],
    "header_rows": 1,
}
TABLE_QA = [
    {
        "question": "What resistivity did the films reach after a 2 h anneal at 420 °C?",
        "answer": "2.9 mΩ cm after 2 h at 420 °C, down from 4.7 mΩ cm after annealing at 350 °C.",
        "grounding": {"kind": "table", "component_id": "T1"},
    }
]


def test_an_answers_numbers_are_found_in_the_papers_tables_not_only_its_text():
    paper = {"id": "films", "title": "Annealed films", "text": TABLE_TEXT, "qa": TABLE_QA}
    assert all(n not in TABLE_TEXT for n in ("2.9", "4.7", "420", "350"))
    alone = num.numeric_record(paper)["pair_metrics"][0]
    assert alone["unsupported_numbers"] == ["2.9", "2", "420", "4.7", "350"]  # the text alone has none of them
    rec = num.numeric_record({**paper, "components": [TABLE]})["pair_metrics"][0]
    # the values from the cells, the 2 h from the caption
    assert rec == {"numbers": ["2.9", "2", "420", "4.7", "350"], "unsupported_numbers": [], "numeric_ratio": 1.0}


def test_table_cells_in_latex_and_equations_are_sources_and_mathml_markup_is_not():
    latex_table = {
        "id": "tab:rates",
        "kind": "table",
        "caption": "Creep rates.",
        "content": "",
        "cells": [["Strut", "Rate (1/s) 400 K"], ["Thin", "$2\\times10^{-7}$"]],
    }
    equation = {"id": "eq:1", "kind": "equation", "content": "R = 8.314", "content_format": "latex"}
    mathml = {
        "id": "E2",
        "kind": "equation",
        "content": '<math xmlns="http://www.w3.org/1998/Math/MathML"><mn>0.42</mn></math>',
        "content_format": "mathml",
    }
    values = set(num.extract_values(num.component_source([latex_table, equation, mathml])))
    assert num.supported("2 × 10^-7", values) and num.supported("8.314", values) and num.supported("0.42", values)
    assert not num.supported("1998", values)  # the MathML namespace's year is no number of the paper


def test_the_stage_reads_the_papers_components(tmp_path):
    paper = {"id": "films", "title": "Annealed films", "text": TABLE_TEXT, "components": [TABLE]}
    (tmp_path / "papers.jsonl").write_text(json.dumps(paper) + "\n")
    (tmp_path / "generated.jsonl").write_text(json.dumps({"id": "films", "status": "ok", "qa": TABLE_QA}) + "\n")
    run_stage(num.stage(), tmp_path)
    rec = json.loads((tmp_path / "numeric.jsonl").read_text())
    assert rec["pair_metrics"][0]["numeric_ratio"] == 1.0
