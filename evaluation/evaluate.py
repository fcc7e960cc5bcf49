"""`sciqag evaluate`: the selected metric stages, each resumable, then the merged rows, summary and plots.

Artifacts in the work directory (all readable by ``datasets``):

- ``<metric>.jsonl`` for each registered metric chosen (``sciqag_dataset.core.metrics``; built in: ``numeric``,
  ``coverage``, ``diversity``, ``racar``): one record per paper, from that metric's stage;
- ``evaluated.jsonl``: one row per QA pair with exactly the ``schema.evaluated_features()`` columns; a metric that
  was not run (or whose record does not fit the paper's current input) is None / [] there;
- ``evaluation_summary.json`` and ``plots/*.png``: dataset figures for the card.
"""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core import metrics, records
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.runner import Summary, run_stage
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation.merge import merge_evaluation


def metric_stage(metric: str, cfg: EvaluateConfig, source: str, judges: list, diversity_client) -> Stage:
    """The registered metric's stage over the ``source`` QA pairs."""
    llm = diversity_client or (judges[0] if judges else None)
    return metrics.get_metric(metric).build(metrics.Context(cfg, source, tuple(judges), llm))


def run_evaluate(
    work: str | Path, cfg: EvaluateConfig | None = None, judges: list | None = None, diversity_client=None
) -> dict[str, Summary]:
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


def plan_evaluate(
    work: str | Path, cfg: EvaluateConfig, judges: list | None = None, diversity_client=None
) -> tuple[str, list[Stage]]:
    """The QA source evaluated and the selected metric stages, in run order (checked before any runs)."""
    judges = list(judges or [])
    cfg.resolve_metrics(bool(judges))
    cfg.validate()
    work = Path(work)
    src = records.qa_source(work, cfg.source)
    chosen = metrics.run_order(cfg.metrics)  # cheapest first: an LLM outage loses the least
    ctx = metrics.Context(cfg, src, tuple(judges), diversity_client or (judges[0] if judges else None))
    for m in metrics.registered():  # in registration order: the same metric's reason first on every run
        why = m.requires(ctx) if m.requires and m.name in cfg.metrics else None
        if why:
            raise UserError(why)
    if missing := [m.name for m in chosen if m.needs_llm(cfg) and ctx.llm is None]:
        raise UserError(
            f"metric(s) {', '.join(missing)} need a judge: pass --judge-endpoint URL --judge-model NAME "
            "(or set `judge:` in the config)"
        )
    return src, [m.build(ctx) for m in chosen]
