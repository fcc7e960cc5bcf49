"""LaTeX papers: single files, arXiv source archives (multi-file tar.gz, one gzipped file), with pylatexenc.

Every source here is written for these tests (no paper's text is copied)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from sciqag_dataset.builders.ingest import read_file, run_ingest
from sciqag_dataset.core.jsonl import iter_latest

MAIN = r"""\documentclass[twocolumn]{revtex4-2}
\usepackage{amsmath,siunitx}
\newcommand{\gap}{E_\mathrm{g}}
\newcommand\material{CsPbBr$_3$}
\newcommand{\vect}[1]{\mathbf{#1}}
% \title{A title left in a comment}
\begin{document}
\title{Halide Segregation in \material{} Nanocrystals\\ under Illumination\thanks{Funded by nobody.}}
\author{Ada Quill}
\author{Bo Renner}
\affiliation{Institute of Imaginary Materials}
\begin{abstract}
We follow the optical gap $\gap$ of \material{} nanocrystals under light \cite{smith2020}.
The gap shifts by \SI{45}{\milli\electronvolt} within \SI{10}{\minute}.
\end{abstract}
\maketitle
\section{Introduction}
Mixed halide perovskites segregate under light~\cite{a,b}. We excite them at \SI{300}{\kelvin}.
\input{sections/method}
\iffalse
A paragraph the authors cut.
\fi
\begin{figure}[t]
\includegraphics{fig1.pdf}
\caption{Spectra over time.}
\label{fig:spectra}
\end{figure}
\section{Results}
The gap follows
\begin{equation}
\gap(t) = \gap^{0} - \Delta \left(1 - e^{-t/\tau}\right), \label{eq:gap}
\end{equation}
with $\tau = 3.1$~min (Fig.~\ref{fig:spectra}).
\appendix
\section{Fitting details}
We fitted with least squares.
\begin{thebibliography}{9}
\bibitem{a} A. Author, J. Imag. Mater. 1, 1 (2020), doi:10.1234/another.paper
\bibitem{b} B. Author, ibid.
\end{thebibliography}
\end{document}
"""
METHOD = r"""\subsection{Synthesis}
Nanocrystals were made by hot injection at \SI{170}{\celsius}. % a remark 100% dropped
Yields reached 80\%.
"""


def archive(path: Path, files: dict[str, str]) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())
    return path


def check_paper(rec: dict) -> None:
    assert rec["title"] == "Halide Segregation in CsPbBr$_3$ Nanocrystals under Illumination"
    assert rec["metadata"]["authors"] == ["Ada Quill", "Bo Renner"]
    assert rec["metadata"]["doi"] is None  # the one in the bibliography is another paper's
    assert [s["heading"] for s in rec["sections"]] == [
        "Abstract",
        "Introduction",
        "Synthesis",
        "Results",
        "Appendix: Fitting details",
    ]
    text = rec["text"]
    # math kept verbatim as LaTeX, macros expanded, the label gone
    assert "$E_\\mathrm{g}$" in text
    assert "\\begin{equation} E_\\mathrm{g}(t) = E_\\mathrm{g}^{0} - \\Delta \\left(1 - e^{-t/\\tau}\\right)," in text
    assert "\\label" not in text and "$\\tau = 3.1$ min (Fig. 1)." in text  # the number LaTeX prints
    # siunitx quantities with their units; comments, \iffalse blocks, figures, citations and references gone
    assert "45 meV within 10 min" in text and "at 300 K" in text and "170 °C" in text and "80%" in text
    for gone in (
        "title left in a comment",
        "authors cut",
        "Spectra over time",
        "Imaginary Materials",
        "Funded",
        "Author, J.",
        "remark",
        "\\cite",
        "smith2020",
        "\\ref",
        "<ref>",
        "<cit.>",
    ):
        assert gone not in text, gone
    assert "under light. We excite" in text  # no space left before the full stop a citation stood before
    q = rec["ingest"]
    assert q["extractor"] == "latex/pylatexenc" and q["has_abstract"] and q["references_dropped"] == 2
    assert q["partial"] is False


def test_a_multi_file_arxiv_archive(tmp_path):
    path = archive(
        tmp_path / "2411.00001.tar.gz",
        {"main.tex": MAIN, "sections/method.tex": METHOD, "old/draft.tex": "\\section{x} no class here"},
    )
    [rec] = read_file(path)
    check_paper(rec)
    assert rec["source_format"] == "latex"


def test_a_tex_file_on_disk_and_its_inputs_and_a_fragment_is_not_a_paper(tmp_path):
    (tmp_path / "paper" / "sections").mkdir(parents=True)
    (tmp_path / "paper" / "main.tex").write_text(MAIN, encoding="utf-8")
    (tmp_path / "paper" / "sections" / "method.tex").write_text(METHOD, encoding="utf-8")
    work = tmp_path / "work"
    summary = run_ingest([tmp_path / "paper"], work)
    assert summary.counts["ok"] == 1 and not summary.counts["failed"]  # method.tex is read through main.tex
    [rec] = [json.loads(line) for line in (work / "papers.jsonl").read_text().splitlines()]
    check_paper(rec)
    report = json.loads((work / "ingest_report.json").read_text())
    assert any("without \\documentclass" in w["warning"] for w in report["warnings"])


def test_a_gzipped_single_file_as_arxiv_serves_it(tmp_path):
    path = tmp_path / "2411.00002"  # arXiv's download: no extension
    path.write_bytes(gzip.compress(MAIN.replace("\\input{sections/method}", METHOD).encode()))
    [rec] = read_file(path)
    check_paper(rec)


def test_a_missing_input_makes_the_paper_partial_and_nothing_outside_its_folder_is_read(tmp_path):
    (tmp_path / "secret.tex").write_text("TOP SECRET TEXT", encoding="utf-8")
    (tmp_path / "paper").mkdir()
    source = MAIN.replace("\\input{sections/method}", "\\input{../secret}\n\\input{sections/missing}")
    (tmp_path / "paper" / "main.tex").write_text(source, encoding="utf-8")
    [rec] = read_file(tmp_path / "paper" / "main.tex")
    assert "TOP SECRET" not in rec["text"]
    assert rec["ingest"]["partial"] is True and "sections/missing" in rec["ingest"]["partial_reason"]


def test_a_partial_read_without_a_doi_is_replaced_by_its_complete_copy(tmp_path):
    """No DOI: the two reads have different sha- ids; the title and the opening words tell they are one paper."""
    cut = archive(tmp_path / "v1.tar.gz", {"main.tex": MAIN})  # sections/method.tex missing
    whole = archive(tmp_path / "v2.tar.gz", {"main.tex": MAIN, "sections/method.tex": METHOD})
    work = tmp_path / "work"
    run_ingest([cut], work)
    [partial] = iter_latest(work / "papers.jsonl")
    assert partial["ingest"]["partial"] and partial["id"].startswith("sha-")
    summary = run_ingest([cut, whole], work)
    assert summary.counts["replaced partial"] == 1
    latest = {r["id"]: r for r in iter_latest(work / "papers.jsonl")}
    assert latest[partial["id"]]["status"] == "removed"  # drops out of every later stage
    [complete] = [r for r in latest.values() if r.get("status") != "removed"]
    assert complete["source_path"].endswith("v2.tar.gz") and not complete["ingest"]["partial"]
    assert "hot injection" in complete["text"]
    # later runs, and a run that meets the whole paper first, never store the partial copy
    assert run_ingest([cut, whole], work).counts["ok"] == 0
    summary = run_ingest([whole, cut], tmp_path / "other")
    assert summary.counts["ok"] == 1 and summary.counts["skipped"] == 1
    assert [r["source_path"] for r in iter_latest(tmp_path / "other" / "papers.jsonl")] == [str(whole)]


def test_archives_that_are_not_papers_fail_with_a_reason(tmp_path):
    no_main = archive(tmp_path / "a.tar.gz", {"intro.tex": METHOD})
    data = tmp_path / "data.gz"
    data.write_bytes(gzip.compress(b"1,2,3\n" * 100))
    results = {Path(r["path"]).name: r.get("error") for r in (*read_file(no_main), *read_file(data))}
    assert "no main LaTeX file" in results["a.tar.gz"]
    assert "no \\documentclass" in results["data.gz"]


def test_without_pylatexenc_latex_fails_with_the_extra_to_install_and_other_formats_are_read(tmp_path):
    archive(tmp_path / "p.tar.gz", {"main.tex": MAIN.replace("\\input{sections/method}", "")})
    (tmp_path / "note.txt").write_text("A Plain Paper\n\nIt is read without any extra package at all.\n")
    code = (
        "import sys, json; sys.modules['pylatexenc'] = None; sys.modules['pylatexenc.latex2text'] = None\n"
        "from sciqag_dataset.builders.ingest import iter_papers\n"
        f"print(json.dumps(list(iter_papers([{str(tmp_path)!r}]))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    items = json.loads(out.stdout)
    assert [i["error"] for i in items if "error" in i] == [
        "reading LaTeX needs the `pylatexenc` package, which is not installed: pip install 'sciqag-hf[ingest]'"
    ]
    assert [i["title"] for i in items if "id" in i] == ["A Plain Paper"]


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            r"\newcommand{\K}{\kappa_\mathrm{L}}"
            "\n"
            r"\def\wt{wt\%}"
            "\n"
            r"\begin{document}\section{A}Thermal $\K$ fell at 5\wt{} doping.\end{document}",
            "Thermal $\\kappa_\\mathrm{L}$ fell at 5wt% doping.",
        ),
        (
            r"\begin{document}\section{A}Current of \SI{2.5}{\milli\ampere\per\centi\meter\squared} and "
            r"\si{\micro\meter} scale.\end{document}",
            "Current of 2.5 mA/cm² and µm scale.",
        ),
    ],
)
def test_macros_and_units(tmp_path, source, expected):
    (tmp_path / "p.tex").write_text("\\documentclass{article}\n" + source, encoding="utf-8")
    [rec] = read_file(tmp_path / "p.tex")
    assert rec["text"] == expected


def test_cross_references_read_as_the_numbers_latex_prints(tmp_path):
    source = r"""\documentclass{article}\begin{document}
\section{Model}\label{sec:model}
The rate is
\begin{equation}r = k c \label{eq:rate}\end{equation}
and the balance
\begin{align}
a &= b \nonumber \\
c &= \begin{pmatrix} 1 \\ 2 \end{pmatrix} \label{eq:balance} \\
d &= e \label{eq:last}
\end{align}
\begin{figure}\caption{Setup.}\label{fig:setup}\end{figure}
\begin{table}\caption{Rates.}\label{tab:rates}\end{table}
\subsection{Limits}\label{sec:limits}
\begin{lemma}\label{lem:bound}Rates are bounded.\end{lemma}
{\bf Fast limit.} \label{par:fast} Rates saturate.
As shown in Fig.~\ref{fig:setup} and Table~\ref{tab:rates}, Eq.~\eqref{eq:rate} and Eqs.~(\ref{eq:balance}) and
\eqref{eq:last} hold (Sec.~\ref{sec:limits}; \cref{app:fit}); see also \autoref{fig:setup}, the code in
\texttt{kinetics.fit}, the limit in \S\ref{par:fast}, Lemma~\ref{lem:bound} and Fig.~\ref{fig:nowhere}.
\appendix
\section{Fit}\label{app:fit}
Least squares, as in Sec.~\ref{sec:model}.
\end{document}
"""
    (tmp_path / "p.tex").write_text(source, encoding="utf-8")
    [rec] = read_file(tmp_path / "p.tex")
    assert (
        "As shown in Fig. 1 and Table 1, Eq. (1) and Eqs. (2) and (3) hold (Sec. 1.1; Sec. A); see also "
        "Fig. 1, the code in kinetics.fit, the limit in §1.1, and."
    ) in rec["text"]
    # a label in a paragraph is its section's; one in a lemma (its own counter) or nowhere goes, with its word
    assert "Least squares, as in Sec. 1." in rec["text"]


CITING = r"""\documentclass{aastex631}\begin{document}
\section{Methods}
The solver of \citet{quill16} follows \citealt{renner17}, as \citeauthor{quill16} proposed
(see \citealp{renner17}); both predate \citet{wide20} by years \citep{quill16}. Natbib's plain
\cite{renner17} names its authors in an author-year style.
\bibliographystyle{aasjournal}
\bibliography{refs}
\end{document}
"""
BBL = r"""\begin{thebibliography}{3}
\bibitem[{Quill} et~al.(2016)]{quill16} Quill, A., Renner, B., \& Writer, C. 2016, J. Imag. Mater., 1, 1
\bibitem[Renner \& Quill(2017)]{renner17} Renner, B., \& Quill, A. 2017, Imag. Lett., 2, 2
\bibitem[{The Imaginary Collaboration}(2020)]{wide20} The Imaginary Collaboration 2020, Imag. Lett., 3, 3
\end{thebibliography}
"""
BIB = r"""@article{quill16, author = {Quill, Ada and Renner, Bo and Writer, Cy}, year = 2016, title = {A}}
@string{jim = "J. Imag. Mater."}
@ARTICLE{renner17,
  author = "Bo Renner and Ada Quill",
  year = {2017}, journal = jim}
@misc{wide20, author = {{The Imaginary Collaboration}}, date = {2020-01}}
"""


@pytest.mark.parametrize(
    "files",
    [
        {"ms.tex": CITING, "ms.bbl": BBL},  # arXiv keeps the .bbl
        {"ms.tex": CITING, "refs.bib": BIB},  # a repository keeps the .bib
        {"ms.tex": CITING.replace("\\bibliography{refs}", BBL)},
    ],
)
def test_textual_citations_read_as_the_paper_prints_them(tmp_path, files):
    [rec] = read_file(archive(tmp_path / "p.tar.gz", files))
    names = "Renner and Quill" if "refs.bib" in files else "Renner & Quill"
    assert rec["sections"][0]["text"] == (
        f"The solver of Quill et al. (2016) follows {names} 2017, as Quill et al. proposed (see {names}, "
        f"2017); both predate The Imaginary Collaboration (2020) by years. Natbib's plain {names} (2017) names "
        "its authors in an author-year style."
    )
    assert rec["ingest"]["references_dropped"] == (0 if "refs.bib" in files else 3)
    # a numbered class: \cite prints a number, which means nothing without the list; it goes
    numbered = {name: text.replace("aastex631", "revtex4-2") for name, text in files.items()}
    [rec] = read_file(archive(tmp_path / "n.tar.gz", numbered))
    assert "Natbib's plain names its authors" in rec["text"] and "Quill et al. (2016)" in rec["text"]


def test_numbers_come_from_captions_and_what_was_numbered_last(tmp_path):
    source = r"""\documentclass{article}\begin{document}
\section{Data}
\begin{figure}\includegraphics{logo.pdf}\end{figure}
\begin{figure}\caption{Spectra.}\label{fig:spectra}\caption{Maps.}\label{fig:maps}\end{figure}
\begin{multline}a = b \\ + c \label{eq:long}\end{multline}
\begin{subequations}\begin{align}x &= 1 \label{eq:xa} \\ y &= 2\end{align}\end{subequations}
\begin{equation}z = 3 \label{eq:z}\end{equation}
\begin{center}\includegraphics{map.pdf}\captionof{figure}{A map.}\label{fig:map}\end{center}
See Figs.~\ref{fig:spectra} and \ref{fig:maps}, Eqs.~\eqref{eq:long} and \eqref{eq:z}, and Fig.~\ref{fig:map}.
Also Eq.~\eqref{eq:xa}.
\end{document}
"""
    (tmp_path / "p.tex").write_text(source, encoding="utf-8")
    [rec] = read_file(tmp_path / "p.tex")
    # a figure without a caption has no number; two captions, two numbers; multline is one equation; a
    # subequation (2a) is not guessed
    assert "See Figs. 1 and 2, Eqs. (1) and (3), and Fig. 3. Also." in rec["text"]
    assert "A map." not in rec["text"] and "figure" not in rec["text"]  # the caption outside a float goes too


def test_inputs_that_real_sources_have(tmp_path):
    """A main file reached through a link (a Hub cache), an archive whose figures outweigh the TeX limit, and an
    author list with affiliation marks."""
    (tmp_path / "blobs").mkdir()
    (tmp_path / "snapshot").mkdir()
    source = MAIN.replace("\\input{sections/method}", METHOD).replace(
        "\\author{Ada Quill}", "\\author{Ada Quill$^{1,2}$, Cy Dorn\\textsuperscript{2}\\\\ University of Nowhere}"
    )
    (tmp_path / "blobs" / "abc123").write_text(source, encoding="utf-8")
    (tmp_path / "snapshot" / "main.tex").symlink_to(tmp_path / "blobs" / "abc123")
    [rec] = read_file(tmp_path / "snapshot" / "main.tex")
    assert rec["metadata"]["authors"] == ["Ada Quill", "Cy Dorn", "Bo Renner"]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (
            ("main.tex", MAIN.encode()),
            ("sections/method.tex", METHOD.encode()),
            ("figures/big.eps", b"0" * (70 << 20)),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "big.tar.gz").write_bytes(buf.getvalue())
    [rec] = read_file(tmp_path / "big.tar.gz")  # 70 MB of figure: only the TeX counts against the limit
    check_paper(rec)


def test_sources_that_would_grow_without_bound_are_refused(tmp_path):
    macro = "\\w"
    levels = ["\\newcommand{\\wa}{x x}"] + [
        "\\newcommand{" + macro + b + "}{" + (macro + a) * 50 + "}" for a, b in zip("abcd", "bcde")
    ]
    (tmp_path / "bomb.tex").write_text(
        "\\documentclass{article}\n" + "\n".join(levels) + "\n\\begin{document}\\section{A}\\we\\end{document}\n"
    )
    [item] = read_file(tmp_path / "bomb.tex")  # 420 bytes that would be 20 MB
    assert "grows without bound" in item["error"]


def test_a_long_macro_used_many_times_fails_alone_quickly_in_little_memory(tmp_path):
    """A 250 KB source whose one pass of substitution would build 5 GB (a 100 KB macro used 50,000 times): the
    growth is bounded as it happens, so it fails with its reason under a 2 GB address-space cap, and its
    neighbour is read."""
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "bomb.tex").write_text(
        "\\documentclass{article}\n\\def\\a{" + "x" * 100_000 + "}\n\\begin{document}"
        "\\section{A}" + "\\a " * 50_000 + "\\end{document}\n",
        encoding="utf-8",
    )
    (papers / "paper.tex").write_text(MAIN.replace("\\input{sections/method}", METHOD), encoding="utf-8")
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from sciqag_dataset.builders.ingest import run_ingest\n"
        f"run_ingest([{str(papers)!r}], {str(tmp_path / 'work')!r})"
    )
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert time.monotonic() - start < 30
    [failure] = json.loads((tmp_path / "work" / "ingest_report.json").read_text())["failures"]
    assert failure["path"].endswith("bomb.tex") and "grows without bound" in failure["error"]
    [rec] = iter_latest(tmp_path / "work" / "papers.jsonl")
    check_paper(rec)
