"""PDF papers, layout-aware (pdfplumber): a two-column paper with running headers and footers, a two-line
title, a ligature, a loose accent, a line-end hyphen, a caption and a reference list, drawn with reportlab
(tests/pdf_samples.py); pages with no text layer."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from pdf_samples import DOI, make_paper_pdf, make_unmapped_font_pdf

from sciqag_dataset.builders.ingest import pdf_backends, pdf_worker, read_file, run_ingest
from sciqag_dataset.builders.ingest.deadline import TimedOut, time_limit


@pytest.fixture(scope="module")
def paper(tmp_path_factory) -> dict:
    [rec] = read_file(make_paper_pdf(tmp_path_factory.mktemp("pdf") / "paper.pdf"))
    return rec


def test_title_doi_and_sections_come_from_the_layout(paper):
    # page 1's largest text, both lines (the metadata title "doi:..." is not a title)
    assert paper["title"] == "Oxygen Vacancies Control the Band Gap of Sputtered Zinc Oxide Films"
    assert paper["metadata"]["doi"] == DOI  # printed in page 1's footer
    assert [s["heading"] for s in paper["sections"]] == [
        "Abstract",
        "Introduction",
        "Methods",
        "Results",
        "Conclusions",
        "Stability",
    ]
    q = paper["ingest"]
    assert q["extractor"] == f"pdf/{pdf_backends.resolve('auto')}"
    assert q["has_abstract"] and q["references_dropped"] == 6
    assert not q["partial"]


def test_the_text_is_clean_and_in_reading_order(paper):
    text = paper["text"]
    for gone in (
        "Journal of Imaginary Materials",
        "Page 1 of 3",
        "Page 2",
        "Transmission spectra",
        "A. Writer",
        "Imag. Lett.",
        "[4, 5]",
        "[6]",
        "Ada Quill",
        "Corresponding",
        "CC BY",
        "contributed equally",
        "3.21 0.02",
        "Wavelength",
        "Intensity",
        "650",
    ):
        # running heads and feet, caption, references, citations, front matter, footnotes, table rows, figure labels
        assert gone not in text, gone
    assert "Their band gap defines the optical window" in text  # the ligature ﬁ
    assert "Lemaître and co-workers" in text  # a loose circumflex over a dotless i
    assert "vacancy concentrations change it by up to 0.2 eV." in text  # hyphen joined, citation gone
    assert "\ufb01" not in text and "\u02c6" not in text
    # superscript citation marks go, exponents are written ^x, subscripts stay in their formula
    assert "Like Ni12P5 films, the gap tracks the 10^18 cm^−3 donors over 4 cm^2." in text
    # the left column before the right one, each paragraph whole
    assert text.index("Films of 200 nm") < text.index("The gap fell from 3.30 eV") < text.index("Vacancies set")
    sections = {s["heading"]: s["text"] for s in paper["sections"]}
    assert sections["Methods"] == (
        "Films of 200 nm were sputtered at 300 K in argon with 2 % oxygen, then "
        "annealed for 1 h at 673 K under vacuum."
    )
    assert sections["Abstract"].startswith("Sputtered zinc oxide films lose up to 0.2 eV of band gap as oxygen")


def test_pages_without_a_text_layer_are_named_and_a_scan_fails(tmp_path):
    [rec] = read_file(make_paper_pdf(tmp_path / "one.pdf", scanned_pages=1))
    assert rec["ingest"]["partial"] and "page(s) 3 have no text layer" in rec["ingest"]["partial_reason"]
    run_ingest([make_paper_pdf(tmp_path / "mostly.pdf", scanned_pages=5)], tmp_path / "w")
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    assert report["failures"][0]["error"] == "no text layer on 5 of 8 page(s) (scanned?): run OCR first"
    assert report["formats"]["pdf"]["failed"] == 1


def test_an_encrypted_pdf_asks_for_its_password_and_one_without_pages_says_so(tmp_path):
    from pypdf import PdfWriter

    papers = tmp_path / "papers"
    papers.mkdir()
    opened = make_paper_pdf(tmp_path / "open.pdf")
    for name, user, owner in (("locked.pdf", "pw", None), ("restricted.pdf", "", "owner")):
        writer = PdfWriter(clone_from=opened)
        writer.encrypt(user, owner)  # an empty user password only restricts: the text is read
        writer.write(papers / name)
    PdfWriter().write(papers / "empty.pdf")
    summary = run_ingest([papers], tmp_path / "w")
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    errors = {f["path"].rsplit("/", 1)[1]: f["error"] for f in report["failures"]}
    assert errors == {
        "locked.pdf": "encrypted PDF: decrypt it first with its password "
        "(qpdf --decrypt --password=... in.pdf out.pdf)",
        "empty.pdf": "the PDF has no pages",
    }
    assert summary.counts["ok"] == 1 and report["formats"]["pdf"]["failed"] == 2


def test_a_first_page_without_text_is_named_and_the_title_and_doi_are_found_after_it(tmp_path):
    [rec] = read_file(make_paper_pdf(tmp_path / "cover.pdf", cover_scan=True))
    assert rec["ingest"]["partial"] and "page(s) 1 have no text layer" in rec["ingest"]["partial_reason"]
    assert rec["title"] == "Oxygen Vacancies Control the Band Gap of Sputtered Zinc Oxide Films"
    assert rec["metadata"]["doi"] == DOI  # printed on the second page now


def test_a_section_after_the_reference_list_is_kept(tmp_path):
    [rec] = read_file(make_paper_pdf(tmp_path / "nature.pdf", methods_last=True))
    sections = {s["heading"]: s["text"] for s in rec["sections"]}
    assert sections["Methods"] == (
        "Targets were cleaned in argon plasma for 10 min first.\n\n13C NMR spectra of "
        "the precursors were recorded at 100 MHz in chloroform. Figure 3 (a) shows the "
        "same trend for the thicker films we grew later."
    )  # small type is still text
    assert sections["Appendix B"] == "The fit used a single Tauc line for all films."
    assert rec["ingest"]["references_dropped"] == 6 and "Writer" not in rec["text"]


def test_a_file_that_takes_too_long_fails_and_the_others_are_read(tmp_path):
    make_paper_pdf(tmp_path / "slow.pdf")
    (tmp_path / "note.txt").write_text(
        "A Plain Paper\n\nIt is read in well under a millisecond, whatever the limit.\n"
    )
    # 20 ms: the text file takes under 1 ms, the PDF over 100 ms (more, not less, on a busy machine)
    summary = run_ingest([tmp_path], tmp_path / "w", file_timeout=0.02)
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    assert summary.counts["ok"] == 1 and summary.counts["failed"] == 1
    assert report["failures"][0]["error"].startswith("gave up after 0.02 s (ingest.file_timeout)")
    assert report["formats"]["pdf"]["failed"] == 1


def test_the_limit_keeps_an_alarm_already_set():
    """pytest-timeout, or a caller's own limit, sets SIGALRM too: ours must give it back, less the time spent."""
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 50.0)
        with time_limit(5):
            pass
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 49 < left <= 50 and not fired
        with pytest.raises(TimedOut):
            with time_limit(0.05):
                try:
                    time.sleep(1)
                except Exception:  # a reader's catch-all must not swallow it
                    pass
        assert 48 < signal.getitimer(signal.ITIMER_REAL)[0] <= 50
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_a_running_head_misread_on_every_page_is_still_a_running_head(tmp_path):
    [rec] = read_file(make_paper_pdf(tmp_path / "ocr.pdf", ocr=True))
    assert "aginary Materia" not in rec["text"] and "Journa" not in rec["text"]


def test_a_paper_set_as_biomed_central_sets_it(tmp_path):
    [rec] = read_file(make_paper_pdf(tmp_path / "bmc.pdf", bmc=True))
    assert rec["metadata"]["doi"] == DOI  # printed only on the last page, by "Cite this article as"
    assert rec["ingest"]["references_dropped"] >= 1 and "Writer" not in rec["text"]  # "References 1. ..." run in
    assert "Cite this article" not in rec["text"]
    assert "Drift. Sample 1 drifted by 0.02 eV." in rec["text"]  # a run-in heading stays in its paragraph
    assert [s["heading"] for s in rec["sections"]][-1] == "Stability"


def test_glyphs_without_a_unicode_map_are_left_out_and_named(tmp_path):
    [rec] = read_file(make_unmapped_font_pdf(tmp_path / "cid.pdf"))
    assert "(cid:" not in rec["text"] and "matters for the devices." in rec["text"]
    q = rec["ingest"]
    assert any("3 glyph(s) in fonts without a Unicode map" in w for w in q["warnings"]) and not q["partial"]
    [rec] = read_file(make_unmapped_font_pdf(tmp_path / "body.pdf", unmapped_body=True))
    # 120 glyphs, of which a backend that clips the text to the page counts the 82 on it
    assert re.match(r"the text is set in fonts without a Unicode map \((120|82) glyphs\)", rec["error"])


@pytest.mark.skipif(pdf_backends.resolve("auto") != "layout", reason="PyMuPDF (the layout extra) is not installed")
def test_a_crash_of_the_layout_reader_loses_neither_the_file_nor_the_run(tmp_path):
    """MuPDF's native code can crash on a real paper: its process dies, the file is read by pdfplumber with a
    warning, and the next file starts a new reading process."""
    first, second = make_paper_pdf(tmp_path / "a.pdf"), make_paper_pdf(tmp_path / "b.pdf", batch="5 weeks")
    pdf_worker._stop()  # a fresh worker: it is busy loading the model when the crash comes

    def crash() -> None:
        deadline = time.monotonic() + 30
        while pdf_worker._worker is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        os.kill(pdf_worker._worker.proc.pid, signal.SIGSEGV)

    killer = threading.Thread(target=crash)
    killer.start()
    [rec] = read_file(first)
    killer.join()
    q = rec["ingest"]
    assert q["extractor"] == "pdf/pdfplumber" and not q["partial"]
    assert any("crashed on this file (exit status -11): read with pdfplumber instead" in w for w in q["warnings"])
    assert "Their band gap defines the optical window" in rec["text"]
    [again] = read_file(second)
    assert again["ingest"]["extractor"] == "pdf/layout" and "Their band gap" in again["text"]


def test_reading_with_the_layout_model_writes_nothing_in_the_users_home(tmp_path):
    """The layout model's runtime (ONNX Runtime) is a version that keeps no device id under ~/.cache and sends no
    usage events: a PDF read in a fresh process leaves the home folder empty. Outside CI (ONNX Runtime says
    nothing when it sees CI set, which would hide a newer runtime here)."""
    pdf_path = make_paper_pdf(tmp_path / "paper.pdf")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "GITHUB_ACTIONS", "XDG_CACHE_HOME")}
    code = (
        "import sys; from sciqag_dataset.builders.ingest import read_file; "
        "print(read_file(sys.argv[1])[0]['ingest']['extractor'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(pdf_path)],
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "pdf/layout"
    assert [p.relative_to(home) for p in home.rglob("*")] == []
