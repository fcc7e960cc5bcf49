"""One command at a time per work directory, and a refused command leaves the work directory as it was.

The concurrent runs are real `sciqag run` processes; the teacher is a scripted loopback endpoint that holds
its replies until the test lets them go, so the first run is inside its seed stage while the others start.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ScriptedChat, read_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.work_lock import LOCK_FILE, hold
from sciqag_dataset.orchestration.pipeline import sample_papers

REPLY = "Q1: What limits the grain size of the film?\nA1: The annealing temperature limits it."


def sciqag(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sciqag_dataset.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


@pytest.fixture
def ingested(tmp_path) -> Path:
    work = tmp_path / "work"
    assert main(["ingest", str(work), *sample_papers()]) == 0
    return work


class HeldReplies:
    """A scripted endpoint's reply function that holds every reply until ``gate`` is set; ``asked`` is set by
    the first request (a command is then inside its stage, holding the work dir)."""

    def __init__(self):
        self.asked, self.gate = threading.Event(), threading.Event()

    def __call__(self, body):
        self.asked.set()
        self.gate.wait(120)
        return REPLY


def test_a_second_run_on_a_busy_work_dir_is_refused_and_one_with_wait_runs_after(ingested):
    held = HeldReplies()
    asked, gate = held.asked, held.gate
    with ScriptedChat(held) as teacher:
        run = ["run", "--work", ingested, "--stages", "seed", "--endpoint", teacher.base_url, "--model", "m"]
        first = sciqag(*run)
        try:
            assert asked.wait(120), first.communicate(timeout=5)
            second = sciqag(*run)
            _, err = second.communicate(timeout=120)
            assert second.returncode == 2, err
            lines = [ln for ln in err.strip().splitlines() if not ln.startswith(("WARNING ", "INFO "))]
            assert len(lines) == 1 and "Traceback" not in err, err
            assert f"pid {first.pid}" in lines[0] and "sciqag run" in lines[0] and "--wait-turn" in lines[0], err
            asked_before = len(teacher.requests)

            waiting = sciqag(*run, "--wait-turn")
            deadline = time.monotonic() + 60
            while "Waiting for" not in (line := waiting.stderr.readline()) and time.monotonic() < deadline:
                assert line, waiting.communicate(timeout=5)
            assert f"pid {first.pid}" in line, line
            assert len(teacher.requests) == asked_before  # neither of them asked the teacher
        finally:
            gate.set()
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
        out, err = waiting.communicate(timeout=300)
        assert waiting.returncode == 0, err
    seeded = read_jsonl(ingested / "seed.jsonl")
    assert len(seeded) == len({r["id"] for r in seeded}) == len(read_jsonl(ingested / "papers.jsonl"))
    assert (ingested / LOCK_FILE).read_text() == ""  # released: it names nobody


def test_a_lock_left_by_a_dead_process_is_taken_over_with_a_note(ingested):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    held = {"pid": gone.pid, "host": socket.gethostname(), "command": "sciqag run", "since": "earlier"}
    (ingested / LOCK_FILE).write_text(json.dumps(held))
    again = sciqag("ingest", ingested, *sample_papers())
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert f"taking over the lock of pid {gone.pid}" in err and "sciqag run" in err, err
    assert (ingested / LOCK_FILE).read_text() == ""


def test_shard_runs_share_the_lock_and_exclude_every_other_command(tmp_path):
    with hold(tmp_path, "sciqag generate w --shard 0/2", shared=True):
        with hold(tmp_path, "sciqag generate w --shard 1/2", shared=True):
            with pytest.raises(UserError, match="shard runs of"):
                with hold(tmp_path, "sciqag evaluate w"):
                    pass
    with hold(tmp_path, "sciqag evaluate w"):
        with pytest.raises(UserError, match="sciqag evaluate w"):
            with hold(tmp_path, "sciqag generate w --shard 0/2", shared=True):
                pass


def test_a_refused_command_leaves_the_config_as_it_was(ingested):
    before = (ingested / "config.yaml").read_bytes()
    seed = sciqag("seed", ingested, "--endpoint", dead_url(), "--model", "m")
    _, err = seed.communicate(timeout=120)
    assert seed.returncode == 2 and "no endpoint is reachable" in err, err
    assert (ingested / "config.yaml").read_bytes() == before
    assert not (ingested / "seed.jsonl").exists()


def test_run_probes_its_endpoints_before_ingest_and_writes_nothing(tmp_path):
    work = tmp_path / "work"
    run = sciqag("run", "--work", work, "--endpoint", dead_url(), "--model", "m", "--generator-model", "m")
    _, err = run.communicate(timeout=120)
    assert run.returncode == 2 and "no endpoint is reachable" in err, err
    assert not work.exists()


def test_a_command_waiting_its_turn_looks_for_the_papers_once_the_command_before_it_is_done(tmp_path):
    work = tmp_path / "work"
    main(["ingest", str(work), *sample_papers()])  # a work directory of ours, then emptied as if new
    papers = (work / "papers.jsonl").read_bytes()
    (work / "papers.jsonl").unlink()
    with hold(work, "sciqag ingest work papers"):
        waiting = sciqag("filter", work, "--clear", "--wait-turn")
        line = waiting.stderr.readline()
        assert "Waiting for" in line and "sciqag ingest work papers" in line, line + waiting.communicate()[1]
        (work / "papers.jsonl").write_bytes(papers)  # what the command holding the lock writes
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and "Filter cleared" in out, err


def test_shard_runs_of_generate_run_side_by_side_and_leave_no_shard_in_the_config(ingested):
    held = HeldReplies()
    asked, gate = held.asked, held.gate
    with ScriptedChat(held) as generator:
        run = ["generate", ingested, "--endpoint", generator.base_url, "--model", "m", "--shard"]
        shards = [sciqag(*run, f"{i}/2") for i in range(2)]
        try:
            assert asked.wait(120), shards[0].communicate(timeout=5)
            other = sciqag("filter", ingested, "--clear")
            _, err = other.communicate(timeout=120)
            assert other.returncode == 2 and "in use by another sciqag command" in err, err
        finally:
            gate.set()
        for proc in shards:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0 and "in use" not in err, err
    assert sorted(p.name for p in ingested.glob("generated.shard-*.jsonl")) == [
        "generated.shard-0-of-2.jsonl",
        "generated.shard-1-of-2.jsonl",
    ]
    assert "shard: null" in (ingested / "config.yaml").read_text()
