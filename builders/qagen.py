"""Asking a model for a paper's QA pairs: shared by the seed (teacher) and generate (generator) stages.

A paper is fitted to the model's context, sent with the paper's prompt (chat) or the released Alpaca
template (raw completion), and the reply is parsed; the record keeps the raw reply, the status and any
warnings either way. A reply cut at ``max_tokens`` loses the pair it was cut in, with a warning. The
embedded profile (``prompt_style: small``) instead writes each pair a line at a time (``paced_pairs``):
its record keeps the transcript of the lines it kept, and a warning counts the attempts it discarded.

With ``components`` set, the paper's tables, equations and figures are asked about too, one request each
(``qa/components.py``); every pair records its ``grounding`` (prose, or the component it was asked about).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable

from sciqag_dataset.builders import chunk_filter
from sciqag_dataset.config.config_file import QAGenConfig
from sciqag_dataset.core import records
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm import LLMClient, LLMResponse
from sciqag_dataset.qa import components as comps
from sciqag_dataset.qa import small_model
from sciqag_dataset.qa.parse import parse_qa
from sciqag_dataset.qa.prompts import build_messages, build_raw_prompt, fit_to_context

log = logging.getLogger(__name__)

PROMPT_OVERHEAD_TOKENS = 400  # the instruction, keywords and chat template around the paper


def paper_char_budget(cfg: QAGenConfig, max_tokens: int) -> int:
    return max(1000, int((cfg.context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS) * cfg.chars_per_token))


async def request_qa(paper: dict, client: LLMClient, cfg: QAGenConfig, origin: str) -> dict:
    """One paper -> one record with the parsed pairs (pure apart from the model call)."""
    raw = cfg.prompt_style == "alpaca" and cfg.raw_completion
    max_tokens = client.params.get("max_tokens", 2048)
    text = paper.get("text") or ""
    filtered = None  # the chunk filter's report: chunks judged, kept, dropped by reason
    if cfg.chunk_filter != "off":
        budget = paper_char_budget(cfg, max_tokens)
        pieces, warnings, filtered = await chunk_filter.filtered_pieces(
            paper, cfg, chunk_filter.asker(client, cfg), budget
        )
    elif cfg.chunk_words:
        pieces, warnings = small_model.chunks(text, cfg.chunk_words, cfg.max_chunks, paper.get("section_starts"))
    else:
        pieces, warnings = fit_to_context(text, paper_char_budget(cfg, max_tokens), cfg.long_paper)
    per_piece = math.ceil(cfg.n_pairs / len(pieces))

    def ask(piece: str):
        if raw:
            return client.complete(build_raw_prompt(piece, paper["keywords"], n=per_piece, title=paper.get("title")))
        return client.chat(
            build_messages(piece, paper["keywords"], n=per_piece, style=cfg.prompt_style, title=paper.get("title"))
        )

    off_passage: list[str] = []  # questions dropped as not about their passage (the embedded profile)
    if cfg.prompt_style == "small":
        replies, paced_warnings, off_passage = await paced_pairs(client, pieces, paper["keywords"], cfg.n_pairs)
        warnings += paced_warnings
    else:
        replies = await asyncio.gather(*(ask(p) for p in pieces))
    pairs, model_keywords, reasons = [], [], []
    for reply in replies:
        # a paced transcript holds the pairs it kept (what a chunk did not give, the next one was asked for)
        expected = max(reply.text.count("\nA"), 1) if cfg.prompt_style == "small" else per_piece
        parsed = parse_qa(reply.text, expected=expected)
        got = parsed.pairs
        if reply.finish_reason == "length":
            # the reply stopped inside its last pair: never publish that pair as if it were whole
            warnings.append("the reply hit max_tokens" + ("; its last pair, cut short, was dropped" if got else ""))
            got = got[:-1]
        pairs += [{**p, "origin": origin, "grounding": comps.prose()} for p in got]
        model_keywords += parsed.keywords
        if parsed.reason:
            reasons.append(parsed.reason)
    asked = comps.pick(paper.get("components"), cfg.components)
    if asked:
        got, component_replies, component_warnings, component_reasons = await component_pairs(
            paper, asked, client, cfg, origin
        )
        pairs += got
        replies = [*replies, *component_replies]
        warnings += component_warnings
        reasons += component_reasons
    expected = cfg.n_pairs + cfg.component_pairs * len(asked)
    status = "ok" if len(pairs) >= expected else "short" if pairs else "unparsed"
    paper_words, seen_words = len(text.split()), sum(len(p.split()) for p in pieces)
    return {
        "id": paper["id"],
        "qa": pairs,
        "keywords": paper["keywords"],
        "model_keywords": model_keywords,
        "raw_output": "\n\n".join(r.text for r in replies),
        "status": status,
        "error": "; ".join(reasons) or None,
        "warnings": warnings,
        "model": client.name,
        "prompt_style": cfg.prompt_style,
        "off_passage": off_passage,
        # how much of the paper the model was shown (the embedded profile asks about a few chunks)
        "seen_words": seen_words,
        "paper_words": paper_words,
        "seen_share": round(seen_words / paper_words, 4) if paper_words else None,
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
        **({"chunk_filter": filtered} if filtered else {}),
        **({"components_asked": [c["id"] for c in asked]} if asked else {}),
    }


async def component_pairs(
    paper: dict, asked: list[dict], client: LLMClient, cfg: QAGenConfig, origin: str
) -> tuple[list[dict], list[LLMResponse], list[str], list[str]]:
    """``cfg.component_pairs`` pairs about each component in ``asked``, one request each (chat, or the Alpaca
    template as a raw completion where the paper's pairs are asked so). Returns the pairs, each with its
    ``grounding``; the replies; warnings; and, per reply that gave no pair or fewer than asked, the reason,
    named by the component. A reply that cannot be parsed costs its own pairs only."""
    n, title = cfg.component_pairs, paper.get("title")
    budget = paper_char_budget(cfg, client.params.get("max_tokens", 2048))  # what the paper may take of a request

    def ask(component: dict):
        if cfg.prompt_style == "alpaca" and cfg.raw_completion:
            return client.complete(comps.component_raw_prompt(component, n, title, budget))
        return client.chat(comps.component_messages(component, n, title, budget))

    replies = await asyncio.gather(*(ask(c) for c in asked))
    pairs, warnings, reasons = [], [], []
    for component, reply in zip(asked, replies):
        name = f"{component.get('label') or component['kind']} ({component['id']})"
        parsed = parse_qa(reply.text, expected=n)
        got = parsed.pairs
        if reply.finish_reason == "length":
            warnings.append(
                f"{name}: the reply hit max_tokens" + ("; its last pair, cut short, was dropped" if got else "")
            )
            got = got[:-1]
        pairs += [{**p, "origin": origin, "grounding": comps.grounding_of(component)} for p in got]
        if parsed.reason:
            reasons.append(f"{name}: {parsed.reason}")
    return pairs, list(replies), warnings, reasons


def most_paced_requests(n_pairs: int, n_pieces: int, retries: int = small_model.RETRIES_PER_CHUNK) -> int:
    """The most requests ``paced_pairs`` may send for ``n_pairs`` pairs over ``n_pieces`` pieces: each pair kept
    takes a question and an answer; each discarded attempt at most both too. A piece stops at its quota, with
    ``retries`` discards at most, or at ``retries + 1`` discards short of it, leaving the rest to the next pieces
    (whose quota grows). The worst case over how many pairs each piece keeps."""

    @functools.cache
    def most(index: int, total: int) -> int:
        if index == n_pieces:
            return 0
        quota = math.ceil((n_pairs - total) / (n_pieces - index))
        if quota <= 0:
            return 0
        return max(
            2 * (kept + (retries if kept == quota else retries + 1)) + most(index + 1, total + kept)
            for kept in range(quota + 1)
        )

    return most(0, 0)


def most_requests(paper: dict, record: dict, cfg: QAGenConfig) -> int | None:
    """The most requests ``request_qa`` may send for ``paper`` when its paced lines (the embedded profile) are
    discarded and asked again, ``record`` being what it wrote for the paper; None where nothing is asked
    again (a reply per piece of the paper, or no model asked)."""
    if record.get("prompt_style") != "small" or not cfg.chunk_words:
        return None
    components = len(comps.pick(paper.get("components"), cfg.components))  # asked once each, whatever the reply
    filtered = record.get("chunk_filter")
    if filtered:  # the chunks left to ask about, and the model's checks of them (the llm filter)
        return most_paced_requests(cfg.n_pairs, filtered["asked"]) + filtered.get("checks", 0) + components
    pieces, _ = small_model.chunks(
        paper.get("text") or "", cfg.chunk_words, cfg.max_chunks, paper.get("section_starts")
    )
    return most_paced_requests(cfg.n_pairs, len(pieces)) + components


async def _line(
    client: LLMClient, reply: LLMResponse, text: str, stop: list[str], cap: int, temperature: float
) -> LLMResponse:
    """One capped line of a paced reply; its tokens are counted in ``reply``."""
    r = await client.complete(text, stop=stop, max_tokens=cap, temperature=temperature, partial=True)
    reply.prompt_tokens += r.prompt_tokens
    reply.completion_tokens += r.completion_tokens
    return r


async def paced_pairs(
    client: LLMClient,
    pieces: list[str],
    keywords: list[str],
    n_pairs: int,
    *,
    question_tokens: int = small_model.QUESTION_TOKENS,
) -> tuple[list[LLMResponse], list[str], list[str]]:
    """``n_pairs`` pairs over ``pieces``, written one line at a time (the embedded profile: see
    ``qa/small_model.py``). Returns one reply per piece asked, its text that piece's ``Q1:``/``A1:``
    transcript and its token counts those of its requests; warnings (attempts discarded, pairs not about
    their passage); and the questions of those pairs, which were asked again in their place."""
    base = float(client.params.get("temperature", 0.6))
    seen = {small_model.question_key(q) for q in small_model.EXAMPLE_QUESTIONS}  # a copied example is no pair
    replies, discarded, total, off = [], 0, 0, []
    for index, piece in enumerate(pieces):
        quota = math.ceil((n_pairs - total) / (len(pieces) - index))  # what earlier pieces did not give, too
        if quota <= 0:
            break
        prompt = small_model.chat_prompt(small_model.messages(piece, keywords, quota))
        reply = LLMResponse(text="", finish_reason="stop")
        got = fails = streak = 0
        while got < quota and fails <= small_model.RETRIES_PER_CHUNK:
            i = got + 1
            # a retry samples warmer, so that it is a new sample and not the rejected (cached) one again
            temperature = min(base + small_model.WARMER * streak, 1.5)
            q = await _line(
                client, reply, f"{prompt}{reply.text}Q{i}:", ["\n", f"A{i}:"], question_tokens, temperature
            )
            question, answer = " ".join(q.text.split()), ""
            if q.finish_reason != "length" and small_model.usable_question(question, seen):
                a = await _line(
                    client,
                    reply,
                    f"{prompt}{reply.text}Q{i}: {question}\nA{i}:",
                    ["\n"],
                    small_model.ANSWER_TOKENS,
                    temperature,
                )
                answer = " ".join(a.text.split())
                if a.finish_reason == "length":
                    answer = small_model.whole_sentences(answer)
            if answer and (why := small_model.off_passage(question, answer, piece)):
                off.append(f"{question} ({why})")
                seen.add(small_model.question_key(question))
                answer = ""
            if not answer:
                fails, streak = fails + 1, streak + 1
                continue
            seen.add(small_model.question_key(question))
            reply.text += f"Q{i}: {question}\nA{i}: {answer}\n"
            got, streak = got + 1, 0
        discarded, total = discarded + fails, total + got
        reply.text = reply.text.strip()
        replies.append(reply)
    warnings = (
        [
            f"embedded profile: {discarded} attempt(s) discarded (a question cut, empty or asked before, "
            "an answer empty, or a pair not about its passage)"
        ]
        if discarded
        else []
    )
    if off:
        warnings.append(f"embedded profile: {len(off)} pair(s) dropped as not about their passage: " + "; ".join(off))
    return replies, warnings, off


def qa_stage(
    name: str,
    output: str,
    client: LLMClient,
    cfg: QAGenConfig,
    one: Callable[[dict], Awaitable[dict]],
    about: dict | None = None,
) -> Stage:
    """A stage that asks ``client`` for every paper's pairs with ``one(paper)``, ``concurrency`` requests in
    flight per endpoint; the manifest records who answered and at what cost, and ``about`` (what the card
    says of the model)."""
    client.cache_namespace = client.cache_namespace or name  # teacher and generator may be one model
    # options that change no request while off are left out: a run without them keeps its records' fingerprints
    unset = {"shard"} | ({"chunk_filter", "chunk_check_batch"} if cfg.chunk_filter == "off" else set())
    unset |= set() if cfg.components else {"components", "component_pairs"}
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in unset}
    started = time.monotonic()
    dropped: Counter = Counter()  # this run's chunks dropped by the chunk filter, by reason
    judged = Counter()

    async def counted(paper: dict) -> dict:
        record = await one(paper)
        if filtered := record.get("chunk_filter"):
            judged.update(papers=1, chunks=filtered["chunks"], kept=filtered["kept"])
            judged.update({"checks": filtered["checks"]} if "checks" in filtered else {})  # the model's, llm mode
            dropped.update(filtered["dropped"] if not filtered.get("all_dropped") else {})
        return record

    def filter_totals() -> dict:
        if cfg.chunk_filter == "off":
            return {}
        return {"chunk_filter": {"mode": cfg.chunk_filter, **judged, "dropped": dict(sorted(dropped.items()))}}

    async def close() -> None:
        if cfg.chunk_filter != "off":
            why = ", ".join(f"{reason} {n}" for reason, n in sorted(dropped.items())) or "none"
            log.info(
                "%s: chunk filter (%s) kept %d of %d chunks of %d papers; dropped: %s",
                name,
                cfg.chunk_filter,
                judged["kept"],
                judged["chunks"],
                judged["papers"],
                why,
            )
        await client.aclose()

    def progress() -> dict:
        elapsed = max(time.monotonic() - started, 1e-9)
        return {
            "tok/s": f"{client.usage.completion_tokens / elapsed:.0f}",
            "cached": client.usage.cached,
            "retries": client.usage.retries,
        }

    return Stage(
        name=name,
        output=output,
        inputs=functools.partial(
            records.with_keywords, sections=bool(cfg.chunk_words), components=bool(cfg.components)
        ),
        process=counted,
        params={"model": client.name, "request": client.params, "settings": settings},
        concurrency=client.concurrency * len(client.urls) if client.urls else 1,  # embedded: one at a time
        count=records.count_papers,
        progress=progress,
        describe=lambda: {**client.describe(), "settings": settings, **(about or {}), **filter_totals()},
        close=close,
    )
