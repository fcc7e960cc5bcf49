"""A ``<table>`` of JATS or HTML markup (``tr``, ``th``, ``td``, ``thead``), or a CALS table (Elsevier's
``tgroup``, ``row``, ``entry``), as rows of cell texts."""

from __future__ import annotations

from collections.abc import Callable

from sciqag_dataset.builders.ingest.xml_common import local_name

_MAX_COLSPAN, _MAX_ROWSPAN = 100, 1000  # larger spans are markup errors, not tables
_MAX_COLUMNS = 10_000


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


def cals_cells(table, cell_text: Callable[[object], str]) -> tuple[list[list[str]], int]:
    """(rows, header rows) of a CALS table (its ``tgroup``s; the header rows are the first group's ``thead``): an
    entry spanning columns (``namest``/``nameend``, named by the group's ``colspec``s) or rows (``morerows``)
    repeats its text in every position it covers, as in ``table_cells``."""
    rows: list[list[str]] = []
    header = 0
    for group in (g for g in table.iter() if local_name(g) == "tgroup"):
        specs = [c for c in group if local_name(c) == "colspec"]
        column = {
            c.get("colname"): _span(c.get("colnum"), _MAX_COLUMNS) - 1 if c.get("colnum") else k
            for k, c in enumerate(specs)
            if c.get("colname")
        }
        spans: dict[int, tuple[str, int]] = {}  # column -> (text, rows below it still covers)
        for part in (p for p in group if local_name(p) in ("thead", "tbody", "tfoot")):
            for tr in (r for r in part if local_name(r) == "row"):
                row = {col: text for col, (text, _) in spans.items()}
                spans = {col: (text, left - 1) for col, (text, left) in spans.items() if left > 1}
                at = 0
                for entry in (e for e in tr if local_name(e) == "entry"):
                    start = column.get(entry.get("namest") or entry.get("colname"))
                    if start is None:  # no column named: the next one no entry above covers
                        while at in row:
                            at += 1
                        start = at
                    end = max(column.get(entry.get("nameend"), start), start)
                    text = cell_text(entry)
                    below = (
                        _span(entry.get("morerows"), _MAX_ROWSPAN) if entry.get("morerows") not in (None, "0") else 0
                    )
                    for col in range(start, min(end, start + _MAX_COLSPAN - 1) + 1):
                        row[col] = text
                        if below:
                            spans[col] = (text, below)
                    at = end + 1
                cells = [row.get(col, "") for col in range(max(row, default=-1) + 1)]
                if any(cells):
                    rows.append(cells)
                    header += local_name(part) == "thead" and header == len(rows) - 1
    width = max(map(len, rows), default=0)
    rows = [r + [""] * (width - len(r)) for r in rows]
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
