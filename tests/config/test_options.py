"""Options are checked before any work starts; a user error is one line and exit 2, a bug a traceback
and exit 1. Each case runs the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_jsonl

from sciqag_dataset.cli import build_parser
from sciqag_dataset.cli.flags import resolve_config
from sciqag_dataset.config.config_file import Config, ModelEndpointConfig
from sciqag_dataset.core.console import run_command
from sciqag_dataset.core.errors import UserError


def sciqag(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_error(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith(("WARNING ", "INFO "))]
    assert len(lines) == 1, proc.stderr  # one line besides any log warnings
    assert "Traceback" not in proc.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture
def work(tmp_path) -> Path:
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "T", "text": "Body. " * 20}])
    return work


@pytest.mark.parametrize(
    "args,words",
    [
        (["--concurrency", "0"], ["teacher.concurrency", "at least 1"]),
        (["--n-pairs", "0"], ["seed.n_pairs", "at least 1"]),
        (["--n-pairs", "-3"], ["seed.n_pairs"]),
        (["--max-retries", "-1"], ["teacher.max_retries"]),
        (["--top-p", "1.5"], ["teacher.top_p", "at most 1"]),
    ],
)
def test_bad_values_are_refused_before_any_work(work, args, words):
    proc = sciqag("seed", work, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", *args)
    one_line_error(proc, *words)
    assert not (work / "seed.jsonl").exists() and not (work / "config.yaml").exists()


def test_unknown_stage_names_are_refused(tmp_path):
    proc = sciqag("run", "--work", tmp_path / "w", "--stages", "ingest,keyword")
    one_line_error(proc, "stages", "'keyword'")
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(
    "yaml_text,words",
    [
        ("keywords:\n  n: twenty\n", ["keywords.n", "an integer", "'twenty'"]),
        ("teacher:\n  concurrency: 2.5\n", ["teacher.concurrency", "an integer"]),
        ("teacher:\n  urll: http://x/v1\n", ["unknown option", "urll"]),
        ("seed:\n  prompt_style: fancy\n", ["seed.prompt_style", "'fancy'"]),
        ("publish:\n  train: 0.9\n  validation: 0.2\n", ["publish.train + publish.validation"]),
        ("evaluate:\n  judges:\n    - {url: http://j/v1, modle: x}\n", ["unknown option", "modle"]),
        ("stages: [ingest, publish\n", ["not valid YAML"]),
        ("- a list\n- not a mapping\n", ["must be a YAML mapping"]),
        ("train:\n  learning_rat: 0.001\n", ["train", "unknown option", "learning_rat"]),
        ("train:\n  method: qlora4\n", ["method must be one of"]),
    ],
)
def test_bad_config_files_are_refused_naming_the_option(tmp_path, yaml_text, words):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml_text)
    proc = sciqag("run", cfg, "--work", tmp_path / "w")
    one_line_error(proc, *words)
    assert not (tmp_path / "w").exists()


def test_train_without_a_base_model_is_refused(tmp_path):
    proc = sciqag("train", "--dataset", tmp_path / "ds", "--output_dir", tmp_path / "model")
    one_line_error(proc, "model_name_or_path")
    proc = sciqag("train", "--model_name_or_path", "m", "--dataset", "d", "--learning-rate", "fast")
    assert proc.returncode == 2 and "learning-rate" in proc.stderr  # argparse: the flag's own type


def test_train_refuses_an_output_folder_of_the_users(tmp_path):
    out = tmp_path / "my-folder"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    proc = sciqag(
        "train", "--model_name_or_path", tmp_path / "none", "--dataset", tmp_path / "none", "--output_dir", out
    )
    one_line_error(proc, "output_dir", "not empty")
    assert (out / "thesis.tex").read_text() == "mine"


def test_an_output_folder_that_cannot_be_written_is_refused(tmp_path, work):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    proc = sciqag("ingest", work, "-o", blocker / "work")  # its parent is a file
    one_line_error(proc, "work_dir", "cannot create")
    proc = sciqag("ingest", work, "-o", "/proc/sciqag-cannot-be-here")  # a file system that refuses
    one_line_error(proc, "work_dir")
    proc = sciqag("publish", work, "-o", "/proc/sciqag-cannot-be-here")
    one_line_error(proc, "publish.output_dir")


def test_a_missing_input_is_a_user_error(tmp_path):
    proc = sciqag("keywords", tmp_path / "empty-work")
    one_line_error(proc, "papers.jsonl not found", "ingest")


def test_a_bug_shows_its_traceback_and_exits_1(capsys):
    def buggy(args):
        return {}["no such key"]

    assert run_command(buggy, None, "sciqag demo") == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: 'no such key'" in err and "internal error" in err


def test_flags_are_spelled_out_and_a_typo_gets_the_nearest_flag(tmp_path, capsys):
    """`sciqag run --config cfg.yaml` is the config, not a prefix of --configs; a misspelt flag such as
    `--embeded-backend` is refused (exit 2) naming the nearest flag, before anything is written."""
    from sciqag_dataset.cli import build_parser, main

    args = build_parser().parse_args(["run", "--config", "cfg.yaml"])
    assert args.config_flag == "cfg.yaml" and args.configs is None
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["publish", str(tmp_path), "--config", "x.yaml", "--config"])
    assert info.value.code == 2  # `--config` takes a value: it is not a prefix of anything
    capsys.readouterr()
    for argv, wanted in (
        (["run", "--embeded-backend", "llama.cpp"], "--embedded-backend"),
        (["seed", str(tmp_path / "w"), "--concurency", "3"], "--concurrency"),
        (["publish", str(tmp_path / "w"), "--pretty-nam", "X"], "--pretty-name"),
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert f"did you mean {wanted}?" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()  # refused before anything was written


def test_a_mistyped_flag_is_one_line_with_the_nearest_flag(tmp_path):
    proc = sciqag("seed", tmp_path / "w", "--modle", "x")
    one_line_error(proc, "sciqag seed:", "unknown option --modle; did you mean --model?", "sciqag seed --help")
    assert "usage:" not in proc.stderr
    proc = sciqag("seed", tmp_path / "w", "--modle", "x", "--concurency", "3")
    one_line_error(proc, "--modle (did you mean --model?)", "--concurency (did you mean --concurrency?)")
    one_line_error(sciqag("seed", "--concurrency", "many"), "--concurrency", "invalid int value")
    assert not (tmp_path / "w").exists()


def test_every_wrong_key_of_a_config_is_named_with_the_nearest_key(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("teacher:\n  modle: m\nseed:\n  n_pair: 3\nset_option: []\nevaluate:\n  judges:\n    - {urll: x}\n")
    proc = sciqag("run", cfg, "--work", tmp_path / "w")
    one_line_error(
        proc,
        "teacher.modle (did you mean teacher.model?)",
        "seed.n_pair (did you mean seed.n_pairs?)",
        "evaluate.judges[0].urll (did you mean evaluate.judges[0].url?)",
    )
    assert "set_options" not in proc.stderr  # written by the program, never offered
    cfg.write_text("zzzz: 1\nseed:\n  qqqq: 1\n")
    one_line_error(
        sciqag("run", cfg, "--work", tmp_path / "w"),
        "zzzz (the options here: work_dir,",
        "seed.qqqq (the options of seed:",
    )
    cfg.write_text("train:\n  learning_rat: 0.1\n  num_train_epoch: 2\n")
    one_line_error(
        sciqag("run", cfg, "--work", tmp_path / "w"),
        "learning_rat (did you mean learning_rate?)",
        "num_train_epoch (did you mean num_train_epochs?)",
    )
    assert not (tmp_path / "w").exists()


def test_run_takes_its_config_as_a_flag_too(tmp_path):
    (tmp_path / "cfg.yaml").write_text(f"work_dir: {tmp_path / 'work'}\nstages: [ingest]\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciqag_dataset.cli",
            "run",
            "--config",
            str(tmp_path / "cfg.yaml"),
            "--inputs",
            str(Path(__file__).parents[1] / "fixtures"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert (tmp_path / "work" / "papers.jsonl").exists()


def test_a_mistyped_path_is_refused_before_anything_is_written(tmp_path):
    """An input that does not exist is a user error in one line (exit 2), not a failed paper to retry; a stage
    on a work dir with no papers.jsonl is refused the same way, and no folder is left behind."""
    proc = sciqag("ingest", tmp_path / "no-such-paper.pdf", "-o", tmp_path / "w1")
    one_line_error(proc, "inputs:", "no-such-paper.pdf", "does not exist")
    proc = sciqag("run", "--inputs", tmp_path / "no-such-folder", "--work", tmp_path / "w2")
    one_line_error(proc, "inputs:", "no-such-folder")
    for command in ("keywords", "seed", "generate", "evaluate", "filter", "publish"):
        one_line_error(sciqag(command, tmp_path / "w3"), "papers.jsonl not found", "sciqag ingest")
    assert not any((tmp_path / w).exists() for w in ("w1", "w2", "w3"))


def test_a_file_that_cannot_be_read_is_not_promised_to_a_rerun(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    proc = sciqag("ingest", tmp_path / "broken.pdf", "-o", tmp_path / "work")
    assert proc.returncode == 1
    assert "ingest_report.json" in proc.stderr and "rerun the same command to retry" not in proc.stderr


def test_a_filter_on_a_score_no_pair_has_is_refused_and_a_filter_can_be_cleared(tmp_path):
    """README's `sciqag filter WORK --min-racar 2.5` where no pair has a RACAR score is refused in one line (no
    filtered.jsonl is written) unless --allow-missing-scores asks for it; `--clear` undoes a filter."""
    from sciqag_dataset.config.config_file import EvaluateConfig
    from sciqag_dataset.core.folders import WORK_LAYOUT, claim
    from sciqag_dataset.evaluation.evaluate import run_evaluate

    work = claim(str(tmp_path / "work"), "work", option="work_dir", adopt=WORK_LAYOUT)
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "T", "text": "The gap is 3.2 eV. " * 30}])
    write_jsonl(
        work / "seed.jsonl",
        [
            {
                "id": "p0",
                "status": "ok",
                "qa": [
                    {"question": "What is the gap?", "answer": "It is 3.2 eV."},
                    {"question": "Why?", "answer": "Oxygen."},
                ],
            }
        ],
    )
    run_evaluate(work, EvaluateConfig(metrics=["numeric"], plots=False))
    one_line_error(
        sciqag("filter", work, "--min-racar", "2.5"),
        "min_racar needs racar scores",
        "--judge-endpoint",
        "--allow-missing-scores",
    )
    one_line_error(sciqag("filter", work, "--min-chunk-rate", "0.2"), "coverage", "--metrics coverage")
    assert not (work / "filtered.jsonl").exists()
    proc = sciqag("filter", work, "--min-racar", "2.5", "--allow-missing-scores")  # asked for: every pair goes
    assert proc.returncode == 0 and (work / "filtered.jsonl").read_text() == ""
    assert sciqag("filter", work, "--min-numeric-ratio", "0.5").returncode == 0  # numeric ran: no refusal
    one_line_error(sciqag("filter", work, "--clear", "--min-racar", "2"), "--clear")
    proc = sciqag("filter", work, "--clear")
    assert proc.returncode == 0 and "Filter cleared" in proc.stdout
    assert not (work / "filtered.jsonl").exists() and not (work / "filter_summary.json").exists()
    one_line_error(sciqag("filter", work), "no filter rule", "--clear")


def test_the_general_knowledge_endpoint_is_an_endpoint_section_in_the_file_and_in_flags(tmp_path):
    """`benchmark.general_knowledge_endpoint` has the shape of every endpoint (url, model, key variable, prices,
    concurrency, timeout); its flags (--general-knowledge-*) override the file's values one by one."""
    path = tmp_path / "cfg.yaml"
    path.write_text(
        "benchmark:\n  general_knowledge_endpoint:\n    url: http://gk.example/v1\n    model: small\n"
        "    api_key_env: GK_KEY\n    price_prompt_per_m: 0.5\n    concurrency: 4\n    timeout: 30\n"
    )
    gk = Config.load(path).validate().benchmark.general_knowledge_endpoint
    assert isinstance(gk, ModelEndpointConfig) and (gk.url, gk.model, gk.api_key_env) == (
        "http://gk.example/v1",
        "small",
        "GK_KEY",
    )
    assert (gk.price_prompt_per_m, gk.concurrency, gk.timeout, gk.temperature) == (0.5, 4, 30, 0.0)
    args = ["benchmark", "d.json", "--config", str(path), "--general-knowledge-concurrency", "2"]
    flagged = resolve_config(build_parser().parse_args([*args, "--general-knowledge-model", "other"]))
    gk = flagged.benchmark.general_knowledge_endpoint
    assert (gk.url, gk.model, gk.api_key_env, gk.concurrency) == ("http://gk.example/v1", "other", "GK_KEY", 2)
    assert Config().benchmark.general_knowledge_endpoint == ModelEndpointConfig()  # a default of its own
    path.write_text("benchmark:\n  general_knowledge_endpoint: http://gk.example/v1\n")
    with pytest.raises(UserError, match="general_knowledge_endpoint: must be a mapping"):
        Config.load(path)
    path.write_text("benchmark:\n  general_knowledge_endpoint:\n    concurency: 2\n")
    with pytest.raises(UserError, match="general_knowledge_endpoint.concurency .did you mean .*concurrency"):
        Config.load(path)
