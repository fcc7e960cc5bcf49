"""`sciqag run --plan`: what a run would send, before it runs, without asking any model.

The plan walks the steps of the run (``pipeline.STEPS``, in run order). A step that asks a model is planned
through its ``plan`` hook: the stages it returns, built from the config as the run builds them but with clients
that send nothing (``plan_client``), run over a copy of the work directory in a temporary folder (papers
ingested there, or copied from the work directory, which is only read). A step that asks a model and has no
hook (a plugin's) is listed as not planned; the others as asking none. Nothing is written into the work
directory, and no server is started.

Each request is counted as if every reply were usable. Where a stage may ask again (the embedded profile
discards a paced line and asks it again), its hook says the most requests an input may take, and the plan gives
a range: from the count to that most. Cost uses the endpoint's configured prices (none set: "no price set");
time the seconds per request the response cache records of that endpoint (the gaps between its replies), else
those of the stage's last run with the same model (its manifest).
"""

from __future__ import annotations

import inspect
import json
import shutil
import sqlite3
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from statistics import median
from urllib.parse import urlsplit

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core import records
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.wiring import RUN_STAGES, endpoint_of
from sciqag_dataset.llm.budget import total_cost
from sciqag_dataset.orchestration import pipeline
from sciqag_dataset.orchestration.plan_client import PlanEndpoints, Sent, read_only_cache

PACE_GAP_S = 600.0  # gaps between cached replies longer than this are pauses between runs, not request time


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


def _planned(planned: pipeline.Planned, rows: list[Sent], work: Path) -> int | None:
    """Run one planned stage over ``work``, one input at a time; what ``planned.most`` adds over the requests
    counted (the re-asks its inputs may take), None where the stage gives no most."""
    extra = 0
    stage = planned.stage
    original = stage.process

    async def process(paper: dict) -> dict:
        nonlocal extra
        before = sum(s.requests + s.cached for s in rows)
        record = original(paper)
        record = await record if inspect.isawaitable(record) else record
        most = planned.most(paper, record) if planned.most else None
        if most is not None:
            extra += max(0, most - (sum(s.requests + s.cached for s in rows) - before))
        return record

    # one input at a time: the requests counted between its start and its end are its own
    run_stage(replace(stage, process=process, concurrency=1, workers=1), work, progress=False)
    return extra if planned.most else None


def _plan_steps(cfg: Config, endpoints: PlanEndpoints, work: Path) -> list[dict]:
    """Each step of the run in run order, how it was planned; the requests of those planned are counted in
    ``endpoints.sent``, and where a hook gives the most an input may take, ``Sent.most`` of the step's row."""
    steps = []
    for name in [n for n in RUN_STAGES if n in cfg.stages]:
        step = pipeline.STEPS[name]
        if endpoint_of(name) is None:
            steps.append({"stage": name, "planned": "asks no model"})
            continue
        if step.plan is None:
            steps.append({"stage": name, "planned": "not planned (no plan hook)"})
            continue
        first = len(endpoints.sent)
        planned = step.plan(cfg, endpoints)
        rows = endpoints.sent[first:]
        extras = [_planned(p, rows, work) for p in planned]
        if len(rows) == 1 and extras and None not in extras:  # the most, where it is the one endpoint's
            rows[0].most = rows[0].requests + sum(extras)
        steps.append({"stage": name, "planned": "planned" if planned else "planned: nothing to ask"})
    return steps


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
            steps = _plan_steps(here, endpoints, scratch)
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
                    # where a discarded reply is asked again: the most requests the stage may take
                    "requests_most": s.most,
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
        "steps": steps,
        "papers": papers,
        "requests": rows,
        "total": {
            "requests": sum(r["requests"] for r in rows),
            "requests_most": sum(r["requests"] if r["requests_most"] is None else r["requests_most"] for r in rows),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "cost": round(sum(r["cost"] or 0.0 for r in rows), 6),
        },
        "max_cost": cost_cap(cfg, rows, total_cost(work) if work.is_dir() else 0.0),
        "notes": [
            "requests and prompt tokens as if every reply is usable; a paced line the embedded profile discards is "
            "asked again, a few times a chunk at most: shown as a range up to that most; a judge's unparseable "
            "reply asked again is not counted",
            "completion tokens are those of made-up replies of the expected form; the worst case is max_tokens",
        ]
        + (
            [
                "with chunk_filter: llm, the model's checks of the chunks are counted and every chunk taken as "
                "useful: each chunk it drops is asked about in fewer requests than planned"
            ]
            if "llm" in (cfg.seed.chunk_filter, cfg.generate.chunk_filter)
            else []
        ),
    }


def requests_by_stage(plan: dict) -> dict[str, dict[str, int]]:
    """Requests and prompt tokens per stage (summed over its endpoints), as a run's manifests count them."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"requests": 0, "prompt_tokens": 0})
    for r in plan["requests"]:
        out[r["stage"]]["requests"] += r["requests"]
        out[r["stage"]]["prompt_tokens"] += r["prompt_tokens"]
    return dict(out)
