"""One bad input never stops the rest, and ingest never blocks or wanders.

Every input here is a real file on disk read by the real ingest stage; the CLI runs where the exit
status or a hang matters.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sciqag_dataset.builders.ingest import run_ingest

BODY = "Layered oxide cathodes were cycled at 25 C for 300 cycles and kept most of their capacity. "


def paper(title: str, extra: str = "") -> dict:
    return {"title": title, "text": BODY * 8 + extra}


def report(work: Path) -> dict:
    return json.loads((work / "ingest_report.json").read_text(encoding="utf-8"))


def stored(work: Path) -> list[dict]:
    # strict UTF-8: a lone surrogate in the file would fail here
    return [json.loads(line) for line in (work / "papers.jsonl").read_bytes().decode("utf-8").splitlines()]


def test_a_jsonl_line_the_parser_cannot_handle_costs_only_that_line(tmp_path):
    src = tmp_path / "in" / "papers.jsonl"
    src.parent.mkdir()
    lines = [
        json.dumps(paper("First good paper")),
        '{"title": "Too deep", "text": ' + "[" * 100_000 + "]" * 100_000 + "}",  # RecursionError
        '{"title": "Too many digits", "n": ' + "7" * 5000 + ', "text": "x"}',  # int digit limit
        "{not json at all",
        json.dumps(paper("Last good paper", " The last one.")),
    ]
    src.write_text("\n".join(lines) + "\n")
    s = run_ingest([src.parent], tmp_path / "work")
    assert s.counts["ok"] == 2 and s.failed == 3
    assert [p["title"] for p in stored(tmp_path / "work")] == ["First good paper", "Last good paper"]
    r = report(tmp_path / "work")
    assert r["complete"] is True
    assert sorted(f["line"] for f in r["failures"]) == [2, 3, 4]
    assert all(f["path"] == str(src) for f in r["failures"])
    assert any("nested too deeply" in f["error"] for f in r["failures"])


def test_an_array_item_that_cannot_be_read_is_skipped_and_the_rest_read(tmp_path):
    src = tmp_path / "in" / "papers.json"
    src.parent.mkdir()
    src.write_text(
        "["
        + json.dumps(paper("Item one"))
        + ", "
        + "[" * 60_000
        + "]" * 60_000
        + ", "
        + json.dumps({"title": "Item three", "text": BODY * 8 + " Third."})
        + "]"
    )
    s = run_ingest([src], tmp_path / "work")
    assert s.counts["ok"] == 2 and s.failed == 1
    assert [p["title"] for p in stored(tmp_path / "work")] == ["Item one", "Item three"]
    assert report(tmp_path / "work")["failures"][0]["error"].startswith("item 2:")


def test_unencodable_text_and_names_are_repaired_with_a_warning_not_failed(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "escaped.jsonl").write_text(
        json.dumps({"title": "Lone \ud800 surrogate", "text": BODY * 8 + "\udcff"}) + "\n"
    )
    name = os.fsencode(inputs) + b"/caf\xe9-latin1-name.txt"  # a file name that is not UTF-8
    with open(name, "wb") as f:
        f.write(b"A plain text paper\n\n" + BODY.encode() * 8)
    (inputs / "z_after.txt").write_text("Paper after them\n\n" + BODY * 8 + " After.")
    s = run_ingest([inputs], tmp_path / "work")
    assert s.counts["ok"] == 3 and s.failed == 0
    papers = {p["title"]: p for p in stored(tmp_path / "work")}
    assert papers["Lone \ufffd surrogate"]["text"].endswith("\ufffd")
    assert "\ufffd" in papers["A plain text paper"]["source_path"]
    warnings = [w["warning"] for w in report(tmp_path / "work")["warnings"]]
    assert any("unencodable" in w for w in warnings) and any("not valid UTF-8" in w for w in warnings)


def test_special_files_are_skipped_without_blocking(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    os.mkfifo(inputs / "a_fifo.txt")  # opening this for reading would block forever
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(inputs / "b_socket.txt"))
    (inputs / "c_paper.txt").write_text("A real paper\n\n" + BODY * 8)
    work = tmp_path / "work"
    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "ingest", str(inputs), "/dev/null", "-o", str(work)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    sock.close()
    assert proc.returncode == 0, proc.stderr
    assert [p["title"] for p in stored(work)] == ["A real paper"]
    warnings = {Path(w["path"]).name: w["warning"] for w in report(work)["warnings"]}
    assert "named pipe" in warnings["a_fifo.txt"] and "socket" in warnings["b_socket.txt"]
    assert "device" in warnings["null"]


def test_links_leaving_the_input_folders_are_not_followed_unless_asked(tmp_path):
    inputs, outside = tmp_path / "in", tmp_path / "elsewhere"
    (outside / "dir").mkdir(parents=True)
    inputs.mkdir()
    (outside / "private.txt").write_text("A private paper\n\n" + BODY * 8 + " Private.")
    (outside / "dir" / "deep.txt").write_text("A deep paper\n\n" + BODY * 8 + " Deep.")
    (inputs / "own.txt").write_text("An own paper\n\n" + BODY * 8)
    (inputs / "to_private.txt").symlink_to(outside / "private.txt")
    (inputs / "to_dir").symlink_to(outside / "dir")
    (inputs / "loop").symlink_to(inputs)  # a link loop must not make the walk endless
    (inputs / "inside.txt").symlink_to(inputs / "own.txt")  # inside the input folder: the same paper once
    (inputs / "broken.txt").symlink_to(tmp_path / "nothing-here.txt")

    s = run_ingest([inputs], tmp_path / "w1")
    assert [p["title"] for p in stored(tmp_path / "w1")] == ["An own paper"]
    skipped = {
        Path(w["path"]).name for w in report(tmp_path / "w1")["warnings"] if "--follow-symlinks" in w["warning"]
    }
    assert skipped == {"to_private.txt", "to_dir"}
    assert [Path(f["path"]).name for f in report(tmp_path / "w1")["failures"]] == ["broken.txt"]
    assert s.failed == 1

    run_ingest([inputs], tmp_path / "w2", follow_symlinks=True)
    assert sorted(p["title"] for p in stored(tmp_path / "w2")) == ["A deep paper", "A private paper", "An own paper"]


def _without_privileges() -> list[str]:
    """A command prefix that makes file permissions apply to this process: none for an ordinary user;
    for root, `setpriv` drops every capability (root reads any folder otherwise)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without util-linux's setpriv: permissions cannot be made to apply")
    return ["setpriv", "--securebits", "+noroot", "--bounding-set", "-all", "--inh-caps", "-all"]


def test_an_unreadable_subfolder_is_reported_not_skipped_silently():
    """Root reads every folder, so as root the stage runs without capabilities (see _without_privileges)."""
    prefix = _without_privileges()
    root = Path(tempfile.mkdtemp(prefix="sciqag-unreadable-"))
    try:
        root.chmod(0o777)
        inputs = root / "in"
        (inputs / "locked").mkdir(parents=True)
        (inputs / "open.txt").write_text("A readable paper\n\n" + BODY * 8)
        (inputs / "locked" / "hidden.txt").write_text("A hidden paper\n\n" + BODY * 8)
        for p in (inputs, inputs / "open.txt"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        (inputs / "locked").chmod(0)
        work = root / "work"
        work.mkdir(mode=0o777)
        work.chmod(0o777)
        code = (
            "import sys; from sciqag_dataset.builders.ingest import run_ingest; "
            "s = run_ingest([sys.argv[1]], sys.argv[2]); print(s.failed)"
        )
        proc = subprocess.run(
            [*prefix, sys.executable, "-c", code, str(inputs), str(work)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().splitlines()[-1] == "1"
        failures = report(work)["failures"]
        assert [Path(f["path"]).name for f in failures] == ["locked"]
        assert "cannot read folder" in failures[0]["error"]
        assert [p["title"] for p in stored(work)] == ["A readable paper"]
    finally:
        for p in root.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(stat.S_IRWXU)
        shutil.rmtree(root, ignore_errors=True)
