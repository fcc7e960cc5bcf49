"""Tokens and cost per stage and model, and the cap that stops a run before it passes ``--max-cost``.

A real `transformers serve` (the `says_server` fixture) answers; its token counts are real, the prices are
ours (large, so that a few requests cost dollars and the arithmetic is easy to check).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.evaluation import racar
from sciqag_dataset.evaluation.judge_prompts import build_racar_messages
from sciqag_dataset.llm.budget import LEDGER, Budget, CostCapReached, spend_by_stage, total_cost
from sciqag_dataset.llm.client import LLMClient

PRICE = "1000"  # USD per million tokens, prompt and completion alike: 1000 tokens cost $1
N_PAPERS = 6


def make_work(root: Path) -> Path:
    work = root / "work"
    papers = [
        {"id": f"p{i}", "title": f"Paper {i}", "text": f"Sample {i} was annealed at {300 + i} K for one hour. " * 40}
        for i in range(N_PAPERS)
    ]
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": ["anneal"], "status": "ok"} for p in papers])
    return work


def seed(work: Path, server, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ}
    env.pop("HF_HUB_OFFLINE", None)
    args = ["run", "--work", str(work), "--stages", "seed", "--endpoint", server.base_url, "--model", server.model]
    args += ["--price-prompt-per-m", PRICE, "--price-completion-per-m", PRICE, "--max-tokens", "64", *extra]
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )


def seeded(work: Path) -> list[dict]:
    return read_jsonl(work / "seed.jsonl") if (work / "seed.jsonl").exists() else []


def test_the_budget_reserves_the_worst_case_and_records_what_was_spent(tmp_path):
    client = LLMClient(base_url="http://127.0.0.1:9/v1", model="m", price_prompt_per_m=1e6, price_completion_per_m=2e6)
    budget = Budget(tmp_path, cap=5.0)
    budget.add(client, "seed")
    budget.reserve(4.0)
    with pytest.raises(CostCapReached, match="higher --max-cost"):
        budget.reserve(1.5)  # 4 reserved + 1.5 could pass 5
    budget.release(4.0)
    client.usage.requests, client.usage.prompt_tokens, client.usage.cost = 2, 3, 3.0
    budget.record()
    budget.record()  # nothing new: no second line
    client.usage.requests, client.usage.cost = 3, 4.5
    budget.record()
    assert [r["cost"] for r in read_jsonl(tmp_path / LEDGER)] == [3.0, 1.5]
    assert spend_by_stage(tmp_path) == [
        {"stage": "seed", "model": "m", "requests": 3, "cached": 0, "prompt_tokens": 3, "completion_tokens": 0,
         "cost": 4.5}
    ]  # fmt: skip
    with pytest.raises(CostCapReached):  # a new run of the work dir counts what the earlier ones spent
        Budget(tmp_path, cap=5.0).reserve(0.6)
    Budget(tmp_path, cap=5.0).reserve(0.5)


def test_a_cap_stops_the_run_cleanly_and_a_higher_cap_resumes(says_server, tmp_path):
    free = make_work(tmp_path / "uncapped")
    done = seed(free, says_server)
    assert done.returncode == 0, done.stderr
    full = total_cost(free)
    per_paper = full / N_PAPERS
    assert len(seeded(free)) == N_PAPERS and full > 0
    # the summary and the ledger show tokens and cost per stage and model
    (row,) = spend_by_stage(free)
    assert row["stage"] == "seed" and row["requests"] == N_PAPERS and row["prompt_tokens"] > 0
    assert f"${full:.4f}" in done.stdout and "tokens    seed" in done.stdout

    work = make_work(tmp_path / "capped")
    cap = full / 2
    stopped = seed(work, says_server, "--max-cost", f"{cap}")
    assert stopped.returncode == 2 and "cost cap reached" in stopped.stderr, stopped.stderr
    kept = seeded(work)
    assert 0 < len(kept) < N_PAPERS  # stopped before the end, and the finished papers were kept
    assert all(r.get("status") != "failed" for r in kept)  # no paper is blamed for the stop
    assert total_cost(work) <= cap + 1e-9  # never past the cap
    assert abs(total_cost(work) - per_paper * len(kept)) < per_paper / 2  # what was spent is what was kept
    assert "tokens    seed" in stopped.stdout  # the summary still comes

    again = seed(work, says_server, "--max-cost", f"{cap}")  # the same cap: stops before any request
    assert again.returncode == 2 and len(seeded(work)) == len(kept)

    resumed = seed(work, says_server, "--max-cost", f"{full * 3}")
    assert resumed.returncode == 0, resumed.stderr
    assert len(seeded(work)) == N_PAPERS
    assert {r["id"]: r["qa"] for r in seeded(work) if r["id"] in {k["id"] for k in kept}} == {
        k["id"]: k["qa"] for k in kept
    }  # the papers finished under the first cap were not asked again
    assert sum(r["requests"] for r in read_jsonl(work / LEDGER)) == N_PAPERS
    assert abs(total_cost(work) - full) < per_paper / 2
    (row,) = spend_by_stage(work)
    assert json.loads(json.dumps(row))["requests"] == N_PAPERS


def test_every_attempt_of_a_request_is_checked_against_the_cap(says_server, tmp_path):
    """A reply the client retries (here an empty one, which the real server still bills tokens for) is sent
    again only while the cap allows another worst case."""
    client = LLMClient(
        says_server.base_url,
        says_server.model,
        params={"max_tokens": 4},
        price_prompt_per_m=1e6,
        price_completion_per_m=1e6,
        max_retries=5,
        backoff=0.01,
    )
    budget = Budget(tmp_path, cap=1e9)
    budget.add(client, "seed")
    asyncio.run(client.complete("Hello.", partial=True))  # the prompt's real cost, and the model's rate
    one = client.usage.cost
    worst = budget.worst_case(client, {"prompt": "Hello."}, client.params)
    budget.cap = client.usage.cost + worst + 1.5 * one  # room for two attempts: the third could pass the cap
    with pytest.raises(CostCapReached):
        asyncio.run(client.complete("Hello."))  # empty every time: retried until the cap says no
    assert client.usage.requests == 1 + 2 and client.usage.cost <= budget.cap


def test_a_papers_requests_sent_beside_the_one_that_stops_are_counted(says_server, tmp_path):
    """RACAR sends a paper's five calls at once: when the cap stops one, those already sent still finish, and
    what they cost reaches the ledger."""
    work = tmp_path / "work"
    text = "Cobalt suppressed cation mixing in the layered cathode. " * 20
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "Cathodes", "text": text}])
    qa = [{"question": "What does cobalt suppress?", "answer": "Cation mixing."}]
    write_jsonl(work / "seed.jsonl", [{"id": "p0", "qa": qa, "status": "ok"}])
    judge = LLMClient(
        says_server.base_url, says_server.model, params={"max_tokens": 8}, price_prompt_per_m=1e6, max_retries=0
    )
    budget = Budget(work, cap=None)
    budget.add(judge, "evaluate")
    messages = {"messages": build_racar_messages("relevance", qa, text, "Cathodes")}
    budget.cap = 2.5 * budget.worst_case(judge, messages, judge.params)  # two or so of the five fit
    with pytest.raises(CostCapReached):
        run_stage(racar.stage([judge], max_attempts=1), work)
    budget.record()
    sent = judge.usage.requests
    assert 1 <= sent < 5
    assert sum(r["requests"] for r in read_jsonl(work / LEDGER)) == sent  # every request sent is counted
    assert total_cost(work) == pytest.approx(judge.usage.cost) and total_cost(work) <= budget.cap
    assert not (work / "racar.jsonl").exists() or read_jsonl(work / "racar.jsonl") == []  # the paper is redone
