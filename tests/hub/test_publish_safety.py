"""Publishing never deletes or overwrites a file the project did not write.

Each case goes through the real CLI (`sciqag publish`) on a real work directory built by the seed
stage's record shape, and `load_dataset` reads what was published.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from helpers import write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.core.folders import MARKER, STAGING_PREFIX, build_once

QA = [
    {"question": f"Why does step {i} matter?", "answer": f"Because of reason {i}.", "origin": "teacher"}
    for i in range(10)
]


def make_work(tmp_path: Path, n: int = 6) -> Path:
    work = tmp_path / "work"
    papers = [
        {
            "id": f"p{i}",
            "title": f"Paper {i}",
            "text": f"Body of paper {i}. It has numbers like {i}.5 eV.",
            "source_format": "txt",
            "metadata": {"doi": None},
        }
        for i in range(n)
    ]
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(
        work / "seed.jsonl",
        [{"id": f"p{i}", "qa": QA, "status": "ok", "model": "teacher-x", "prompt_style": "paper"} for i in range(n)],
    )
    return work


def user_files(folder: Path) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"notes.txt": b"my notes", "sub/data.csv": b"a,b\n1,2\n", "README.md": b"# my own readme\n"}
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return files


def test_publish_into_a_users_folder_is_refused_and_loses_nothing(tmp_path, capsys):
    work = make_work(tmp_path)
    mine = tmp_path / "mine"
    files = user_files(mine)
    assert main(["publish", str(work), "-o", str(mine)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not empty" in err[0] and "publish.output_dir" in err[0]
    assert {p.relative_to(mine).as_posix(): p.read_bytes() for p in mine.rglob("*") if p.is_file()} == files
    assert not [p for p in tmp_path.iterdir() if STAGING_PREFIX in p.name]


@pytest.mark.parametrize("target", ["work", "parent_of_work", "inside_work", "cwd"])
def test_publish_over_or_around_the_work_dir_is_refused(tmp_path, capsys, monkeypatch, target):
    work = make_work(tmp_path)
    before = sorted(p.name for p in work.iterdir())
    out = {"work": work, "parent_of_work": tmp_path, "inside_work": work / "plots", "cwd": Path(".")}[target]
    monkeypatch.chdir(work if target == "cwd" else tmp_path)
    assert main(["publish", str(work.resolve()), "-o", str(out)]) == 2
    assert "work directory" in capsys.readouterr().err
    assert sorted(p.name for p in work.iterdir()) == before


def test_republish_replaces_only_its_own_files(tmp_path):
    work = make_work(tmp_path)
    out = tmp_path / "published"
    assert main(["publish", str(work), "-o", str(out)]) == 0
    marker = json.loads((out / MARKER).read_text())
    first = set(marker["files"])
    assert "README.md" in first and any(f.startswith("seed/") for f in first)
    (out / "my_extra_notes.md").write_text("kept")  # the user adds a file of their own
    old_parquet = sorted(out.glob("seed/*.parquet"))

    write_jsonl(
        work / "seed.jsonl",
        [{"id": "p0", "qa": QA[:3], "status": "ok", "model": "teacher-x", "prompt_style": "paper"}],
    )  # a changed stage file: new parquet names
    assert main(["publish", str(work), "-o", str(out)]) == 0
    assert (out / "my_extra_notes.md").read_text() == "kept"
    now = set(json.loads((out / MARKER).read_text())["files"])
    assert all(not p.exists() for p in old_parquet if p.relative_to(out).as_posix() not in now)
    ds = datasets.load_dataset(str(out), "seed")
    rows = [row for split in ds.values() for row in split]
    assert len(rows) == 1 and len(rows[0]["qa"]) == 3
    assert not [p for p in tmp_path.iterdir() if STAGING_PREFIX in p.name]


def test_a_killed_publish_leaves_its_staging_for_the_next_run_to_remove(tmp_path):
    work = make_work(tmp_path)
    out = tmp_path / "published"
    # a staging folder as a publish killed by -9 leaves it: ours (marker with a pid that is gone)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".published{STAGING_PREFIX}abc123"
    (stale / "seed").mkdir(parents=True)
    (stale / ".sciqag-staging").write_text(dead.stdout.strip())
    (stale / "seed" / "half.parquet").write_bytes(b"PAR1")
    foreign = tmp_path / f".other{STAGING_PREFIX}xyz"  # same name pattern, no marker: not ours, kept
    foreign.mkdir()
    assert main(["publish", str(work), "-o", str(out)]) == 0
    assert not stale.exists() and foreign.exists()
    assert datasets.load_dataset(str(out), "seed")


def test_a_publish_that_fails_cleans_its_staging_and_keeps_the_previous_publish(tmp_path, capsys):
    work = make_work(tmp_path)
    out = tmp_path / "published"
    assert main(["publish", str(work), "-o", str(out)]) == 0
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    write_jsonl(work / "seed.jsonl", [{"id": "p0", "qa": [], "status": "unparsed"}])  # nothing usable now
    assert main(["publish", str(work), "-o", str(out)]) == 2
    assert "no config has usable records" in capsys.readouterr().err
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.iterdir() if STAGING_PREFIX in p.name]


def test_run_refuses_a_foreign_publish_folder_before_any_work(tmp_path, capsys):
    mine = tmp_path / "mine"
    files = user_files(mine)
    (tmp_path / "paper.txt").write_text("A paper about annealed films. " * 20)
    rc = main(["run", "--work", str(tmp_path / "w"), "--inputs", str(tmp_path / "paper.txt"), "-o", str(mine)])
    assert rc == 2 and "not empty" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()  # refused before the work directory was even created
    assert sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*") if p.is_file()) == sorted(files)


def test_a_work_dir_that_is_someone_elses_folder_is_refused(tmp_path, capsys):
    home = tmp_path / "home"
    files = user_files(home)
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "a.txt").write_text("A Title\n\n" + "Words of a paper body that is long enough. " * 10)
    assert main(["ingest", str(papers), "-o", str(home)]) == 2
    assert "not empty and was not created by sciqag" in capsys.readouterr().err
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()) == sorted(files)
    # a work directory of an earlier version (only files of the layout) is adopted, not refused
    old = make_work(tmp_path)
    assert main(["ingest", str(papers), "-o", str(old)]) == 0
    assert json.loads((old / MARKER).read_text())["kind"] == "work"


def test_two_processes_building_one_artifact_both_succeed(tmp_path):
    """The lock behind the embedded model's one-time conversion, with real processes."""
    out = tmp_path / "cache" / "model"
    code = (
        "import sys, time, pathlib\n"
        "from sciqag_dataset.core.folders import build_once\n"
        "def build(tmp):\n"
        "    time.sleep(1.0)\n"
        "    (tmp / 'config.json').write_text('{}')\n"
        "    with open(sys.argv[2], 'a') as f: f.write('built\\n')\n"
        "print(build_once(pathlib.Path(sys.argv[1]), build))\n"
    )
    log = tmp_path / "builds.log"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(out), str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    assert {r[0].strip() for r in results} == {str(out)}
    assert log.read_text().count("built") == 1 and (out / "config.json").exists()
    assert not list(out.parent.glob(".model.tmp-*"))


def test_a_killed_build_leaves_nothing_half_made(tmp_path):
    out = tmp_path / "cache" / "model"
    out.parent.mkdir(parents=True)
    (out.parent / ".model.tmp-killed").mkdir()  # what a kill -9 mid-conversion leaves

    def build(tmp):
        (tmp / "config.json").write_text("{}")

    assert build_once(out, build) == out and (out / "config.json").exists()
    assert not (out.parent / ".model.tmp-killed").exists()
    assert os.listdir(out) == ["config.json"]


def test_a_published_folder_follows_the_umask(tmp_path):
    """Other users of a shared machine read the dataset: the folder was created with mode 0700 (mkdtemp's)."""
    work = make_work(tmp_path)
    old = os.umask(0o022)
    try:
        assert main(["publish", str(work), "-o", str(tmp_path / "published")]) == 0
        built = build_once(tmp_path / "model", lambda tmp: (tmp / "config.json").write_text("{}"))
    finally:
        os.umask(old)
    for folder in (tmp_path / "published", built):
        assert folder.stat().st_mode & 0o777 == 0o755, folder
