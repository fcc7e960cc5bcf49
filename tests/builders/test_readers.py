"""The reader registry: a new format is one reader and its registration, and nothing else changes.

The ``.sqp`` format here is made up for these tests (a "simple quantity paper": ``key: value`` lines), and so is
every paper written in it; the library the ``.sqz`` reader imports does not exist, as a missing extra would not.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sciqag_dataset.builders import ingest
from sciqag_dataset.builders.ingest import Reader, Source, detect_format, read_file, register, run_ingest, unregister
from sciqag_dataset.builders.ingest.errors import RecordError
from sciqag_dataset.builders.ingest.registry import Head, extensions, format_table

MISSING_LIBRARY = "sciqag_made_up_library_for_tests"


def sqp_read(source: Source) -> Iterator[dict]:
    yield sqp_paper(source.text(), source.warn)


def sqp_paper(text: str, warn) -> dict:
    """A ``.sqp`` paper: a ``SQP1`` line, ``title:``, then ``section:`` headings with their text; ``lost:`` lines
    say what part of the paper did not survive (the read is then partial)."""
    title, sections, lost = "", [], []
    for line in text.splitlines()[1:]:
        key, _, value = line.partition(":")
        if key == "title":
            title = value.strip()
        elif key == "section":
            sections.append([value.strip(), ""])
        elif key == "lost":
            warn(f"lost: {value.strip()}")
            lost.append(value.strip())
        elif line.strip() and sections:
            sections[-1][1] += line + "\n"
    return {"title": title, "sections": sections, "extractor": "sqp/test", "partial": lost}


def sqp_sniff(head: Head) -> bool:
    return head.data.startswith(b"SQP1\n")


PAPER = """SQP1
title: Damping of a Cork Pendulum in Still Air
section: Setup
A Cork bob of 4 g swung on a 0.5 m thread; its amplitude was read off a paper scale every ten swings.
section: Results
The amplitude halved after 37 swings, and the decay was close to exponential over the whole run.
"""


@pytest.fixture
def sqp_reader():
    reader = register(Reader("sqp", sqp_read, extensions=(".sqp",), sniff=sqp_sniff, label="SQP", about="test"))
    try:
        yield reader
    finally:
        unregister(reader)


@pytest.fixture
def sqz_reader(tmp_path, monkeypatch):
    """A reader module whose library is not installed, imported as ``formats.py`` imports the built-in ones."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "sqz_reader.py").write_text(f"import {MISSING_LIBRARY}\n\n\ndef read(source):\n    yield {{}}\n")
    monkeypatch.syspath_prepend(str(folder))
    try:
        read = importlib.import_module("sqz_reader").read
    except ImportError as exc:
        read = exc
    reader = register(Reader("sqz", read, extensions=(".sqz",), extra="sqz", label="SQZ", about="test"))
    try:
        yield reader
    finally:
        unregister(reader)
        sys.modules.pop("sqz_reader", None)


def test_a_registered_format_is_read_by_run_ingest_with_nothing_else_changed(tmp_path, sqp_reader):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "pendulum.sqp").write_text(PAPER)
    (inputs / "cut.sqp").write_text(
        PAPER.replace("Cork", "Balsa") + "lost: the table of swing counts\nlost: the last figure\n"
    )
    (inputs / "no_extension").write_text(PAPER.replace("Cork", "Pine"))  # recognised by its sniff
    (inputs / "note.txt").write_text("A Plain Note\n\nThe plain text reader is still there, unchanged.\n")

    summary = run_ingest([inputs], tmp_path / "work")

    stored = {r["title"]: r for r in map(json.loads, (tmp_path / "work" / "papers.jsonl").read_text().splitlines())}
    whole = stored["Damping of a Cork Pendulum in Still Air"]
    assert whole["source_format"] == "sqp" and [s["heading"] for s in whole["sections"]] == ["Setup", "Results"]
    assert whole["ingest"]["extractor"] == "sqp/test" and whole["ingest"]["partial"] is False
    assert "amplitude halved after 37 swings" in whole["text"]
    cut = stored["Damping of a Balsa Pendulum in Still Air"]
    assert cut["ingest"]["partial"] is True
    assert cut["ingest"]["partial_reason"] == "the table of swing counts; the last figure"
    assert cut["ingest"]["warnings"] == ["lost: the table of swing counts", "lost: the last figure"]
    assert stored["Damping of a Pine Pendulum in Still Air"]["source_format"] == "sqp"
    assert stored["A Plain Note"]["source_format"] == "txt"
    assert summary.counts["ok"] == 4 and summary.counts["failed"] == 0

    report = json.loads((tmp_path / "work" / "ingest_report.json").read_text())
    sqp_row = report["formats"]["sqp"]
    assert (sqp_row["ok"], sqp_row["partial"], sqp_row["failed"]) == (2, 1, 0) and sqp_row["words"] > 60
    assert report["formats"]["txt"]["ok"] == 1
    assert not any("no known extension" in w["warning"] for w in report["warnings"])  # sniffed, not guessed

    # the tables that are read from the registry know the format too
    assert extensions()[".sqp"] == "sqp" and detect_format(inputs / "no_extension") == "sqp"
    assert any(line.split()[:3] == ["sqp", ".sqp", "-"] for line in format_table().splitlines())
    (inputs / "numbers.dat").write_text("1,2,3\n4,5,6\n")
    [failure] = read_file(inputs / "numbers.dat")
    assert failure["error"].startswith("unrecognised format: unknown extension '.dat'")
    assert "SQP" in failure["error"] and "plain text" in failure["error"]


def sqp_collection(source: Source) -> Iterator[dict | RecordError]:
    """``.sqps``: many ``.sqp`` papers, one per block between ``===`` lines; a block without ``SQP1`` is not one."""
    for k, block in enumerate(source.text().split("===\n"), 1):
        if not block.startswith("SQP1\n"):
            yield RecordError("not an SQP paper", where=f"block {k}")
            continue
        yield {**sqp_paper(block, source.warn), "where": f"block {k}"}


def test_a_reader_of_many_papers_per_file_fails_one_record_not_the_file(tmp_path):
    reader = register(Reader("sqps", sqp_collection, extensions=(".sqps",), many=True, label="SQP collection"))
    try:
        path = tmp_path / "all.sqps"
        path.write_text(
            "===\n".join([PAPER, "no header here\n", PAPER.replace("Cork", "Balsa"), "SQP1\ntitle: Empty\n"])
        )
        items = read_file(path)
    finally:
        unregister(reader)
    assert [i.get("title") for i in items if "id" in i] == [
        "Damping of a Cork Pendulum in Still Air",
        "Damping of a Balsa Pendulum in Still Air",
    ]
    assert [i["error"] for i in items if "error" in i] == ["block 2: not an SQP paper", "block 4: no text"]


def test_after_unregistering_the_format_is_gone(tmp_path):
    reader = register(Reader("sqp", sqp_read, extensions=(".sqp",), sniff=sqp_sniff, label="SQP"))
    unregister(reader)
    (tmp_path / "p.sqp").write_text(PAPER)
    assert ".sqp" not in extensions()
    # without its reader the file is not .sqp any more: its content alone decides (prose)
    assert detect_format(tmp_path / "p.sqp") == "txt"


def test_a_reader_whose_library_is_missing_is_listed_and_fails_its_files_with_the_extra(tmp_path, sqz_reader):
    assert sqz_reader in ingest.readers() and not sqz_reader.available
    assert any(line.split()[:3] == ["sqz", ".sqz", "sqz"] for line in format_table().splitlines())
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.sqz").write_text("SQZ1\ntitle: Never Read\n")
    (inputs / "b.txt").write_text("A Paper Read Anyway\n\nThe other formats are read whatever one reader lacks.\n")

    summary = run_ingest([inputs], tmp_path / "work")

    report = json.loads((tmp_path / "work" / "ingest_report.json").read_text())
    assert [(Path(f["path"]).name, f["error"]) for f in report["failures"]] == [
        (
            "a.sqz",
            f"reading SQZ needs the `{MISSING_LIBRARY}` package, which is not installed: pip install 'sciqag-hf[sqz]'",
        )
    ]
    assert report["formats"]["sqz"]["failed"] == 1 and report["formats"]["txt"]["ok"] == 1
    assert summary.counts["ok"] == 1 and summary.counts["failed"] == 1


def test_a_taken_extension_or_name_is_refused():
    with pytest.raises(ValueError, match=r"\.txt already read by the 'txt' reader"):
        register(Reader("notes", sqp_read, extensions=(".txt",)))
    with pytest.raises(ValueError, match="a reader of 'json' is already registered"):
        register(Reader("json", sqp_read, extensions=(".jsn",)))
    with pytest.raises(ValueError, match="lower case and start with a dot"):
        register(Reader("upper", sqp_read, extensions=(".SQP",)))
    assert [r.name for r in ingest.readers()][:6] == ["json", "html", "xml", "latex", "md", "txt"]


def test_every_built_in_reader_is_called_one_way():
    """One signature: each built-in reader is a function of one Source."""
    for reader in ingest.readers():
        if reader.available:
            assert list(inspect.signature(reader.read).parameters) == ["source"], reader
