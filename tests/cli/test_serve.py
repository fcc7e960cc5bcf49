"""`sciqag serve`: the embedded model on a port until Ctrl-C or SIGTERM. Real parts: the CLI in a subprocess,
the packaged SmolLM2 on llama.cpp (as the embedded e2e tests serve it), one chat request over HTTP."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from sciqag_dataset.cli import main
from sciqag_dataset.llm.llama_cpp_engine import installed as llama_cpp_installed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


@pytest.mark.e2e
def test_serve_prints_where_the_model_answers_and_stops_cleanly_on_sigterm(tmp_path):
    if not llama_cpp_installed():
        pytest.fail("llama-cpp-python[server] is missing: install the dev extra (pip install -e '.[dev]')")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sciqag_dataset.cli", "serve", "--port", str(port), "--embedded-threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        printed = {}
        deadline = time.monotonic() + 180
        while "model" not in printed and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            key, _, value = line.partition(": ")
            printed[key] = value.strip()
            if "(server pid" in line:
                printed["pid"] = line.split("(server pid ")[1].split(")")[0]
        assert {"base_url", "model", "pid"} <= set(printed), (printed, proc.stderr.read() if proc.poll() else "")
        assert printed["base_url"] == f"http://127.0.0.1:{port}/v1"
        body = {
            "model": printed["model"],
            "messages": [{"role": "user", "content": "Name one noble gas."}],
            "max_tokens": 8,
            "temperature": 0,
        }
        request = urllib.request.Request(
            printed["base_url"] + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as r:
            reply = json.loads(r.read())
        assert reply["choices"][0]["message"]["content"].strip() and reply["usage"]["completion_tokens"] > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
        assert "Server stopped." in proc.stderr.read()
        assert _gone(int(printed["pid"]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_on_a_taken_port_is_a_one_line_error(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--port {port}: cannot listen there" in err[0]


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_serve_on_a_port_out_of_range_is_a_one_line_error(capsys, port):
    assert main(["serve", "--port", port]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "0 to 65535" in err[0] and "Traceback" not in err[0]
