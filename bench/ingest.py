"""Ingest throughput, side by side in one run on this machine.

    python bench/ingest.py               # 24 files per format
    python bench/ingest.py --copies 60

1. PDF pages/s: pypdf's text per page (no layout at all) against the reader (words, columns, headers, headings)
   with each backend: characters from pdfplumber, from PDFium (pypdfium2), and PyMuPDF with its layout model
   (``layout``, when installed), over the same files; ``--pdfs DIR`` adds a folder of real papers, ``--pdf-only``
   skips the rest. One core: ``taskset -c 0 python bench/ingest.py ...`` (the layout model's ONNX session uses
   every core it may).
2. Papers/s per format (text, Markdown, JATS XML, LaTeX archive, PDF) with 1 and 2 workers: `sciqag run
   --stages ingest --executor local --tasks W --workers W`, a fresh work dir each.

Inputs are written here: copies of the test samples (tests/pdf_samples.py, tests/builders/test_latex.py, the JATS
fixture), each copy's text changed by a sentence so that none is a duplicate.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import tarfile
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "builders")]  # the shared samples; test_latex.py

from pdf_samples import make_paper_pdf  # noqa: E402
from pypdf import PdfReader  # noqa: E402
from test_latex import MAIN, METHOD  # noqa: E402

from sciqag_dataset.builders.ingest import pdf, pdf_backends, read_file  # noqa: E402
from sciqag_dataset.config.config_file import Config  # noqa: E402
from sciqag_dataset.orchestration import pipeline  # noqa: E402
from sciqag_dataset.orchestration.scale import ScaledRunner  # noqa: E402


def inputs(root: Path, copies: int) -> dict[str, Path]:
    samples = Path(pipeline.sample_papers()[0])
    jats = (ROOT / "tests" / "fixtures" / "ingest" / "jats_article.xml").read_text(encoding="utf-8")
    folders = {}
    for fmt in ("txt", "md", "xml", "latex", "pdf"):
        folders[fmt] = root / fmt
        folders[fmt].mkdir(parents=True)
    for c in range(copies):
        note = f"This is copy {c}."
        (folders["txt"] / f"p{c}.txt").write_text(
            (samples / "thermoelectric_skutterudite.txt").read_text().replace("\n\n", f"\n\n{note}\n\n", 1)
        )
        (folders["md"] / f"p{c}.md").write_text(
            (samples / "sodium_ion_cathode.md").read_text().replace("\n\n", f"\n\n{note}\n\n", 1)
        )
        (folders["xml"] / f"p{c}.xml").write_text(  # a DOI and a sentence of its own: not a duplicate
            re.sub(r'(pub-id-type="doi">[^<]+)', rf"\g<1>.{c}", jats, count=1).replace("<p>", f"<p>{note} ", 1)
        )
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for name, text in (
                ("main.tex", MAIN.replace("We fitted", f"{note} We fitted")),
                ("sections/method.tex", METHOD),
            ):
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        (folders["latex"] / f"p{c}.tar.gz").write_bytes(buf.getvalue())
        make_paper_pdf(folders["pdf"] / f"p{c}.pdf", batch=f"{c + 2} weeks", doi=f"10.5555/imag.2031.{c}")
    return folders


def pdf_pages_per_second(folder: Path) -> tuple[dict[str, float], int]:
    """pages/s of pypdf's plain text ("pypdf"), and of the reader with each backend, over the same files."""
    files = sorted(folder.glob("*.pdf"))
    pages = sum(len(PdfReader(f).pages) for f in files)
    started = time.perf_counter()
    for f in files:
        [p.extract_text() for p in PdfReader(f).pages]
    rates = {"pypdf": pages / (time.perf_counter() - started)}
    for backend in pdf_backends.BACKENDS:
        if backend == "layout" and pdf_backends.resolve("auto") != "layout":
            continue  # the layout extra is not installed
        pdf.BACKEND = backend
        read_file(files[0])  # a model loads once per process: not counted
        started = time.perf_counter()
        for f in files:
            read_file(f)
        rates[backend] = pages / (time.perf_counter() - started)
    pdf.BACKEND = "auto"
    return rates, pages


def _rates(rates: dict[str, float]) -> str:
    base = rates["pdfplumber"]
    return ", ".join(f"{k} {v:.1f} pages/s ({v / base:.2f}x pdfplumber)" for k, v in rates.items())


def papers_per_second(folder: Path, work: Path, workers: int) -> float:
    cfg = Config(work_dir=str(work), inputs=[str(folder)])
    cfg.executor.kind, cfg.executor.tasks, cfg.executor.workers = "local", workers, workers
    with pipeline.Endpoints(cfg) as endpoints:
        started = time.perf_counter()
        summary = ScaledRunner(cfg)(["ingest"], endpoints)["ingest"]
        seconds = time.perf_counter() - started
    files = len(list(folder.iterdir()))
    if summary.counts["ok"] != files:
        print(f"warning: {folder.name}: {summary.counts['ok']} of {files} papers stored ({dict(summary.counts)})")
    return files / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=24)
    ap.add_argument("--pdfs", type=Path, help="also measure pages/s on the PDFs of this folder (real papers)")
    ap.add_argument("--pdf-only", action="store_true", help="pages/s only, no papers/s per format")
    args = ap.parse_args()
    if args.pdfs:
        rates, pages = pdf_pages_per_second(args.pdfs)
        print(f"{args.pdfs}: {pages} pages: {_rates(rates)}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folders = inputs(root / "in", args.copies)
        pdf_rates, pages = pdf_pages_per_second(folders["pdf"])
        if args.pdf_only:
            print(f"samples, {pages} pages: {_rates(pdf_rates)}")
            return
        rates = {
            fmt: [papers_per_second(folder, root / f"w-{fmt}-{w}", w) for w in (1, 2)]
            for fmt, folder in folders.items()
        }
    print(f"\nPDF, {pages} pages ({args.copies} files): {_rates(pdf_rates)}")
    print(f"\n{args.copies} papers per format, datatrove Local executor, {os.cpu_count()} cores")
    print(f"{'format':>8} | {'1 worker p/s':>12} | {'2 workers p/s':>13} | ratio")
    for fmt, (one, two) in rates.items():
        print(f"{fmt:>8} | {one:>12.1f} | {two:>13.1f} | {two / one:.2f}x")


if __name__ == "__main__":
    main()
