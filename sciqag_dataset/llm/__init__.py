"""The one LLM package every stage uses (teacher, generator, judges, benchmark).

- ``client``: ``LLMClient``, async chat and raw completions against OpenAI-compatible endpoints
  (OpenAI, TGI's Messages API, vLLM, SGLang, ``transformers serve``), replicas, retries, usage;
- ``cache``: the persistent response cache;
- ``endpoint``: an endpoint's config, its key (sent to that endpoint only) and the client built for it;
- ``transports``: the client libraries a client's requests go through (``openai``, ``hf``);
- ``server``: local OpenAI-compatible servers on loopback (``transformers serve``; the base of every engine's);
- ``engines``: the registry of local engines (``llama_cpp_engine``, ``transformers_engine``);
- ``embedded``: the embedded default and its engine choice; ``models``: its model files;
- ``supervisor``: the embedded server of a run, watched, restarted, replaced by a fallback engine.
"""

from sciqag_dataset.llm.cache import ResponseCache
from sciqag_dataset.llm.client import LLMClient, LLMError, LLMResponse, Usage
from sciqag_dataset.llm.endpoint import (
    EndpointConfig,
    EndpointUnreachable,
    JudgeEndpointConfig,
    check_reachable,
    client_from_config,
    resolve_api_key,
)

__all__ = [
    "EndpointConfig",
    "EndpointUnreachable",
    "JudgeEndpointConfig",
    "LLMClient",
    "LLMError",
    "LLMResponse",
    "ResponseCache",
    "Usage",
    "check_reachable",
    "client_from_config",
    "resolve_api_key",
]
