"""The one LLM client every stage uses (teacher, generator, judges, benchmark).

Any OpenAI-compatible endpoint: OpenAI itself, TGI's Messages API, vLLM,
``transformers serve``. Async with bounded concurrency per endpoint, spread
over several endpoints; retries with exponential backoff and full jitter on
429/5xx/timeouts/connection loss and empty replies; a persistent SQLite
response cache keyed by the request; token and cost accounting. Stages never
build HTTP clients.

What it guarantees:
- a key goes only to the endpoints it was configured for (``resolve_api_key``);
  no client library may pick one up from the environment on its own;
- text that cannot be encoded (lone surrogates) is repaired on the way out and
  on the way in, so it neither fails a request nor a write;
- only complete replies are cached: an empty reply ("") is retried like a 5xx,
  a reply cut at ``max_tokens`` is returned (marked by ``finish_reason``) but
  not cached;
- a corrupt cache file is moved aside and rebuilt; a failed cache write loses
  nothing but the cache entry;
- a server this run started (``local``) is started on the first request the
  cache cannot answer, and a connection error to it asks whether it is still
  alive: a dead one is replaced and the request sent again, and when it cannot
  be, ``ServerDown`` is raised as it is (no paper is to blame).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import openai

from sciqag_dataset.core.errors import StopRun
from sciqag_dataset.core.redact import redact, redact_url, remember_secret, url_secrets
from sciqag_dataset.core.text_repair import repair
from sciqag_dataset.llm.cache import ResponseCache, complete_reply
from sciqag_dataset.llm.transports import transport

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
#: Sent when no key is configured. Never None: both client libraries would then look for a key of their
#: own (OPENAI_API_KEY, the Hugging Face token) and send it to whatever host they were given.
NO_KEY = "no-key"


class LocalServing(Protocol):
    """A server this process looks after (``supervisor.EmbeddedServer``): ``connect`` and ``recover`` return a
    ``supervisor.Serving`` (URLs, the model name to send, the cache identity of its replies)."""

    def connect(self): ...

    def recover(self, serving): ...


class LLMError(RuntimeError):
    """A request that failed for good (after retries, or not retryable)."""


class EmptyReply(Exception):
    """The server answered with no text: retried like a 5xx, never cached."""


@dataclass
class LLMResponse:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    endpoint: str = ""


@dataclass
class Usage:
    requests: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Endpoint:
    url: str
    client: openai.AsyncOpenAI
    chat: Any  # the transport's own chat client (hf: huggingface_hub.AsyncInferenceClient), else None
    semaphore: asyncio.Semaphore
    in_flight: int = 0
    down_until: float = 0.0  # a replica that refused a connection rests before it is tried again


@dataclass
class LLMClient:
    """Chat and raw completions against one or more OpenAI-compatible endpoints.

    ``api_key`` is used in memory only and sent to ``base_url`` alone; configs name the environment
    variable that holds it (``api_key_env``, see ``resolve_api_key``), never the key.
    """

    base_url: str | list[str]
    model: str
    api_key: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    max_retries: int = 5
    timeout: float = 600.0
    backoff: float = 1.0
    max_backoff: float = 60.0
    cache: ResponseCache | None = None
    price_prompt_per_m: float = 0.0
    price_completion_per_m: float = 0.0
    label: str | None = None  # the model's public name when ``model`` is a local path
    # whether the server takes ``response_format`` of type ``json_schema`` (llama-cpp-python's answers a 500 to
    # it, which looks like an outage and is retried; a judge of such a server is asked in plain text)
    json_schema: bool = True
    # the client library of chat requests (``transports.TRANSPORTS``; an endpoint's ``backend:`` option):
    # "openai" | "hf" (huggingface_hub's AsyncInferenceClient; raw completions go through openai either way)
    transport: str = "openai"
    # Part of the cache key: the same model asked the same thing by two stages (teacher and generator
    # in the embedded default) gets two samples, not one reply twice.
    cache_namespace: str = ""
    # A server started on first need (the embedded model): ``local.connect()`` runs before the first request
    # the cache cannot answer. Until then ``base_url`` may be empty and ``model`` only names the replies in the
    # cache; a run the cache answers starts nothing.
    local: LocalServing | None = None
    usage: Usage = field(default_factory=Usage)
    # the run's spending cap and ledger (``budget.Budget.add``); None: nothing is capped
    budget: Any = None

    def __post_init__(self) -> None:
        urls = [self.base_url] if isinstance(self.base_url, str) else list(self.base_url)
        if not urls and self.local is None:
            raise ValueError("LLMClient needs at least one endpoint URL")
        self.urls = urls
        self.served_model = self.model  # what requests name; ``connect`` may say otherwise
        self._transport = transport(self.transport)
        self._transport.check(urls)
        for u in urls:
            for secret in url_secrets(u):
                remember_secret(secret)
        remember_secret(self.api_key)
        self._serving = None  # what ``local`` answered: the server this client talks to
        self._endpoints: list[_Endpoint] | None = None  # built lazily inside the running event loop
        self._loop = None
        self._turn = 0

    def _pool(self) -> list[_Endpoint]:
        loop = asyncio.get_running_loop()
        if self._endpoints is None or self._loop is not loop:  # HTTP clients belong to one event loop
            self._loop = loop
            key = self.api_key or NO_KEY
            self._endpoints = [
                _Endpoint(
                    u,
                    openai.AsyncOpenAI(
                        base_url=u,
                        api_key=key,
                        max_retries=0,
                        timeout=self.timeout,
                        # openai's own HTTP client, left unclosed, schedules its close on whatever loop runs
                        # when it is collected: one that cannot close it. This one is closed by ``aclose``.
                        http_client=openai.DefaultAsyncHttpxClient(timeout=self.timeout),
                    ),
                    self._chat_client(u, key),
                    asyncio.Semaphore(self.concurrency),
                )
                for u in self.urls
            ]
        return self._endpoints

    @property
    def name(self) -> str:
        return self.label or self.model

    def describe(self) -> dict[str, Any]:
        """What may be written to manifests and cards: no credentials."""
        return {
            "endpoints": [redact_url(u) for u in self.urls],
            "model": self.name,
            "params": self.params,
            "usage": self.usage.as_dict(),
        }

    async def chat(self, messages: list[dict], *, partial: bool = False, **params) -> LLMResponse:
        return await self._request("chat", {"messages": messages}, params, partial=partial)

    async def complete(self, prompt: str, *, partial: bool = False, **params) -> LLMResponse:
        """``partial``: a reply cut at ``max_tokens`` or empty is an answer too (a line the caller capped on
        purpose, a benchmark answer): returned without a retry and cached, so that a resumed run replays it."""
        return await self._request("completion", {"prompt": prompt}, params, partial=partial)

    async def _request(self, kind: str, body: dict, params: dict, partial: bool = False) -> LLMResponse:
        merged = {**self.params, **params}
        body, repaired = repair(body)
        if repaired:
            log.warning("request text had %d unencodable character(s) (lone surrogates); sent as U+FFFD", repaired)
        key = self._key(kind, body, merged)
        if self.cache is not None and (hit := self.cache.get(key, partial=partial)) is not None:
            self.usage.cached += 1
            return LLMResponse(**{**hit, "cached": True})
        if self.local is not None and self._serving is None:
            self._use(self.local.connect())  # synchronous on purpose: a server started from the main thread
            # is tied to this process's death (see LocalServer), and every request waits for it anyway
            hit = self.cache.get(self._key(kind, body, merged), partial=partial) if self.cache is not None else None
            if hit is not None:  # the engine that serves (a fallback) answered this before, under its name
                self.usage.cached += 1
                return LLMResponse(**{**hit, "cached": True})
        last: BaseException | None = None
        attempt = 0
        while attempt <= self.max_retries:
            endpoint = self._pick()
            try:
                resp = await self._attempt(endpoint, kind, body, merged, partial)
            except StopRun:
                raise  # the cost cap: this request is not sent, and no retry may send it
            except Exception as exc:
                retry_after = _retryable(exc)
                if retry_after is None:
                    self.usage.failures += 1
                    raise LLMError(redact(f"{type(exc).__name__}: {_short(exc)}")) from exc
                last = exc
                if self.local is not None and _connection_lost(exc):
                    replaced = self.local.recover(self._serving)  # ServerDown when none can serve: raised as is
                    if replaced is not None:  # a new server, not a retry of this request: sent again at once
                        await self.aclose()
                        self._use(replaced)
                        continue
                if isinstance(exc, (openai.APIConnectionError, ConnectionError)) and len(self.urls) > 1:
                    endpoint.down_until = time.monotonic() + min(self.max_backoff, self.backoff * 2**attempt * 5)
                if attempt == self.max_retries:
                    break
                self.usage.retries += 1
                delay = retry_after or random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))
                log.info("retrying %s after %s (%.1fs)", redact_url(endpoint.url), type(exc).__name__, delay)
                await asyncio.sleep(delay)
                attempt += 1
                continue
            value = {k: v for k, v in asdict(resp).items() if k != "cached"}
            if self.cache is not None and (partial or complete_reply(value)):
                # under the identity of the server that answered (a replacement may be another engine)
                self.cache.put(self._key(kind, body, merged), value)
            return resp
        self.usage.failures += 1
        raise LLMError(redact(f"gave up after {self.max_retries + 1} attempts: {type(last).__name__}: {_short(last)}"))

    async def _attempt(self, endpoint: _Endpoint, kind: str, body: dict, params: dict, partial: bool) -> LLMResponse:
        """One request to one replica, accounted (an empty reply too: its tokens were spent). Under the run's
        budget every attempt, a retry included, first reserves its worst case (``budget.CostCapReached``)."""
        reserved = self.budget.worst_case(self, body, params) if self.budget is not None else 0.0
        if self.budget is not None:
            self.budget.reserve(reserved)
        try:
            async with endpoint.semaphore:
                endpoint.in_flight += 1
                try:
                    resp = await self._send(endpoint, kind, body, params)
                finally:
                    endpoint.in_flight -= 1
            self._account(resp, body, reserved)
        finally:
            if self.budget is not None:
                self.budget.release(reserved)
        if not resp.text and not partial:
            raise EmptyReply(f"empty reply (finish_reason={resp.finish_reason})")
        return resp

    def price(self, prompt_tokens: float, completion_tokens: float) -> float:
        """USD for these tokens at this endpoint's prices."""
        return (prompt_tokens * self.price_prompt_per_m + completion_tokens * self.price_completion_per_m) / 1e6

    def _key(self, kind: str, body: dict, params: dict) -> str:
        return ResponseCache.key(
            {
                "kind": kind,
                "model": self.model,
                **body,
                "params": params,
                **({"namespace": self.cache_namespace} if self.cache_namespace else {}),
            }
        )

    def _use(self, serving) -> None:
        """Talk to the local server ``serving`` from now on; its replies are cached under its identity."""
        self._serving = serving
        self.urls, self.served_model, self.model = list(serving.urls), serving.model, serving.identity
        self._endpoints = None
        for u in self.urls:
            for secret in url_secrets(u):
                remember_secret(secret)

    def _pick(self) -> _Endpoint:
        """The least busy replica that is not resting; round-robin among equals."""
        pool = self._pool()
        now = time.monotonic()
        up = [e for e in pool if e.down_until <= now] or [min(pool, key=lambda e: e.down_until)]
        self._turn += 1
        return min(up, key=lambda e: (e.in_flight, (pool.index(e) - self._turn) % len(pool)))

    def _chat_client(self, url: str, key: str):
        opener = self._transport.open_chat
        return opener(url, key, self.timeout) if opener is not None else None

    async def _send(self, endpoint: _Endpoint, kind: str, body: dict, params: dict) -> LLMResponse:
        if kind == "chat" and endpoint.chat is not None:
            r = await self._transport.chat(endpoint.chat, self.served_model, body["messages"], params)
            choice = r.choices[0]
            text, finish = choice.message.content or "", choice.finish_reason
        elif kind == "chat":
            r = await endpoint.client.chat.completions.create(model=self.served_model, **body, **params)
            choice = r.choices[0]
            text, finish = choice.message.content or "", choice.finish_reason
        else:
            r = await endpoint.client.completions.create(model=self.served_model, **body, **params)
            choice = r.choices[0]
            text, finish = choice.text or "", choice.finish_reason
        usage = r.usage
        text, repaired = repair(text)
        if repaired:
            log.warning(
                "%s replied with %d unencodable character(s) (lone surrogates); kept as U+FFFD",
                redact_url(endpoint.url),
                repaired,
            )
        return LLMResponse(
            text=text,
            finish_reason=finish,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            endpoint=redact_url(endpoint.url),
        )

    def _account(self, resp: LLMResponse, body: dict, reserved: float = 0.0) -> None:
        u = self.usage
        u.requests += 1
        u.prompt_tokens += resp.prompt_tokens
        u.completion_tokens += resp.completion_tokens
        if self.budget is not None and not (resp.prompt_tokens or resp.completion_tokens) and reserved:
            u.cost += reserved  # a server that reports no usage is charged the worst case: the cap must hold
            self.budget.unreported(self)
        else:
            u.cost += self.price(resp.prompt_tokens, resp.completion_tokens)
        if self.budget is not None:
            self.budget.observe(self, body, resp.prompt_tokens)
            self.budget.tick()

    async def aclose(self) -> None:
        for e in self._endpoints or []:
            await e.client.close()
            if e.chat is not None:
                await e.chat.close()
        self._endpoints = None


def _retryable(exc: Exception) -> float | None:
    """Seconds to wait (0 = use backoff) if ``exc`` is worth retrying, else None."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if type(exc).__module__.startswith("huggingface_hub"):  # InferenceClient errors
        if status is None or status in RETRYABLE_STATUS:
            return 0.0
        return None
    if type(exc).__module__.startswith(("httpx", "httpcore")) and status is None:
        return 0.0  # transport errors of the InferenceClient: connection refused/reset, timeouts
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return 0.0
    if isinstance(exc, openai.APIStatusError) and exc.status_code in RETRYABLE_STATUS:
        try:
            return float(exc.response.headers.get("retry-after", 0))
        except (TypeError, ValueError):
            return 0.0
    if isinstance(exc, (asyncio.TimeoutError, ConnectionError, EmptyReply)):
        return 0.0
    return None


def _connection_lost(exc: Exception) -> bool:
    """Nothing answered at the other end (refused, reset, closed mid-reply): the server may have died."""
    if isinstance(exc, openai.APITimeoutError):
        return False  # a slow server is alive
    return isinstance(exc, (openai.APIConnectionError, ConnectionError)) or (
        type(exc).__module__.startswith(("httpx", "httpcore"))
        and "Timeout" not in type(exc).__name__
        and getattr(getattr(exc, "response", None), "status_code", None) is None
    )


def _short(exc: BaseException | None, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."
