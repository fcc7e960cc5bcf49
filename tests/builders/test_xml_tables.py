"""Rows of cells from a ``<table>`` (builders/ingest/xml_tables.py): spans, header rows, nested tables."""

from __future__ import annotations

import lxml.html

from sciqag_dataset.builders.ingest.xml_tables import table_cells


def cells(markup: str) -> tuple[list[list[str]], int]:
    table = lxml.html.fragment_fromstring(markup)
    return table_cells(table, lambda cell: " ".join(cell.text_content().split()))


def test_spanning_cells_repeat_their_text_in_each_position_they_cover():
    rows, header = cells(
        "<table><tr><th>a</th><th colspan='2'>b</th></tr>"
        "<tr><td rowspan='3'>x</td><td>1</td><td>2</td></tr>"
        "<tr><td>3</td><td>4</td></tr><tr><td colspan='2'>5</td></tr></table>"
    )
    assert rows == [["a", "b", "b"], ["x", "1", "2"], ["x", "3", "4"], ["x", "5", "5"]]
    assert header == 1  # a leading row of <th> alone


def test_header_rows_and_what_is_not_this_tables():
    rows, header = cells(
        "<table><thead><tr><td>k</td><td>v</td></tr></thead>"
        "<tbody><tr><th>row</th><td><table><tr><td>inner</td></tr></table></td></tr><tr><td></td><td></td></tr>"
        "</tbody></table>"
    )
    assert header == 1  # <thead>'s rows, whatever their cells
    assert rows == [["k", "v"], ["row", "inner"]]  # a nested table's rows are not rows; an empty row goes
    rows, header = cells("<table><tr><td rowspan='x' colspan='100000'>a</td><td>b</td></tr></table>")
    assert len(rows[0]) == 101 and header == 0  # a span that is not a number is one; a huge one is capped
    assert cells("<table><tr><th>only</th></tr></table>") == ([["only"]], 0)  # a header needs a row below it
