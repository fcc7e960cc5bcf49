"""Ingest stage: papers on disk -> one ``papers``-config record per paper, one reader per format.

The formats are those registered in ``registry.py`` (the built-in readers in ``formats.py``); the table below is
written from the registry:

{formats}

Formats are told by extension, checked against the content, and files with no or an unknown extension by
content alone (``detect.py``, from each reader's ``signature`` and ``sniff``). A reader is one ``read(source)``
over a ``registry.Source`` (path, detected format, ``warn``, reading options) yielding raw papers; the files
are found by ``inputs.py`` and read by ``files.py``. A format whose library is missing fails its files with
the extra to install. Every record carries an ``ingest`` column: the extractor, words, sections, whether an
abstract was found, references dropped, ``partial`` (read in part: recovered XML, missing inputs) with its
reason, and the reader's warnings; the report counts papers ok/partial/failed per format.

Storing (``store.py``): a complete read replaces a partial one: the same id, or (no DOI) the same title and
opening words; the partial record then gets a ``removed`` line. A partial copy of a paper already read whole
is skipped. Ids are stable: ``doi-<slug>`` from the DOI, else ``sha-`` + 16 hex of the SHA-256 of the
normalised text. ``run_ingest`` (``run.py``) appends to ``WORK/papers.jsonl`` and rewrites
``WORK/ingest_report.json`` on every run: ``{{"counts", "failures": [{{path, error}}], "duplicates": [{{id, kept,
duplicate, reason}}], "warnings": [{{path, warning}}]}}``.

A rerun resumes: a paper stored from the same source with the same content is skipped; one whose source
changed is stored again (``updated``), so every later stage redoes just that paper; a paper its source no
longer yields (its text, and so its ``sha-`` id, changed) gets a ``{{"status": "removed"}}`` line and drops
out of every join.
"""

from __future__ import annotations

from sciqag_dataset.builders.ingest import formats  # noqa: F401  (the built-in readers, registered on import)
from sciqag_dataset.builders.ingest.detect import detect_format
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.files import MAX_LEADING_FAILURES, iter_papers, read_file
from sciqag_dataset.builders.ingest.normalize import content_hash, normalize_doi, normalize_text, paper_id
from sciqag_dataset.builders.ingest.ranks import listing
from sciqag_dataset.builders.ingest.registry import (
    Reader,
    Source,
    format_names,
    format_table,
    readers,
    register,
    unregister,
)
from sciqag_dataset.builders.ingest.run import run_ingest

if __doc__:  # None under python -OO
    __doc__ = __doc__.format(formats=format_table())

__all__ = [
    "MAX_LEADING_FAILURES",
    "IngestError",
    "Reader",
    "Source",
    "content_hash",
    "detect_format",
    "format_names",
    "format_table",
    "iter_papers",
    "listing",
    "normalize_doi",
    "normalize_text",
    "paper_id",
    "read_file",
    "readers",
    "register",
    "run_ingest",
    "unregister",
]
