"""LaTeX components (builders/ingest/latex_components.py): every table and figure float and display equation
environment, numbered as LaTeX numbers them, and the ``\\ref``s that mention them.

Every source here is written for these tests (no paper's text is copied)."""

from __future__ import annotations

import random
import re

from test_components import FIX, components_by_id, mentioned, no_marks
from test_latex import MAIN, METHOD, archive

from sciqag_dataset.builders.ingest import latex_components, read_file
from sciqag_dataset.core import schema

LATEX = FIX / "components" / "latex_paper.tex"
ENVIRONMENTS = re.compile(r"\\begin\{(table\*?|figure\*?|deluxetable\*?|equation\*?|align\*?|gather\*?|multline\*?)\}")


def test_every_float_and_display_equation_of_a_latex_paper_is_a_component():
    [rec] = read_file(LATEX)
    source = LATEX.read_text()
    assert len(rec["components"]) == len(ENVIRONMENTS.findall(source)) == 5
    assert [(c["id"], c["kind"], c["label"]) for c in rec["components"]] == [
        ("eq:norton", "equation", "Eq. (1)"),
        ("eq:axial", "equation", "Eqs. (2), (3)"),  # one align, two numbered lines
        ("equation-1", "equation", ""),  # equation*: no label, no number
        ("tab:rates", "table", "Table 1"),
        ("fig:curves", "figure", "Figure 1"),
    ]
    no_marks(rec)
    assert schema.conform(rec, schema.features_for("papers")) == rec


def test_latex_references_are_mentions_that_slice_to_the_printed_reference():
    [rec] = read_file(LATEX)
    found = components_by_id(rec)
    assert mentioned(rec, found["eq:norton"]) == ["Eq. (1)"]
    assert mentioned(rec, found["eq:axial"]) == ["Eqs. (2)", "(3)"]  # "as Eqs. (2) and (3) predict"
    assert mentioned(rec, found["tab:rates"]) == ["Table 1", "Table 1"]
    assert mentioned(rec, found["fig:curves"]) == ["Fig. 1", "Figure 1"]
    assert found["equation-1"]["mentions"] == []
    # as many mentions as the source has references to the labels in each component's environment
    source = LATEX.read_text()
    envs = re.findall(r"\\begin\{(\w+\*?)\}(.*?)\\end\{\1\}", source, re.S)
    envs = [body for name, body in envs if ENVIRONMENTS.match(f"\\begin{{{name}}}")]
    refs = [set(m.split(",")) for m in re.findall(r"\\(?:ref|eqref|cref)\{([^}]*)\}", source)]
    for comp, body in zip(rec["components"], envs):
        labels = set(re.findall(r"\\label\{([^}]*)\}", body))
        assert len(comp["mentions"]) == sum(bool(r & labels) for r in refs), comp["id"]


def test_latex_content_table_cells_and_captions():
    [rec] = read_file(LATEX)
    found = components_by_id(rec)
    assert found["eq:norton"]["content"] == "\\dot\\varepsilon = A \\sigma^{n} \\exp\\left(-\\frac{Q}{RT}\\right)"
    assert found["eq:norton"]["content_format"] == "latex"
    # a multi-line environment keeps its environment (its & and \\ mean nothing without it); labels go
    assert found["eq:axial"]["content"] == (
        "\\begin{align} \\sigma &= \\frac{F}{a^2}, \\\\ \\sigma_b &= \\frac{6M}{a^3}. \\end{align}"
    )
    table = found["tab:rates"]
    assert table["caption"] == "Creep rates of the struts."
    assert table["header_rows"] == 2  # the rows above \midrule
    assert table["cells"] == [
        ["Strut", "Rate (1/s)", "Rate (1/s)"],  # \multicolumn{2}: its text in both columns
        ["", "400 K", "450 K"],
        ["Thin", "$2\\times10^{-7}$", "$9\\times10^{-7}$"],
        ["Thick", "$5\\times10^{-8}$", "$3\\times10^{-7}$"],
    ]
    assert table["content"].splitlines()[0] == "| Strut | Rate (1/s) 400 K | Rate (1/s) 450 K |"
    assert found["fig:curves"]["caption"] == "Strain against time at 450 K."


def test_latex_context_and_the_prose_left_as_it_was():
    [rec] = read_file(LATEX)
    found = components_by_id(rec)
    assert found["eq:norton"]["context_before"] == "Creep follows a power law in stress, Eq. (1):"
    assert found["eq:norton"]["context_after"].startswith("where $Q$ is an activation energy.")
    assert found["tab:rates"]["context_before"] == "Table 1 lists the rates and Fig. 1 shows the curves."
    assert found["tab:rates"]["context_after"].startswith("Thin struts crept faster")
    assert found["fig:curves"]["context_after"] == "The exponent $n$ was 4.2 in Figure 1."
    text = rec["text"]
    assert "Creep rates of the struts" not in text and "Thick" not in text and "Strain against time" not in text
    assert "\\begin{equation} \\dot\\varepsilon" in text  # equations stay in the prose too


def test_the_latex_test_paper_has_its_figure_and_equation(tmp_path):
    """test_latex.py's paper: its figure and its labelled equation, and nothing in its text changed."""
    [rec] = read_file(archive(tmp_path / "p.tar.gz", {"main.tex": MAIN, "sections/method.tex": METHOD}))
    fig, eq = rec["components"]
    assert (fig["id"], fig["label"], fig["caption"]) == ("fig:spectra", "Figure 1", "Spectra over time.")
    assert mentioned(rec, fig) == ["Fig. 1"]
    assert (eq["id"], eq["label"]) == ("eq:gap", "Eq. (1)")
    assert eq["content"] == "E_\\mathrm{g}(t) = E_\\mathrm{g}^{0} - \\Delta \\left(1 - e^{-t/\\tau}\\right),"
    assert (eq["context_before"], eq["context_after"]) == ("The gap follows", "with $\\tau = 3.1$ min (Fig. 1).")


AAS = r"""\documentclass{aastex631}
\begin{document}
\section{Data}
Counts are in Table~\ref{t:obs}; see also \cref{t:obs,t:two}.
\begin{deluxetable}{lcc}
\tablecaption{Fields observed.\label{t:obs}}
\tablehead{\colhead{Field} & \colhead{Epochs} & \colhead{Depth}}
\startdata
A & 3 & 21.5 \\
B & 5 & 22.0
\enddata
\end{deluxetable}
\begin{table*}
\caption{Groups.}\label{t:two}
\begin{tabular}{|l|c|}
\hline
Name & Kind \\
\hline
x & \multirow{2}{*}{Group} \\
y &  \\
z & one \& two \\
\hline
\end{tabular}
\end{table*}
Done.
\end{document}
"""


def test_deluxetables_hlines_multirows_and_a_reference_to_two_tables(tmp_path):
    (tmp_path / "aas.tex").write_text(AAS)
    [rec] = read_file(tmp_path / "aas.tex")
    obs, two = rec["components"]
    assert obs["cells"] == [["Field", "Epochs", "Depth"], ["A", "3", "21.5"], ["B", "5", "22.0"]]
    assert obs["header_rows"] == 1 and obs["caption"] == "Fields observed." and obs["label"] == "Table 1"
    # a second \hline under the first row: one header row; \multirow fills the empty cell below it
    assert two["cells"] == [["Name", "Kind"], ["x", "Group"], ["y", "Group"], ["z", "one & two"]]
    assert two["header_rows"] == 1 and two["label"] == "Table 2"
    assert mentioned(rec, obs) == ["Table 1", "Table 1, 2"] and mentioned(rec, two) == ["Table 1, 2"]
    assert rec["text"] == "Counts are in Table 1; see also Table 1, 2.\n\nDone."


DISPLAYS = r"""\documentclass{article}
\usepackage{amsmath}
\begin{document}
\section{Energy}
The energy is
\[ E = mc^2 \]
and the two numbered lines
\begin{align}
a &= b \\[2pt]
c &= d \label{eq:cd}
\end{align}
give Eq.~\eqref{eq:cd}. A bare tabular is prose: \begin{tabular}{ll} x & y \\[3pt] z & w \end{tabular}
\end{document}
"""


def test_display_math_shorthand_and_numbered_lines(tmp_path):
    (tmp_path / "d.tex").write_text(DISPLAYS)
    [rec] = read_file(tmp_path / "d.tex")
    shorthand, align = rec["components"]  # \[ ... \] is displaymath; \\[2pt] is a line break, not one
    assert (shorthand["label"], shorthand["content"]) == ("", "E = mc^2")
    assert (shorthand["context_before"], shorthand["context_after"]) == ("The energy is", "and the two numbered lines")
    assert align["id"] == "eq:cd" and align["label"] == "Eqs. (1), (2)"  # both lines are numbered
    assert mentioned(rec, align) == ["Eq. (2)"]
    assert "\\[ E = mc^2 \\]" in rec["text"] and "x y z w" in rec["text"]


_PIECES = [
    "word",
    "Some text,",
    "(",
    ")",
    "[",
    ";",
    ".",
    "~",
    r"\cite{a}",
    r"Fig.~\ref{fig:a}",
    r"Table~\ref{tab:a}",
    r"Eq.~\eqref{eq:a}",
    r"(\ref{fig:a})",
    r"\cref{tab:a,fig:a}",
    r"\ref{nowhere}",
    "\\begin{figure}\\caption{Cap \\ref{tab:a}.}\\label{fig:a}\\end{figure}",
    "\\begin{table}\\caption{T.}\\label{tab:a}\\begin{tabular}{ll}a & b \\\\ c & d\\end{tabular}\\end{table}",
    "\\begin{equation} x = 1 \\label{eq:a}\\end{equation}",
    "\\[ y = 2 \\]",
    "$$ w = 3 $$",
    "$z$",
    "thermo-\n",
]


def test_the_prose_is_the_same_with_and_without_the_marks_whatever_stands_beside_them(tmp_path, monkeypatch):
    """Random runs of citations, brackets, references, floats and equations: the text read with components is the
    text read with no marks at all (words apart: LaTeX puts a space or a sign between a reference and a word)."""
    rng = random.Random(11)
    path = tmp_path / "random.tex"
    for _ in range(60):
        body = "".join(rng.choice(_PIECES) + rng.choice([" ", "\n", ", ", ". "]) for _ in range(rng.randint(3, 25)))
        path.write_text(
            f"\\documentclass{{article}}\n\\begin{{document}}\n\\section{{A}}\nStart.\n{body}\n\\end{{document}}\n"
        )
        [marked] = read_file(path)
        with monkeypatch.context() as m:
            m.setattr(latex_components, "mention_marks", lambda indices: ("", ""))
            m.setattr(latex_components, "place_marks", lambda index: ("", ""))
            [plain] = read_file(path)
        assert not any(c["mentions"] for c in plain["components"])  # no marks were made
        assert marked["text"] == plain["text"] and not marked["ingest"]["warnings"]
        for comp in marked["components"]:
            assert all(marked["text"][x["start"] : x["end"]].strip() for x in comp["mentions"])


CAPTION_OF = r"""\documentclass{article}
\usepackage{wrapfig,capt-of}
\begin{document}
\section{Setup}
The pumps are listed in Table~\ref{tab:pumps} and the valves in Table~\ref{tab:valves}.
\begin{table}
\caption{Pumps of the rig.}\label{tab:pumps}
\begin{tabular}{ll} Pump & Flow \\ P1 & 3 \end{tabular}
\end{table}
\begin{wrapfigure}{r}{0.4\textwidth}
\begin{tabular}{ll} Valve & Size \\ V1 & 12 \end{tabular}
\captionof{table}{Valves of the rig.}
\label{tab:valves}
\end{wrapfigure}
The rig ran for a week, as Figure~\ref{fig:rig} shows.
\begin{figure}\centering\caption{The rig.}\label{fig:rig}\end{figure}
\end{document}
"""


def test_a_table_captioned_by_captionof_in_a_wrapfigure_is_a_numbered_table(tmp_path):
    (tmp_path / "c.tex").write_text(CAPTION_OF)
    [rec] = read_file(tmp_path / "c.tex")
    found = components_by_id(rec)
    assert [(c["id"], c["kind"], c["label"]) for c in rec["components"]] == [
        ("tab:pumps", "table", "Table 1"),
        ("tab:valves", "table", "Table 2"),  # the float is a wrapfigure; its caption makes it a table
        ("fig:rig", "figure", "Figure 1"),
    ]
    valves = found["tab:valves"]
    assert valves["caption"] == "Valves of the rig." and valves["cells"] == [["Valve", "Size"], ["V1", "12"]]
    assert mentioned(rec, valves) == ["Table 2"] and "the valves in Table 2." in rec["text"]
    no_marks(rec)


DOLLARS = r"""\documentclass{article}
\begin{document}
\section{Flow}
The head loss follows $$ h = f \frac{L}{D} \frac{v^2}{2g} $$ for a full pipe, and with $a$$b$ read as
two inline terms the friction factor is $$f = 64/\mathrm{Re}$$ in laminar flow, as Eq.~\eqref{eq:re} shows:
\begin{equation} \mathrm{Re} = v D / \nu \label{eq:re} \end{equation}
A price of \$$5$ per metre is no display.
\end{document}
"""


def test_plain_tex_dollar_displays_are_unnumbered_equations_and_the_text_keeps_them(tmp_path):
    (tmp_path / "d.tex").write_text(DOLLARS)
    [rec] = read_file(tmp_path / "d.tex")
    assert [(c["id"], c["label"], c["content"]) for c in rec["components"]] == [
        ("equation-1", "", r"h = f \frac{L}{D} \frac{v^2}{2g}"),
        ("equation-2", "", r"f = 64/\mathrm{Re}"),  # not the "$$" between two inline terms
        ("eq:re", "Eq. (1)", r"\mathrm{Re} = v D / \nu"),
    ]
    first = rec["components"][0]
    assert first["context_before"].startswith("The head loss") and first["context_after"].startswith("for a full")
    assert "$$ h = f" in rec["text"] and "$a$$b$" in rec["text"]
    no_marks(rec)
