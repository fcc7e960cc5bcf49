"""`sciqag benchmark` from the config: the models under test and the judge committee as LLM clients."""

from __future__ import annotations

from dataclasses import replace

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.evaluation import benchmark as benchmark_module
from sciqag_dataset.llm import embedded
from sciqag_dataset.llm.endpoint import ModelEndpointConfig
from sciqag_dataset.orchestration.pipeline import Endpoints, committee, judges


def benchmark_models(template, urls: list[str] | None, models: list[str] | None) -> list:
    """The models named by ``--endpoint``/``--model`` (paired in order, or one model for every endpoint,
    which are then its replicas); none: the embedded model."""
    if models and not urls:
        raise UserError(
            f"--model {models[0]} needs an --endpoint that serves it (without one, the benchmark asks "
            f"the embedded {embedded.DEFAULT_MODEL_ID})"
        )
    members = committee(template, [], urls, models, flag="")
    if any(not m.model for m in members):
        raise UserError("name the model an --endpoint serves with --model (one for all endpoints, or one each)")
    grouped: dict[str | None, list] = {}
    for m in members:  # one model on several endpoints: one entry, its replicas
        grouped.setdefault(m.model, []).append(m)
    return [replace(ms[0], url=[m.url for m in ms] if len(ms) > 1 else ms[0].url) for ms in grouped.values()]


def benchmark(cfg: Config, endpoints: Endpoints) -> benchmark_module.BenchmarkRun:
    b = cfg.benchmark
    models = [endpoints.client(m, "benchmark") for m in b.models or [ModelEndpointConfig()]]
    judging = b.judge if b.judge is not None else bool(cfg.judge.url)
    return benchmark_module.run_benchmark(
        b.data,
        b.output_dir,
        models,
        judges=[endpoints.client(j, "benchmark-judge") for j in judges(cfg)] if judging else None,
        config=b.config,
        split=b.split,
        limit=b.limit,
        authors_test_set=b.authors_test_set,
        system_prompt=b.system_prompt,
        bertscore_model=b.bertscore_model if b.bertscore else None,
        judge_batch=b.judge_batch,
        combine=b.combine,
        max_attempts=b.max_attempts,
        structured=b.structured,
        bootstrap_samples=b.bootstrap_samples,
        general_knowledge=general_knowledge_client(cfg, endpoints),
        general_knowledge_keywords=b.general_knowledge_keywords,
    )


def general_knowledge_endpoint(cfg: Config):
    """The general-knowledge check's endpoint section, checked (a url needs its model, a model its url, a named
    key variable must be set), or None when the check is off. It is a section like any other
    (``benchmark.general_knowledge_endpoint``: its key variable, prices, concurrency, timeout); with no url,
    the embedded model answers."""
    b = cfg.benchmark
    gk = b.general_knowledge_endpoint
    if not (b.general_knowledge or gk.url):
        return None
    if gk.url and not gk.model:
        raise UserError("--general-knowledge-endpoint needs --general-knowledge-model: the model it serves")
    if gk.model and not gk.url:
        raise UserError(
            f"--general-knowledge-model {gk.model} needs a --general-knowledge-endpoint that "
            f"serves it (without one, the check asks the embedded {embedded.DEFAULT_MODEL_ID})"
        )
    gk.api_key("benchmark.general_knowledge_endpoint.api_key_env")
    return gk


def general_knowledge_client(cfg: Config, endpoints: Endpoints):
    """The model of the general-knowledge check (``general_knowledge_endpoint``), or None when it is off."""
    gk = general_knowledge_endpoint(cfg)
    return None if gk is None else endpoints.client(gk, "benchmark-general-knowledge")
