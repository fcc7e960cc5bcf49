"""Seed QA: ask a teacher LLM for each paper's QA pairs (the paper's prompt + keywords).

Input: papers with their keywords. Output: ``WORK/seed.jsonl``, one record per paper with the parsed
pairs, the raw reply and a status; ``WORK/seed_manifest.json`` says who answered and at what cost.
Unparseable or short replies are kept with the reason; a paper whose request failed is recorded as
failed and retried on the next run.
"""

from __future__ import annotations

from sciqag_dataset.builders.qagen import qa_stage, request_qa
from sciqag_dataset.config.config_file import SeedConfig
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm import LLMClient


async def seed_one(paper: dict, client: LLMClient, cfg: SeedConfig) -> dict:
    if cfg.use_existing_qa and paper.get("existing_qa"):  # e.g. the SciQAG authors' released pairs
        qa = paper["existing_qa"]
        return {
            "id": paper["id"],
            "qa": qa,
            "status": "ok" if len(qa) >= cfg.n_pairs else "short",
            "model": "released",
            "prompt_style": None,
            "warnings": ["QA pairs taken from the source file"],
        }
    return await request_qa(paper, client, cfg, origin="teacher")


def stage(client: LLMClient, cfg: SeedConfig) -> Stage:
    """The teacher's QA pairs for every paper -> ``WORK/seed.jsonl``."""

    async def one(paper: dict) -> dict:
        return await seed_one(paper, client, cfg)

    return qa_stage("seed", "seed.jsonl", client, cfg, one)
