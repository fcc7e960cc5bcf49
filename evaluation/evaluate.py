"""`sciqag evaluate`: the selected metric stages, each resumable, then the merged rows, summary and plots.

Artifacts in the work directory (all readable by ``datasets``):

- ``numeric.jsonl``, ``coverage.jsonl``, ``diversity.jsonl``, ``racar.jsonl``: one record per paper, one
  stage each (``numeric.stage``, ``coverage.stage``, ``diversity.stage``, ``racar.stage``);
- ``evaluated.jsonl``: one row per QA pair with exactly the ``schema.EVALUATED_PAIR`` fields; a metric that
  was not run (or whose record does not fit the paper's current input) is None / [] there;
- ``evaluation_summary.json`` and ``plots/*.png``: dataset figures for the card.
"""
from __future__ import annotations

from pathlib import Path

from sciqag_dataset import records
from sciqag_dataset.config import EvaluateConfig
from sciqag_dataset.errors import UserError
from sciqag_dataset.runner import Summary, run_stage
from sciqag_dataset.stage import Stage

from . import coverage, diversity, numeric, racar
from .merge import merge_evaluation

RUN_ORDER = ("numeric", "coverage", "diversity", "racar")  # cheap first: an LLM outage loses the least


def metric_stage(metric: str, cfg: EvaluateConfig, source: str, judges: list, diversity_client) -> Stage:
    if metric == "numeric":
        return numeric.stage(source, allow_rounding=cfg.allow_rounding)
    if metric == "coverage":
        return coverage.stage(source, model_name=cfg.embedding_model, definition=cfg.coverage_definition,
                              top_context=cfg.top_context, instruction=cfg.instruction, batch_size=cfg.batch_size,
                              device=cfg.device)
    if metric == "diversity":
        return diversity.stage(source, method=cfg.diversity, client=diversity_client,
                               model_name=cfg.diversity_model or cfg.embedding_model, device=cfg.device,
                               batch_size=cfg.batch_size)
    return racar.stage(judges, source=source, combine=cfg.combine, max_attempts=cfg.max_attempts,
                       context_tokens=cfg.context_tokens, structured=cfg.structured,
                       chars_per_token=cfg.chars_per_token)


def run_evaluate(work: str | Path, cfg: EvaluateConfig | None = None, judges: list | None = None,
                 diversity_client=None) -> dict[str, Summary]:
    """Run the selected metrics (each resumable), then write evaluated.jsonl, the summary and the plots.

    ``judges`` (LLMClients, several = a committee) are needed for RACAR; LLM diversity uses
    ``diversity_client`` or the first judge. Coverage, numeric and embedding diversity need no LLM.
    Returns each metric's runner summary.
    """
    cfg = cfg or EvaluateConfig()
    src, stages = plan_evaluate(work, cfg, judges, diversity_client)
    summaries = {s.name: run_stage(s, work) for s in stages}
    merge_evaluation(work, src, cfg)
    return summaries


def plan_evaluate(work: str | Path, cfg: EvaluateConfig, judges: list | None = None,
                  diversity_client=None) -> tuple[str, list[Stage]]:
    """The QA source evaluated and the selected metric stages, in run order (checked before any runs)."""
    judges = list(judges or [])
    cfg.resolve_metrics(bool(judges))
    cfg.validate()
    work = Path(work)
    src = records.qa_source(work, cfg.source)
    if "racar" in cfg.metrics and not judges:
        raise UserError("RACAR needs a judge: pass --judge-endpoint URL --judge-model NAME (or set `judge:` "
                        "in the config), or leave racar out of --metrics")
    div_client = diversity_client or (judges[0] if judges else None)
    if "diversity" in cfg.metrics and cfg.diversity == "llm" and div_client is None:
        raise UserError("diversity method 'llm' needs a judge endpoint; use --diversity embedding to run "
                        "without one")
    return src, [metric_stage(m, cfg, src, judges, div_client) for m in RUN_ORDER if m in cfg.metrics]
