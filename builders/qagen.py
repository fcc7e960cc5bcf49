"""Asking a model for a paper's QA pairs: shared by the seed (teacher) and generate (generator) stages.

A paper is fitted to the model's context, sent with the paper's prompt (chat)
or the released Alpaca template (raw completion), and the reply is parsed;
the record keeps the raw reply, the status and any warnings either way.
"""
from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path
from typing import Iterator

from sciqag_dataset.config import QAGenConfig
from sciqag_dataset.errors import MissingInput
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.runner import JsonlIndex, Summary, compact, iter_latest, run_async

from .parse import parse_qa
from .prompts import build_messages, build_raw_prompt

PROMPT_OVERHEAD_TOKENS = 400  # the instruction, keywords and chat template around the paper


def paper_char_budget(cfg: QAGenConfig, max_tokens: int) -> int:
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


def qa_inputs(work: Path, keep=lambda paper_id: True) -> Iterator[dict]:
    """Papers joined with their keywords, streamed: only line offsets are held per id."""
    if not (work / "papers.jsonl").exists():
        raise MissingInput(f"{work}/papers.jsonl not found: run `sciqag ingest` first")
    keywords = JsonlIndex(work / "keywords.jsonl")
    for paper in iter_latest(work / "papers.jsonl"):
        if not keep(paper["id"]):
            continue
        kw = keywords.get(paper["id"]) or {}
        paper["keywords"] = (kw.get("keywords") if kw.get("status") != "failed" else None) \
            or paper.get("keywords") or []
        yield paper


async def request_qa(paper: dict, client: LLMClient, cfg: QAGenConfig, origin: str) -> dict:
    """One paper -> one record with the parsed pairs (pure apart from the model call)."""
    raw = cfg.prompt_style == "alpaca" and cfg.raw_completion
    max_tokens = client.params.get("max_tokens", 2048)
    pieces, warnings = fit_to_context(paper.get("text") or "", paper_char_budget(cfg, max_tokens),
                                      cfg.long_paper)
    per_piece = math.ceil(cfg.n_pairs / len(pieces))

    def ask(piece: str):
        if raw:
            return client.complete(build_raw_prompt(piece, paper["keywords"], n=per_piece, title=paper.get("title")))
        return client.chat(build_messages(piece, paper["keywords"], n=per_piece, style=cfg.prompt_style,
                                          title=paper.get("title")))

    replies = await asyncio.gather(*(ask(p) for p in pieces))
    pairs, model_keywords, reasons = [], [], []
    for reply in replies:
        parsed = parse_qa(reply.text, expected=per_piece)
        got = parsed.pairs
        if reply.finish_reason == "length":
            # the reply stopped inside its last pair: never publish that pair as if it were whole
            warnings.append("the reply hit max_tokens" + ("; its last pair, cut short, was dropped" if got else ""))
            got = got[:-1]
        pairs += [{**p, "origin": origin} for p in got]
        model_keywords += parsed.keywords
        if parsed.reason:
            reasons.append(parsed.reason)
    status = "ok" if len(pairs) >= cfg.n_pairs else "short" if pairs else "unparsed"
    return {
        "id": paper["id"], "qa": pairs, "model_keywords": model_keywords,
        "raw_output": "\n\n".join(r.text for r in replies), "status": status,
        "error": "; ".join(reasons) or None, "warnings": warnings, "model": client.name,
        "prompt_style": cfg.prompt_style,
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
    }


def count_inputs(work: Path, keep=lambda paper_id: True) -> int:
    return sum(1 for pid in JsonlIndex(work / "papers.jsonl").offsets if keep(pid))


def run_qa_stage(stage: str, records, one, client: LLMClient, out: Path, manifest: Path,
                 settings: dict, total: int | None = None) -> Summary:
    """Drive ``one(paper)`` over ``records`` with the client's concurrency; write a run manifest.

    At the end the output keeps one line per paper (a retried failure leaves an older line behind).
    """
    started = time.monotonic()
    client.cache_namespace = client.cache_namespace or stage

    def postfix():
        elapsed = max(time.monotonic() - started, 1e-9)
        return {"tok/s": f"{client.usage.completion_tokens / elapsed:.0f}", "cached": client.usage.cached,
                "retries": client.usage.retries}

    async def main() -> Summary:
        try:
            return await run_async(stage, records, one, out, concurrency=client.concurrency * len(client.urls),
                                   postfix=postfix, total=total)
        finally:
            await client.aclose()

    summary = asyncio.run(main())
    compact(out)
    seconds = time.monotonic() - started
    manifest.write_text(json.dumps({
        "stage": stage, **client.describe(), "settings": settings, "counts": dict(summary.counts),
        "seconds": round(seconds, 1),
        "completion_tokens_per_s": round(client.usage.completion_tokens / max(seconds, 1e-9), 1),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "output": out.name,
    }, indent=2))
    return summary
