"""The benchmark as tasks of the harnesses people already run: lm-evaluation-harness and lighteval.

Both tasks load the same question set as ``sciqag benchmark`` (the published folder or Hub id with its
config and split, or a file of pairs), show the model the same closed-book system prompt and question, and
score with the reference-based metrics each harness offers offline: lm-eval's ``exact_match`` (case and
punctuation ignored), ``bleu`` and ``chrf``; lighteval's exact match and F1 (raw and normalised), ROUGE-1/2/L,
BLEU and chrF. BERTScore, number agreement and the LLM judge stay ``sciqag benchmark``'s.

Local data (a file or a published folder) is copied into the task folder and found from the task's own files,
so the folder can be moved or shared whole; a Hub id stays a Hub id.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml

from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.evaluation.benchmark.answer import DEFAULT_SYSTEM_PROMPT
from sciqag_dataset.evaluation.benchmark.questions import CONFIG_ORDER, FILE_SUFFIXES, _configs, load_questions

HARNESSES = ("lm-eval", "lighteval")
TASK = "sciqag"

DATA_DIR = f"{TASK}_data"
# lm-eval sends `until` as the request's `stop`, and `transformers serve` answers `stop: []` with HTTP 500 ("Stop
# string preprocessing was unable to identify tokens"). These end-of-turn markers are matchable in any tokenizer
# and end generation where the server's end of turn ends it anyway, so answers stay the whole answers `sciqag
# benchmark` gets (it sends no stop). Three: APIs take four, and lm-eval appends an `eos_string` of model_args.
STOP = ["<|im_end|>", "<|eot_id|>", "</s>"]
MODEL_ARGS = "model=NAME,base_url=http://127.0.0.1:8080/v1/chat/completions,tokenizer_backend=none"

# Written beside the YAML. lm-eval resolves a dataset_path from its working directory, so local data is loaded
# from this file's own folder (`custom_dataset`); `flatten` is process_docs for a Hub config with a row per paper.
_LOAD = '''"""Written by `sciqag export-task`: lm-eval loads this task's questions from the folder of this file."""
import json
from pathlib import Path

import datasets

DATA = Path(__file__).parent / {data!r}


def load(**metadata):
    """The question set copied beside this file, wherever the folder now lies (keep the folder whole)."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return datasets.DatasetDict({{{split!r}: datasets.Dataset.from_list(rows)}})
'''
_FLATTEN = '''"""Written by `sciqag export-task`: one document per question-answer pair of a row-per-paper config."""
import datasets


def flatten(dataset):
    rows = [{"question": pair["question"], "answer": pair["answer"]} for row in dataset for pair in row["qa"]]
    return datasets.Dataset.from_list(rows)
'''


def source(data: str, out: Path, config: str | None = None, split: str = "test") -> tuple[dict, list[Path]]:
    """How a harness loads ``data``, and the files written for it. Local data (a file of pairs, a published
    folder) becomes ``OUT/sciqag_data/SPLIT.jsonl``: the pairs `sciqag benchmark` asks, as ``question``/``answer``
    rows (a row-per-paper config flattened), and ``file`` names it relative to OUT. A Hub id is read in place:
    ``path``, ``name`` (config) and ``flatten`` (rows hold a paper's ``qa`` list)."""
    path = Path(data)
    if path.is_file() and path.suffix not in FILE_SUFFIXES:
        raise UserError(f"{data}: a file of pairs must be {', '.join(FILE_SUFFIXES)}")
    if path.exists():
        # rows without a pair are named in a warning, as the benchmark does
        pairs, _ = load_questions(data, config=config, split=split)
        split = split if path.is_dir() else "test"
        (out / DATA_DIR).mkdir(parents=True, exist_ok=True)
        written = write_whole(
            out / DATA_DIR / f"{split}.jsonl",
            "".join(
                json.dumps({"question": p["question"], "answer": p["reference"]}, ensure_ascii=False) + "\n"
                for p in pairs
            ),
        )
        return {"path": None, "name": None, "split": split, "flatten": False, "file": f"{DATA_DIR}/{split}.jsonl"}, [
            written
        ]
    available = _configs(data)
    config = config or next((c for c in CONFIG_ORDER if c in available), None)
    if config not in available:
        wanted = f" {config!r}" if config else "s " + ", ".join(CONFIG_ORDER)
        raise UserError(f"{data}: no config{wanted} (it has: {', '.join(available)})")
    return {"path": data, "name": config, "split": split, "flatten": config != "evaluated", "file": None}, []


def lm_eval_task(src: dict, system_prompt: str, max_tokens: int) -> dict:
    if src["file"]:
        where = {"custom_dataset": "!function utils.load"}
    else:
        where = {"dataset_path": src["path"], **({"dataset_name": src["name"]} if src["name"] else {})}
    task = {
        "task": TASK,
        **where,
        "test_split": src["split"],
        "output_type": "generate_until",
        # with --apply_chat_template lm-eval sends the description as the system message
        "description": system_prompt,
        "doc_to_text": "{{question}}",
        "doc_to_target": "{{answer}}",
        "target_delimiter": " ",
        "generation_kwargs": {"until": STOP, "max_gen_toks": max_tokens, "do_sample": False, "temperature": 0.0},
        "metric_list": [
            {
                "metric": "exact_match",
                "aggregation": "mean",
                "higher_is_better": True,
                "ignore_case": True,
                "ignore_punctuation": True,
            },
            {"metric": "bleu", "aggregation": "bleu", "higher_is_better": True},
            {"metric": "chrf", "aggregation": "chrf", "higher_is_better": True},
        ],
        "metadata": {"version": 1.0},
    }
    if src["flatten"]:
        task["process_docs"] = "!function utils.flatten"
    return task


_LIGHTEVAL = '''"""Written by `sciqag export-task lighteval`: the SciQAG closed-book QA benchmark as a lighteval
custom task.

The system prompt is the model's (lighteval's endpoint backends take it from the model config: see
{model_config}); the question alone is the user message.
"""
from pathlib import Path

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
    name={task!r}, prompt_function=sciqag_prompt, hf_repo={repo}, hf_subset={subset!r},
    hf_avail_splits=[{split!r}], evaluation_splits=[{split!r}], few_shots_split=None, few_shots_select=None,
    generation_size={max_tokens}, stop_sequence={stop!r},
    metrics=[Metrics.exact_match, normalized_em, Metrics.f1_score, normalized_f1, Metrics.rouge1, Metrics.rouge2,
             Metrics.rougeL, Metrics.bleu, Metrics.chrf],
    version=0)

TASKS_TABLE = [sciqag]
'''

_LITELLM = {
    "model_parameters": {
        "model_name": "openai/MODEL",
        "provider": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "api_key": "none",
        "concurrent_requests": 8,
        "max_model_length": 4096,
        "timeout": 600,
        "api_max_retry": 5,
        "generation_parameters": {"temperature": 0.0, "seed": 0},
    }
}


def lighteval_files(src: dict, out: Path, system_prompt: str, max_tokens: int) -> list[Path]:
    """The task file and a LiteLLM model config carrying the system prompt."""
    if src["flatten"]:
        raise UserError(
            f"lighteval reads one question per row: export the `evaluated` config of {src['path']} "
            f"(or a local copy of the dataset), not `{src['name']}`"
        )
    written = []
    config = out / f"{TASK}_litellm.yaml"
    model = {
        "model_parameters": {
            **_LITELLM["model_parameters"],
            "system_prompt": system_prompt,
            "generation_parameters": {
                **_LITELLM["model_parameters"]["generation_parameters"],
                "max_new_tokens": max_tokens,
            },
        }
    }
    written.append(
        write_whole(
            config,
            "# set model_name (openai/<the served name>), base_url and api_key\n"
            + yaml.safe_dump(model, sort_keys=False, allow_unicode=True),
        )
    )
    written.append(
        write_whole(
            out / f"{TASK}_lighteval.py",
            _LIGHTEVAL.format(
                model_config=config.name,
                task=TASK,
                subset=src["name"],
                split=src["split"],
                max_tokens=max_tokens,
                stop=STOP,
                # the copied data is found from the task file, wherever the folder now lies
                repo=f"str(Path(__file__).parent / {DATA_DIR!r})" if src["file"] else repr(src["path"]),
            ),
        )
    )
    return written


def export_task(
    harness: str,
    data: str,
    output: str | Path,
    *,
    config: str | None = None,
    split: str = "test",
    system_prompt: str | None = None,
    max_tokens: int = 256,
) -> list[Path]:
    """Write the task files for ``harness`` into ``output`` (created; our files only are replaced)."""
    if harness not in HARNESSES:
        raise UserError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
    prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    src, written = source(data, out, config, split)
    if harness == "lm-eval":
        text = yaml.safe_dump(lm_eval_task(src, prompt, max_tokens), sort_keys=False, allow_unicode=True, width=100)
        text = re.sub(r"'(!function utils\.\w+)'", r"\1", text)  # a tag, not a string
        written.append(write_whole(out / f"{TASK}.yaml", text))
        if src["file"]:
            written.append(write_whole(out / "utils.py", _LOAD.format(data=src["file"], split=src["split"])))
        elif src["flatten"]:
            written.append(write_whole(out / "utils.py", _FLATTEN))
    else:
        written += lighteval_files(src, out, prompt, max_tokens)
    return written


def how_to_run(harness: str, out: Path) -> str:
    """The command to run the exported task; README gives the same one (test_export_task.py checks that)."""
    if harness == "lm-eval":
        return (
            f"Run it against a server (`sciqag serve --port 8080` serves the embedded model there and prints its "
            f"NAME; the folder is self-contained: move or share it whole): lm_eval --model "
            f"local-chat-completions --apply_chat_template --include_path {shlex.quote(str(out))} --tasks {TASK} "
            f"--model_args {MODEL_ARGS}"
        )
    return (
        f"Run it (lighteval in its own venv): lighteval endpoint litellm {out / f'{TASK}_litellm.yaml'} '{TASK}|0' "
        f"--custom-tasks {out / f'{TASK}_lighteval.py'}"
    )
