"""Generation at scale against a real `transformers serve`: concurrency, kill -9 and resume,
a server restarted mid-run, a server answering garbage, several endpoints, shards."""

from __future__ import annotations

import asyncio
import http.server
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.builders import generate
from sciqag_dataset.config.config_file import GenerateConfig
from sciqag_dataset.core.runner import in_shard, merge_shards, run_stage
from sciqag_dataset.llm import LLMClient, ResponseCache
from sciqag_dataset.llm.server import LocalServer, free_port
from sciqag_dataset.qa.rules import dedupe_questions, postprocess, refers_to_source


def run_generate(work, client, cfg):
    return run_stage(generate.stage(client, cfg), work, shard=cfg.shard)


CFG = GenerateConfig(context_tokens=2048, chars_per_token=1.0)  # the tiny tokenizer is ~1.5 chars/token


def make_work(root: Path, n: int) -> Path:
    work = root / "work"
    papers = [
        {
            "id": f"p{i:03d}",
            "title": f"Film {i}",
            "text": f"Film {i} was annealed at {300 + i} K for "
            f"{i % 7 + 1} h; its band gap fell to {1 + i / 100:.2f} eV.",
            "source_format": "txt",
        }
        for i in range(n)
    ]
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": ["band gap"], "status": "ok"} for p in papers])
    return work


def client(server_or_urls, model, work, **kw) -> LLMClient:
    urls = server_or_urls if isinstance(server_or_urls, (str, list)) else server_or_urls.base_url
    return LLMClient(
        urls,
        model,
        params={"max_tokens": kw.pop("max_tokens", 8)},
        cache=ResponseCache(work / "cache.sqlite"),
        **{"backoff": 0.05, **kw},
    )


def ids_in(path: Path) -> list[str]:
    return [r["id"] for r in read_jsonl(path)]


def test_postprocess_as_the_authors_did():
    pairs = [
        {"question": "What sets the band gap?", "answer": "a"},
        {"question": "what sets the  band gap", "answer": "b"},
        {"question": "What does Figure 3 show about strain?", "answer": "c"},
        {"question": "Why is anatase more active than rutile?", "answer": "d"},
    ]
    kept, dropped = dedupe_questions(pairs)
    assert dropped == 1 and [p["answer"] for p in kept] == ["a", "c", "d"]
    kept, warnings, keep = postprocess(pairs, complete_sets_of=4)
    assert not keep and any("duplicate" in w for w in warnings) and any("[2]" in w for w in warnings)
    assert refers_to_source("As discussed in this paper, why?") and not refers_to_source("Why does TiO2 absorb UV?")


def test_concurrent_generation_writes_every_paper_once_with_a_manifest(tiny_server, tmp_path):
    work = make_work(tmp_path, 12)
    c = client(tiny_server, tiny_server.model, work, concurrency=4, transport="hf")
    s = run_generate(work, c, CFG)
    assert sum(s.counts.values()) == 12 and s.failed == 0
    assert sorted(ids_in(work / "generated.jsonl")) == [f"p{i:03d}" for i in range(12)]
    manifest = json.loads((work / "generated_manifest.json").read_text())
    assert manifest["counts"] == dict(s.counts) and manifest["usage"]["requests"] == 12
    assert manifest["usage"]["completion_tokens"] > 0 and manifest["settings"]["prompt_style"] == "paper"
    assert manifest["endpoints"] == [tiny_server.base_url]


def test_prompt_style_comes_from_the_model_folder(tiny_model_dir, tmp_path):
    model = tmp_path / "alpaca-generator"
    shutil.copytree(tiny_model_dir, model)
    (model / "sciqag_generator.json").write_text(json.dumps({"prompt_style": "alpaca"}))
    work = make_work(tmp_path, 2)
    with LocalServer(model) as server:
        run_generate(work, client(server, server.model, work), CFG)
    assert {r["prompt_style"] for r in read_jsonl(work / "generated.jsonl")} == {"alpaca"}
    assert (work / "cache.sqlite").exists()


def test_kill_9_then_rerun_gives_every_paper_exactly_once(tiny_server, tmp_path):
    n = 40
    work = make_work(tmp_path, n)
    out = work / "generated.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "sciqag_dataset.cli",
        "generate",
        str(work),
        "--endpoint",
        tiny_server.base_url,
        "--model",
        tiny_server.model,
        "--max-tokens",
        "8",
        "--concurrency",
        "2",
        "--context-tokens",
        "2048",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and (not out.exists() or len(read_jsonl(out)) < 5):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = set(ids_in(out)) if out.exists() else set()
    assert 5 <= len(before) < n, "the kill must land mid-run"

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} skipped" in done.stdout
    final = ids_in(out)
    assert sorted(final) == [f"p{i:03d}" for i in range(n)]  # each paper exactly once
    usage = json.loads((work / "generated_manifest.json").read_text())["usage"]
    # finished papers were not requested again; at most the two in flight at the kill come from the cache
    assert usage["requests"] + usage["cached"] == n - len(before) and usage["cached"] <= 2


def test_server_stopped_and_restarted_mid_run(tiny_model_dir, tmp_path):
    work = make_work(tmp_path, 10)
    port = free_port()
    server = LocalServer(tiny_model_dir, port=port).start()
    out = work / "generated.jsonl"

    def bounce():
        while not (out.exists() and len(read_jsonl(out)) >= 2):
            time.sleep(0.05)
        server.stop()
        time.sleep(1)
        server.start()  # same port: the run's retries find it again

    t = threading.Thread(target=bounce)
    t.start()
    s = run_generate(work, client(server, server.model, work, concurrency=1, max_retries=12, backoff=1.0), CFG)
    t.join()
    server.stop()
    assert s.failed == 0 and sorted(ids_in(out)) == [f"p{i:03d}" for i in range(10)]


class GarbageHandler(http.server.BaseHTTPRequestHandler):
    """A broken server: 503 once per request body, then a 200 that is not JSON for some papers."""

    seen: set = set()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if body not in self.seen:
            self.seen.add(body)
            self.send_response(503)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if b"Film 1 " in body:
            self.wfile.write(b"<html>this is not an API</html>")
        else:
            reply = {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Q1: Why anneal?\nA1: To grow grains."},
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            }
            self.wfile.write(json.dumps(reply).encode())

    def log_message(self, *args):
        pass


def test_server_answering_garbage_is_recorded_and_the_run_goes_on(tmp_path):
    work = make_work(tmp_path, 4)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GarbageHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        s = run_generate(work, client(url, "m", work, max_retries=2), CFG)
    finally:
        httpd.shutdown()
    recs = {r["id"]: r for r in read_jsonl(work / "generated.jsonl")}
    assert recs["p001"]["status"] == "failed" and recs["p001"]["error"]  # not JSON: recorded, not crashed
    assert all(
        recs[i]["status"] == "short" and recs[i]["qa"][0]["answer"] == "To grow grains."
        for i in ("p000", "p002", "p003")
    )  # 503 first, retried, then parsed
    assert s.failed == 1


def test_two_endpoints_share_the_work(tiny_model_dir, tmp_path):
    work = make_work(tmp_path, 12)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    with LocalServer(tiny_model_dir, log_path=logs[0]) as a, LocalServer(tiny_model_dir, log_path=logs[1]) as b:
        for server in (a, b):  # a fresh server's first reply is slow: warm both so the split is fair
            asyncio.run(LLMClient(server.base_url, server.model, params={"max_tokens": 2}).complete("warm up"))
        s = run_generate(work, client([a.base_url, b.base_url], a.model, work, concurrency=2), CFG)
    assert s.failed == 0 and len(read_jsonl(work / "generated.jsonl")) == 12
    served = [log.read_text().count("POST /v1/chat/completions") for log in logs]  # warm-ups were completions
    assert sum(served) == 12 and min(served) >= 3  # both replicas took a real share


def test_shards_cover_the_corpus_once_and_merge(tiny_server, tmp_path):
    work = make_work(tmp_path, 10)
    for i in range(3):
        run_generate(
            work,
            client(tiny_server, tiny_server.model, work),
            GenerateConfig(context_tokens=2048, chars_per_token=1.0, shard=f"{i}/3"),
        )
        assert all(in_shard(pid, i, 3) for pid in ids_in(work / f"generated.shard-{i}-of-3.jsonl"))
    merge_shards(work, "generated.jsonl")
    assert sorted(ids_in(work / "generated.jsonl")) == [f"p{i:03d}" for i in range(10)]
    with pytest.raises(ValueError, match="i/n"):
        run_generate(work, client(tiny_server, tiny_server.model, work), GenerateConfig(shard="3"))
