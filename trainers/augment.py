"""`sciqag train --augment`: the paper's two training rounds.

1. train an intermediate generator on the seed data (``OUTPUT/augment/intermediate``);
2. serve it (``transformers serve`` on loopback) and run the generation stage on
   ``augment_papers`` extra papers taken from ``augment_work`` (papers that are in
   no split of the dataset, so validation/test papers never leak into training);
3. optionally judge those pairs with RACAR and keep the ones whose mean score
   reaches ``augment_racar_threshold``;
4. train the final generator on the seed rows plus the kept generated pairs.

Every round leaves its files under ``OUTPUT/augment/`` (a regular work directory:
``papers.jsonl``, ``keywords.jsonl``, ``generated.jsonl``, ``racar.jsonl``), and a
rerun reuses a finished intermediate model and resumes the generation (delete
``OUTPUT/augment`` to start the rounds over, e.g. after changing the config).
Under ``accelerate launch``/``torchrun`` every rank trains both models; the
generation in between runs on the main process only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from sciqag_dataset.cards.model_card import write_model_card
from sciqag_dataset.config.generator_info import GENERATOR_INFO_FILE, write_generator_info
from sciqag_dataset.core import records
from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.folders import MODEL_SIGNS, claim
from sciqag_dataset.core.jsonl import JsonlWriter, iter_latest
from sciqag_dataset.llm import resolve_api_key
from sciqag_dataset.qa.format import render_output
from sciqag_dataset.trainers.config import TrainConfig, preset_name
from sciqag_dataset.trainers.data import load_splits
from sciqag_dataset.trainers.sft import train

log = logging.getLogger(__name__)

#: ``generate(work, model_dir, cfg)``: serve the intermediate model and write ``work/generated.jsonl``;
#: ``judge(work, cfg)``: write ``work/racar.jsonl``. The caller supplies them (the pipeline's generation and
#: RACAR stages), so this module needs no other stage.
Round = Callable[..., object]


def select_papers(src_work: str | Path, n: int, exclude: set[str], dest: Path, seed: int = 42) -> list[str]:
    """Copy ``n`` papers of ``src_work`` that are not in ``exclude`` (and their keywords) into ``dest``.

    The choice is a seeded hash order, so it is reproducible and independent of file order.
    """
    src = Path(src_work)
    if not (src / "papers.jsonl").exists():
        raise MissingInput(
            f"{src}/papers.jsonl not found: ingest the extra papers with `sciqag ingest` (and `sciqag keywords`) first"
        )
    candidates = [p["id"] for p in iter_latest(src / "papers.jsonl") if p.get("id") not in exclude]
    order = sorted(candidates, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    chosen = set(order[:n])
    if len(chosen) < n:
        log.warning("augmentation: only %d extra papers available in %s (asked for %d)", len(chosen), src, n)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("papers.jsonl", "keywords.jsonl"):
        path = dest / name
        if path.exists():
            path.unlink()  # rebuilt from the source each run; generated.jsonl (the costly part) stays
        with JsonlWriter(path) as out:
            for rec in iter_latest(src / name):
                if rec.get("id") in chosen:
                    out.write(rec)
    return sorted(chosen)


def _racar_means(work: Path) -> dict[str, list]:
    path = work / "racar.jsonl"
    return (
        {
            r["id"]: [m.get("racar_mean") if isinstance(m, dict) else None for m in r.get("pair_metrics") or []]
            for r in iter_latest(path)
        }
        if path.exists()
        else {}
    )


def generated_rows(work: str | Path, threshold: float | None = None) -> tuple[list[dict], Counter]:
    """Generated pairs as rows in the seed-config shape, filtered by RACAR when ``threshold`` is set.

    Returns the rows and counts of what happened (papers by status, pairs kept / below threshold /
    unjudged), for the card and the log. Papers stream through the one join (``records``).
    """
    work = Path(work)
    means = _racar_means(work) if threshold is not None else {}
    rows, counts = [], Counter()
    for rec in records.stage_records(work, "generated.jsonl"):
        counts[f"papers_{rec.get('status') or 'ok'}"] += 1
        if not records.usable(rec):
            continue
        qa = rec["qa"]
        if threshold is not None:
            scores = means.get(rec["id"], [])
            keep = []
            for i, pair in enumerate(qa):
                score = scores[i] if i < len(scores) else None
                if score is None:
                    counts["pairs_unjudged"] += 1
                elif score < threshold:
                    counts["pairs_below_threshold"] += 1
                else:
                    keep.append(pair)
            qa = keep
        if not qa:
            continue
        counts["pairs_kept"] += len(qa)
        rows.append(
            {
                "id": rec["id"],
                "title": rec.get("title"),
                "keywords": rec["keywords"],
                "qa": qa,
                "input": rec.get("text") or "",
                "output": render_output(qa, rec["keywords"]),
            }
        )
    return rows, counts


def _fresh(path: Path, since: float) -> bool:
    return path.exists() and path.stat().st_mtime >= since - 1  # a file left by an earlier run is older


def _wait_for(path: Path, failed: Path, since: float, poll: float = 10.0) -> None:
    """Other ranks idle on the file system (no collective, so no NCCL timeout) while rank 0 generates."""
    while not _fresh(path, since):
        if _fresh(failed, since):
            raise RuntimeError(f"augmentation failed on the main process: {failed.read_text()}")
        time.sleep(poll)


def run_augment(cfg: TrainConfig, generate: Round, judge: Round):
    """Run both rounds; return the final model's `TrainResult` (None on non-main ranks).

    Under a distributed launcher every rank trains both models; the generation round in between runs on
    the main process while the other ranks wait for its rows file. ``generate`` and ``judge``: see Round.
    """
    a = cfg.args
    if not a.augment_work:
        raise UserError(
            "--augment needs --augment_work: a work directory with the extra papers "
            "(`sciqag ingest` + `sciqag keywords`)"
        )
    cfg.validate()
    if a.augment_judge_url:  # an unset key variable fails now, not after the first round of training
        if not a.augment_judge_model:
            raise UserError("augment_judge_url needs augment_judge_model")
        resolve_api_key(a.augment_judge_url, a.augment_judge_api_key_env, "augment_judge_api_key_env")
    claim(cfg.output_dir, "model", option="output_dir", adopt=MODEL_SIGNS | {"augment"})
    root = cfg.output_dir / "augment"
    work, inter_dir = root / "work", root / "intermediate"
    rows_path, failed_path = root / "rows.json", root / "FAILED"
    root.mkdir(parents=True, exist_ok=True)
    started = time.time()

    # Round 1: the intermediate generator (reused when a previous run finished it).
    if (inter_dir / GENERATOR_INFO_FILE).exists():
        log.info("augmentation: reusing the intermediate generator in %s", inter_dir)
    else:
        train(
            cfg.replace(
                args={"augment": False, "save": "merged"},
                sft={"output_dir": str(inter_dir), "push_to_hub": False, "hub_model_id": None},
            )
        )

    # Round 2: generation (and the RACAR filter) on the main process.
    from accelerate import PartialState  # heavy (loads torch); training has loaded it already

    if PartialState().is_main_process:
        try:
            rows, counts = _generate_rows(cfg, generate, judge, work, inter_dir)
        except BaseException as exc:
            failed_path.write_text(f"{type(exc).__name__}: {exc}")
            raise
        write_whole(rows_path, json.dumps({"rows": rows, "counts": dict(counts)}))
    else:
        _wait_for(rows_path, failed_path, started)
    shared = json.loads(rows_path.read_text())
    rows, counts = shared["rows"], shared["counts"]

    # Round 3: the final generator on seed + generated rows.
    result = train(cfg.replace(args={"augment": False}), extra_rows=rows, write_card=False)
    if result is None:
        return None
    result.data["augment"] = {**counts, "intermediate": str(inter_dir), "work": str(work)}
    result.info["augment"] = result.data["augment"]
    write_generator_info(result.output_dir, result.info)
    (result.output_dir / "augment_summary.json").write_text(json.dumps(result.data["augment"], indent=2))
    write_model_card(cfg, result, preset_name(cfg.sft.deepspeed))
    return result


def _generate_rows(cfg: TrainConfig, generate: Round, judge: Round, work: Path, inter_dir: Path):
    a = cfg.args
    dsd = load_splits(a.dataset, a.dataset_config)
    known = {i for split in dsd.values() if "id" in split.column_names for i in split["id"]}
    chosen = select_papers(a.augment_work, a.augment_papers, known, work, seed=cfg.sft.seed)
    if not chosen:
        raise UserError(f"augmentation: no extra papers in {a.augment_work} outside the dataset")
    log.info("augmentation: %s", generate(work, inter_dir, cfg))
    if a.augment_racar_threshold is not None:
        log.info("augmentation: %s", judge(work, cfg))
    rows, counts = generated_rows(work, a.augment_racar_threshold)
    counts["papers_selected"] = len(chosen)
    log.warning(
        "augmentation: %d generated pairs from %d papers join the seed data (%s)",
        counts["pairs_kept"],
        len(rows),
        ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
    )
    if counts["pairs_kept"] < a.augment_min_pairs:
        raise UserError(
            f"augmentation: the intermediate generator left {counts['pairs_kept']} usable pairs "
            f"(need augment_min_pairs={a.augment_min_pairs}) for {len(chosen)} papers "
            f"({dict(counts)}); see {work / 'generated.jsonl'}. The intermediate model is in "
            f"{inter_dir}."
        )
    return rows, counts
