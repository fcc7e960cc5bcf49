"""Seed QA: ask a teacher LLM for the paper's QA pairs (paper prompt + keywords).

Input: ``WORK/papers.jsonl`` joined with ``WORK/keywords.jsonl``. Output:
``WORK/seed.jsonl``, one record per paper with the parsed pairs, the raw reply
and a status. Unparseable or short replies are kept with the reason; a paper
whose request failed is recorded as failed and retried on the next run.
"""
from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Iterator

from sciqag_dataset.config import SeedConfig
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.runner import Summary, iter_latest, read_jsonl, run_async

from .parse import parse_qa
from .prompts import build_messages

PROMPT_OVERHEAD_TOKENS = 400  # the instruction, keywords and chat template around the paper


def paper_char_budget(cfg: SeedConfig, max_tokens: int) -> int:
    return max(1000, int((cfg.context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS) * cfg.chars_per_token))


def fit_to_context(text: str, budget: int, mode: str) -> tuple[list[str], list[str]]:
    """Split or cut ``text`` to fit ``budget`` characters; return the pieces and warnings."""
    if len(text) <= budget:
        return [text], []
    if mode == "chunk":
        n = math.ceil(len(text) / budget)
        size = math.ceil(len(text) / n)
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        return pieces, [f"paper of {len(text)} chars split into {len(pieces)} chunks to fit the context"]
    if mode != "truncate":
        raise ValueError(f"long_paper must be 'truncate' or 'chunk', not {mode!r}")
    cut = text.rfind("\n", 0, budget)
    cut = cut if cut > budget // 2 else budget  # prefer a paragraph boundary
    return [text[:cut]], [f"paper truncated from {len(text)} to {cut} chars to fit the context"]


def seed_inputs(work: Path) -> Iterator[dict]:
    """Papers joined with their keywords (keywords held per id; papers streamed)."""
    keywords = {r["id"]: r.get("keywords") or [] for r in read_jsonl(work / "keywords.jsonl")
                if r.get("status") != "failed"}
    for paper in iter_latest(work / "papers.jsonl"):
        paper["keywords"] = keywords.get(paper["id"]) or paper.get("keywords") or []
        yield paper


async def seed_one(paper: dict, client: LLMClient, cfg: SeedConfig) -> dict:
    """One paper -> one seed record (pure apart from the LLM call)."""
    if cfg.use_existing_qa and paper.get("existing_qa"):
        qa = paper["existing_qa"]
        return {"id": paper["id"], "qa": qa, "status": "ok" if len(qa) >= cfg.n_pairs else "short",
                "model": "released", "prompt_style": None, "warnings": ["QA pairs taken from the source file"]}
    max_tokens = client.params.get("max_tokens", 2048)
    pieces, warnings = fit_to_context(paper.get("text") or "", paper_char_budget(cfg, max_tokens),
                                      cfg.long_paper)
    per_piece = math.ceil(cfg.n_pairs / len(pieces))
    replies = await asyncio.gather(*(
        client.chat(build_messages(piece, paper["keywords"], n=per_piece, style=cfg.prompt_style,
                                   title=paper.get("title")))
        for piece in pieces))
    pairs, model_keywords, reasons = [], [], []
    for reply in replies:
        parsed = parse_qa(reply.text, expected=per_piece)
        pairs += [{**p, "origin": "teacher"} for p in parsed.pairs]
        model_keywords += parsed.keywords
        if parsed.reason:
            reasons.append(parsed.reason)
        if reply.finish_reason == "length":
            warnings.append("the reply hit max_tokens and may be cut short")
    status = "ok" if len(pairs) >= cfg.n_pairs else "short" if pairs else "unparsed"
    return {
        "id": paper["id"], "qa": pairs, "model_keywords": model_keywords,
        "raw_output": "\n\n".join(r.text for r in replies), "status": status,
        "error": "; ".join(reasons) or None, "warnings": warnings, "model": client.name,
        "prompt_style": cfg.prompt_style,
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
    }


def run_seed(work: str | Path, client: LLMClient, cfg: SeedConfig) -> Summary:
    work = Path(work)
    if not (work / "papers.jsonl").exists():
        raise FileNotFoundError(f"{work}/papers.jsonl not found: run `sciqag ingest` first")

    async def main() -> Summary:
        try:
            return await run_async("seed", seed_inputs(work), lambda p: seed_one(p, client, cfg),
                                   work / "seed.jsonl", concurrency=client.concurrency * len(client.urls),
                                   postfix=lambda: {"tok": client.usage.completion_tokens,
                                                    "cached": client.usage.cached})
        finally:
            await client.aclose()

    return asyncio.run(main())


