"""QA pairs in the formats trainers and evaluators read: OpenAI chat, ShareGPT, Alpaca, LLaMA-Factory, ragas.

The pairs come from a published folder (read with ``load_dataset``, as the Hub serves it) or a work directory
(the rows `sciqag publish` would write, built by the same `datasets` builder). The config is ``evaluated``
(the filtered pairs where `sciqag filter` ran), else ``generated``, else ``seed``; each split becomes one file,
``OUT/<split>.jsonl``, so the benchmark's test papers never end up in a training file by default.

Every row keeps where its pair came from: ``pair_id``, ``paper_id``, ``split`` and ``evidence`` (the answer's
evidence sentences from coverage, ``{start, end, text}`` with ``paper_text[start:end] == text``; empty in
configs without them), in a ``metadata`` object (openai-chat) or as columns beside the pair (the others).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import datasets

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.atomic import replacing, write_json
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.folders import claim, install_publish, new_staging
from sciqag_dataset.core.pair_ids import RowIds, pair_ids
from sciqag_dataset.core.wiring import PAPERS
from sciqag_dataset.hub.dataset_builder import SPLITS
from sciqag_dataset.hub.publish import available_configs, prepared

log = logging.getLogger(__name__)

CONFIG_ORDER = ("evaluated", "generated", "seed")
LLAMA_FACTORY_INFO = "dataset_info.json"
#: ShareGPT's roles, as LLaMA-Factory's `tags` name them (its defaults)
SHAREGPT_TAGS = {
    "role_tag": "from",
    "content_tag": "value",
    "user_tag": "human",
    "assistant_tag": "gpt",
    "system_tag": "system",
}


# ---------------------------------------------------------------- the pairs


def _pairs(config: str, rows, split: str) -> Iterator[dict]:
    """One dict per pair of ``rows`` (a published config's split), in order."""
    ids = RowIds()
    for row in rows:
        if config == "evaluated":
            found = [
                {"start": q["start"], "end": q["end"], "text": q["text"]}
                for q in row.get("quotes") or []
                if q and q.get("text")
            ]
            pair_list = [(ids(row), row["paper_id"], row, found)]
        else:
            qa = row.get("qa") or []
            made = pair_ids(row["id"], [p.get("question") or "" for p in qa])
            pair_list = [(p.get("pair_id") or i, row["id"], p, []) for p, i in zip(qa, made)]
        for pid, paper_id, pair, evidence in pair_list:
            yield {
                "pair_id": pid,
                "paper_id": paper_id,
                "split": split,
                "question": pair.get("question") or "",
                "answer": pair.get("answer") or "",
                "evidence": evidence,
            }


def _published(source: str, config: str | None, cache: str) -> tuple[str, dict]:
    try:
        available = datasets.get_dataset_config_names(source)
    except Exception as exc:  # not a dataset folder, no such Hub repo, no network
        raise UserError(
            f"cannot read {source} as a work directory (no {PAPERS}) or a published dataset (a folder with a "
            f"README.md declaring `configs:`, or a Hub id): {type(exc).__name__}: {exc}"
        ) from None
    config = config or next((c for c in CONFIG_ORDER if c in available), None)
    if config not in available:
        wanted = f" {config!r}" if config else "s " + ", ".join(CONFIG_ORDER)
        raise UserError(f"{source}: no config{wanted} (it has: {', '.join(available)})")
    # a private cache: `datasets` caches a local folder by its name, not its content
    loaded = datasets.load_dataset(source, config, cache_dir=cache, keep_in_memory=True)
    return config, dict(loaded)


def _work(work: Path, config: str | None, cache: str) -> tuple[str, dict]:
    present = available_configs(work)
    config = config or next(c for c in CONFIG_ORDER if c in present)
    if config not in present:
        raise MissingInput(f"{work}: no {config} pairs (it has: {', '.join(present)})")
    saved = work / "config.yaml"  # the split shares a publish of this work directory uses
    builder = prepared(work, config, Config.load(saved if saved.exists() else None).publish, cache)
    splits = {s: builder.as_dataset(split=s) for s in SPLITS if builder.info.splits[s].num_examples}
    return config, splits


def check_source(source: str | Path, config: str | None, split: str | None) -> Path:
    """UserError for a config or split we do not publish, or a SOURCE that is neither a path nor a Hub id."""
    path = Path(source)
    if config is not None and config not in CONFIG_ORDER:
        raise UserError(f"--data-config {config!r}: choose one of {', '.join(CONFIG_ORDER)}")
    if split is not None and split not in SPLITS:
        raise UserError(f"--split {split!r}: choose one of {', '.join(SPLITS)}")
    if not path.exists() and (str(source).startswith((".", "/", "~")) or str(source).count("/") != 1):
        raise MissingInput(f"{source} not found")
    return path


def read_pairs(source: str | Path, config: str | None = None, split: str | None = None) -> tuple[str, dict]:
    """(the config read, {split: [pair, ...]}) of ``source``: a work directory or a published dataset."""
    path = check_source(source, config, split)
    with tempfile.TemporaryDirectory(prefix="sciqag-export-") as cache:
        if (path / PAPERS).exists():
            config, loaded = _work(path, config, cache)
        else:
            config, loaded = _published(str(source), config, cache)
        if split is not None and split not in loaded:
            raise UserError(f"{source} ({config}): no {split!r} split (it has: {', '.join(loaded) or 'none'})")
        out, empty = {}, 0
        for name in [split] if split else list(loaded):
            pairs = list(_pairs(config, loaded[name], name))
            out[name] = [p for p in pairs if p["question"].strip() and p["answer"].strip()]
            empty += len(pairs) - len(out[name])
    if empty:
        log.warning("%s: %d pair(s) without a question or an answer were left out", source, empty)
    if not any(out.values()):
        raise UserError(f"{source} ({config}): no question-answer pairs to export")
    return config, out


# ---------------------------------------------------------------- the formats


def _provenance(pair: dict) -> dict:
    return {k: pair[k] for k in ("pair_id", "paper_id", "split", "evidence")}


def openai_chat(pair: dict, system: str | None) -> dict:
    """OpenAI's chat fine-tuning line (TRL's conversational format): ``messages``, then ``metadata``."""
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": "user", "content": pair["question"]}, {"role": "assistant", "content": pair["answer"]}]
    return {"messages": messages, "metadata": _provenance(pair)}


def sharegpt(pair: dict, system: str | None) -> dict:
    """ShareGPT: ``conversations`` of human and gpt turns; the system prompt in a ``system`` column."""
    row = {"conversations": [{"from": "human", "value": pair["question"]}, {"from": "gpt", "value": pair["answer"]}]}
    return {**row, **({"system": system} if system else {}), **_provenance(pair)}


def alpaca(pair: dict, system: str | None) -> dict:
    """Alpaca: the question as ``instruction``, an empty ``input`` (closed-book), the answer as ``output``."""
    row = {"instruction": pair["question"], "input": "", "output": pair["answer"]}
    return {**row, **({"system": system} if system else {}), **_provenance(pair)}


def ragas(pair: dict, system: str | None) -> dict:
    """A ragas (0.2+) single-turn testset row: ``user_input``, ``reference``, the evidence quotes as
    ``reference_contexts`` and where they stand as ``reference_context_ids`` (``paper_id:start-end``)."""
    row = {
        "user_input": pair["question"],
        "reference": pair["answer"],
        "reference_contexts": [q["text"] for q in pair["evidence"]],
        "reference_context_ids": [f"{pair['paper_id']}:{q['start']}-{q['end']}" for q in pair["evidence"]],
    }
    return {**row, **_provenance(pair)}


#: format name -> the row of one pair (llama-factory: a ShareGPT file and its `dataset_info.json` entry)
FORMATS: dict[str, Callable[[dict, str | None], dict]] = {
    "openai-chat": openai_chat,
    "sharegpt": sharegpt,
    "alpaca": alpaca,
    "llama-factory": sharegpt,
    "ragas": ragas,
}


def llama_factory_entry(file_name: str, system: str | None) -> dict:
    """The `dataset_info.json` entry LLaMA-Factory reads a ShareGPT file of ours with."""
    columns = {"messages": "conversations", **({"system": "system"} if system else {})}
    return {"file_name": file_name, "formatting": "sharegpt", "columns": columns, "tags": SHAREGPT_TAGS}


def export(
    source: str | Path,
    output: str | Path,
    fmt: str,
    *,
    config: str | None = None,
    split: str | None = None,
    system: str | None = None,
) -> tuple[str, dict[Path, int]]:
    """Write ``source``'s pairs in format ``fmt`` into ``output`` (a new or empty folder, or an earlier export,
    whose files this export replaces): one ``<split>.jsonl`` per split, and for llama-factory its
    ``dataset_info.json``. Returns the config read and {file written: its rows}."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if system is not None and not system.strip():
        raise UserError("--system: give the system prompt's text")
    if fmt == "ragas" and system:
        raise UserError("--system does not apply to a ragas testset (its rows hold no prompt)")
    check_source(source, config, split)
    out = claim(output, "export", option="--output")  # refused before any reading
    config, splits = read_pairs(source, config, split)
    if fmt == "ragas" and not any(p["evidence"] for pairs in splits.values() for p in pairs):
        log.warning(
            "%s (%s) holds no evidence quotes: reference_contexts are empty (export the `evaluated` config of "
            "a dataset evaluated with coverage to fill them)",
            source,
            config,
        )
    # built beside OUT, then moved in: the files of an earlier export that this one does not write go
    staging, written = new_staging(out), {}
    try:
        for name, pairs in splits.items():
            with replacing(staging / f"{name}.jsonl") as f:
                for pair in pairs:
                    f.write(json.dumps(FORMATS[fmt](pair, system), ensure_ascii=False) + "\n")
            written[out / f"{name}.jsonl"] = len(pairs)
        if fmt == "llama-factory":
            info = {f"sciqag_{name}": llama_factory_entry(f"{name}.jsonl", system) for name in splits}
            write_json(staging / LLAMA_FACTORY_INFO, info)
            written[out / LLAMA_FACTORY_INFO] = len(info)
        install_publish(staging, out, last=LLAMA_FACTORY_INFO, kind="export")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return config, written
