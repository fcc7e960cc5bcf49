"""Dataset figures of an evaluation (``WORK/evaluation_summary.json``) and the card's plots (``WORK/plots``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core import metrics
from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.wiring import EVALUATION_SUMMARY

log = logging.getLogger(__name__)

SUMMARY = EVALUATION_SUMMARY
PLOTS_DIR = "plots"
CAPTIONS = "captions.json"  # {"plots/<name>.png": one-sentence caption}, for the card


def summarize(aligned: Path, src: str, c, cfg: EvaluateConfig) -> dict[str, Any]:
    """The summary: each metric's counts and figures (from its records that fit, in ``aligned``), its card
    paragraph, and the columns of the rows written (what publish types the `evaluated` config with)."""
    out: dict[str, Any] = {
        "source": src,
        "papers": c.papers,
        "pairs": c.pairs,
        "metrics": {m: {k: c.counts[m][k] for k in ("merged", "stale", "failed", "absent")} for m in c.counts},
        "card": {},
    }
    for m in metrics.registered():
        merged = c.counts[m.name]["merged"] > 0
        out[m.name] = m.summarize(aligned / f"{m.name}.jsonl", cfg) if merged and m.summarize else None
        text = m.card(out[m.name]) if out[m.name] is not None and m.card else None if merged else m.not_run
        if text:
            out["card"][m.name] = text
    out["features"] = c.features.to_dict()
    return out


def write_plots(work: Path, c, cfg: EvaluateConfig) -> dict[str, Any]:
    """The card's PNGs under WORK/plots/ (paths relative to WORK), each metric's (``Metric.plots``, from what it
    gathered in the merge), and their one-sentence captions in ``WORK/plots/captions.json`` ({path relative to
    WORK: caption}). A plot that fails is logged and left out."""
    folder = Path(work) / PLOTS_DIR
    prefixes = tuple(p for m in metrics.registered() for p in m.plot_files)
    if folder.is_dir():  # a metric left out of this run must not keep an old picture (or its caption)
        for old in [*folder.glob("*.png"), folder / CAPTIONS]:
            if old.name.startswith(prefixes) or old.name == CAPTIONS:
                old.unlink(missing_ok=True)
    made: dict[str, Any] = {}
    captions: dict[str, str] = {}

    def attempt(name: str, fn, caption: str) -> str | None:
        try:
            p = fn(caption)
        except Exception as exc:  # metrics are already saved; a picture must not lose them
            log.warning("plot %s failed: %s: %s", name, type(exc).__name__, exc)
            made.setdefault("errors", []).append(f"{name}: {type(exc).__name__}: {exc}")
            return None
        rel = p.relative_to(work).as_posix()
        captions[rel] = caption
        return rel

    draw = metrics.Plots(folder, c.papers, attempt)
    for m in metrics.registered():
        if m.plots:
            made.update(m.plots(c.gathered.get(m.name) or {}, draw, cfg))
    if captions:
        write_json(folder / CAPTIONS, captions)
    return made
