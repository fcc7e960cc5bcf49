"""The client libraries an endpoint's requests go through (an endpoint's ``backend:`` option).

- ``openai``: the openai client, for chat and raw completions;
- ``hf``: huggingface_hub's ``AsyncInferenceClient`` for chat requests. It has no ``/v1/completions`` call, so
  raw completions (the alpaca prompt style) go through the openai client either way.

A transport declares how to open its own chat client for one URL (none: the openai client's chat) and what it
refuses before any request (``check``). ``LLMClient`` reads ``TRANSPORTS``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from huggingface_hub import AsyncInferenceClient, constants

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.redact import redact_url
from sciqag_dataset.core.registry import Registry


def _accept(urls: list[str]) -> None:
    pass


@dataclass(frozen=True)
class Transport:
    name: str
    # a chat client of its own for (URL, key, timeout); None: chat through the openai client
    open_chat: Callable[[str, str, float], Any] | None = None
    # (its chat client, model, messages, params) -> a reply shaped like openai's ChatCompletion
    chat: Callable[[Any, str, list[dict], dict], Awaitable[Any]] | None = None
    # refuses (UserError) what cannot work for these URLs, before any request
    check: Callable[[list[str]], None] = _accept


def _hf_open(url: str, key: str, timeout: float) -> AsyncInferenceClient:
    # InferenceClient appends /v1/chat/completions itself: give it the server root
    root = url.rstrip("/").removesuffix("/v1")
    return AsyncInferenceClient(base_url=root, api_key=key, timeout=timeout)


async def _hf_chat(client: AsyncInferenceClient, model: str, messages: list[dict], params: dict) -> Any:
    return await client.chat_completion(messages, model=model, **params)


def _hf_check(urls: list[str]) -> None:
    if constants.is_offline_mode():  # InferenceClient refuses every URL then, loopback included
        raise UserError(
            "backend hf: HF_HUB_OFFLINE is set, and huggingface_hub's InferenceClient then "
            f"refuses every URL ({', '.join(map(redact_url, urls))}); unset HF_HUB_OFFLINE "
            "or use backend openai"
        )


TRANSPORTS: Registry[Transport] = Registry("transport")
TRANSPORTS.register(Transport("openai"))
TRANSPORTS.register(Transport("hf", open_chat=_hf_open, chat=_hf_chat, check=_hf_check))


def transport(name: str) -> Transport:
    found = TRANSPORTS.find(name)
    if found is None:
        raise ValueError(f"backend must be one of {', '.join(map(repr, TRANSPORTS.names()))}, not {name!r}")
    return found
