"""The one LLM package every stage uses (teacher, generator, judges, benchmark).

- ``client``: ``LLMClient``, async chat and raw completions against OpenAI-compatible endpoints
  (OpenAI, TGI's Messages API, vLLM, SGLang, ``transformers serve``), replicas, retries, usage;
- ``cache``: the persistent response cache;
- ``endpoint``: an endpoint's config, its key (sent to that endpoint only) and the client built for it;
- ``server``: local OpenAI-compatible servers (``transformers serve``, llama.cpp) on loopback;
- ``embedded``: the embedded default, its backend choice and its model files.
"""
from .cache import ResponseCache
from .client import LLMClient, LLMError, LLMResponse, Usage
from .endpoint import (EndpointConfig, EndpointUnreachable, JudgeEndpointConfig, check_reachable, client_from_config,
                       resolve_api_key)

__all__ = ["EndpointConfig", "EndpointUnreachable", "JudgeEndpointConfig", "LLMClient", "LLMError", "LLMResponse",
           "ResponseCache", "Usage", "check_reachable", "client_from_config", "resolve_api_key"]
