"""`sciqag run --plan`: what a run would send, before it runs, without asking any model.

The stages that ask a model (seed, generate, evaluate's judge metrics) are built from the config as
``pipeline`` builds them and run over a copy of the work directory in a temporary folder (papers ingested
there, or copied from the work directory, which is only read). Their clients are ``DryClient``s: each request
the stage's own prompt-building code makes is counted, its prompt tokenized, and answered with a made-up
reply of the expected form (pairs taken from the passage, judgements of score 2), so the stage goes on to its
next request as when every reply is usable. A request the response cache already answers is counted as
cached, not sent. Nothing is written into the work directory, and no server is started.

Prompt tokens come from the model's own tokenizer where one is here: the embedded model's GGUF vocabulary
(llama.cpp, with the chat template of the file, as its server formats a chat), or a local transformers
tokenizer of the endpoint's model; else ``CHARS_PER_TOKEN`` characters a token plus ``TEMPLATE_TOKENS`` a
message, said so in the plan. Cost uses the endpoint's configured prices (none set: "no price set"); time the
seconds per request the response cache records of that endpoint (the gaps between its replies), else those of
the stage's last run with the same model (its manifest).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import sqlite3
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median
from typing import Any
from urllib.parse import urlsplit

from sciqag_dataset.config.config_file import Config, EndpointConfig
from sciqag_dataset.core import metrics, records
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.schema import REASONING_TYPES
from sciqag_dataset.core.wiring import endpoint_of
from sciqag_dataset.evaluation.evaluate import metric_stage
from sciqag_dataset.llm import LLMClient, LLMResponse, client_from_config, embedded, models
from sciqag_dataset.llm.budget import DEFAULT_MAX_TOKENS, TEMPLATE_TOKENS, total_cost
from sciqag_dataset.llm.cache import complete_reply
from sciqag_dataset.orchestration import pipeline

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4.0  # the approximation where no tokenizer of the model is here (English prose, large vocabulary)
PACE_GAP_S = 600.0  # gaps between cached replies longer than this are pauses between runs, not request time
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_JUDGED = re.compile(r"one for each of the (\d+) ")


# ---------------------------------------------------------------- tokens


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
    request), a list of judgements, or QA pairs."""
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


# ---------------------------------------------------------------- the plan


def _papers(work: Path) -> list[dict]:
    return [
        {
            "id": p["id"],
            "title": (p.get("title") or "")[:60],
            "words": len((p.get("text") or "").split()),
            "chars": len(p.get("text") or ""),
        }
        for p in records.papers(work)
    ]


def _evaluate_stages(cfg: Config, endpoints: PlanEndpoints) -> list:
    """The metric stages of `evaluate` that ask a model, built as ``pipeline.evaluation_stages`` builds them."""
    clients = pipeline.judge_clients(cfg, endpoints)
    if not clients:
        return []
    ev = cfg.evaluate
    if not all(j.url for j in pipeline.judges(cfg)) and ev.context_tokens > embedded.CONTEXT_TOKENS:
        ev = replace(ev, context_tokens=embedded.CONTEXT_TOKENS)
    src = records.qa_source(cfg.work_dir, ev.source)
    return [metric_stage(m.name, ev, src, clients, None) for m in metrics.run_order(ev.metrics) if m.needs_llm(ev)]


def measured_pace(rows, url: str | None) -> dict | None:
    """Seconds per request and completion tokens per second of the replies the response cache holds from
    ``url`` (None: the embedded model, whose replies come from a loopback address): the gaps between
    consecutive replies, pauses over ``PACE_GAP_S`` left out."""
    if rows is None:
        return None
    try:
        found = rows.execute("SELECT value, created FROM responses ORDER BY created").fetchall()
    except sqlite3.Error:
        return None
    wanted = {u.rstrip("/") for u in (url or "").split(", ") if u}
    times, tokens = [], []
    for value, created in found:
        endpoint = (json.loads(value).get("endpoint") or "").rstrip("/")
        host = urlsplit(endpoint).hostname or ""
        if (endpoint in wanted) if wanted else host in ("127.0.0.1", "localhost"):
            times.append(created)
            tokens.append(json.loads(value).get("completion_tokens") or 0)
    gaps = [(b - a, t) for a, b, t in zip(times, times[1:], tokens[1:]) if 0 < b - a <= PACE_GAP_S]
    if len(gaps) < 3:
        return None
    seconds = sum(g for g, _ in gaps)
    return {
        "from": "response cache",
        "replies": len(times),
        "seconds_per_request": round(median(g for g, _ in gaps), 3),
        "completion_tokens_per_s": round(sum(t for _, t in gaps) / seconds, 1) if seconds else None,
    }


#: the manifest a stage's last run wrote, by the plan's stage name (evaluate: its judge metric)
MANIFESTS = {"seed": "seed_manifest.json", "generate": "generated_manifest.json", "evaluate": "racar_manifest.json"}


def manifest_pace(work: Path, s: Sent) -> dict | None:
    """Seconds per request of the stage's last run with the same model (its manifest: wall time over requests
    sent), where the response cache has no replies to measure (a reply cut at ``max_tokens`` is not cached)."""
    path = work / MANIFESTS.get(s.stage, "")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sent = (manifest.get("usage") or {}).get("requests") or 0
    if manifest.get("model") != s.model or not sent or not manifest.get("seconds"):
        return None
    return {"from": path.name, "replies": sent, "seconds_per_request": round(manifest["seconds"] / sent, 3)}


def _cost(s: Sent) -> float | None:
    if not (s.price_prompt_per_m or s.price_completion_per_m):
        return None
    return (s.prompt_tokens * s.price_prompt_per_m + s.completion_tokens * s.price_completion_per_m) / 1e6


def _worst(s: Sent) -> float | None:
    """What the budget reserves for the stage's requests before sending them: prompts at one token a character
    at most, replies at ``max_tokens`` (``llm.budget``)."""
    if not (s.price_prompt_per_m or s.price_completion_per_m):
        return None
    return (s.prompt_tokens * s.price_prompt_per_m + s.requests * s.max_tokens * s.price_completion_per_m) / 1e6


def cost_cap(cfg: Config, rows: list[dict], spent: float) -> dict | None:
    """Where ``max_cost`` stops the run: the first stage whose estimated spending passes what is left of it."""
    if cfg.max_cost is None:
        return None
    left = cfg.max_cost - spent
    out = {"max_cost": cfg.max_cost, "spent_before": round(spent, 6), "left": round(left, 6), "stops_in": None}
    running = 0.0
    for row in rows:
        cost = row["cost"] or 0.0
        if running + cost > left + 1e-12:
            per = cost / row["requests"] if row["requests"] else 0.0
            fits = int((left - running) / per) if per else row["requests"]
            out.update(stops_in=row["stage"], model=row["model"], requests_that_fit=max(0, fits))
            out["cut_requests"] = row["requests"] - out["requests_that_fit"]
            break
        running += cost
    out["unpriced"] = sorted({r["model"] for r in rows if r["cost"] is None and r["url"]})
    return out


def make_plan(cfg: Config) -> dict:
    """The plan of `sciqag run` with ``cfg``: papers, and per LLM stage and endpoint the requests, prompt
    tokens, cost and time it would take. Reads the work directory, writes nothing there."""
    work = Path(cfg.work_dir)
    rows_db = read_only_cache(work)
    with tempfile.TemporaryDirectory(prefix="sciqag-plan-") as tmp:
        scratch = Path(tmp)
        if work.is_dir():  # finished records are skipped by the run: the plan sees them too
            for path in work.glob("*.jsonl"):
                shutil.copy2(path, scratch / path.name)
        here = replace(cfg, work_dir=str(scratch))
        if "ingest" in cfg.stages or not (scratch / "papers.jsonl").exists():
            pipeline.ingest(here)
        if "keywords" in cfg.stages or not (scratch / "keywords.jsonl").exists():
            pipeline.keywords(here)
        papers = _papers(scratch)
        endpoints = PlanEndpoints(here, rows_db)
        try:
            if "seed" in cfg.stages:
                run_stage(pipeline.seed_stage(here, endpoints), scratch, progress=False)
            if "generate" in cfg.stages:
                run_stage(pipeline.generate_stage(here, endpoints), scratch, progress=False)
            if "evaluate" in cfg.stages:
                for stage in _evaluate_stages(here, endpoints):
                    run_stage(stage, scratch, progress=False)
        finally:
            endpoints.close()
        rows = []
        for s in endpoints.sent:
            pace = measured_pace(rows_db, s.url) or manifest_pace(work, s)
            rows.append(
                {
                    "stage": s.stage,
                    "endpoint": s.endpoint,
                    "model": s.model,
                    "url": s.url,
                    "requests": s.requests,
                    "cached": s.cached,
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens_estimate": s.completion_tokens,
                    "max_tokens": s.max_tokens,
                    "tokenizer": s.tokens,
                    "cost": None if _cost(s) is None else round(_cost(s), 6),
                    "cost_worst_case": None if _worst(s) is None else round(_worst(s), 6),
                    "pace": pace,
                    "seconds": round(s.requests * pace["seconds_per_request"], 1) if pace else None,
                }
            )
    if rows_db is not None:
        rows_db.close()
    return {
        "work_dir": str(work),
        "stages": list(cfg.stages),
        "papers": papers,
        "requests": rows,
        "total": {
            "requests": sum(r["requests"] for r in rows),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "cost": round(sum(r["cost"] or 0.0 for r in rows), 6),
        },
        "max_cost": cost_cap(cfg, rows, total_cost(work) if work.is_dir() else 0.0),
        "notes": [
            "requests and prompt tokens as if every reply is usable: a reply that must be asked again (a "
            "judge's unparseable reply, a paced line the embedded profile discards) adds requests",
            "completion tokens are those of made-up replies of the expected form; the worst case is max_tokens",
        ],
    }


# ---------------------------------------------------------------- showing it


def _money(v: float | None) -> str:
    return "no price set" if v is None else f"${v:.4f}"


def render(plan: dict) -> str:
    """The plan as a readable table."""
    papers = plan["papers"]
    lines = [f"Plan of `sciqag run` on {plan['work_dir']} (stages: {', '.join(plan['stages'])})", ""]
    lines.append(f"Papers: {len(papers)}, {sum(p['words'] for p in papers):,} words")
    width = max([len(p["id"]) for p in papers] + [2])
    for p in papers:
        lines.append(f"  {p['id']:<{width}}  {p['words']:>7,} words  {p['chars']:>8,} chars  {p['title']}")
    lines += ["", "LLM requests (no model was called):"]
    head = f"  {'stage':<9} {'endpoint':<10} {'model':<36} {'requests':>8} {'cached':>6} {'prompt tok':>10}"
    lines.append(head + f" {'cost':>14} {'time':>9}")
    for r in plan["requests"]:
        time_ = f"~{r['seconds']:.0f} s" if r["seconds"] is not None else "unmeasured"
        lines.append(
            f"  {r['stage']:<9} {r['endpoint']:<10} {r['model'][:36]:<36} {r['requests']:>8} {r['cached']:>6} "
            f"{r['prompt_tokens']:>10,} {_money(r['cost']):>14} {time_:>9}"
        )
    if not plan["requests"]:
        lines.append("  none: no stage of this run asks a model")
    total = plan["total"]
    lines.append(f"  total: {total['requests']} requests, {total['prompt_tokens']:,} prompt tokens")
    lines.append("")
    for how in sorted({r["tokenizer"] for r in plan["requests"]}):
        lines.append(f"Tokens counted with: {how}")
    for r in plan["requests"]:
        if r["pace"]:
            lines.append(
                f"Time of {r['stage']} ({r['model']}): {r['pace']['seconds_per_request']} s a request, measured "
                f"over {r['pace']['replies']} replies ({r['pace']['from']})"
            )
    if any(r["seconds"] is None for r in plan["requests"]):
        lines.append("Time: not estimated where neither the response cache nor a manifest has measured that endpoint")
    cap = plan["max_cost"]
    if cap is None:
        lines.append("--max-cost: not set")
    elif cap["stops_in"]:
        lines.append(
            f"--max-cost ${cap['max_cost']:g} (${cap['left']:.4f} left of it): stops in {cap['stops_in']} "
            f"({cap['model']}) after ~{cap['requests_that_fit']} of its requests; ~{cap['cut_requests']} cut, "
            "and every later stage (the cap reserves each request's worst case, so it may stop sooner)"
        )
    else:
        lines.append(f"--max-cost ${cap['max_cost']:g}: the estimate fits under it")
    if cap and cap["unpriced"]:
        lines.append(f"  no price set for {', '.join(cap['unpriced'])}: the cap cannot see what it costs")
    lines += [f"Note: {n}" for n in plan["notes"]]
    return "\n".join(lines)


def requests_by_stage(plan: dict) -> dict[str, dict[str, int]]:
    """Requests and prompt tokens per stage (summed over its endpoints), as a run's manifests count them."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"requests": 0, "prompt_tokens": 0})
    for r in plan["requests"]:
        out[r["stage"]]["requests"] += r["requests"]
        out[r["stage"]]["prompt_tokens"] += r["prompt_tokens"]
    return dict(out)
