"""A ``<table>`` of JATS or HTML markup (``tr``, ``th``, ``td``, ``thead``) as rows of cell texts."""

from __future__ import annotations

from collections.abc import Callable

from sciqag_dataset.builders.ingest.xml_common import local_name

_MAX_COLSPAN, _MAX_ROWSPAN = 100, 1000  # larger spans are markup errors, not tables


def table_cells(table, cell_text: Callable[[object], str]) -> tuple[list[list[str]], int]:
    """(rows, header rows) of ``table``: a cell spanning rows or columns repeats its text in every position it
    covers, so each row has a value under each column. Header rows are those of ``thead``, else the leading rows
    of ``th`` cells alone. Rows of a table nested in a cell are not this table's."""
    rows: list[list[str]] = []
    header = 0
    heads_only = True  # every row so far is a header row
    spans: dict[int, tuple[str, int]] = {}  # column -> (text, rows it still covers)
    for tr in _rows(table):
        cells = [c for c in tr if local_name(c) in ("td", "th")]
        in_head = any(local_name(a) == "thead" for a in _ancestors(tr, table))
        heads_only = heads_only and (in_head or bool(cells) and all(local_name(c) == "th" for c in cells))
        if heads_only:
            header += 1
        row: list[str] = []
        queue = list(cells)
        while queue or any(col >= len(row) for col in spans):
            col = len(row)
            if col in spans:
                text, left = spans.pop(col)
                row.append(text)
                if left > 1:
                    spans[col] = (text, left - 1)
            elif queue:
                cell = queue.pop(0)
                text = cell_text(cell)
                for _ in range(_span(cell.get("colspan"), _MAX_COLSPAN)):
                    rowspan = _span(cell.get("rowspan"), _MAX_ROWSPAN)
                    if rowspan > 1:
                        spans[len(row)] = (text, rowspan - 1)
                    row.append(text)
            else:
                row.append("")  # a gap before a column a cell above still spans
        if any(row):
            rows.append(row)
        elif heads_only:
            header -= 1
    return rows, min(header, max(len(rows) - 1, 0)) if len(rows) > 1 else 0


def _rows(table):
    return (tr for tr in table.iter() if local_name(tr) == "tr" and _owner(tr) is table)


def _owner(el):
    """The nearest ``table`` above ``el``."""
    up = el.getparent()
    while up is not None and local_name(up) != "table":
        up = up.getparent()
    return up


def _ancestors(el, stop):
    up = el.getparent()
    while up is not None and up is not stop:
        yield up
        up = up.getparent()


def _span(value, most: int) -> int:
    try:
        return min(max(int(str(value).strip()), 1), most)
    except (TypeError, ValueError):
        return 1
