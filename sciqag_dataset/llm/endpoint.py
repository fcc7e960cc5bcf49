"""An endpoint's configuration, its key, and the client built for it.

A key is read from the environment variable the endpoint names (``api_key_env``) and sent to that
endpoint's URL(s) only; the embedded server never gets one.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.options import opt
from sciqag_dataset.core.redact import redact, redact_url, remember_secret, url_secrets
from sciqag_dataset.llm.cache import ResponseCache
from sciqag_dataset.llm.client import LLMClient, LLMError
from sciqag_dataset.llm.transports import TRANSPORTS

#: Hosts that OPENAI_API_KEY is sent to when an endpoint names no key variable of its own.
OPENAI_HOSTS = ("api.openai.com",)


class EndpointUnreachable(UserError, LLMError):
    """No configured endpoint answers at all (checked before a stage starts)."""


@dataclass
class EndpointConfig:
    """An OpenAI-compatible endpoint. ``url: null`` means the embedded local server."""

    url: str | list[str] | None = opt(
        None,
        flag="endpoint",
        metavar="URL",
        repeat=True,
        help="base URL such as http://host:8080/v1; repeat for replicas (default: the embedded local model)",
    )
    model: str | None = opt(None, help="the model name the endpoint serves")
    # the transport (client library) of this endpoint's requests; the key keeps its first name
    backend: str = opt(
        "openai",
        choices=TRANSPORTS.names(),
        help="client library: openai, or hf (huggingface_hub's InferenceClient, chat requests)",
    )
    api_key_env: str | None = opt(
        None,
        metavar="VAR",
        help="environment variable holding this endpoint's key (must be set when named; "
        "none: OPENAI_API_KEY for api.openai.com only)",
    )
    concurrency: int = opt(8, min=1, help="requests in flight per endpoint (the embedded server: always 1)")
    max_retries: int = opt(5, min=0, help="retries on 429/5xx/timeouts/connection loss, with backoff and jitter")
    timeout: float = opt(600.0, min=0.001, help="seconds per request")
    temperature: float = opt(0.6, min=0.0, help="sampling temperature (the paper: 0.6)")
    top_p: float = opt(0.9, min=0.0, max=1.0, help="nucleus sampling (the paper: 0.9)")
    max_tokens: int | None = opt(None, min=1, help="completion budget per request (default 2048; 512 embedded)")
    price_prompt_per_m: float = opt(0.0, min=0.0, help="cost accounting: price per million prompt tokens")
    price_completion_per_m: float = opt(0.0, min=0.0, help="cost accounting: price per million completion tokens")

    def api_key(self, option: str = "api_key_env") -> str | None:
        """The key for this endpoint (see ``resolve_api_key``); UserError if a named variable is unset."""
        return resolve_api_key(self.url, self.api_key_env, option)


@dataclass
class JudgeEndpointConfig(EndpointConfig):
    temperature: float = opt(0.0, min=0.0, help="sampling temperature (judgements should be repeatable: 0)")


@dataclass
class ModelEndpointConfig(EndpointConfig):
    """A model under benchmark: greedy, and a short answer's budget."""

    temperature: float = opt(0.0, min=0.0, help="sampling temperature (a benchmark answer should be repeatable: 0)")
    max_tokens: int | None = opt(256, min=1, help="completion budget per answer")


def resolve_api_key(url: str | list[str] | None, api_key_env: str | None, option: str = "api_key_env") -> str | None:
    """The key for the endpoint(s) at ``url``, read from the environment, or None.

    A named variable must be set (else UserError naming it, never a value). With none named, only
    OpenAI's own API gets ``OPENAI_API_KEY``: a key is never sent to a host it was not configured for.
    The embedded server (``url`` None) never gets a key. Keys and URL passwords are remembered so that
    every log line and error message masks them.
    """
    urls = [] if url is None else [url] if isinstance(url, str) else list(url)
    for u in urls:
        for secret in url_secrets(u):
            remember_secret(secret)
    if not urls:
        return None
    if api_key_env:
        value = os.environ.get(api_key_env)
        if not value:
            raise UserError(
                f"{option}: the environment variable {api_key_env} is not set (it should hold the "
                f"API key for {', '.join(map(redact_url, urls))})"
            )
        remember_secret(value)
        return value
    if all(urlsplit(u).hostname in OPENAI_HOSTS for u in urls) and os.environ.get("OPENAI_API_KEY"):
        remember_secret(os.environ["OPENAI_API_KEY"])
        return os.environ["OPENAI_API_KEY"]
    return None


def client_from_config(
    cfg, cache_path: str | Path | None = None, *, model: str | None = None, label: str | None = None, local=None
) -> LLMClient:
    """Build the client for an `EndpointConfig`. For the embedded server (``url: null``), ``local`` starts
    it on the first request and watches it (see ``LLMClient.local``), ``model`` names its replies and ``label``
    the model."""
    url = [] if local else cfg.url
    model = model or cfg.model
    if not (url or local) or not model:
        raise ValueError("an endpoint needs both `url` and `model` (or leave `url` empty for the local server)")
    return LLMClient(
        base_url=url,
        model=model,
        local=local,
        api_key=None if label else cfg.api_key(),  # `label`: the embedded server, which never gets a key
        params={
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_tokens": cfg.max_tokens or (512 if label else 2048),
        },
        # the embedded server answers one request at a time; a second one waiting inside it slows the
        # running one's decoding (docs/MEASUREMENTS.md)
        concurrency=1 if label else cfg.concurrency,
        max_retries=cfg.max_retries,
        timeout=cfg.timeout,
        cache=ResponseCache(cache_path) if cache_path else None,
        price_prompt_per_m=cfg.price_prompt_per_m,
        price_completion_per_m=cfg.price_completion_per_m,
        label=label,
        transport=cfg.backend,
    )


def check_reachable(urls: str | list[str], timeout: float = 10.0) -> None:
    """Fail fast with a clear message when no endpoint answers at all (any HTTP reply counts)."""
    urls = [urls] if isinstance(urls, str) else urls
    errors = []
    for url in urls:
        try:
            # a probe needs no credentials: none are sent (urllib cannot take user:password@ anyway)
            urllib.request.urlopen(redact_url(url).rstrip("/") + "/models", timeout=timeout).close()
            return
        except urllib.error.HTTPError:
            return  # the server answered, even if not with a model list
        except Exception as exc:
            errors.append(f"{redact_url(url)}: {getattr(exc, 'reason', exc)}")
    raise EndpointUnreachable(redact("no endpoint is reachable: " + "; ".join(errors)))
