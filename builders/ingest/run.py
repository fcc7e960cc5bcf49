"""``run_ingest``: the input files, read by their formats' readers, into ``WORK/papers.jsonl`` and
``WORK/ingest_report.json`` (``store.py``), on one machine or as ranks (``ranks.py``)."""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

from tqdm.auto import tqdm

from sciqag_dataset.builders.ingest import pdf_backends
from sciqag_dataset.builders.ingest.files import iter_inputs, read_path
from sciqag_dataset.builders.ingest.inputs import input_list
from sciqag_dataset.builders.ingest.ranks import excluded, parse_slice, slice_reader
from sciqag_dataset.builders.ingest.store import ON_DUPLICATE, Report, Seen, mark_removed, store
from sciqag_dataset.core import runner
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import JsonlWriter
from sciqag_dataset.core.text_repair import repair_text

log = logging.getLogger(__name__)

PAPERS_FILE = "papers.jsonl"
REPORT_FILE = "ingest_report.json"


def run_ingest(
    paths,
    work_dir: str | os.PathLike,
    *,
    on_duplicate: str = "skip",
    follow_symlinks: bool = False,
    shard: tuple[int, int] | None = None,
    parsed_by: int | None = None,
    grobid_url: str | None = None,
    pdf_backend: str | None = None,
    file_timeout: float | None = None,
    max_file_mb: float | None = None,
) -> runner.Summary:
    """Read ``paths`` into ``WORK/papers.jsonl``; write ``WORK/ingest_report.json``.

    ``on_duplicate``: "skip" keeps the first, "keep" stores the copy as ``<id>-dupN``, "error" stores the
    others and then raises UserError listing the duplicates. Whatever goes wrong with one input (finding,
    naming, opening, decoding, parsing or storing it) is recorded as a failure with its path (and line)
    and the other inputs are read.

    Scaled out (``ranks.py``): ``shard=(i, n)`` only parses slice i into the work dir's ``.ingest`` folder;
    ``parsed_by=n`` then stores what the n ranks parsed, as a plain run would have. ``grobid_url``: PDFs go to
    that GROBID server (``grobid.py``); else ``pdf_backend`` reads them (``pdf.py``: auto, layout, pdfplumber, pdfium).
    ``file_timeout``: a file of one paper whose reading (its download
    included) takes longer (in seconds) fails, and the others are read; so does a remote file whose download
    passes ``max_file_mb`` megabytes.
    """
    if on_duplicate not in ON_DUPLICATE:
        raise UserError(f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}, not {on_duplicate!r}")
    paths = input_list(paths)  # a URL with credentials is refused before anything is written
    work = Path(work_dir)
    out, report_path = work / PAPERS_FILE, work / REPORT_FILE
    exclude = excluded(work)
    # reading options: what selects a reader, and how the PDF reader reads
    options = {"grobid_url": grobid_url} if grobid_url else {"pdf_backend": pdf_backends.resolve(pdf_backend)}
    read = functools.partial(read_path, options=options, timeout=file_timeout, max_mb=max_file_mb)
    if shard is not None:
        reader = f"grobid {grobid_url}" if grobid_url else f"pdf {options['pdf_backend']}"
        return parse_slice(paths, work, shard, exclude, follow_symlinks, read, reader=reader)
    report = Report(on_duplicate)
    seen = Seen(out)
    read = slice_reader(work, parsed_by, read) if parsed_by else read
    complete = False
    try:
        with JsonlWriter(out) as writer, tqdm(desc="ingest", unit="paper") as bar:
            for path, items in iter_inputs(paths, exclude, follow_symlinks, read):
                if _read_source(items, writer, seen, report, bar):
                    mark_removed(repair_text(path)[0], writer, seen, report)
        complete = True
    finally:
        report.write(report_path, out, complete)
    if on_duplicate == "error" and report.duplicates:
        listing = "\n".join(
            f"  {d['id']} ({d['reason']}): {d['duplicate']} duplicates {d['kept']}" for d in report.duplicates
        )
        raise UserError(
            f"{len(report.duplicates)} duplicate paper(s) found and not stored (on_duplicate='error'); "
            f"details in {report_path}:\n{listing}"
        )
    return report.summary


def _read_source(items, writer: JsonlWriter, seen: Seen, report: Report, bar) -> bool:
    """Store one input's papers; True when it was read without any failure."""
    clean = True
    for item in items:
        if "warning" in item:
            report.note(item["path"], item["warning"])
            continue
        bar.update(1)
        if "error" in item:
            report.fail(item)
            clean = False
            continue
        try:
            store(item, writer, seen, report)
        except Exception as exc:  # storing one paper must not stop the others either
            log.exception("could not store %s", item.get("id"))
            report.fail(
                {"path": item.get("source_path"), "error": f"could not store the paper ({type(exc).__name__}: {exc})"}
            )
            clean = False
    return clean
