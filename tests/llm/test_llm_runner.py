"""The shared LLM client and the runner, against a real `transformers serve`."""

from __future__ import annotations

import asyncio
import gc
import json
import logging

import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.config.config_file import EndpointConfig
from sciqag_dataset.core.jsonl import JsonlWriter, iter_latest
from sciqag_dataset.core.redact import redact_url
from sciqag_dataset.core.runner import Finished, run_stage
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm import LLMClient, LLMError, ResponseCache, check_reachable, client_from_config
from sciqag_dataset.llm.server import free_port


def test_chat_and_completion_cache_and_usage(says_server, tmp_path):
    # says_server's replies are complete (finish_reason "stop"): only such replies are cached
    cache = ResponseCache(tmp_path / "cache.sqlite")
    client = LLMClient(says_server.base_url, says_server.model, params={"max_tokens": 40}, cache=cache)
    msgs = [{"role": "user", "content": "Name one perovskite."}]

    async def go():
        a = await client.chat(msgs)
        b = await client.chat(msgs)  # identical request: served from the cache
        c = await client.complete("### Instruction:\nhi\n### Response:\n")
        await client.aclose()
        return a, b, c

    a, b, c = asyncio.run(go())
    assert not a.cached and b.cached and b.text == a.text
    assert a.completion_tokens > 0 and a.prompt_tokens > 0
    assert client.usage.requests == 2 and client.usage.cached == 1
    assert client.usage.completion_tokens == a.completion_tokens + c.completion_tokens
    assert len(cache) == 2
    # the cache persists across processes/clients
    again = LLMClient(
        says_server.base_url,
        says_server.model,
        params={"max_tokens": 40},
        cache=ResponseCache(tmp_path / "cache.sqlite"),
    )
    assert asyncio.run(again.chat(msgs)).cached


def test_dead_endpoint_retries_with_backoff_then_fails():
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = LLMClient(url, "m", max_retries=2, backoff=0.01)
    with pytest.raises(LLMError, match="gave up after 3 attempts"):
        asyncio.run(client.chat([{"role": "user", "content": "x"}]))
    assert client.usage.retries == 2 and client.usage.failures == 1
    with pytest.raises(LLMError, match="no endpoint is reachable"):
        check_reachable(url, timeout=2)


def test_client_error_is_not_retried(tiny_server):
    client = LLMClient(
        tiny_server.base_url.replace("/v1", "/no-such-api"), tiny_server.model, max_retries=3, backoff=0.01
    )
    with pytest.raises(LLMError, match="NotFound"):
        asyncio.run(client.chat([{"role": "user", "content": "x"}]))
    assert client.usage.retries == 0


def test_two_endpoints_share_the_load(tiny_server):
    """A dead replica and a live one: requests end on the live one."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    client = LLMClient(
        [dead, tiny_server.base_url], tiny_server.model, params={"max_tokens": 4}, max_retries=4, backoff=0.01
    )
    resp = asyncio.run(client.chat([{"role": "user", "content": "hello"}]))
    assert resp.endpoint == redact_url(tiny_server.base_url)


def test_api_key_is_never_described(monkeypatch):
    monkeypatch.setenv("MY_TEACHER_KEY", "sk-secret-value-1234567890abcdef")
    cfg = EndpointConfig(
        url="https://user:pw@api.example.org/v1?token=abc", model="gpt-x", api_key_env="MY_TEACHER_KEY"
    )
    client = client_from_config(cfg)
    assert client.api_key == "sk-secret-value-1234567890abcdef"
    text = json.dumps(client.describe())
    assert "sk-secret" not in text and "pw@" not in text and "token=abc" not in text
    assert "https://api.example.org/v1" in text


def _double(rec):
    if rec["id"] == "bad":
        raise ValueError("broken paper")
    return {"id": rec["id"], "value": rec["x"] * 2, "status": "ok"}


def _records(recs):
    return lambda work: iter(recs)


@pytest.mark.parametrize("workers", [1, 2])
def test_run_processes_records_failures_and_resumes(tmp_path, workers):
    recs = [{"id": f"p{i}", "x": i} for i in range(6)] + [{"id": "bad", "x": 0}]
    stage = Stage(name="double", inputs=_records(recs), process=_double, workers=workers)
    s = run_stage(stage, tmp_path)
    out = tmp_path / "double.jsonl"
    assert s.counts["ok"] == 6 and s.failed == 1
    got = {r["id"]: r for r in read_jsonl(out)}
    assert got["p3"]["value"] == 6 and "broken paper" in got["bad"]["error"]
    s2 = run_stage(stage, tmp_path)
    assert s2.counts["skipped"] == 6 and s2.failed == 1  # only the failure is retried
    done = Finished(out)
    assert [done.has_id(i) for i in ("p0", "p5", "bad")] == [True, True, True] and len(done) == 6


def test_torn_last_line_is_repaired(tmp_path):
    out = tmp_path / "out.jsonl"
    write_jsonl(out, [{"id": "a", "status": "ok"}])
    with out.open("a") as f:
        f.write('{"id": "b", "sta')  # a kill in the middle of a write
    assert [r["id"] for r in iter_latest(out)] == ["a"]
    with JsonlWriter(out) as w:
        w.write({"id": "b", "status": "ok"})
    assert [r["id"] for r in read_jsonl(out)] == ["a", "b"]


def test_run_async_bounds_concurrency_and_streams(tmp_path):
    in_flight = peak = 0
    pulled = []

    def source(work):
        for i in range(20):
            pulled.append(i)
            yield {"id": str(i)}

    async def work(rec):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        # the source is pulled lazily: never more than `concurrency` ahead of what is written
        assert len(pulled) <= int(rec["id"]) + 4
        await asyncio.sleep(0.01)
        in_flight -= 1
        return {"id": rec["id"], "status": "ok"}

    s = run_stage(Stage(name="t", inputs=source, process=work, concurrency=3), tmp_path)
    assert s.counts["ok"] == 20 and peak == 3


def test_a_client_left_open_by_one_event_loop_is_dropped_quietly_in_the_next(says_server, caplog):
    """``asyncio.run(client.chat(...))`` twice, as in a notebook: the first loop's HTTP client, never closed and
    holding a kept-alive connection, must not try to close itself on the second loop ("Event loop is closed")."""
    client = LLMClient(says_server.base_url, says_server.model, params={"max_tokens": 4}, max_retries=0)
    msgs = [{"role": "user", "content": "Name a noble gas."}]

    async def again():
        await client.chat(msgs)  # the first loop's clients are replaced here...
        gc.collect()  # ...and collected while this loop runs
        await asyncio.sleep(0.2)
        await client.aclose()

    with caplog.at_level(logging.ERROR):
        asyncio.run(client.chat(msgs))
        asyncio.run(again())
        gc.collect()
    assert not [r for r in caplog.records if r.name == "asyncio"], [r.getMessage() for r in caplog.records]
