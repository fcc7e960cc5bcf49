"""A PDF's tables and figures as components, from a drawn paper (own text): a table under its caption, a figure's
caption, both mentioned in the prose. With the layout model (PyMuPDF) the table has its cells; pdfplumber's rules
find the captions, and so the components without cells. Neither caption nor cells is in the text."""

import pytest
from pdf_pages import LEFT, body_lines, column, draw
from test_pdf_classes import _read

from sciqag_dataset.builders.ingest import pdf
from sciqag_dataset.builders.ingest.pdf_components import _EQUATION_NUMBER, pdf_components
from sciqag_dataset.builders.ingest.pdf_line import Block, Line

ROWS = [
    ("Site", "Depth (m)", "Grain (mm)"),
    ("North inlet", "2.5", "0.31"),
    ("Middle basin", "7.25", "0.47"),
    ("South shore", "1.75", "0.62"),
]


def _paper(tmp_path):
    lines = body_lines(90, 51, 9)
    lines[5] = "as Table 1 shows the pebbles grew coarser downstream of the inlet"
    lines[60] = "the drift seen in Fig. 2 follows the same slow cooling of the lake"
    table = [
        (LEFT + 40 + 130 * j, 440 + 14 * k, "Times-Bold" if k == 0 else "Times-Roman", 9, cell)
        for k, row in enumerate(ROWS)
        for j, cell in enumerate(row)
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 125, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 140, lines[:20], 10, "Times-Roman"),
        (LEFT, 420, "Times-Bold", 9, "Table 1. Grain sizes of the pebbles at three sites."),
        *table,
        *column(LEFT, 520, lines[20:36], 10, "Times-Roman"),
    ]
    page2 = [
        *column(LEFT, 60, lines[36:80], 10, "Times-Roman"),
        (LEFT, 640, "Times-Roman", 9, "Figure 2. Drift of the pebbles over three winters."),
        *column(LEFT, 660, lines[80:], 10, "Times-Roman"),
    ]
    return _read(draw(tmp_path / "components.pdf", [page1, page2]))


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_pdfs_table_and_figure_are_components_with_their_captions_and_mentions(tmp_path, monkeypatch, backend):
    monkeypatch.setattr(pdf, "BACKEND", backend)
    rec = _paper(tmp_path)
    table, figure = rec["components"]
    assert (table["kind"], table["label"], table["caption"]) == (
        "table",
        "Table 1",
        "Grain sizes of the pebbles at three sites.",
    )
    assert (figure["kind"], figure["label"], figure["caption"]) == (
        "figure",
        "Figure 2",
        "Drift of the pebbles over three winters.",
    )
    assert [rec["text"][m["start"] : m["end"]] for m in table["mentions"]] == ["Table 1"]
    assert [rec["text"][m["start"] : m["end"]] for m in figure["mentions"]] == ["Fig. 2"]
    assert table["context_before"] and table["context_before"] in rec["text"]
    assert "Grain sizes of the pebbles" not in rec["text"] and "Middle basin" not in rec["text"]
    if backend == "auto":  # the layout model's table block: its rows and cells
        assert table["cells"] == [list(r) for r in ROWS] and table["header_rows"] == 1
        assert "| Middle basin | 7.25 | 0.47 |" in table["content"]
    else:
        assert table["cells"] == []


def test_an_equation_number_is_a_word_of_its_own_anywhere_in_the_formulas_text():
    """MuPDF reads a formula block's text in its own order: the number may stand inside it."""
    assert _EQUATION_NUMBER.search("w(p, q) = exp (1) γg")[1] == "1"
    assert _EQUATION_NUMBER.search("A = B + C (12b)")[1] == "12b"
    assert _EQUATION_NUMBER.search("(1 − λ) · C(p, p)") is None


def test_a_caption_labelled_with_a_capital_panel_letter_is_a_component():
    """ "Figure 1A." and "Table 2B:" (a capital after the number) are labels like "Figure 1a."."""

    def caption(text, top):
        return Block([Line(text, 8.0, False, top, top + 8, 50, 1, 1, [], "caption", top)])

    found = pdf_components(
        [], [caption("Figure 1A. XRD patterns of the films.", 100), caption("Table 2B: Sizes.", 300)]
    )
    assert [(c["kind"], c["label"], c["caption"]) for c in found] == [
        ("figure", "Figure 1A", "XRD patterns of the films."),
        ("table", "Table 2B", "Sizes."),
    ]
