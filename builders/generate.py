"""Generation at scale: the fine-tuned (or any) generator writes QA pairs for every paper.

Streams the corpus, keeps ``concurrency`` requests in flight per endpoint over
one or many replicas, and appends each finished paper to
``WORK/generated.jsonl`` at once, so ``kill -9`` at any moment followed by the
same command gives every paper exactly once and re-requests nothing finished.
With ``shard="i/n"`` a process takes one hash slice of the corpus and writes
``generated.shard-i-of-n.jsonl``; `merge_shards` folds the slices together.

Post-processing follows the authors: exact-duplicate questions are dropped,
questions that refer to figures/tables/"this paper" are flagged, and
``complete_sets_of=N`` marks papers with fewer than N pairs ``incomplete``.
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from sciqag_dataset.config import GenerateConfig
from sciqag_dataset.errors import MissingInput, UserError
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.runner import JsonlWriter, Summary, compact, iter_latest

from .postprocess import postprocess
from .qagen import count_inputs, qa_inputs, request_qa, run_qa_stage


def parse_shard(shard: str | None) -> tuple[int, int] | None:
    if not shard:
        return None
    try:
        i, n = (int(x) for x in shard.split("/"))
    except ValueError:
        raise UserError(f"--shard must look like i/n (e.g. 0/4), not {shard!r}") from None
    if not 0 <= i < n:
        raise UserError(f"--shard {shard}: need 0 <= i < n")
    return i, n


def in_shard(paper_id: str, i: int, n: int) -> bool:
    return int(hashlib.sha256(paper_id.encode()).hexdigest()[:8], 16) % n == i


def output_path(work: Path, shard: str | None) -> Path:
    s = parse_shard(shard)
    return work / ("generated.jsonl" if s is None else f"generated.shard-{s[0]}-of-{s[1]}.jsonl")


def resolve_prompting(model: str, cfg: GenerateConfig) -> GenerateConfig:
    """The configured style, else the one `sciqag train` stored with the model, else the paper's."""
    if cfg.prompt_style:
        return cfg
    from sciqag_dataset.trainers.config import read_generator_info

    info = read_generator_info(model)
    if info is None:
        return dataclasses.replace(cfg, prompt_style="paper")
    return dataclasses.replace(cfg, prompt_style=info["prompt_style"],
                               raw_completion=info["endpoint"] == "completion")


async def generate_one(paper: dict, client: LLMClient, cfg: GenerateConfig) -> dict:
    rec = await request_qa(paper, client, cfg, origin="generator")
    pairs, warnings, keep = postprocess(rec["qa"], cfg.complete_sets_of)
    rec["qa"], rec["warnings"] = pairs, rec["warnings"] + warnings
    if rec["status"] == "ok" and len(pairs) < cfg.n_pairs:
        rec["status"] = "short"
    if not keep and rec["status"] in ("ok", "short"):
        rec["status"] = "incomplete"
    return rec


def run_generate(work: str | Path, client: LLMClient, cfg: GenerateConfig) -> Summary:
    work = Path(work)
    cfg = resolve_prompting(client.model, cfg)
    shard = parse_shard(cfg.shard)
    keep = (lambda pid: in_shard(pid, *shard)) if shard else (lambda pid: True)
    out = output_path(work, cfg.shard)
    manifest = out.with_name(out.name.replace(".jsonl", "_manifest.json"))
    summary = run_qa_stage("generate", qa_inputs(work, keep), lambda p: generate_one(p, client, cfg), client,
                           out, manifest, dataclasses.asdict(cfg), total=count_inputs(work, keep))
    return summary


def merge_shards(work: str | Path) -> Summary:
    """Fold ``generated.shard-*.jsonl`` into ``generated.jsonl`` (latest line per paper wins)."""
    work = Path(work)
    out = work / "generated.jsonl"
    summary = Summary("merge")
    shards = sorted(work.glob("generated.shard-*-of-*.jsonl"))
    if not shards:
        raise MissingInput(f"no generated.shard-*-of-*.jsonl files in {work}")
    with JsonlWriter(out) as writer:
        for path in shards:
            for rec in iter_latest(path):
                writer.write(rec)
                summary.counts[rec.get("status") or "ok"] += 1
    compact(out)
    return summary
