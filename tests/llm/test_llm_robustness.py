"""Replies and caches that must not cost a run (cut replies, lone surrogates, damaged caches), against real
servers.

``says_server`` is a real `transformers serve` whose tiny model answers with one fixed QA pair and stops,
so its replies are complete; a small ``max_tokens`` cuts them, and a raw completion of a prompt that
ends in "." is an empty reply. No server here writes a lone surrogate, so that one reply is rewritten on
its way back by ``RecordingProxy`` (a fake for that byte only; the rest of the reply is the real one).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest
from helpers import RecordingProxy, read_jsonl, write_jsonl
from tiny_model import REPLY

from sciqag_dataset.builders import seed
from sciqag_dataset.config.config_file import SeedConfig
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.llm import LLMClient, LLMError, ResponseCache


def run_seed(work, client, cfg):
    return run_stage(seed.stage(client, cfg), work)


CFG = SeedConfig(n_pairs=1, context_tokens=2048, chars_per_token=1.0)


def make_work(tmp_path, texts):
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl", [{"id": f"p{i}", "title": f"Paper {i}", "text": t} for i, t in enumerate(texts)]
    )
    write_jsonl(
        work / "keywords.jsonl", [{"id": f"p{i}", "keywords": ["grain"], "status": "ok"} for i in range(len(texts))]
    )
    return work


def client(url, model, work, **kw):
    return LLMClient(
        url,
        model,
        params={"max_tokens": kw.pop("max_tokens", 40), "temperature": 0.6},
        cache=kw.pop("cache", None) or ResponseCache(work / "cache.sqlite"),
        max_retries=1,
        backoff=0.01,
        **kw,
    )


def test_paper_text_with_a_lone_surrogate_is_sent_repaired_and_cached_once(says_server, tmp_path):
    work = make_work(tmp_path, ["Grain growth at 450 C with a stray \ud800 character. " * 5])
    first = client(says_server.base_url, says_server.model, work)
    s = run_seed(work, first, CFG)
    rec = read_jsonl(work / "seed.jsonl")[0]
    assert s.failed == 0 and rec["status"] == "ok" and first.usage.requests == 1
    (work / "seed.jsonl").unlink()  # the output lost: the cache answers
    again = client(says_server.base_url, says_server.model, work)
    run_seed(work, again, CFG)
    assert again.usage.requests == 0 and again.usage.cached == 1


def test_a_reply_with_a_lone_surrogate_never_crashes_and_is_cached(says_server, tmp_path):
    work = make_work(tmp_path, ["Grain growth at 450 C. " * 5])

    def surrogate(body: bytes) -> bytes:
        return body.replace(b"Grains", b"Gr\\ud800ains")  # a JSON escape, as a server could send it

    with RecordingProxy(says_server.base_url, rewrite=surrogate) as proxy:
        c = client(proxy.base_url, says_server.model, work)
        s = run_seed(work, c, CFG)
    rec = read_jsonl(work / "seed.jsonl")[0]
    assert s.failed == 0 and "Gr\ufffdains" in rec["raw_output"]
    assert len(ResponseCache(work / "cache.sqlite")) == 1


def test_cut_and_empty_replies_are_not_cached(says_server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    c = LLMClient(says_server.base_url, says_server.model, cache=cache, max_retries=1, backoff=0.01)
    msgs = [{"role": "user", "content": "Why anneal?"}]

    async def go():
        cut = await c.chat(msgs, max_tokens=4)
        cut_again = await c.chat(msgs, max_tokens=4)
        whole = await c.chat(msgs, max_tokens=40)
        whole_again = await c.chat(msgs, max_tokens=40)
        with pytest.raises(LLMError, match="empty reply"):
            await c.complete("Nothing more to say.", max_tokens=20)
        await c.aclose()
        return cut, cut_again, whole, whole_again

    cut, cut_again, whole, whole_again = asyncio.run(go())
    assert cut.finish_reason == "length" and not cut_again.cached  # asked again: a cut reply is no answer
    assert whole.text == REPLY and whole.finish_reason == "stop" and whole_again.cached
    assert len(cache) == 1
    assert c.usage.retries == 1 and c.usage.failures == 1  # the empty reply was retried once, then failed


def test_a_pair_cut_at_max_tokens_is_dropped_not_published(says_server, tmp_path):
    work = make_work(tmp_path, ["Grain growth at 450 C. " * 5])
    whole = client(says_server.base_url, says_server.model, work, max_tokens=40)
    run_seed(work, whole, CFG)
    assert read_jsonl(work / "seed.jsonl")[0]["qa"][0]["answer"].endswith("450 C.")

    work2 = make_work(tmp_path / "cut", ["Grain growth at 450 C. " * 5])
    cut = client(says_server.base_url, says_server.model, work2, max_tokens=12)  # stops inside the answer
    run_seed(work2, cut, CFG)
    rec = read_jsonl(work2 / "seed.jsonl")[0]
    assert rec["raw_output"] and not rec["raw_output"].endswith("450 C.")
    assert rec["qa"] == [] and rec["status"] == "unparsed"
    assert any("cut short, was dropped" in w for w in rec["warnings"])


def test_a_corrupt_cache_file_is_moved_aside_and_rebuilt(says_server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database, just the start of a broken copy " * 100)
    with caplog.at_level(logging.WARNING):
        cache = ResponseCache(path)
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("cache.sqlite.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert "moved aside" in caplog.text
    c = LLMClient(says_server.base_url, says_server.model, cache=cache)
    asyncio.run(c.chat([{"role": "user", "content": "Why anneal?"}], max_tokens=40))
    assert len(cache) == 1


def test_a_truncated_cache_file_is_moved_aside(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    for i in range(300):
        cache.put(f"k{i}", {"text": "x" * 2000, "finish_reason": "stop"})
    cache.close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)  # a copy that was cut off
    rebuilt = ResponseCache(path)
    assert len(rebuilt) == 0 and [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_a_failed_cache_write_keeps_the_reply(says_server, tmp_path, caplog):
    work = make_work(tmp_path, ["Grain growth at 450 C. " * 5])
    cache = ResponseCache(work / "cache.sqlite", timeout=0.2)
    blocker = sqlite3.connect(work / "cache.sqlite", timeout=0.2)
    blocker.execute("BEGIN EXCLUSIVE")  # another process holds the database: every write fails
    try:
        with caplog.at_level(logging.WARNING):
            s = run_seed(work, client(says_server.base_url, says_server.model, work, cache=cache), CFG)
    finally:
        blocker.rollback()
        blocker.close()
    rec = read_jsonl(work / "seed.jsonl")[0]
    assert s.failed == 0 and rec["status"] == "ok" and rec["qa"]  # the reply is in the stage output
    assert "cache write failed" in caplog.text
    assert len(ResponseCache(work / "cache.sqlite")) == 0


def test_a_line_capped_on_purpose_is_an_answer_and_is_replayed(says_server, tmp_path):
    """The embedded profile caps each line it asks for: a cut or empty line is its answer, kept as such and
    cached, so that a resumed run asks nothing again (and a server that says nothing costs no retry)."""
    cache = ResponseCache(tmp_path / "cache.sqlite")
    c = LLMClient(says_server.base_url, says_server.model, cache=cache, max_retries=1, backoff=0.01)

    async def go():
        replies = [
            await c.complete("Why anneal", max_tokens=3, partial=True),
            await c.complete("Nothing more to say.", max_tokens=20, partial=True),
        ]
        again = [
            await c.complete("Why anneal", max_tokens=3, partial=True),
            await c.complete("Nothing more to say.", max_tokens=20, partial=True),
        ]
        whole = await c.complete("Why anneal", max_tokens=3)  # the same request, not partial: no answer
        await c.aclose()
        return replies, again, whole

    (cut, empty), again, whole = asyncio.run(go())
    assert cut.finish_reason == "length" and cut.text and empty.text == ""
    assert all(r.cached for r in again) and [r.text for r in again] == [cut.text, ""]
    assert not whole.cached and c.usage.retries == 0 and c.usage.failures == 0
