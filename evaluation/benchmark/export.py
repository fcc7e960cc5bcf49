"""The benchmark as tasks of the harnesses people already run: lm-evaluation-harness and lighteval.

Both tasks load the same question set as ``sciqag benchmark`` (the published folder or Hub id with its
config and split, or a file of pairs), show the model the same closed-book system prompt and question, and
score with the reference-based metrics each harness offers offline: lm-eval's ``exact_match`` (case and
punctuation ignored), ``bleu`` and ``chrf``; lighteval's exact match and F1 (raw and normalised), ROUGE-1/2/L,
BLEU and chrF. BERTScore, number agreement and the LLM judge stay ``sciqag benchmark``'s.
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from sciqag_dataset.errors import UserError
from sciqag_dataset.jsonl import write_whole

from .answer import DEFAULT_SYSTEM_PROMPT
from .questions import CONFIG_ORDER, FILE_SUFFIXES, _configs, load_questions

HARNESSES = ("lm-eval", "lighteval")
TASK = "sciqag"

# lm-eval's process_docs for a config with a row per paper: one doc per pair (written beside the YAML).
_FLATTEN = '''"""Written by `sciqag export-task`: one document per question-answer pair of a row-per-paper config."""


def flatten(dataset):
    import datasets

    rows = [{"question": pair["question"], "answer": pair["answer"]} for row in dataset for pair in row["qa"]]
    return datasets.Dataset.from_list(rows)
'''


def source(data: str, out: Path, config: str | None = None, split: str = "test") -> tuple[dict, list[Path]]:
    """How a harness loads ``data`` (``load_dataset`` path and config, the split, whether rows hold a paper's
    ``qa`` list), and the files written for it: a file of pairs is copied, as ``question``/``answer`` rows,
    into ``OUT/sciqag_data/test.jsonl`` (both harnesses then read a folder, whatever the file's keys)."""
    path = Path(data)
    if path.is_file():
        if path.suffix not in FILE_SUFFIXES:
            raise UserError(f"{data}: a file of pairs must be {', '.join(FILE_SUFFIXES)}")
        pairs, _ = load_questions(data)  # rows without a pair are named in a warning, as the benchmark does
        folder = out / f"{TASK}_data"
        folder.mkdir(parents=True, exist_ok=True)
        written = write_whole(folder / "test.jsonl", "".join(
            json.dumps({"question": p["question"], "answer": p["reference"]}, ensure_ascii=False) + "\n" for p in pairs))
        return {"path": str(folder.resolve()), "name": None, "split": "test", "flatten": False}, [written]
    available = _configs(data)
    config = config or next((c for c in CONFIG_ORDER if c in available), None)
    if config not in available:
        wanted = f" {config!r}" if config else "s " + ", ".join(CONFIG_ORDER)
        raise UserError(f"{data}: no config{wanted} (it has: {', '.join(available)})")
    return {"path": str(path.resolve()) if path.exists() else data, "name": config, "split": split,
            "flatten": config != "evaluated"}, []


def lm_eval_task(src: dict, system_prompt: str, max_tokens: int) -> dict:
    task = {"task": TASK, "dataset_path": src["path"], **({"dataset_name": src["name"]} if src["name"] else {}),
            "test_split": src["split"], "output_type": "generate_until",
            # with --apply_chat_template lm-eval sends the description as the system message
            "description": system_prompt,
            "doc_to_text": "{{question}}", "doc_to_target": "{{answer}}",
            "target_delimiter": " ",
            # no stop string: `sciqag benchmark` sets none either, so both get the same whole answer
            "generation_kwargs": {"until": [], "max_gen_toks": max_tokens, "do_sample": False,
                                  "temperature": 0.0},
            "metric_list": [
                {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True, "ignore_case": True,
                 "ignore_punctuation": True},
                {"metric": "bleu", "aggregation": "bleu", "higher_is_better": True},
                {"metric": "chrf", "aggregation": "chrf", "higher_is_better": True}],
            "metadata": {"version": 1.0}}
    if src["flatten"]:
        task["process_docs"] = "!function utils.flatten"
    return task


_LIGHTEVAL = '''"""Written by `sciqag export-task lighteval`: the SciQAG closed-book QA benchmark as a lighteval custom task.

The system prompt is the model's (lighteval's endpoint backends take it from the model config: see
{model_config}); the question alone is the user message.
"""
import numpy as np
from lighteval.metrics.metrics import Metrics
from lighteval.metrics.metrics_sample import ExactMatches, F1_score
from lighteval.metrics.normalizations import helm_normalizer
from lighteval.metrics.utils.metric_utils import SampleLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

# exact match and token F1 after lower-casing and removing punctuation and articles, as `sciqag benchmark`
normalized_em = SampleLevelMetric(
    metric_name="normalized_em", category=SamplingMethod.GENERATIVE, corpus_level_fn=np.mean, higher_is_better=True,
    sample_level_fn=ExactMatches(normalize_gold=helm_normalizer, normalize_pred=helm_normalizer, strip_strings=True))
normalized_f1 = SampleLevelMetric(
    metric_name="normalized_f1", category=SamplingMethod.GENERATIVE, corpus_level_fn=np.mean, higher_is_better=True,
    sample_level_fn=F1_score(normalize_gold=helm_normalizer, normalize_pred=helm_normalizer))


def sciqag_prompt(line: dict, task_name: str = None) -> Doc:
    return Doc(task_name=task_name, query=line["question"].strip(), choices=[line["answer"].strip()], gold_index=0)


sciqag = LightevalTaskConfig(
    name={task!r}, prompt_function=sciqag_prompt, hf_repo={repo!r}, hf_subset={subset!r},
    hf_avail_splits=[{split!r}], evaluation_splits=[{split!r}], few_shots_split=None, few_shots_select=None,
    generation_size={max_tokens}, stop_sequence=[],
    metrics=[Metrics.exact_match, normalized_em, Metrics.f1_score, normalized_f1, Metrics.rouge1, Metrics.rouge2,
             Metrics.rougeL, Metrics.bleu, Metrics.chrf],
    version=0)

TASKS_TABLE = [sciqag]
'''

_LITELLM = {"model_parameters": {
    "model_name": "openai/MODEL", "provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "api_key": "none",
    "concurrent_requests": 8, "max_model_length": 4096, "timeout": 600, "api_max_retry": 5,
    "generation_parameters": {"temperature": 0.0, "seed": 0}}}


def lighteval_files(src: dict, out: Path, system_prompt: str, max_tokens: int) -> list[Path]:
    """The task file and a LiteLLM model config carrying the system prompt."""
    if src["flatten"]:
        raise UserError(f"lighteval reads one question per row: export the `evaluated` config (or a file of pairs), "
                        f"not `{src['name']}`")
    written = []
    config = out / f"{TASK}_litellm.yaml"
    model = {"model_parameters": {**_LITELLM["model_parameters"], "system_prompt": system_prompt,
                                  "generation_parameters": {**_LITELLM["model_parameters"]["generation_parameters"],
                                                            "max_new_tokens": max_tokens}}}
    written.append(write_whole(config, "# set model_name (openai/<the served name>), base_url and api_key\n"
                               + yaml.safe_dump(model, sort_keys=False, allow_unicode=True)))
    written.append(write_whole(out / f"{TASK}_lighteval.py", _LIGHTEVAL.format(
        model_config=config.name, task=TASK, repo=src["path"], subset=src["name"], split=src["split"],
        max_tokens=max_tokens)))
    return written


def export_task(harness: str, data: str, output: str | Path, *, config: str | None = None, split: str = "test",
                system_prompt: str | None = None, max_tokens: int = 256) -> list[Path]:
    """Write the task files for ``harness`` into ``output`` (created; our files only are replaced)."""
    if harness not in HARNESSES:
        raise UserError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
    prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    src, written = source(data, out, config, split)
    if harness == "lm-eval":
        text = yaml.safe_dump(lm_eval_task(src, prompt, max_tokens), sort_keys=False, allow_unicode=True, width=100)
        text = text.replace("'!function utils.flatten'", "!function utils.flatten")  # a tag, not a string
        written.append(write_whole(out / f"{TASK}.yaml", text))
        if src["flatten"]:
            written.append(write_whole(out / "utils.py", _FLATTEN))
    else:
        written += lighteval_files(src, out, prompt, max_tokens)
    return written


def how_to_run(harness: str, out: Path) -> str:
    if harness == "lm-eval":
        return (f"Run it: lm_eval --model local-chat-completions --model_args model=NAME,base_url=URL/v1/chat/completions"
                f" --apply_chat_template --include_path {out} --tasks {TASK}")
    return (f"Run it (lighteval in its own venv): lighteval endpoint litellm {out / f'{TASK}_litellm.yaml'} '{TASK}|0' "
            f"--custom-tasks {out / f'{TASK}_lighteval.py'}")
