"""LaTeX defect classes of real papers, as reductions written for these tests: expl3 and key-value setup code in
the body leaking its arguments as text, a DOI given only by a metadata command of the class (``\\acmDOI{...}``),
and a footnote inside the abstract."""

from __future__ import annotations

from sciqag_dataset.builders.ingest import read_file

_PAPER = r"""\documentclass{article}
%s
\title{Slow Relaxations in Layered Magnets}
\begin{document}
\maketitle
\begin{abstract}
We trace slow relaxations in layered magnets over hours of cooling.
\end{abstract}
\section{Introduction}
%s
The contacts did not drift while the carriers froze out.
\section{Conclusion}
The stage is now left to cool overnight.
\end{document}
"""


def _read(tmp_path, preamble: str = "", body: str = "") -> dict:
    path = tmp_path / "main.tex"
    path.write_text(_PAPER % (preamble, body), encoding="utf-8")
    [rec] = read_file(path)
    assert "text" in rec, rec
    return rec


def test_expl3_and_key_value_setup_in_the_body_is_not_text(tmp_path):
    body = r"""\ExplSyntaxOn
\keys_set:nn { slowmag } { ramp~speed = 2, leads = fresh }
\tl_new:N \l_slowmag_label_tl
\ExplSyntaxOff
\sisetup{separate-uncertainty = true, per-mode = symbol}
\keys_set:nn { slowmag / plot } { width = 5cm }
\hypersetup{colorlinks=true, linkcolor=blue}"""
    rec = _read(tmp_path, body=body)
    for leaked in ("slowmag", "ramp", "set:nn", "uncertainty", "colorlinks", "width", "tl_new"):
        assert leaked not in rec["text"], leaked
    assert "The contacts did not drift while the carriers froze out." in rec["text"]


def test_a_text_command_with_an_equals_sign_keeps_its_words(tmp_path):
    rec = _read(tmp_path, body=r"We kept \emph{n = 3} samples and \textbf{the ratio was fixed}.")
    assert "n = 3" in rec["text"] and "the ratio was fixed" in rec["text"]


def test_a_doi_given_by_a_metadata_command_of_the_class_is_read(tmp_path):
    assert _read(tmp_path, r"\acmDOI{10.5555/3580000.3580042}")["metadata"]["doi"] == "10.5555/3580000.3580042"
    rec = _read(tmp_path, r"\articleDOI{https://doi.org/10.5555/slow.2031.7}")
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"
    # a DOI in the body is another work's, not this paper's
    assert _read(tmp_path, body=r"Data: \url{https://doi.org/10.5555/data.1}.")["metadata"]["doi"] is None


def test_a_footnote_inside_the_abstract_is_not_abstract_text(tmp_path):
    path = tmp_path / "main.tex"
    abstract = (
        r"We trace slow relaxations\footnote{The logs are kept at \url{https://example.org/slow}.} in layered"
        "\n"
        r"magnets\thanks{Written while the stage cooled.} over hours of cooling,\footnote[2]{A second note.}"
        "\n"
        r"and find that the contacts do not drift.\footnotemark\footnotetext{A note set apart.}"
    )
    path.write_text(
        (_PAPER % ("", "")).replace("We trace slow relaxations in layered magnets over hours of cooling.", abstract)
    )
    [rec] = read_file(path)
    [text] = [s["text"] for s in rec["sections"] if s["heading"] == "Abstract"]
    assert " ".join(text.split()) == (
        "We trace slow relaxations in layered magnets over hours of cooling, and find that the contacts do not drift."
    )
