"""`sciqag export-task`: the benchmark as an lm-evaluation-harness or lighteval task, shareable as a folder.

Real parts: `load_dataset` on a folder written by `sciqag publish`, lm-eval's own task loader, and in the
end-to-end tests the real `lm_eval` CLI against the embedded SmolLM2 on each of its engines (llama.cpp and
`transformers serve`), run with README's commands as written. No fakes.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import yaml
from helpers import read_jsonl
from lm_eval.tasks import TaskManager
from published import PAIRS, published_folder, write_pairs_file

from sciqag_dataset.cli import main
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.evaluation.benchmark import answer as answer_module
from sciqag_dataset.evaluation.benchmark import export, run_benchmark
from sciqag_dataset.evaluation.benchmark.export import export_task
from sciqag_dataset.llm import LLMClient, embedded

README = Path(__file__).resolve().parents[3] / "README.md"
LM_EVAL = Path(sys.executable).parent / "lm_eval"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def readme_lm_eval() -> tuple[list[str], list[str]]:
    """README's lm-eval commands (the export, the run), as a shell splits them."""
    section = README.read_text(encoding="utf-8").split("The same benchmark in the harnesses you already run")[1]
    lines = section.split("```bash")[1].split("```")[0].replace("\\\n", " ").splitlines()
    export_line = next(line for line in lines if line.startswith("sciqag export-task lm-eval"))
    run_line = next(line for line in lines if line.startswith("lm_eval "))
    return shlex.split(export_line, comments=True), shlex.split(run_line, comments=True)


def lm_eval_docs(task_dir: Path) -> list[dict]:
    """The documents lm-eval itself loads for the task in ``task_dir``."""
    task = TaskManager(include_path=str(task_dir), include_defaults=False).load(["sciqag"])["tasks"]["sciqag"]
    return list(task.test_docs())


def test_an_exported_task_is_self_contained_and_loads_the_same_split_with_the_same_prompt(tmp_path, monkeypatch):
    pub = published_folder(tmp_path)
    export_task("lm-eval", str(pub), tmp_path / "lm", system_prompt="Answer briefly.", max_tokens=64)
    export_task("lm-eval", str(pub), tmp_path / "lm-seed", config="seed")  # a row per paper: flattened
    text = (tmp_path / "lm" / "sciqag.yaml").read_text()
    assert "custom_dataset: !function utils.load" in text  # the data is found from the task's folder
    task = yaml.safe_load(text.replace("!function ", ""))
    assert "dataset_path" not in task and task["test_split"] == "test" and task["description"] == "Answer briefly."
    assert task["doc_to_text"] == "{{question}}" and task["generation_kwargs"]["max_gen_toks"] == 64
    # a non-empty stop list: `transformers serve` answers `stop: []` with HTTP 500
    assert task["generation_kwargs"]["until"] == export.STOP
    assert [m["metric"] for m in task["metric_list"]] == ["exact_match", "bleu", "chrf"]

    # moved away from the dataset and read from another working directory, the folders still load
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("lm", "lm-seed"):
        shutil.move(tmp_path / name, shared / name)
        assert not [f for f in (shared / name).rglob("*") if f.is_file() and str(tmp_path) in f.read_text()]
    shutil.rmtree(pub)
    monkeypatch.chdir(tmp_path / "work")
    want = [{"question": q, "answer": a} for q, a in PAIRS]
    assert lm_eval_docs(shared / "lm") == want and lm_eval_docs(shared / "lm-seed") == want

    written = export_task("lighteval", str(write_pairs_file(tmp_path / "pairs.json")), tmp_path / "le")
    source = (tmp_path / "le" / "sciqag_lighteval.py").read_text()
    compile(source, "sciqag_lighteval.py", "exec")
    assert "Metrics.rougeL" in source and "normalized_f1" in source and str(tmp_path) not in source
    assert "hf_repo=str(Path(__file__).parent / 'sciqag_data')" in source
    copied = read_jsonl(tmp_path / "le" / "sciqag_data" / "test.jsonl")
    assert copied[1] == {"question": PAIRS[1][0], "answer": PAIRS[1][1]}  # Q/A keys become question/answer
    model = yaml.safe_load((tmp_path / "le" / "sciqag_litellm.yaml").read_text())["model_parameters"]
    assert model["system_prompt"] == answer_module.DEFAULT_SYSTEM_PROMPT and len(written) == 3


def test_a_hub_dataset_stays_a_hub_id(tmp_path):
    """Hub exports are read in place (no Hub here: the task is built from what `source` returns for one)."""
    hub = {"path": "me/sciqag", "name": "seed", "split": "test", "flatten": True, "file": None}
    task = export.lm_eval_task(hub, "Answer.", 64)
    assert (task["dataset_path"], task["dataset_name"]) == ("me/sciqag", "seed")
    assert task["process_docs"] == "!function utils.flatten" and "custom_dataset" not in task
    namespace: dict = {}
    exec(export._FLATTEN, namespace)  # the process_docs written beside such a task: one document per pair
    flat = namespace["flatten"](datasets.load_dataset(str(published_folder(tmp_path)), "seed", split="test"))
    assert flat["question"] == [q for q, _ in PAIRS]
    with pytest.raises(UserError, match="one question per row"):
        export.lighteval_files(hub, tmp_path, "Answer.", 64)


def test_the_printed_hint_is_readmes_lm_eval_command():
    _, run = readme_lm_eval()
    hint = export.how_to_run("lm-eval", Path("task-lm"))
    limit = run.index("--limit")
    assert shlex.split(hint[hint.index("lm_eval ") :]) == run[:limit] + run[limit + 2 :]


# --- end to end: README's commands on every embedded engine ----------------------------------------------------


@pytest.fixture(scope="module", params=embedded.ENGINES.names())
def embedded_server(request, tmp_path_factory):
    if request.param not in embedded.ENGINES.installed():
        pytest.skip(f"the {request.param} engine is not installed (llama.cpp: the embedded extra)")
    server = embedded.start(
        embedded.choose_here(request.param), log_path=tmp_path_factory.mktemp("embedded") / "server.log"
    )
    yield server
    server.stop()


@pytest.mark.e2e
def test_readmes_lm_eval_commands_run_a_moved_task_against_the_embedded_server(embedded_server, tmp_path, monkeypatch):
    export_cmd, run_cmd = readme_lm_eval()
    here = tmp_path / "here"
    (here / "sciqag_work").mkdir(parents=True)
    shutil.move(published_folder(tmp_path), here / "sciqag_work" / "dataset")  # README's DATA path
    results = tmp_path / "res"
    llm = LLMClient(
        embedded_server.base_url, embedded_server.model, params={"max_tokens": 32, "temperature": 0.0}, concurrency=1
    )
    ours = run_benchmark(
        str(here / "sciqag_work" / "dataset"), results, [llm], limit=2, bertscore_model=None, progress=False
    )
    assert ours.board["models"][0]["answered"] == 2

    monkeypatch.chdir(here)
    assert main(export_cmd[1:] + ["--max-tokens", "32"]) == 0  # a smaller budget than the default 256, for time
    # the task folder, shared: moved to another machine's folder, the dataset it came from gone
    there = tmp_path / "there"
    there.mkdir()
    shutil.move(here / "task-lm", there / "task-lm")
    shutil.rmtree(here)
    monkeypatch.chdir(there)
    served = {"NAME": embedded_server.model, "http://127.0.0.1:8080/v1": embedded_server.base_url}
    args = [str(LM_EVAL)] + run_cmd[1:]
    for placeholder, value in served.items():
        args = [a.replace(placeholder, value) for a in args]
    args[args.index("--limit") + 1] = "2"
    proc = subprocess.run(
        args + ["--output_path", "lm_out", "--log_samples"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **OFFLINE},
        cwd=there,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(next((there / "lm_out").rglob("results_*.json")).read_text())["results"]["sciqag"]
    assert {"exact_match,none", "bleu,none", "chrf,none"} <= set(result)
    samples = [json.loads(line) for line in next((there / "lm_out").rglob("samples_sciqag_*.jsonl")).open()]
    assert len(samples) == 2
    messages = json.loads(samples[0]["arguments"]["gen_args_0"]["arg_0"][0])
    assert messages == [
        {"role": "system", "content": answer_module.DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": PAIRS[0][0]},
    ]  # the prompt `sciqag benchmark` sends
    predictions = read_jsonl(results / answer_module.model_dir(embedded_server.model) / "predictions.jsonl")
    ours_by_question = {p["question"]: p["prediction"] for p in predictions}
    for sample in samples:  # greedy, and the stop strings end nothing early: the same answers from both
        assert sample["resps"][0][0].strip() == ours_by_question[sample["doc"]["question"]]


@pytest.mark.skipif(
    not os.environ.get("SCIQAG_LIGHTEVAL"),
    reason="lighteval lives in a venv of its own: set "
    "SCIQAG_LIGHTEVAL to its `lighteval` executable (README, Benchmark a model)",
)
def test_lighteval_runs_the_exported_task(embedded_server, tmp_path):
    pairs = write_pairs_file(tmp_path / "pairs.json")
    export_task("lighteval", str(pairs), tmp_path / "task", max_tokens=64)
    config = tmp_path / "task" / "sciqag_litellm.yaml"
    model = yaml.safe_load(config.read_text())
    model["model_parameters"].update(
        model_name=f"openai/{embedded_server.model}",
        base_url=embedded_server.base_url,
        concurrent_requests=1,
        max_model_length=2048,
    )
    config.write_text(yaml.safe_dump(model))
    env = {**os.environ, **OFFLINE, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [
            os.environ["SCIQAG_LIGHTEVAL"],
            "endpoint",
            "litellm",
            str(config),
            "sciqag|0",
            "--custom-tasks",
            str(tmp_path / "task" / "sciqag_lighteval.py"),
            "--max-samples",
            "3",
            "--output-dir",
            str(tmp_path / "le_out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(next((tmp_path / "le_out").rglob("results_*.json")).read_text())["results"]["sciqag|0"]
    assert {"em", "normalized_f1", "rougeL", "bleu"} <= set(result)
    shutil.rmtree(tmp_path / ".litellm_cache", ignore_errors=True)
