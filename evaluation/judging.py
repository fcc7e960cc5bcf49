"""Asking an LLM judge for ``n`` judgements {score 1-3, reasons} in one call: RACAR and the benchmark judge.

The reply is asked for as structured output (a JSON schema in ``response_format``); a server that rejects
that with a client error is asked again in plain text, and from then on that judge gets plain requests only.
A reply with the wrong number of judgements or an invalid score is asked again with a note saying what was
wrong (a different request, so it is not answered from the cache, and a rerun replays the same requests);
after ``max_attempts`` the missing scores stay None with the raw reply in their reason. Scores are never
invented, guessed or clamped (see ``judgements.parse_judgements``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import openai

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.schema import LABELS, REASONING_TYPES
from sciqag_dataset.evaluation.judgements import Parsed, parse_judgements
from sciqag_dataset.llm import LLMClient, LLMError

log = logging.getLogger(__name__)

RAW_IN_REASON = 500  # characters of an unusable reply kept in each affected item's reason
# Statuses a server uses for "I do not understand this request" (here: response_format).
STRUCTURED_REJECTED = {400, 415, 422}


@dataclass
class Judge:
    """One committee member: its client, a unique name, and whether it still gets structured requests."""

    client: LLMClient
    name: str
    structured: bool = True


@dataclass
class DimensionResult:
    scores: list[int | None]
    reasons: list[str]
    calls: int = 0
    problem: str | None = None  # why scores are missing (None when all are present)
    raw: str = ""  # the reply the missing scores come from
    structured_fallback: bool = False
    labels: list[dict] = field(default_factory=list)  # per item {reasoning_type, difficulty}, None where not given


def make_judges(clients: Sequence[LLMClient], structured: bool = True) -> list[Judge]:
    if not clients:
        raise UserError("a judge committee needs at least one judge (an LLMClient)")
    seen: Counter = Counter()
    judges = []
    for client in clients:
        seen[client.name] += 1
        name = client.name if seen[client.name] == 1 else f"{client.name}#{seen[client.name]}"
        judges.append(Judge(client, name, structured and client.json_schema))
    return judges


def judgements_format(name: str, labels: bool = False) -> dict:
    """OpenAI-style structured output: an object wrapping the list (a schema's root must be an object).
    ``labels``: each judgement also carries a reasoning type and a difficulty."""
    properties: dict = {"score": {"type": "integer", "enum": [1, 2, 3]}, "reasons": {"type": "string"}}
    if labels:
        properties["reasoning_type"] = {"type": "string", "enum": list(REASONING_TYPES)}
        properties["difficulty"] = {"type": "integer", "enum": [1, 2, 3]}
    item = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"judgements": {"type": "array", "items": item}},
                "required": ["judgements"],
                "additionalProperties": False,
            },
        },
    }


def _rejects_structured(exc: LLMError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, openai.APIStatusError) and cause.status_code in STRUCTURED_REJECTED


async def _ask(judge: Judge, messages: list[dict], response_format: dict) -> tuple[str, bool]:
    """The judge's reply text, and whether this call fell back from structured to plain."""
    if judge.structured:
        try:
            return (await judge.client.chat(messages, response_format=response_format)).text, False
        except LLMError as exc:
            if not _rejects_structured(exc):
                raise
            log.warning("judge %s rejected structured output (%s); asking in plain text from now on", judge.name, exc)
            judge.structured = False
            return (await judge.client.chat(messages)).text, True
    return (await judge.client.chat(messages)).text, False


async def judge_items(
    judge: Judge, n: int, build: Callable[[str | None], list[dict]], response_format: dict, max_attempts: int = 3
) -> DimensionResult:
    """``n`` items scored by one judge in one call (plus retries while the reply is unusable).

    ``build(problem)`` returns the messages; ``problem`` (why the previous reply was unusable, else None)
    must change them, so that a retry is a new request. Request errors (a server down after the client's own
    retries) propagate: the caller records the work as failed, and it is asked again on the next run.
    """
    result = DimensionResult([None] * n, [""] * n, labels=[dict.fromkeys(LABELS) for _ in range(n)])
    problem: str | None = None
    best: Parsed | None = None  # the first reply with the right count: its valid scores are real
    best_text = last_text = ""
    for _ in range(max(1, max_attempts)):
        last_text, fell_back = await _ask(judge, build(problem), response_format)
        result.calls += 1
        result.structured_fallback |= fell_back
        parsed = parse_judgements(last_text, n)
        if parsed.items is not None and (best is None or parsed.problem is None):
            best, best_text = parsed, last_text
        if parsed.problem is None:
            break
        problem = parsed.problem
    if best is not None:
        result.scores = [it["score"] for it in best.items]
        result.reasons = [it["reasons"] for it in best.items]
        result.labels = [{k: it.get(k) for k in LABELS} for it in best.items]
    if any(s is None for s in result.scores):
        result.problem, result.raw = (best.problem, best_text) if best is not None else (problem, last_text)
        note = (
            f"[missing: no usable judgement after {result.calls} attempt(s): {result.problem}; "
            f"raw reply: {result.raw[:RAW_IN_REASON]!r}]"
        )
        result.reasons = [note if s is None else r for s, r in zip(result.scores, result.reasons)]
    return result
