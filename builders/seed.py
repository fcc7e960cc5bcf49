"""Seed QA: ask a teacher LLM for each paper's QA pairs (the paper's prompt + keywords).

Input: ``WORK/papers.jsonl`` joined with ``WORK/keywords.jsonl``. Output:
``WORK/seed.jsonl``, one record per paper with the parsed pairs, the raw reply
and a status; ``WORK/seed_manifest.json`` says who answered and at what cost.
Unparseable or short replies are kept with the reason; a paper whose request
failed is recorded as failed and retried on the next run.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from sciqag_dataset.config import SeedConfig
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.runner import Summary

from .qagen import count_inputs, qa_inputs, request_qa, run_qa_stage


async def seed_one(paper: dict, client: LLMClient, cfg: SeedConfig) -> dict:
    if cfg.use_existing_qa and paper.get("existing_qa"):  # e.g. the SciQAG authors' released pairs
        qa = paper["existing_qa"]
        return {"id": paper["id"], "qa": qa, "status": "ok" if len(qa) >= cfg.n_pairs else "short",
                "model": "released", "prompt_style": None, "warnings": ["QA pairs taken from the source file"]}
    return await request_qa(paper, client, cfg, origin="teacher")


def run_seed(work: str | Path, client: LLMClient, cfg: SeedConfig) -> Summary:
    work = Path(work)
    return run_qa_stage("seed", qa_inputs(work), lambda p: seed_one(p, client, cfg), client,
                        work / "seed.jsonl", work / "seed_manifest.json", dataclasses.asdict(cfg),
                        total=count_inputs(work))
