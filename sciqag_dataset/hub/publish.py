"""Publish a work directory as a folder of parquet files plus a dataset card.

The folder is exactly what gets uploaded to the Hub, so ``load_dataset(folder,
"seed")`` tests the published artifact. The card's YAML front matter declares
the ``configs:`` that ``load_dataset`` reads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.compute as arrow

from sciqag_dataset.cards.dataset_card import markdown_text, render_card
from sciqag_dataset.cards.review_section import human_review
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.folders import check_publish_target, install_publish, new_staging
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.records import USABLE, seen_share, stage_records
from sciqag_dataset.core.runner import manifest_path
from sciqag_dataset.core.wiring import EVALUATION_SUMMARY, FILTER_SUMMARY
from sciqag_dataset.hub.dataset_builder import (
    DROPPED_BY_REVIEWERS,
    EDITED_TO_SOURCE,
    PARTIAL,
    SPLITS,
    STAGE_FILES,
    SciQAG,
    evaluated_rows,
    partial,
)
from sciqag_dataset.llm.models import is_embedded

log = logging.getLogger(__name__)


def _dtype(feature) -> str:
    if hasattr(feature, "dtype") and not isinstance(feature, dict):
        return feature.dtype
    if isinstance(feature, dict):
        return "struct"
    return "list"


def _excluded(work: Path, config: str) -> list[dict]:
    if config in ("papers", "evaluated"):
        return []
    statuses = Counter(r.get("status") or "ok" for r in iter_latest(work / STAGE_FILES[config]))
    return [{"config": config, "status": s, "papers": n} for s, n in sorted(statuses.items()) if s not in USABLE]


def grounding_counts(table) -> Counter:
    """The pairs of a published config's table (a QA config's ``qa`` lists, or the `evaluated` rows) by
    ``grounding.kind``; None counts the pairs that record no grounding. Counted in Arrow: no row becomes a
    Python object."""
    if "qa" in table.column_names:
        grounding = arrow.struct_field(arrow.list_flatten(table["qa"]), "grounding")
    else:
        grounding = table["grounding"].combine_chunks()
    if not len(grounding):
        return Counter()
    kinds = arrow.struct_field(grounding, "kind")
    return Counter({row["values"]: row["counts"] for row in arrow.value_counts(kinds).to_pylist()})


def available_configs(work: Path) -> list[str]:
    """The QA configs whose stage has run (what `publish` writes when none are configured)."""
    names = [c for c in ("seed", "generated", "evaluated") if (work / STAGE_FILES[c]).exists()]
    if not names:
        raise MissingInput(f"nothing to publish in {work}: run `sciqag seed` or `sciqag generate` first")
    return names


def prepared(work: Path, name: str, pc, cache: str) -> SciQAG:
    """The `datasets` builder of config ``name`` over ``work``, its rows built into ``cache``: the rows a publish
    writes (``pc``: the publish section, for the split shares and partial papers)."""
    builder = SciQAG(
        config_name=name,
        data_dir=str(work),
        cache_dir=cache,
        train=pc.train,
        validation=pc.validation,
        allow_partial=pc.allow_partial,
    )
    builder.download_and_prepare()
    return builder


def write_folder(work: str | Path, out: str | Path, cfg: Config) -> Path:
    """Build every configured config with the `datasets` builder and write the publish folder.

    ``out`` must be new, empty or an earlier publish (see ``folders``); only our own files there change.
    """
    work, out = Path(work), Path(out)
    check_publish_target(out, work)
    pc = cfg.publish
    names = pc.configs or available_configs(work)
    staging = new_staging(out)
    counts, configs_yaml, features, excluded = [], [], {}, []
    grounding: dict[str, Counter] = {}  # per QA config, its pairs by grounding kind (all splits)
    try:
        with tempfile.TemporaryDirectory() as cache:
            for name in names:
                builder = prepared(work, name, pc, cache)
                data_files = []
                for split in SPLITS:
                    if not builder.info.splits[split].num_examples:
                        continue  # an empty split has no file (and `as_dataset` refuses it)
                    ds = builder.as_dataset(split=split)
                    tmp = staging / name / f"{split}.parquet"
                    tmp.parent.mkdir(parents=True, exist_ok=True)
                    ds.to_parquet(str(tmp))
                    # content-addressed names: `datasets` caches a local folder by its file names, so a
                    # republished folder must not reuse them or `load_dataset` returns the old rows
                    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:12]
                    rel = f"{name}/{split}-00000-of-00001-{digest}.parquet"
                    tmp.rename(staging / rel)
                    data_files.append({"split": split, "path": rel})
                    # counted on the memory-mapped Arrow table: no row becomes a Python object
                    table = ds.data.table
                    pairs = (
                        arrow.sum(arrow.list_value_length(table["qa"])).as_py() or 0
                        if "qa" in ds.column_names
                        else len(ds)
                        if name == "evaluated"
                        else 0
                    )
                    papers = arrow.count_distinct(table["paper_id"]).as_py() if name == "evaluated" else len(ds)
                    counts.append({"config": name, "split": split, "papers": papers, "pairs": pairs})
                    if "qa" in ds.column_names or "grounding" in ds.column_names:
                        grounding[name] = grounding.get(name, Counter()) + grounding_counts(table)
                if not data_files:
                    log.warning("config `%s` has no usable records in %s: left out", name, work)
                    excluded += _excluded(work, name)
                    continue
                configs_yaml.append({"config_name": name, "data_files": data_files})
                features[name] = {k: _dtype(v) for k, v in builder.info.features.items()}
                excluded += _excluded(work, name)
        if not pc.allow_partial and (n := sum(map(partial, iter_latest(work / STAGE_FILES["papers"])))):
            excluded.append(
                {"config": "all", "status": "partial (read in part; publish --allow-partial)", "papers": n}
            )
        if not configs_yaml:
            raise UserError(
                f"no config has usable records in {work}; nothing to publish (see the status "
                "column of the stage files)"
            )
        quality = _quality(work, staging, pc.allow_partial)
        review = human_review(work, staging)
        published = [c["config_name"] for c in configs_yaml]
        card = render_card(
            work,
            cfg,
            counts=counts,
            configs_yaml=configs_yaml,
            features=features,
            excluded=excluded,
            models=_models(work, cfg, published),
            split_notes=_split_notes(counts),
            grounding=[{"config": c, "counts": n} for c, n in grounding.items() if c in published and n],
            quality=quality,
            review=review,
        )
        card.save(staging / "README.md")
        install_publish(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when installed
    log.info("published %s", out)
    return out


def _selection(work: Path, filt: dict | None, allow_partial: bool) -> dict:
    """How the `evaluated` config's pairs came from the evaluated ones: the filter's counts, then what was left
    out at publish (dropped by reviewers, ...), in words whose counts add up to the published pairs."""
    left_out = Counter(why for _, _, why in evaluated_rows(work, allow_partial))
    published = left_out.pop(None, 0)
    steps = []
    if filt:
        steps.append(
            f"`sciqag filter` kept {filt['kept']} of {plural(filt['pairs'], 'pair')} ({filt['dropped']} failed a "
            f"rule" + (f", {filt['missing']} lacked a score a rule needs" if filt.get("missing") else "") + ")"
        )
    words = {  # why -> (one pair, several)
        PARTIAL: ("was from a paper read only in part", "were from papers read only in part"),
        DROPPED_BY_REVIEWERS: ("was dropped by its reviewers", "were dropped by their reviewers"),
        EDITED_TO_SOURCE: (
            "was edited by a reviewer into a question that cites its source",
            "were edited by reviewers into questions that cite their source",
        ),
    }
    steps += [f"{plural(n, 'pair')} {words[why][n != 1]}" for why, n in sorted(left_out.items())]
    return {"published": published, "steps": steps}


def _quality(work: Path, staging: Path, allow_partial: bool = False) -> dict | None:
    """The evaluation summary for the card's Quality section; its plots are copied next to the card."""
    path = work / EVALUATION_SUMMARY
    if not path.exists():
        return None
    summary = json.loads(path.read_text())
    plots = []
    captions_file = work / "plots" / "captions.json"  # written with the plots: {"plots/<name>.png": caption}
    captions = json.loads(captions_file.read_text(encoding="utf-8")) if captions_file.exists() else {}
    for png in sorted((work / "plots").glob("*.png")):
        (staging / "plots").mkdir(exist_ok=True)
        shutil.copy2(png, staging / "plots" / png.name)
        caption = markdown_text(captions.get(f"plots/{png.name}", ""))
        plots.append({"path": f"plots/{png.name}", "caption": caption, "alt": caption.partition(":")[0]})
    filt = work / FILTER_SUMMARY
    filt = json.loads(filt.read_text()) if filt.exists() else None
    source = STAGE_FILES.get(summary.get("source") or "")
    seen = seen_share(stage_records(work, source)) if source and (work / source).exists() else None
    return {"summary": summary, "plots": plots, "filter": filt, "seen": seen, **_selection(work, filt, allow_partial)}


def _manifest(work: Path, output: str) -> dict:
    path = manifest_path(work, output)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _models(work: Path, cfg: Config, names: list[str]) -> list[dict]:
    """Who wrote each QA config's pairs and how, as its stage's manifest recorded it (the embedded profile and
    a trained generator change the settings: the config file alone would misreport them)."""
    models = []
    summary = work / EVALUATION_SUMMARY
    evaluated = (
        json.loads(summary.read_text(encoding="utf-8")).get("source")
        if "evaluated" in names and summary.exists()
        else None
    )  # the config whose pairs the `evaluated` config holds
    for role, name, endpoint, section in (
        ("Teacher", "seed", cfg.teacher, cfg.seed),
        ("Generator", "generated", cfg.generator, cfg.generate),
    ):
        if name not in names and name != evaluated:
            continue
        manifest = _manifest(work, STAGE_FILES[name])
        if not manifest:
            models.append({"role": role, "config": name, "recorded": False})
            continue
        settings, request = manifest.get("settings") or {}, manifest.get("params") or {}
        models.append(
            {
                "role": role,
                "config": name,
                "recorded": True,
                "model": manifest.get("model") or endpoint.model or "n/a",
                "prompt_style": settings.get("prompt_style") or section.prompt_style or "paper",
                "n_pairs": settings.get("n_pairs", section.n_pairs),
                # the components asked about, as the run recorded them (absent: none were)
                "components": ", ".join(
                    f"{n} {k}{'s' if n != 1 else ''}" for k, n in settings.get("components", {}).items() if n
                ),
                "component_pairs": settings.get("component_pairs"),
                "temperature": request.get("temperature", endpoint.temperature),
                "top_p": request.get("top_p", endpoint.top_p),
                "fine_tuned": manifest.get("fine_tuned"),
                "fine_tuned_known": "fine_tuned" in manifest,  # manifests of older versions do not say
                "usage": manifest.get("usage") or {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0},
                "embedded": is_embedded(manifest.get("model")),
                "seen": seen_share(stage_records(work, STAGE_FILES[name])),
            }
        )
    return models


def _split_notes(counts: list[dict]) -> list[str]:
    """What the splits of this publish really are: a small corpus leaves some of them empty."""
    missing: dict[tuple, list[str]] = {}  # (empty splits, papers) -> the configs that share them
    for config in dict.fromkeys(row["config"] for row in counts):
        present = {row["split"]: row["papers"] for row in counts if row["config"] == config}
        empty = tuple(s for s in SPLITS if s not in present)
        if empty:
            missing.setdefault((empty, sum(present.values())), []).append(f"`{config}`")
    notes = []
    for (empty, n), configs in missing.items():
        note = (
            f"{', '.join(configs)} {'has' if len(configs) == 1 else 'have'} no {' and no '.join(empty)} split: "
            f"none of {'its' if len(configs) == 1 else 'their'} {plural(n, 'paper')} hashed into "
            f"{'it' if len(empty) == 1 else 'them'}, as expected of a small corpus."
        )
        if "test" in empty:
            note += " The closed-book benchmark needs a test split: publish more papers before benchmarking."
        notes.append(note)
    return notes
