"""A LaTeX paper's components: every table and figure float (``latex_refs`` names them) and every display
equation environment, numbered as LaTeX numbers them, with the marks that say where each stands and where a
``\\ref``/``\\eqref`` mentions it (``components``). A float or equation inside another one is part of it."""

from __future__ import annotations

import re
from collections.abc import Callable

from sciqag_dataset.builders.ingest.components import component, mention_marks, place_marks, unique_id
from sciqag_dataset.builders.ingest.latex_refs import FIGURE_ENVS, TABLE_ENVS, number_labels
from sciqag_dataset.builders.ingest.latex_units import group
from sciqag_dataset.builders.ingest.normalize import inline

EQUATION_ENVS = tuple(
    f"{name}{star}"
    for name in ("equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat")
    for star in ("", "*")
) + ("displaymath",)
_KIND = {
    **dict.fromkeys(FIGURE_ENVS, "figure"),
    **dict.fromkeys(TABLE_ENVS, "table"),
    **dict.fromkeys(EQUATION_ENVS, "equation"),
    "\\[": "equation",
    "$$": "equation",
}
_SHORT = ("\\[", "$$")  # displays written without \begin
_BEGIN = re.compile(
    r"\\begin\{(" + "|".join(re.escape(e) for e in sorted(_KIND, key=len, reverse=True) if e not in _SHORT) + r")\}"
    r"|(?<!\\)(\\\[)|(?<![\\$])(\$\$)"
)
_INLINE_DOLLAR = re.compile(r"(?<![\\$])\$(?!\$)")
_LABEL = re.compile(r"\\label\s*\{([^{}]*)\}")
_CAPTION = re.compile(r"\\(?:caption|tablecaption)\*?\s*(?:\[[^\]]*\])?(?=\s*\{)")
_CAPTION_OF = re.compile(r"\\captionof\s*\{(figure|table)\}\s*(?:\[[^\]]*\])?(?=\s*\{)")
_SYNTHETIC = "sciqag-component-{}"  # a label of our own in each, for the number LaTeX gives it
_DISPLAY, _DOLLARS = "\\[", "$$"  # \[ ... \]: displaymath's short form; $$ ... $$: plain TeX's display
_UNNUMBERED = (*(e for e in EQUATION_ENVS if e.endswith("*")), "displaymath", _DISPLAY, _DOLLARS)
_ONE_DISPLAY = ("equation", "equation*", "displaymath", _DISPLAY, _DOLLARS)  # their content is the math alone
_TABULAR = re.compile(r"\\begin\{(tabular\*?|tabularx|tabulary|longtable\*?)\}")
_RULES = re.compile(
    r"\\(?:hline|toprule|midrule|bottomrule|specialrule|cline|cmidrule|addlinespace|endhead|endfirsthead|endfoot|"
    r"endlastfoot|hhline|rowcolor|noalign)\b\s*(?:\([^)]*\))?\s*(?:\{[^{}]*\}\s*)*"
)
_LEAD = re.compile(r"(?:\[[^\]]*\])?(?:\s+|" + _RULES.pattern + ")*")
_MULTICOLUMN = re.compile(r"\\multicolumn\s*\{\s*(\d+)\s*\}\s*\{[^{}]*\}\s*(?=\{)")
_MULTIROW = re.compile(r"\\multirow\s*(?:\[[^\]]*\])?\s*\{\s*(-?\d+)\s*\}\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}\s*(?=\{)")


def latex_components(
    body: str, render: Callable[[str], str], resolve: Callable[[str, dict], str]
) -> tuple[list[dict], str, dict, Callable[[list[str]], tuple[str, str]]]:
    """(components, ``body`` with each component's place marked, label -> (kind, number) for the body's labels,
    ``mark(labels)``: the mention marks for a reference to ``labels``). ``render`` writes LaTeX as text (captions,
    cells); ``resolve(latex, labels)`` reads its ``\\ref``s as numbers."""
    envs = _environments(body)
    synthetic = [
        (start + len(f"\\begin{{{name}}}"), f"\\label{{{_SYNTHETIC.format(i)}}}")
        for i, (name, start, _) in enumerate(envs)
        if name not in _UNNUMBERED
    ]
    labels = number_labels(_inserted(body, synthetic))
    found, by_label, taken = [], {}, set()
    for i, (name, start, end) in enumerate(envs):
        source = body[start:end]
        own = [x.strip() for x in _LABEL.findall(source)]
        by_label.update(dict.fromkeys(own, i))
        kind = _float_kind(name, source)
        wanted = [] if name in _UNNUMBERED else [_SYNTHETIC.format(i), *own]
        numbers = list(dict.fromkeys(labels[x][1] for x in wanted if labels.get(x, ("",))[0] == kind))
        made = _component(
            name, kind, source, unique_id(own[0] if own else None, kind, taken), numbers, labels, render, resolve
        )
        found.append(made)
    marks = [(at, mark) for i, (_, start, end) in enumerate(envs) for at, mark in zip((start, end), place_marks(i))]
    marked = _inserted(body, marks)

    def mark(names: list[str]) -> tuple[str, str]:
        return mention_marks(list(dict.fromkeys(by_label[n] for n in names if n in by_label)))

    return found, marked, labels, mark


def _inserted(text: str, insertions: list[tuple[int, str]]) -> str:
    """``text`` with each (position, string) inserted, positions in order."""
    out, pos = [], 0
    for at, piece in insertions:
        out += [text[pos:at], piece]
        pos = at
    return "".join(out) + text[pos:]


def _environments(body: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each outermost component environment (``\\[`` for ``\\[ ... \\]``), in order."""
    out, pos = [], 0
    for m in _BEGIN.finditer(body):
        if m.start() < pos:
            continue
        if m[3] and len(_INLINE_DOLLAR.findall(body, pos, m.start())) % 2:  # "$a$$b$": two inline maths
            continue
        if m[2] or m[3]:  # \[ (not the \\[2pt] of a line break), $$
            close = re.compile(r"(?<!\\)\\\]" if m[2] else r"(?<!\\)\$\$").search(body, m.end())
            end = close.end() if close else -1
        else:
            found = body.find(f"\\end{{{m[1]}}}", m.end())
            end = found + len(f"\\end{{{m[1]}}}") if found >= 0 else -1
        if end < 0:
            continue
        pos = end
        out.append((m[1] or (_DISPLAY if m[2] else _DOLLARS), m.start(), end))
    return out


def _float_kind(name: str, source: str) -> str:
    """The environment's kind, or, for a float captioned only by ``\\captionof{table}`` (a table set in a
    ``wrapfigure``), the kind its caption names."""
    kind = _KIND[name]
    if kind != "equation" and not _CAPTION.search(source) and (of := _CAPTION_OF.search(source)):
        return of[1]
    return kind


def _component(name, kind, source, id_, numbers, labels, render, resolve) -> dict:
    if kind == "equation":
        inner = source[2:-2] if name in _SHORT else source[len(f"\\begin{{{name}}}") : -len(f"\\end{{{name}}}")]
        tex = _LABEL.sub("", inner if name in _ONE_DISPLAY else source)
        tex = re.sub(r"\\(?:nonumber|notag)(?![A-Za-z])", "", tex)
        label = f"Eq. ({numbers[0]})" if len(numbers) == 1 else "Eqs. " + ", ".join(f"({n})" for n in numbers)
        return component(
            kind, id_, label=label if numbers else "", content=" ".join(tex.split()), content_format="latex"
        )
    captions = _captions(source)
    caption = inline(render(resolve(captions[-1], labels))) if captions else ""  # a subfigure's come first
    label = f"{'Table' if kind == 'table' else 'Figure'} {numbers[0]}" if numbers else ""
    if kind == "figure":
        return component(kind, id_, label=label, caption=caption)
    rows, header = _tabular(source, lambda cell: inline(render(resolve(cell, labels))))
    return component(kind, id_, label=label, caption=caption, cells=rows, header_rows=header)


def _captions(source: str) -> list[str]:
    out = []
    for m in re.finditer(_CAPTION.pattern + "|" + _CAPTION_OF.pattern, source):
        arg = group(source, m.end())
        if arg:
            out.append(arg[0])
    return out


def _no_captions(tabular: str) -> str:
    """A longtable's rows without its ``\\caption{...}`` and ``\\label{...}``, which are not cells."""
    for m in reversed(list(re.finditer(r"\\(?:caption\*?\s*(?:\[[^\]]*\])?|label)\s*(?=\{)", tabular))):
        arg = group(tabular, m.end())
        if arg:
            tabular = tabular[: m.start()] + tabular[arg[1] :]
    return tabular


def _tabular(source: str, cell_text: Callable[[str], str]) -> tuple[list[list[str]], int]:
    """(rows, header rows) of the first tabular of a float (AASTeX's \\tablehead/\\startdata too): the rows
    above a ``\\midrule``, or above the second ``\\hline`` when one opens the table, are its header. A
    ``\\multicolumn`` repeats its text in each column it spans, a ``\\multirow`` in the empty cells below it."""
    m = _TABULAR.search(source)
    if m:
        pos = m.end()
        if m[1] in ("tabular*", "tabularx", "tabulary"):
            pos = (group(source, pos) or ("", pos))[1]  # the table's width
        pos += re.match(r"\s*(?:\[[^\]]*\])?", source[pos:]).end()
        pos = (group(source, pos) or ("", pos))[1]  # the column spec
        end = source.find(f"\\end{{{m[1]}}}", pos)
        lines, header = _lines(_no_captions(source[pos : end if end >= 0 else None]))
    else:
        data = re.search(r"\\startdata(.*?)(?:\\enddata|$)", source, re.S)
        if not data:
            return [], 0
        head = re.search(r"\\tablehead\s*(?=\{)", source)
        head = (group(source, head.end()) or ("",))[0] if head else ""
        lines, _ = _lines(data[1])
        header = 1 if head.strip() else 0
        lines = [_split(re.sub(r"\\colhead\s*", "", head), "&"), *lines] if header else lines
    rows: list[list[str]] = []
    spans: dict[int, tuple[str, int]] = {}  # column -> (a \multirow's text, rows below it still to fill)
    for cells in lines:
        row: list[str] = []
        fresh = set()
        for cell in cells:
            cell, width, down = cell.strip(), 1, 1
            if (mc := _MULTICOLUMN.match(cell)) and (arg := group(cell, mc.end())):
                cell, width = arg[0].strip(), min(int(mc[1]), 100)
            if (mr := _MULTIROW.match(cell)) and (arg := group(cell, mr.end())):
                cell, down = arg[0], min(max(int(mr[1]), 1), 1000)
            text = cell_text(cell)
            for _ in range(width):
                col = len(row)
                row.append(text or (spans[col][0] if col in spans else ""))
                if down > 1:
                    spans[col] = (text, down - 1)
                    fresh.add(col)
        for col in [c for c in spans if c not in fresh]:
            text, left = spans.pop(col)
            if left > 1:
                spans[col] = (text, left - 1)
        if any(row):
            rows.append(row)
    return rows, min(header, max(len(rows) - 1, 0))


def _lines(tabular: str) -> tuple[list[list[str]], int]:
    """The rows of a tabular's body, as cells, and how many come before its header rule."""
    rows: list[list[str]] = []
    header, top_hline = 0, False
    for line in _split(tabular.replace("\\tabularnewline", "\\\\"), "\\\\"):
        lead = _LEAD.match(line).end()  # the rules (and a \\[2pt]) before the row's cells
        text = _RULES.sub("", line[lead:])
        if not text.strip():
            continue
        ruled = line[:lead]
        if rows and not header and ("\\midrule" in ruled or ("\\hline" in ruled and top_hline)):
            header = len(rows)
        top_hline = top_hline or (not rows and "\\hline" in ruled)
        rows.append(_split(text, "&"))
    return rows, header


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside braces (and not at an escaped ``\\&``)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and text.startswith(sep, i) and depth == 0 and sep == "\\\\":
            out.append(text[start:i])
            i += 2
            start = i
            continue
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        elif c == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
        i += 1
    out.append(text[start:])
    return out
