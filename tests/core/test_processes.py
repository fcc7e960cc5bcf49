"""Worker processes die with the command that started them, even on kill -9 (scaled runs' ranks, datatrove's
helpers and the local Ray instance too), and two processes preparing the embedded model at once both succeed
(with the real conversion)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import write_jsonl

WORDS = (
    "lithium iron phosphate cathode carbon coating particle size rate capability olivine structure "
    "diffusion coefficient electrochemical impedance spectroscopy charge transfer resistance "
).split()


def children(pid: int) -> list[int]:
    return [p for p, (parent, *_) in table().items() if parent == pid]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_kill_9_of_the_cli_leaves_no_worker_behind(tmp_path):
    work = tmp_path / "work"
    text = " ".join(WORDS[(i * 7) % len(WORDS)] for i in range(2500)) + "."
    write_jsonl(
        work / "papers.jsonl", [{"id": f"p{i}", "title": f"Paper {i}", "text": f"{text} {i}"} for i in range(60)]
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "sciqag_dataset.cli", "keywords", str(work), "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 120
        workers: list[int] = []
        while time.time() < deadline and len(workers) < 2:
            workers = children(cli.pid)
            time.sleep(0.2)
        assert len(workers) >= 2, "the keyword workers never started"
        time.sleep(1.0)  # at work: loading spaCy or extracting
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(timeout=30)
        deadline = time.time() + 15
        while time.time() < deadline and any(alive(w) for w in workers):
            time.sleep(0.2)
        assert not [w for w in workers if alive(w)], "orphaned workers outlived the killed CLI"
    finally:
        if cli.poll() is None:
            cli.kill()


def table() -> dict[int, tuple[int, int, int, int]]:
    """Every live process: pid -> (parent, session, start time, process group)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] not in "ZX":
                out[int(entry.name)] = (int(fields[1]), int(fields[3]), int(fields[19]), int(fields[2]))
    return out


def descendants(pid: int) -> dict[int, int]:
    """pid -> start time, for ``pid`` and every process below it."""
    procs, found = table(), {pid}
    while grown := {p for p, (parent, *_) in procs.items() if parent in found} - found:
        found |= grown
    return {p: procs[p][2] for p in found if p in procs}


def left_of(tree: dict[int, int], leader: int) -> dict[int, tuple]:
    """The processes of ``tree`` still alive (same pid and start time: pids are reused), and any other process
    still in the session or process group of ``leader`` (the CLI was started as the leader of both)."""
    return {p: info for p, info in table().items() if tree.get(p) == info[2] or leader in (info[1], info[3])}


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize("executor", ["local", "ray"])
def test_kill_9_of_a_scaled_run_leaves_no_process_behind(tmp_path, executor):
    """Ranks (datatrove's worker pool, or Ray's workers), datatrove's manager, multiprocessing's fork server
    and resource tracker, the local Ray instance: all gone within 5 s of the command's death."""
    if executor == "ray":
        pytest.importorskip("ray", reason="ray is in the dev extra; `pip install ray==2.60.0` to run this")
    work = tmp_path / "work"
    text = " ".join(WORDS[(i * 7) % len(WORDS)] for i in range(2500)) + "."
    write_jsonl(
        work / "papers.jsonl", [{"id": f"p{i}", "title": f"Paper {i}", "text": f"{text} {i}"} for i in range(60)]
    )  # real pke: about a minute's work for 2 ranks
    cmd = [
        sys.executable,
        "-m",
        "sciqag_dataset.cli",
        "run",
        "--work",
        str(work),
        "--stages",
        "keywords",
        "--executor",
        executor,
        "--tasks",
        "2",
        "--workers",
        "2",
        "--cpus-per-task",
        "1",
        "--mem-per-cpu-gb",
        "1",
    ]
    with open(tmp_path / "cli.log", "wb") as out:
        cli = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    tree: dict[int, int] = {}
    try:
        deadline = time.time() + 90
        while time.time() < deadline and len(list(work.glob(".datatrove/*/ranks/logs/task_*.log"))) < 2:
            assert cli.poll() is None, (tmp_path / "cli.log").read_text()[-3000:]
            time.sleep(0.2)
        assert len(list(work.glob(".datatrove/*/ranks/logs/task_*.log"))) == 2, "the ranks never started"
        time.sleep(1.0)  # at work: loading spaCy or extracting
        tree = descendants(cli.pid)
        assert len(tree) >= 4, tree  # the CLI, helpers, two ranks
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(timeout=30)
        deadline = time.time() + 5
        while time.time() < deadline and left_of(tree, cli.pid):
            time.sleep(0.1)
        left = [command_line(p) for p in left_of(tree, cli.pid)]
        assert not left, f"alive 5 s after the CLI's kill -9: {left}"
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        for pid in left_of(tree, cli.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:150]
    except OSError:
        return f"{pid} (gone)"


@pytest.mark.e2e
def test_two_processes_preparing_the_embedded_model_both_succeed(tmp_path):
    """The real one-time conversion of the packaged GGUF, started twice at once on an empty cache."""
    env = {**os.environ, "SCIQAG_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    code = "from sciqag_dataset.llm.models import default_model_dir; print(default_model_dir())"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1][-2000:] for r in results]
    folders = {r[0].strip().splitlines()[-1] for r in results}
    assert len(folders) == 1
    folder = Path(folders.pop())
    assert (folder / "config.json").exists() and any(folder.glob("*.safetensors"))
    assert not list(folder.parent.glob(".*tmp-*"))
