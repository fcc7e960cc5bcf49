"""Generation at scale: the fine-tuned (or any) generator writes QA pairs for every paper.

Streams the corpus, keeps ``concurrency`` requests in flight per endpoint over one or many replicas,
and appends each finished paper to ``WORK/generated.jsonl`` at once, so ``kill -9`` at any moment
followed by the same command gives every paper exactly once and re-requests nothing finished. Shards
(``run_stage(..., shard="i/n")``) write ``generated.shard-i-of-n.jsonl``; ``runner.merge_shards`` folds
them together.

Post-processing follows the authors: exact-duplicate questions are dropped, questions that refer to
figures/tables/"this paper" are flagged, and ``complete_sets_of=N`` marks papers with fewer than N
pairs ``incomplete``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sciqag_dataset.builders.qagen import qa_stage, request_qa
from sciqag_dataset.config.config_file import GenerateConfig
from sciqag_dataset.config.generator_info import read_generator_info
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.qa.rules import postprocess

OUTPUT = "generated.jsonl"


def resolve_prompting(model: str, cfg: GenerateConfig, info: dict | None = None) -> GenerateConfig:
    """The configured style, else the one `sciqag train` stored with the model (``info``, read when not
    given), else the paper's."""
    if cfg.prompt_style:
        return cfg
    info = info if info is not None else read_generator_info(model)
    if info is None:
        return dataclasses.replace(cfg, prompt_style="paper")
    return dataclasses.replace(cfg, prompt_style=info["prompt_style"], raw_completion=info["endpoint"] == "completion")


async def generate_one(paper: dict, client: LLMClient, cfg: GenerateConfig) -> dict:
    rec = await request_qa(paper, client, cfg, origin="generator")
    pairs, warnings, keep = postprocess(rec["qa"], cfg.complete_sets_of)
    rec["qa"], rec["warnings"] = pairs, rec["warnings"] + warnings
    if rec["status"] == "ok" and len(pairs) < cfg.n_pairs:
        rec["status"] = "short"
    if not keep and rec["status"] in ("ok", "short"):
        rec["status"] = "incomplete"
    return rec


def stage(client: LLMClient, cfg: GenerateConfig) -> Stage:
    """The generator's QA pairs for every paper -> ``WORK/generated.jsonl`` (run it with ``shard=cfg.shard``)."""
    if client.local is not None:  # the embedded model: the packaged SmolLM2, never one `sciqag train` wrote
        info, known = None, True
    elif cfg.prompt_style:  # prompting is settled: only a local model folder is looked at, for the card
        info, known = _local_info(client.model), Path(client.model).is_dir()
    else:
        info, known = read_generator_info(client.model), True
    cfg = resolve_prompting(client.model, cfg, info)

    async def one(paper: dict) -> dict:
        return await generate_one(paper, client, cfg)

    # the card says whether the pairs come from a model `sciqag train` fine-tuned, and from which base
    trained = {k: info.get(k) for k in ("base_model", "method", "dataset")} if info else None
    return qa_stage("generate", OUTPUT, client, cfg, one, about={"fine_tuned": trained} if known else {})


def _local_info(model: str) -> dict | None:
    try:
        return read_generator_info(model, hub=False)
    except UserError:  # a malformed file does not stop a run whose prompting is configured
        return None
