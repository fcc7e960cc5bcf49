"""The augmentation rounds of `sciqag train`: the intermediate generator writes QA pairs, a judge grades them."""

from __future__ import annotations

import logging
from pathlib import Path

from sciqag_dataset.builders import generate as generate_stage_module
from sciqag_dataset.config.config_file import GenerateConfig, JudgeEndpointConfig
from sciqag_dataset.core.runner import Summary, run_stage
from sciqag_dataset.evaluation import racar
from sciqag_dataset.llm import LLMClient, ResponseCache, client_from_config, embedded
from sciqag_dataset.llm.server import LocalServer
from sciqag_dataset.llm.supervisor import EmbeddedServer

log = logging.getLogger(__name__)


def augment_generate(work: Path, model_dir: Path, train_cfg) -> Summary:
    """Serve the intermediate generator on loopback and run the generation stage over ``work``."""
    gen_cfg = GenerateConfig(
        prompt_style=None, n_pairs=train_cfg.args.n_pairs, context_tokens=train_cfg.sft.max_length
    )
    with LocalServer(model_dir, log_path=work.parent / "generator_server.log") as server:
        client = LLMClient(
            server.base_url,
            server.model,
            cache=ResponseCache(work / "cache.sqlite"),
            params={"temperature": 0.6, "top_p": 0.9, "max_tokens": train_cfg.args.augment_max_tokens},
        )
        return run_stage(generate_stage_module.stage(client, gen_cfg), work)


def augment_judge(work: Path, train_cfg) -> Summary:
    """RACAR on the generated pairs: the configured judge, else the embedded model, started only if a paper
    needs judging (a rerun the cache answers starts nothing)."""
    a = train_cfg.args
    cache = work / "cache.sqlite"
    judge = JudgeEndpointConfig(
        url=a.augment_judge_url, model=a.augment_judge_model, api_key_env=a.augment_judge_api_key_env
    )
    if judge.url:
        judge.api_key("augment_judge_api_key_env")  # an unset variable is named before any work
        return run_stage(racar.stage([client_from_config(judge, cache)], source="generated"), work)
    log.warning("augmentation: no judge endpoint configured, judging with the embedded %s", embedded.DEFAULT_MODEL_ID)
    choice = embedded.choose_here()
    server = EmbeddedServer(choice, log_path=work.parent / "judge_server.log")
    try:
        client = client_from_config(judge, cache, model=choice.identity, label=embedded.DEFAULT_MODEL_ID, local=server)
        client.json_schema = choice.json_schema
        return run_stage(racar.stage([client], source="generated"), work)
    finally:
        server.stop()
