"""A local server that dies: caught before a paper is sent, reported once, restarted once, then replaced, and
never blamed on a paper. llama.cpp's crash on CPUs with AMX cannot be produced on demand here, so it is played
by a fake (``fake_crashing_server.py``) that kills itself with SIGSEGV; the fallback is a real
`transformers serve`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fakes import FakeCrashingServer

from sciqag_dataset.core.errors import ServerDown
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.llm.embedded import choose
from sciqag_dataset.llm.models import DEFAULT_MODEL_ID
from sciqag_dataset.llm.server import LocalServer, ServerDied
from sciqag_dataset.llm.supervisor import EmbeddedServer

AMX = {"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"}
LLAMA = {"llama.cpp", "transformers"}  # the engines installed, as choose() is told


def _papers(n: int = 3):
    def inputs(work):
        return [{"id": f"p{i}", "text": f"Paper {i} on annealed films."} for i in range(n)]

    return inputs


def _asking(client: LLMClient) -> Stage:
    async def ask(rec):
        reply = await client.chat([{"role": "user", "content": rec["text"]}], partial=True)
        return {"answer": reply.text, "endpoint": reply.endpoint}

    return Stage(name="ask", inputs=_papers(), process=ask, concurrency=1)


def _starter(llama_answers: list[int], fallback, started: list[str], log_path):
    """embedded.start's stand-in: each llama.cpp start takes the next fake from ``llama_answers``."""

    def start(choice, _log):
        started.append(choice.engine.name)
        if choice.engine.name == "llama.cpp":
            return FakeCrashingServer(llama_answers.pop(0), log_path).start()
        return fallback(choice)

    return start


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_server_that_crashes_on_its_first_decode_is_caught_before_any_paper(tmp_path):
    with pytest.raises(ServerDied, match=r"killed by SIGSEGV") as info:
        FakeCrashingServer(0, tmp_path / "server.log").start()
    assert "segfaulting on purpose" in str(info.value)  # the last lines of its log come with it


def test_a_crash_on_the_first_decode_falls_back_to_transformers_and_no_paper_fails(tiny_model_dir, tmp_path, caplog):
    log_path = tmp_path / "local_server.log"
    started = []

    def transformers(choice):
        return LocalServer(tiny_model_dir, log_path=log_path, continuous_batching=False, threads=1).start()

    choice = choose(installed=LLAMA, flags=AMX, cores=2)
    server = EmbeddedServer(choice, log_path, start=_starter([0, 0], transformers, started, log_path))
    client = LLMClient(
        [], choice.identity, local=server, label=DEFAULT_MODEL_ID, max_retries=0, params={"max_tokens": 4}
    )
    try:
        with caplog.at_level(logging.WARNING):
            summary = run_stage(_asking(client), tmp_path)
    finally:
        server.stop()
    assert started == ["llama.cpp", "llama.cpp", "transformers"]  # restarted once, then the other backend
    deaths = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR and r.name.startswith("sciqag")]
    assert len(deaths) == 2 and all("killed by SIGSEGV" in d and "segfaulting on purpose" in d for d in deaths)
    assert any(
        "serving with transformers" in r.getMessage() and "died twice" in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
    )
    assert summary.counts["ok"] == 3 and not summary.failed
    assert client.model.endswith("@transformers-float32")  # its replies are cached as the other backend's


def test_a_server_that_dies_mid_run_is_restarted_then_replaced_and_no_paper_fails(tmp_path, caplog):
    log_path = tmp_path / "local_server.log"
    started = []

    def never_crashes(choice):
        return FakeCrashingServer(-1, log_path).start()

    choice = choose(installed=LLAMA, flags=AMX, cores=2)
    # the first server answers its first completion and one paper, then dies; its restart dies after the next
    server = EmbeddedServer(choice, log_path, start=_starter([2, 1], never_crashes, started, log_path))
    client = LLMClient([], choice.identity, local=server, label=DEFAULT_MODEL_ID, max_retries=2, backoff=0.01)
    try:
        with caplog.at_level(logging.WARNING):
            summary = run_stage(_asking(client), tmp_path)
    finally:
        server.stop()
    assert started == ["llama.cpp", "llama.cpp", "transformers"]
    assert summary.counts["ok"] == 3 and not summary.failed
    endpoints = {r["endpoint"] for r in _lines(tmp_path / "ask.jsonl")}
    assert len(endpoints) == 2  # the first server answered p0, the last one p1 and p2
    assert sum("killed by SIGSEGV" in r.getMessage() for r in caplog.records) == 2  # each death reported once


def test_when_no_backend_is_left_the_stage_stops_and_no_paper_is_marked_failed(tmp_path):
    log_path = tmp_path / "local_server.log"
    started = []
    choice = choose("llama.cpp", installed=LLAMA, flags=AMX, cores=2)  # chosen by the user: no fallback
    server = EmbeddedServer(choice, log_path, start=_starter([2, 0], None, started, log_path))
    client = LLMClient([], choice.identity, local=server, label=DEFAULT_MODEL_ID, max_retries=2, backoff=0.01)
    try:
        with pytest.raises(ServerDown, match="no paper was marked failed"):
            run_stage(_asking(client), tmp_path)
    finally:
        server.stop()
    assert started == ["llama.cpp", "llama.cpp"]
    rows = _lines(tmp_path / "ask.jsonl")
    assert [r["id"] for r in rows] == ["p0"] and rows[0].get("status") != "failed"  # answered before the crash
    with pytest.raises(ServerDown):  # later requests fail alike, at once, without starting anything
        server.connect()
    assert started == ["llama.cpp", "llama.cpp"]


def test_a_rank_whose_parents_server_died_stops_without_failing_its_papers(tmp_path):
    """Ranks of a scaled-out run talk to the server their parent started and cannot restart it: a connection
    error to it stops the rank's stage (ServerDown) once its process is gone, and no paper is marked failed."""
    from sciqag_dataset.core.processes import started
    from sciqag_dataset.llm.supervisor import AttachedServer, Serving

    server = FakeCrashingServer(2, tmp_path / "server.log").start()  # its first completion, one paper, then dies
    pid = server.proc.pid
    serving = Serving([server.base_url], server.model, "fake@llama.cpp-Q4_1", (pid, started(pid)))
    client = LLMClient([], serving.identity, local=AttachedServer(serving), max_retries=2, backoff=0.01)
    try:
        with pytest.raises(ServerDown, match=f"pid {server.proc.pid}"):
            run_stage(_asking(client), tmp_path)
    finally:
        server.stop()
    rows = _lines(tmp_path / "ask.jsonl")
    assert [r["id"] for r in rows] == ["p0"] and rows[0].get("status") != "failed"


def test_after_a_fallback_the_cache_answers_what_the_fallback_answered_before(tmp_path):
    """A rerun on a machine where llama.cpp keeps crashing falls back again; the replies the fallback gave on the
    first run are in the cache under its name, and are not asked again."""
    import asyncio

    from sciqag_dataset.llm import ResponseCache

    log_path = tmp_path / "local_server.log"
    choice = choose(installed=LLAMA, flags=AMX, cores=2)
    messages = [{"role": "user", "content": "Paper 0 on annealed films."}]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    key = ResponseCache.key({"kind": "chat", "model": choice.fallback.identity, "messages": messages, "params": {}})
    cache.put(
        key,
        {
            "text": "Asked on the first run.",
            "finish_reason": "stop",
            "prompt_tokens": 5,
            "completion_tokens": 5,
            "endpoint": "http://127.0.0.1:1/v1",
        },
    )
    started = []
    server = EmbeddedServer(
        choice, log_path, start=_starter([0, 0], lambda c: FakeCrashingServer(-1, log_path).start(), started, log_path)
    )
    client = LLMClient([], choice.identity, local=server, cache=cache, max_retries=0)
    try:
        reply = asyncio.run(client.chat(messages))
    finally:
        server.stop()
    assert started == ["llama.cpp", "llama.cpp", "transformers"]
    assert reply.cached and reply.text == "Asked on the first run."


def test_once_every_backend_is_down_a_late_client_fails_alike_at_once(tmp_path):
    """A client still holding an older server's address, after another gave up on the last one: ServerDown
    again, at once, without starting anything (not an AttributeError on the server that is gone)."""
    import http.client
    import urllib.request
    from dataclasses import replace

    log_path = tmp_path / "local_server.log"
    started = []
    choice = choose("llama.cpp", installed=LLAMA, flags=AMX, cores=2)
    server = EmbeddedServer(choice, log_path, start=_starter([1, 0], None, started, log_path))
    first = server.connect()  # the fake answered its first completion at start: the next request kills it
    with pytest.raises((OSError, http.client.HTTPException)):  # reset, refused, or no reply at all
        urllib.request.urlopen(urllib.request.Request(f"{first.urls[0]}/completions", data=b"{}"), timeout=5)
    with pytest.raises(ServerDown):
        server.recover(first)  # dead: restarted once (that one dies at its first completion), then none is left
    with pytest.raises(ServerDown):
        server.recover(replace(first, urls=["http://127.0.0.1:9/v1"]))
    assert started == ["llama.cpp", "llama.cpp"]
    server.stop()
