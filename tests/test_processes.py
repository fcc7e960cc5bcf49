"""Worker processes die with the command that started them, even on kill -9 (hardening, item 8), and two
processes preparing the embedded model at once both succeed (item 10, with the real conversion)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_jsonl

WORDS = ("lithium iron phosphate cathode carbon coating particle size rate capability olivine structure "
         "diffusion coefficient electrochemical impedance spectroscopy charge transfer resistance ").split()


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


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
    write_jsonl(work / "papers.jsonl", [{"id": f"p{i}", "title": f"Paper {i}", "text": f"{text} {i}"}
                                        for i in range(60)])
    cli = subprocess.Popen([sys.executable, "-m", "sciqag_dataset.cli", "keywords", str(work), "--workers", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


@pytest.mark.e2e
def test_two_processes_preparing_the_embedded_model_both_succeed(tmp_path):
    """The real one-time conversion of the packaged GGUF, started twice at once on an empty cache."""
    env = {**os.environ, "SCIQAG_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    code = "from sciqag_dataset.llm.embedded import default_model_dir; print(default_model_dir())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1][-2000:] for r in results]
    folders = {r[0].strip().splitlines()[-1] for r in results}
    assert len(folders) == 1
    folder = Path(folders.pop())
    assert (folder / "config.json").exists() and any(folder.glob("*.safetensors"))
    assert not list(folder.parent.glob(".*tmp-*"))
