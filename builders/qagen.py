"""Asking a model for a paper's QA pairs: shared by the seed (teacher) and generate (generator) stages.

A paper is fitted to the model's context, sent with the paper's prompt (chat) or the released Alpaca
template (raw completion), and the reply is parsed; the record keeps the raw reply, the status and any
warnings either way. A reply cut at ``max_tokens`` loses the pair it was cut in, with a warning.
"""
from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from typing import Awaitable, Callable

from sciqag_dataset import records
from sciqag_dataset.config import QAGenConfig
from sciqag_dataset.llm import LLMClient, LLMResponse
from sciqag_dataset.qa import small_model
from sciqag_dataset.qa.parse import parse_qa
from sciqag_dataset.qa.prompts import build_messages, build_raw_prompt, fit_to_context
from sciqag_dataset.stage import Stage

PROMPT_OVERHEAD_TOKENS = 400  # the instruction, keywords and chat template around the paper


def paper_char_budget(cfg: QAGenConfig, max_tokens: int) -> int:
    return max(1000, int((cfg.context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS) * cfg.chars_per_token))


async def request_qa(paper: dict, client: LLMClient, cfg: QAGenConfig, origin: str) -> dict:
    """One paper -> one record with the parsed pairs (pure apart from the model call)."""
    raw = cfg.prompt_style == "alpaca" and cfg.raw_completion
    max_tokens = client.params.get("max_tokens", 2048)
    text = paper.get("text") or ""
    if cfg.chunk_words:
        pieces, warnings = small_model.chunks(text, cfg.chunk_words, cfg.max_chunks)
    else:
        pieces, warnings = fit_to_context(text, paper_char_budget(cfg, max_tokens), cfg.long_paper)
    per_piece = math.ceil(cfg.n_pairs / len(pieces))

    def ask(piece: str):
        if raw:
            return client.complete(build_raw_prompt(piece, paper["keywords"], n=per_piece, title=paper.get("title")))
        return client.chat(build_messages(piece, paper["keywords"], n=per_piece, style=cfg.prompt_style,
                                          title=paper.get("title")))

    if cfg.prompt_style == "small":
        replies, paced_warnings = await paced_pairs(client, pieces, paper["keywords"], cfg.n_pairs)
        warnings += paced_warnings
    else:
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
        "id": paper["id"], "qa": pairs, "keywords": paper["keywords"], "model_keywords": model_keywords,
        "raw_output": "\n\n".join(r.text for r in replies), "status": status,
        "error": "; ".join(reasons) or None, "warnings": warnings, "model": client.name,
        "prompt_style": cfg.prompt_style,
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
    }


async def paced_pairs(client: LLMClient, pieces: list[str], keywords: list[str], n_pairs: int
                      ) -> tuple[list[LLMResponse], list[str]]:
    """``n_pairs`` pairs over ``pieces``, written one line at a time (the embedded profile: see
    ``qa/small_model.py``). Returns one reply per piece, its text that piece's ``Q1:``/``A1:`` transcript and
    its token counts those of its requests, and a warning if lines were discarded."""
    sm = small_model
    base = float(client.params.get("temperature", 0.6))
    seen = {sm.question_key(q) for q in sm.EXAMPLE_QUESTIONS}  # a copied example is no pair
    replies, discarded, total = [], 0, 0
    for index, piece in enumerate(pieces):
        quota = math.ceil(max(n_pairs - total, 0) / (len(pieces) - index))  # what earlier pieces did not give
        prompt = sm.chat_prompt(sm.messages(piece, keywords, max(quota, 1)))
        transcript, got, fails, prompt_tokens, completion_tokens = "", 0, 0, 0, 0
        while got < quota and fails <= sm.RETRIES_PER_CHUNK:
            i, temperature = got + 1, min(base + sm.WARMER * fails, 1.5)
            q = await client.complete(f"{prompt}{transcript}Q{i}:", stop=["\n"], max_tokens=sm.QUESTION_TOKENS,
                                      temperature=temperature)
            question = " ".join(q.text.split())
            a = None
            if q.finish_reason != "length" and sm.usable_question(question, seen):
                a = await client.complete(f"{prompt}{transcript}Q{i}: {question}\nA{i}:", stop=["\n"],
                                          max_tokens=sm.ANSWER_TOKENS, temperature=temperature)
            prompt_tokens += q.prompt_tokens + (a.prompt_tokens if a else 0)
            completion_tokens += q.completion_tokens + (a.completion_tokens if a else 0)
            answer = " ".join(a.text.split()) if a else ""
            answer = sm.whole_sentences(answer) if a and a.finish_reason == "length" else answer
            if not answer:
                fails += 1
                continue
            seen.add(sm.question_key(question))
            transcript += f"Q{i}: {question}\nA{i}: {answer}\n"
            got += 1
        discarded, total = discarded + fails, total + got
        replies.append(LLMResponse(text=transcript.strip(), finish_reason="stop", prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens))
    return replies, [f"embedded profile: {discarded} line(s) discarded (cut, empty or repeated)"] if discarded else []


def qa_stage(name: str, output: str, client: LLMClient, cfg: QAGenConfig,
             one: Callable[[dict], Awaitable[dict]]) -> Stage:
    """A stage that asks ``client`` for every paper's pairs with ``one(paper)``, ``concurrency`` requests in
    flight per endpoint; the manifest records who answered and at what cost."""
    client.cache_namespace = client.cache_namespace or name  # teacher and generator may be one model
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k != "shard"}
    started = time.monotonic()

    def progress() -> dict:
        elapsed = max(time.monotonic() - started, 1e-9)
        return {"tok/s": f"{client.usage.completion_tokens / elapsed:.0f}", "cached": client.usage.cached,
                "retries": client.usage.retries}

    return Stage(name=name, output=output, inputs=records.with_keywords, process=one,
                 params={"model": client.name, "request": client.params, "settings": settings},
                 concurrency=client.concurrency * len(client.urls) if client.urls else 1,  # embedded: one at a time
                 count=records.count_papers,
                 progress=progress, describe=lambda: {**client.describe(), "settings": settings},
                 close=client.aclose)
