"""What LLM calls cost, per stage and model, and the cap a run may not pass (``max_cost``, USD).

Prices come from each endpoint's config (``price_prompt_per_m`` / ``price_completion_per_m``, USD per million
tokens); none is assumed, so an endpoint without prices costs 0 (the embedded model is free).

``WORK/spend.jsonl`` is the ledger: one line per stage and model each time a run records what it spent. The
cap counts every line of it, so it bounds the work dir's total, not one invocation: a run stopped at the cap
and rerun with the same cap stops again at once; a higher cap resumes where it stopped.

Before each attempt of a request the cache cannot answer (a retry too), its worst case is reserved: its prompt's
tokens estimated from its characters (one a character until the model's replies show its rate), its reply at
``max_tokens``, at the endpoint's prices. An attempt that could pass the cap raises ``CostCapReached`` instead
of being sent. That is a ``StopRun``: the runner lets the requests in flight finish (they are paid for) and stops
the stage, marking no paper failed; finished papers are kept. A server that reports no token usage is charged
each request's worst case. What a request costs that fails without a reply (a timeout) is not known and not
counted.

The ledger is written every ``RECORD_EVERY`` seconds while replies come, after each stage and at the end, so a
killed run loses at most the last seconds of it. Each process keeps its own tally: in a scaled-out run every
rank checks the cap against the ledger as it was when the rank started and what it spent itself, so ranks
running at once may together pass it by up to what each spends between records.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sciqag_dataset.core.errors import StopRun, UserError
from sciqag_dataset.core.jsonl import JsonlWriter, read_jsonl

log = logging.getLogger(__name__)

LEDGER = "spend.jsonl"
# A prompt's tokens, from its characters, until a reply says how many the model's tokenizer made of them: one per
# character is the cautious bound (English runs ~4 characters a token with large vocabularies, but a small
# byte-level vocabulary makes about one of each; measured 1 with the test model), plus the chat template's own.
TOKENS_PER_CHAR = 1.0
TEMPLATE_TOKENS = 32  # per message
# Once replies have shown the rate: the most tokens per character seen, with a margin (formulas and other
# languages tokenize worse than the text seen so far), and never under one token per two characters.
MARGIN, FLOOR = 1.25, 0.5
DEFAULT_MAX_TOKENS = 2048
RECORD_EVERY = 10.0  # seconds: a killed run loses at most this much of its spending from the ledger
COUNTED = ("requests", "cached", "prompt_tokens", "completion_tokens", "cost")


class CostCapReached(StopRun):
    """The next request could pass ``max_cost``: the run stops here, and a higher cap resumes it."""


def request_chars(body: dict) -> int:
    if "prompt" in body:
        return len(body["prompt"] or "")
    return sum(len(m.get("content") or "") if isinstance(m, dict) else 0 for m in body.get("messages") or [])


def ledger_rows(work: str | Path) -> list[dict]:
    path = Path(work) / LEDGER
    return [r for r in read_jsonl(path) if isinstance(r, dict)] if path.exists() else []


def spend_by_stage(work: str | Path, since: int = 0, until: int | None = None) -> list[dict]:
    """The ledger summed per (stage, model): what the run summary and the card show; ``since``/``until``: its
    rows from, and before, those numbers (what a planned run sent)."""
    totals: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: dict.fromkeys(COUNTED, 0))
    for row in ledger_rows(work)[since:until]:
        t = totals[row.get("stage") or "?", row.get("model") or "?"]
        for k in COUNTED:
            t[k] += row.get(k) or 0
    return [
        {"stage": s, "model": m, **{k: round(v, 6) if k == "cost" else v for k, v in t.items()}}
        for (s, m), t in totals.items()
    ]


def total_cost(work: str | Path) -> float:
    return sum(row.get("cost") or 0.0 for row in ledger_rows(work))


class Budget:
    """The clients of one run, what they spent, and the cap. Shared by every stage of the run (one process)."""

    def __init__(self, work: str | Path, cap: float | None = None):
        if cap is not None and cap < 0:
            raise UserError(f"max_cost must be 0 or more (USD), not {cap}")
        self.work = Path(work)
        self.cap = cap
        self.before = total_cost(self.work)  # what earlier runs of this work dir spent
        self.reserved = 0.0
        self._clients: list[tuple[str, Any, dict]] = []  # (stage, client, usage already in the ledger)
        self._lock = threading.Lock()
        self._seen: dict[int, float] = {}  # per client: the most prompt tokens per character seen
        self._unreported: set[int] = set()
        self._recorded = time.monotonic()

    def add(self, client, stage: str) -> None:
        client.budget = self
        self._clients.append((stage, client, dict.fromkeys(COUNTED, 0)))
        if self.cap is not None and client.name in self.unpriced():
            log.warning(
                "max_cost is set, but %s (%s) has no price: its calls count as free. Set its "
                "price_prompt_per_m and price_completion_per_m.",
                client.name,
                stage,
            )

    def spent(self) -> float:
        return self.before + sum(c.usage.cost - seen["cost"] for _, c, seen in self._clients)

    def worst_case(self, client, body: dict, params: dict) -> float:
        """USD a request may cost at most: its prompt's tokens estimated from its characters (at the rate this
        client's replies have shown, or a cautious one before any), its reply at ``max_tokens``."""
        seen = self._seen.get(id(client))
        rate = TOKENS_PER_CHAR if seen is None else max(FLOOR, seen * MARGIN)
        prompt = request_chars(body) * rate + TEMPLATE_TOKENS * len(body.get("messages") or [None])
        return client.price(prompt, params.get("max_tokens") or DEFAULT_MAX_TOKENS)

    def observe(self, client, body: dict, prompt_tokens: int) -> None:
        """Learn how many tokens per character this client's model makes of a prompt."""
        chars = request_chars(body)
        if chars and prompt_tokens:
            self._seen[id(client)] = max(self._seen.get(id(client), 0.0), prompt_tokens / chars)

    def unreported(self, client) -> None:
        if id(client) not in self._unreported:
            self._unreported.add(id(client))
            log.warning("%s reports no token usage: each of its requests is charged its worst case", client.name)

    def tick(self) -> None:
        """Record now and then while a stage runs, so that a killed run's spending is not lost."""
        if time.monotonic() - self._recorded >= RECORD_EVERY:
            self.record()

    def reserve(self, amount: float) -> None:
        with self._lock:
            if self.cap is not None and self.spent() + self.reserved + amount > self.cap + 1e-12:
                raise CostCapReached(
                    f"cost cap reached: ${self.spent():.4f} spent in {self.work} (this run and earlier ones), and "
                    f"the next request may cost up to ${amount:.4f}, which could pass --max-cost ${self.cap:g}. "
                    "Finished papers are kept; rerun with a higher --max-cost to go on."
                )
            self.reserved += amount

    def release(self, amount: float) -> None:
        with self._lock:
            self.reserved = max(0.0, self.reserved - amount)

    def record(self) -> None:
        """Append what each client spent since the last record to the ledger (safe to call repeatedly)."""
        self._recorded = time.monotonic()
        rows = []
        for stage, client, seen in self._clients:
            now = {k: getattr(client.usage, k) for k in COUNTED}
            delta = {k: now[k] - seen[k] for k in COUNTED}
            if not any(delta.values()):
                continue
            seen.update(now)
            rows.append(
                {
                    "stage": stage,
                    "model": client.name,
                    **{k: round(v, 8) if k == "cost" else v for k, v in delta.items()},
                    "price_prompt_per_m": client.price_prompt_per_m,
                    "price_completion_per_m": client.price_completion_per_m,
                    "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
        if rows:
            self.before += sum(r["cost"] for r in rows)
            with JsonlWriter(self.work / LEDGER) as w:
                for row in rows:
                    w.write(row)

    def unpriced(self) -> list[str]:
        """Remote models of this run with no price set: a cap cannot see what they cost."""
        return sorted(
            {
                c.name
                for _, c, _ in self._clients
                if c.urls and c.local is None and not (c.price_prompt_per_m or c.price_completion_per_m)
            }
        )
