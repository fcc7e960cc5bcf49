"""The dataset card, rendered from `cards/dataset_card.md` with what publish gathered from the work directory."""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData

from sciqag_dataset import __version__
from sciqag_dataset.cards import CITATION
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.schema import GROUNDING_KINDS
from sciqag_dataset.core.wiring import PAPERS, PLAN
from sciqag_dataset.llm.budget import spend_by_stage
from sciqag_dataset.llm.models import DEMO_QUALITY, REAL_DATA


def markdown_text(text: str) -> str:
    """Text shown as itself in Markdown: a paper title with `*`, `_` or `]` must not end an image's alt text or
    start emphasis."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


def _filter_rules(quality: dict | None) -> list[str]:
    filt = (quality or {}).get("filter")
    if not filt:
        return []
    # `sciqag filter` records its rules in words; a summary from before that shows them as recorded
    return filt.get("rules_described") or [f"`{json.dumps(filt.get('rules'))}`"]


def _grounding_rows(grounding: list[dict]) -> dict | None:
    """The card's table of pairs by what they were asked from: its columns (the grounding kinds, and "not
    recorded" where some pairs record none) and a row per QA config; None where no config has pairs."""
    if not grounding:
        return None
    unrecorded = any(g["counts"].get(None) for g in grounding)
    columns = [*GROUNDING_KINDS, *(["not recorded"] if unrecorded else [])]
    rows = [
        {"config": g["config"], "cells": [g["counts"].get(k, 0) for k in (*GROUNDING_KINDS, None)][: len(columns)]}
        for g in grounding
    ]
    return {"columns": columns, "rows": rows}


def plan_vs_sent(work: Path) -> list[dict] | None:
    """Per stage, what the plan kept by `sciqag run --record-plan` counted (``wiring.PLAN``) and what that run sent
    (the ledger's rows from the plan to the run's end); None where no run of the work directory was planned."""
    try:
        plan = json.loads((work / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    rows: dict[str, dict] = {}
    for r in plan.get("requests") or []:
        row = rows.setdefault(
            r["stage"], {"stage": r["stage"], "requests": 0, "most": 0, "prompt_tokens": 0, "cached": 0}
        )
        row["requests"] += r["requests"]
        row["most"] += r["requests"] if r.get("requests_most") is None else r["requests_most"]
        row["prompt_tokens"] += r["prompt_tokens"]
        row["cached"] += r["cached"]
    sent: dict[str, dict] = defaultdict(lambda: {"requests": 0, "prompt_tokens": 0, "cached": 0})
    for r in spend_by_stage(work, since=plan.get("ledger_rows") or 0, until=plan.get("ledger_end")):
        for k in ("requests", "prompt_tokens", "cached"):
            sent[r["stage"]][k] += r[k]
    unplanned = {s["stage"]: s["planned"] for s in plan.get("steps") or [] if s["stage"] not in rows}
    out = []
    for stage in [*rows, *(s for s in sent if s not in rows)]:
        p = rows.get(stage)
        out.append(
            {
                "stage": stage,
                "planned_text": (
                    unplanned.get(stage, "not planned")
                    if p is None
                    else f"{p['requests']}–{p['most']}"
                    if p["most"] > p["requests"]
                    else str(p["requests"])
                ),
                "planned_prompt_tokens": p["prompt_tokens"] if p else "",
                "planned_cached": p["cached"] if p else "",
                "sent_requests": sent[stage]["requests"],
                "sent_prompt_tokens": sent[stage]["prompt_tokens"],
                "sent_cached": sent[stage]["cached"],
            }
        )
    return out


def render_card(
    work: Path,
    cfg: Config,
    *,
    counts: list[dict],
    configs_yaml: list[dict],
    features,
    excluded: list[dict],
    models: list[dict],
    split_notes: list[str],
    grounding: list[dict] | None = None,
    quality: dict | None = None,
    review: dict | None = None,
) -> DatasetCard:
    """The card of a publish: ``counts`` (rows per config and split), ``configs_yaml`` (the front matter's
    ``configs:``), ``models`` (who wrote each config's pairs), ``grounding`` (per QA config, ``counts`` of its
    pairs by grounding kind, None for pairs that record none), ``quality`` and ``review`` (their sections, if
    any)."""
    pc = cfg.publish
    formats = Counter(p.get("source_format") or "unknown" for p in iter_latest(work / PAPERS))  # streamed
    n_pairs = sum(r["pairs"] for r in counts)
    size = (
        "n<1K"
        if n_pairs < 1000
        else "1K<n<10K"
        if n_pairs < 10_000
        else "10K<n<100K"
        if n_pairs < 100_000
        else "100K<n<1M"
    )
    data = DatasetCardData(
        language=["en"],
        license=pc.license,
        pretty_name=pc.pretty_name,
        task_categories=["question-answering", "text-generation"],
        tags=["science", "synthetic", "sciqag", "closed-book-qa"],
        size_categories=[size],
        configs=configs_yaml,
    )
    template = resources.files("sciqag_dataset.cards").joinpath("dataset_card.md")
    with resources.as_file(template) as path:
        return DatasetCard.from_template(
            data,
            template_path=str(path),
            pretty_name=pc.pretty_name,
            repo_id=pc.push_to_hub or str(cfg.output_dir),
            counts=counts,
            excluded=excluded,
            features=features,
            train=pc.train,
            validation=pc.validation,
            split_notes=split_notes,
            grounding=_grounding_rows(grounding or []),
            n_papers=sum(formats.values()),
            formats=", ".join(f"{n} {f}" for f, n in formats.most_common()),
            n_keywords=cfg.keywords.n,
            models=models,
            demo=[f"`{m['config']}`" for m in models if m.get("embedded")],
            demo_quality=DEMO_QUALITY,
            real_data=REAL_DATA,
            spend=spend_by_stage(work),
            plan=plan_vs_sent(work),
            version=__version__,
            date=datetime.date.today().isoformat(),
            citation=CITATION,
            quality=quality,
            filter_rules=_filter_rules(quality),
            review=review,
            calibration=((quality or {}).get("filter") or {}).get("calibration"),
        )
