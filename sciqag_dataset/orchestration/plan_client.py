"""The clients of a plan (``orchestration/plan.py``): they send nothing, and count what a run would send.

A ``DryClient`` counts each request the stage's own prompt-building code makes, tokenizes its prompt and answers
it with a made-up reply of the expected form (pairs taken from the passage, judgements of score 2, the chunk
filter's verdicts all useful), so the stage goes on to its next request as when every reply is usable. A request
the response cache (opened read-only) already answers is counted as cached, not sent. ``PlanEndpoints`` hands
them out as ``pipeline.Endpoints`` hands out real clients, so the stages are built as a run builds them, and
starts no server.

Prompt tokens come from the model's own tokenizer where one is here: the embedded model's GGUF vocabulary
(llama.cpp, with the chat template of the file, as its server formats a chat), or a local transformers
tokenizer of the endpoint's model; else ``CHARS_PER_TOKEN`` characters a token plus ``TEMPLATE_TOKENS`` a
message, said so in the plan.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sciqag_dataset.builders import chunk_filter
from sciqag_dataset.config.config_file import Config, EndpointConfig
from sciqag_dataset.core.schema import REASONING_TYPES
from sciqag_dataset.core.wiring import endpoint_of
from sciqag_dataset.llm import LLMClient, LLMResponse, client_from_config, embedded, models
from sciqag_dataset.llm.budget import DEFAULT_MAX_TOKENS, TEMPLATE_TOKENS
from sciqag_dataset.llm.cache import complete_reply
from sciqag_dataset.orchestration import pipeline

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4.0  # the approximation where no tokenizer of the model is here (English prose, large vocabulary)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_JUDGED = re.compile(r"one for each of the (\d+) ")


class Tokens:
    """Counts a request's prompt tokens as its endpoint would: ``how`` says with what."""

    def __init__(self, count_text, chat_text=None, how: str = "", close=None):
        self._count, self._chat, self.how, self.close = count_text, chat_text, how, close or (lambda: None)

    def prompt(self, kind: str, body: dict) -> int:
        if kind == "completion":
            return self._count(body.get("prompt") or "")
        messages = body.get("messages") or []
        if self._chat is not None:
            return self._count(self._chat(messages))
        return sum(self._count(m.get("content") or "") + TEMPLATE_TOKENS for m in messages)


def approximate() -> Tokens:
    return Tokens(
        lambda text: round(len(text) / CHARS_PER_TOKEN),
        how=f"approximation: {CHARS_PER_TOKEN:g} characters a token, {TEMPLATE_TOKENS} a message",
    )


def embedded_tokens() -> Tokens:
    """The embedded model's tokenizer and chat template, read from its GGUF file (vocabulary only)."""
    try:
        import jinja2.sandbox
        from llama_cpp import Llama

        vocab = Llama(model_path=str(models.gguf_path()), vocab_only=True, verbose=False)
        template = jinja2.sandbox.ImmutableSandboxedEnvironment().from_string(
            vocab.metadata["tokenizer.chat_template"]
        )
    except Exception as exc:  # llama-cpp-python or the GGUF file not installed
        log.info("no local tokenizer of the embedded model (%s): token counts approximated", exc)
        return approximate()
    return Tokens(
        lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=True, special=True)),
        lambda messages: template.render(messages=messages, add_generation_prompt=True),
        how=f"{models.DEFAULT_MODEL_ID} tokenizer (its GGUF file)",
        close=vocab.close,
    )


def hf_tokens(model: str) -> Tokens:
    """A transformers tokenizer of ``model`` found locally (a folder or the Hub cache), else the approximation."""
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model, local_files_only=True)
    except Exception:
        return approximate()
    chat = (
        (lambda messages: tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
        if tok.chat_template
        else None
    )
    return Tokens(lambda text: len(tok(text, add_special_tokens=False)["input_ids"]), chat, f"{model} tokenizer")


# ---------------------------------------------------------------- the dry client


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(" ".join(text.split())) if len(s.split()) >= 4] or [text.strip() or "It does."]


def _passage(prompt: str) -> str:
    """The passage a paced line request is about: the text after the last ``Passage:`` of the prompt."""
    tail = prompt.rsplit("Passage:", 1)[-1]
    return tail.split("<|im_end|>", 1)[0]


def made_up_reply(kind: str, body: dict) -> str:
    """A reply of the form the request asks for, from its own text: a question or an answer line (a paced
    request), the chunk filter's verdicts (every chunk useful), a list of judgements, or QA pairs."""
    asked = body.get("prompt") or ((body.get("messages") or [{}])[-1].get("content") or "")
    if chunk_filter.CHECK_MARK in asked:
        return chunk_filter.made_up_reply(asked)
    if kind == "completion":
        prompt = body.get("prompt") or ""
        line = re.search(r"([QA])(\d+):\s*$", prompt)
        sentences = _sentences(_passage(prompt))
        if line:
            i = int(line.group(2))
            sentence = sentences[(i - 1) % len(sentences)]
            if line.group(1) == "Q":
                words = sentence.rstrip(".!?").split()
                return f" What does the passage report about {' '.join(words[:8])} (point {i})?"
            return f" {sentence}"
        return " ".join(sentences[:3])
    text = (body.get("messages") or [{}])[-1].get("content") or ""
    judged = _JUDGED.search(text)
    if judged:
        n = int(judged.group(1))
        item = {"score": 2, "reasons": "Plausible.", "reasoning_type": REASONING_TYPES[0], "difficulty": 2}
        return json.dumps([item] * n)
    sentences = _sentences(text)
    n = int((re.search(r"formulate (\d+) ", text) or re.search(r"write (\d+) ", text) or [0, 10])[1])
    return "\n".join(
        f"Q{i}: What does the paper say about {' '.join(sentences[i % len(sentences)].split()[:6])}?\n"
        f"A{i}: {sentences[i % len(sentences)]}"
        for i in range(1, n + 1)
    )


@dataclass
class Sent:
    """What one endpoint was planned to receive for one stage."""

    stage: str
    endpoint: str  # the config section (teacher, generator, judge, ...)
    model: str
    url: str | None
    tokens: str = ""
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0  # of the made-up replies: an estimate
    most: int | None = None  # the most requests, where a discarded reply is asked again (``plan.py``)
    max_tokens: int = DEFAULT_MAX_TOKENS
    price_prompt_per_m: float = 0.0
    price_completion_per_m: float = 0.0


class DryClient(LLMClient):
    """An ``LLMClient`` that sends nothing: each request is tokenized and counted in ``sent`` (or as cached,
    where the response cache, opened read-only, holds its reply) and answered with ``made_up_reply``."""

    sent: Sent
    counter: Tokens
    cache_rows: Any  # a read-only sqlite3 connection to the response cache, or None

    async def _request(self, kind: str, body: dict, params: dict, partial: bool = False) -> LLMResponse:
        merged = {**self.params, **params}
        hit = _cached(self.cache_rows, self._key(kind, body, merged), partial)
        if hit is not None:
            self.usage.cached += 1
            self.sent.cached += 1
            return LLMResponse(**{**hit, "cached": True})
        text = made_up_reply(kind, body)
        prompt = self.counter.prompt(kind, body)
        completion = self.counter.prompt("completion", {"prompt": text})
        self.sent.requests += 1
        self.sent.prompt_tokens += prompt
        self.sent.completion_tokens += completion
        self.usage.requests += 1
        self.usage.prompt_tokens += prompt
        self.usage.completion_tokens += completion
        await asyncio.sleep(0)
        return LLMResponse(text=text, finish_reason="stop", prompt_tokens=prompt, completion_tokens=completion)

    async def aclose(self) -> None:
        pass


def _cached(rows, key: str, partial: bool) -> dict | None:
    if rows is None:
        return None
    try:
        row = rows.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    value = json.loads(row[0]) if row else None
    return value if value is not None and (partial or complete_reply(value)) else None


def read_only_cache(work: Path):
    path = work / "cache.sqlite"
    if not path.exists():
        return None
    try:
        # immutable: no lock and no -shm/-wal file made beside it (a plan writes nothing in the work dir)
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None


class PlanEndpoints(pipeline.Endpoints):
    """``pipeline.Endpoints`` whose clients are ``DryClient``s: the stages are built as a run builds them."""

    def __init__(self, cfg: Config, cache_rows):
        super().__init__(cfg)
        self.cache_rows = cache_rows
        self.sent: list[Sent] = []
        self.tokenizers: dict[str | None, Tokens] = {}  # by model; None: the embedded one

    def tokens(self, model: str | None) -> Tokens:
        if model not in self.tokenizers:
            self.tokenizers[model] = embedded_tokens() if model is None else hf_tokens(model)
        return self.tokenizers[model]

    def close(self) -> None:
        for counter in self.tokenizers.values():
            counter.close()

    def client(self, endpoint: EndpointConfig, stage: str) -> LLMClient:
        section = next(
            (name for name, e in pipeline.endpoints_of(self.cfg, stage) if e is endpoint), endpoint_of(stage)
        )
        keyless = replace(endpoint, api_key_env=None)  # a plan sends nothing: it needs no key
        if endpoint.url:
            real = client_from_config(keyless, None)
            counter, url = self.tokens(endpoint.model or ""), ", ".join(real.urls)
        else:
            real = client_from_config(
                keyless, None, model=self.choice.identity, label=embedded.DEFAULT_MODEL_ID, local=object()
            )
            counter, url = self.tokens(None), None
        client = DryClient(**{k: getattr(real, k) for k in LLMClient.__dataclass_fields__ if k not in ("usage",)})
        client.json_schema = self.choice.json_schema if not endpoint.url else True
        client.counter, client.cache_rows = counter, self.cache_rows
        client.sent = Sent(
            stage=stage,
            endpoint=section or stage,
            model=real.name,
            url=url,
            tokens=counter.how,
            max_tokens=int(real.params.get("max_tokens") or DEFAULT_MAX_TOKENS),
            price_prompt_per_m=endpoint.price_prompt_per_m,
            price_completion_per_m=endpoint.price_completion_per_m,
        )
        self.sent.append(client.sent)
        return client
