"""`sciqag benchmark` and `sciqag export-task`: the published test split as a closed-book QA benchmark.

Real parts: the metric libraries (rouge-score, sacrebleu, bert-score with the packaged MiniLM), `load_dataset`
on a folder written by `sciqag publish`, a real `transformers serve` (tiny random model) for the fast tests,
and the embedded SmolLM2 in the end-to-end one (the exported harness tasks: test_export_task.py). One fake:
``ScriptedJudge``, a loopback endpoint answering with judge replies written here (no judge able to write exact
replies runs on this machine).
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest
from helpers import RecordingProxy, ScriptedChat, read_jsonl, write_jsonl
from published import PAIRS, SECRET, published_folder, write_pairs_file

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import claim
from sciqag_dataset.evaluation.benchmark import answer as answer_module
from sciqag_dataset.evaluation.benchmark import run_benchmark
from sciqag_dataset.evaluation.benchmark.card import END, START, update_card
from sciqag_dataset.evaluation.benchmark.leaderboard import bootstrap_ci
from sciqag_dataset.evaluation.benchmark.metrics import ReferenceScorer, exact_match, number_agreement, token_f1
from sciqag_dataset.evaluation.benchmark.questions import load_questions
from sciqag_dataset.llm import LLMClient, ResponseCache


def client(server, results: Path, model: str | None = None, **kw) -> LLMClient:
    return LLMClient(
        server.base_url,
        model or server.model,
        params={"max_tokens": kw.pop("max_tokens", 8), "temperature": 0.0},
        cache=ResponseCache(results / "cache.sqlite"),
        max_retries=1,
        backoff=0.05,
        **kw,
    )


# --- reference metrics, checked against values computed by hand ------------------------------------------


def test_reference_metrics_match_hand_computed_values():
    # normalised: "band gap is 32 ev" both (case, punctuation, the article dropped)
    assert exact_match("The band gap is 3.2 eV.", "band gap is 3.2 eV") == 1.0
    assert exact_match("3.2 eV", "3.3 eV") == 0.0
    # prediction 4 tokens, all in the 6-token reference ("the" dropped): P 1, R 4/6 -> F1 0.8
    assert token_f1(
        "Cobalt suppresses cation mixing", "Cobalt suppresses the cation mixing in layers"
    ) == pytest.approx(0.8)
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0
    # the reference's numbers {3.2, 300}: the prediction states 3.20 only -> 1/2; none in the reference -> None
    assert number_agreement("It is 3.20 eV.", "3.2 eV at 300 K") == 0.5
    assert number_agreement("It is 3.2 eV.", "no numbers here") is None

    scorer = ReferenceScorer(bertscore_model=None)
    s = scorer("Cobalt suppresses cation mixing", "Cobalt suppresses the cation mixing in layers")
    # stemmed tokens: prediction cobalt suppress cation mix (4); reference + the, in, layer (7)
    assert s["rouge1"] == pytest.approx(8 / 11, abs=1e-6)  # P 4/4, R 4/7
    assert s["rouge2"] == pytest.approx(4 / 9, abs=1e-6)  # bigrams: 2 of 3 / 2 of 6
    assert s["rougeL"] == pytest.approx(8 / 11, abs=1e-6)  # the LCS is the whole prediction
    assert scorer("the same sentence here", "the same sentence here")["bleu"] == pytest.approx(100.0)
    assert scorer("alpha beta", "gamma delta epsilon")["bleu"] == pytest.approx(0.0)
    assert s["bertscore"] is None


def test_bertscore_runs_offline_on_the_packaged_model():
    scorer = ReferenceScorer()
    same = scorer("Cobalt suppresses cation mixing.", "Cobalt suppresses cation mixing.")["bertscore"]
    close = scorer("Cobalt prevents the mixing of cations.", "Cobalt suppresses cation mixing.")["bertscore"]
    far = scorer("The pellets were sintered at 873 K.", "Cobalt suppresses cation mixing.")["bertscore"]
    assert same == pytest.approx(1.0, abs=1e-4) and far < close < same
    assert scorer("", "Cobalt suppresses cation mixing.")["bertscore"] == 0.0
    assert scorer.describe()["bertscore"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "layer": 6,
        "idf": False,
        "rescaled": False,
    }


def test_bootstrap_interval():
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5)
    low, high = bootstrap_ci([0, 1] * 50)
    assert 0.38 < low < 0.5 < high < 0.62  # the normal approximation: 0.5 +- 1.96 * 0.05
    assert bootstrap_ci([0, 1] * 50) == (low, high)  # seeded: the same interval every run
    assert all(math.isnan(x) for x in bootstrap_ci([]))


# --- the question set ---------------------------------------------------------------------------------


def test_questions_from_files_of_pairs(tmp_path):
    path = write_pairs_file(tmp_path / "pairs.json")
    questions, info = load_questions(str(path))
    assert [q["question"] for q in questions] == [q for q, _ in PAIRS]
    assert questions[1]["reference"] == PAIRS[1][1] and questions[0]["id"] == "q00000"
    write_jsonl(tmp_path / "pairs.jsonl", [{"id": "a", "question": "Q?", "answer": "A."}, {"question": "no answer"}])
    questions, info = load_questions(str(tmp_path / "pairs.jsonl"))
    assert [q["id"] for q in questions] == ["a"] and info["rows_without_pair"] == [1]  # named, not silent
    datasets.Dataset.from_list([{"question": q, "answer": a} for q, a in PAIRS]).to_parquet(
        str(tmp_path / "p.parquet")
    )
    assert len(load_questions(str(tmp_path / "p.parquet"), limit=2)[0]) == 2
    (tmp_path / "wrapped.json").write_text(json.dumps({"data": [{"question": "Q?", "answer": "A."}]}))
    assert len(load_questions(str(tmp_path / "wrapped.json"))[0]) == 1
    write_jsonl(tmp_path / "dup.jsonl", [{"id": "a", "question": "Q?", "answer": "A."}] * 2)
    with pytest.raises(UserError, match="ids repeat"):
        load_questions(str(tmp_path / "dup.jsonl"))


def test_questions_from_a_published_folder_and_the_authors_test_set(tmp_path):
    scores = {1: {"accuracy": 2}, 2: {"refers": True}, 3: {"agnosticism": 1}}
    pub = published_folder(tmp_path, scores=scores)
    questions, info = load_questions(str(pub))
    assert info["config"] == "evaluated" and info["split"] == "test" and len(questions) == len(PAIRS)
    assert questions[0]["id"] == "paper-0#0" and questions[1]["id"] == "paper-0#1"
    seed_questions, seed_info = load_questions(str(pub), config="seed")
    assert [q["id"] for q in seed_questions] == [q["id"] for q in questions]  # the same ids from either config
    kept, info = load_questions(str(pub), authors_test_set=True)
    # pair 1 has accuracy 2 and pair 2 cites its source: dropped; agnosticism 1 is left to the regex: kept
    assert [q["id"] for q in kept] == ["paper-0#0", "paper-1#1", "paper-2#0", "paper-2#1"]
    assert info["authors_test_set"] == {"kept": 4, "dropped": 2, "unscored": 0}
    with pytest.raises(UserError, match="no split 'train'"):
        load_questions(str(pub), split="train")
    with pytest.raises(UserError, match="needs the `evaluated` config"):
        load_questions(str(pub), config="seed", authors_test_set=True)


# --- answering: closed book, resumable --------------------------------------------------------------------


def test_nothing_from_the_paper_reaches_the_model(says_server, tmp_path):
    pub = published_folder(tmp_path)
    results = tmp_path / "res"
    with RecordingProxy(says_server.base_url) as proxy:
        run = run_benchmark(
            str(pub),
            results,
            [client(proxy, results, says_server.model)],
            bertscore_model=None,
            system_prompt="Answer briefly.",
            progress=False,
        )
        bodies = [json.loads(r["body"]) for r in proxy.requests if r["path"].endswith("/chat/completions")]
    assert len(bodies) == len(PAIRS)
    for body, (q, _) in zip(sorted(bodies, key=lambda b: b["messages"][1]["content"]), sorted(PAIRS)):
        assert body["messages"] == [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": q}]
        assert SECRET not in json.dumps(body) and "films" not in json.dumps(body)
    entry = run.board["models"][0]
    assert entry["answered"] == len(PAIRS) and entry["failed"] == 0
    rows = datasets.load_dataset(
        "json",
        data_files=str(results / answer_module.model_dir(says_server.model) / "predictions.jsonl"),
        split="train",
    )
    assert len(rows) == len(PAIRS) and {"prediction", "f1", "rougeL", "bleu", "judge_correctness"} <= set(
        rows.column_names
    )


def test_a_killed_benchmark_resumes_without_asking_again(tiny_server, tmp_path):
    n = 40
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(
        pairs,
        [{"question": f"Question {i}: what is the band gap of sample {i}?", "answer": f"{i}.5 eV"} for i in range(n)],
    )
    results = tmp_path / "res"
    answers = results / answer_module.model_dir(tiny_server.model) / "answers.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "sciqag_dataset.cli",
        "benchmark",
        str(pairs),
        "-o",
        str(results),
        "--endpoint",
        tiny_server.base_url,
        "--model",
        tiny_server.model,
        "--max-tokens",
        "8",
        "--concurrency",
        "2",
        "--no-bertscore",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and (not answers.exists() or len(read_jsonl(answers)) < 5):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {r["id"] for r in read_jsonl(answers)}
    assert 5 <= len(before) < n, "the kill must land mid-run"

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} skipped" in done.stdout
    usage = json.loads((answers.parent / "answers_manifest.json").read_text())["model"]["usage"]
    # finished questions were not asked again; at most the two in flight at the kill come from the cache
    assert usage["requests"] + usage["cached"] == n - len(before) and usage["cached"] <= 2
    board = json.loads((results / "leaderboard.json").read_text())
    assert board["models"][0]["answered"] == n and "f1" in board["models"][0]["metrics"]


def write_surrogate_pairs(path: Path) -> Path:
    """JSON Lines with lone surrogates as the escapes a JSON file can carry (json.dumps writes "\\ud800")."""
    write_jsonl(
        path,
        [
            {"question": "What does \ud800 doping do?", "answer": "It adds carriers \udc00."},
            *({"question": q, "answer": a} for q, a in PAIRS[1:]),
        ],
    )
    return path


def test_lone_surrogates_in_a_file_of_pairs_are_repaired_for_the_exported_task(tmp_path, caplog):
    pairs = write_surrogate_pairs(tmp_path / "pairs.jsonl")
    assert "\\ud800" in pairs.read_text()
    assert main(["export-task", "lm-eval", str(pairs), "-o", str(tmp_path / "task")]) == 0
    rows = read_jsonl(tmp_path / "task" / "sciqag_data" / "test.jsonl")
    assert rows[0] == {"question": "What does \ufffd doping do?", "answer": "It adds carriers \ufffd."}
    assert "2 lone surrogate(s)" in caplog.text and not list((tmp_path / "task").rglob("*.tmp"))
    # a surrogate written out as bytes (not valid UTF-8) is repaired too
    raw = tmp_path / "raw.jsonl"
    raw.write_bytes('{"question": "What is \u00b5?", "answer": "'.encode() + b"\xed\xa0\x80" + b'."}\n')
    assert main(["export-task", "lm-eval", str(raw), "-o", str(tmp_path / "task2")]) == 0
    rows = read_jsonl(tmp_path / "task2" / "sciqag_data" / "test.jsonl")
    assert rows == [{"question": "What is \u00b5?", "answer": "\ufffd\ufffd\ufffd."}]
    assert "not valid UTF-8" in caplog.text
    # and a write that still fails leaves the file as it was and no temporary file beside it
    with pytest.raises(UnicodeEncodeError):
        write_whole(tmp_path / "task" / "sciqag.yaml", "description: \ud800\n")
    assert "description:" in (tmp_path / "task" / "sciqag.yaml").read_text() and not list(tmp_path.rglob("*.tmp"))


def test_lone_surrogates_in_a_file_of_pairs_are_repaired_for_the_benchmark(says_server, tmp_path, caplog):
    pairs = write_surrogate_pairs(tmp_path / "pairs.jsonl")
    results = tmp_path / "res"
    assert (
        main(
            [
                "benchmark",
                str(pairs),
                "-o",
                str(results),
                "--endpoint",
                says_server.base_url,
                "--model",
                says_server.model,
                "--max-tokens",
                "8",
                "--no-bertscore",
            ]
        )
        == 0
    )
    questions = read_jsonl(results / "questions.jsonl")
    assert (questions[0]["question"], questions[0]["reference"]) == (
        "What does \ufffd doping do?",
        "It adds carriers \ufffd.",
    )
    assert "2 lone surrogate(s)" in caplog.text and not list(results.glob("*.tmp"))
    rows = read_jsonl(results / answer_module.model_dir(says_server.model) / "predictions.jsonl")
    assert len(rows) == len(PAIRS) and {r["status"] for r in rows} == {"answered"}


def test_bad_model_options_and_foreign_folders_are_refused_before_any_work(tmp_path, capsys):
    pairs = write_pairs_file(tmp_path / "pairs.json")
    results = tmp_path / "r"
    assert main(["benchmark", str(pairs), "-o", str(results), "--model", "gpt-4o"]) == 2
    assert "needs an --endpoint" in capsys.readouterr().err
    assert (
        main(
            [
                "benchmark",
                str(pairs),
                "-o",
                str(results),
                "--endpoint",
                "http://127.0.0.1:9/v1",
                "--endpoint",
                "http://127.0.0.1:8/v1",
            ]
        )
        == 2
    )
    assert "name the model an --endpoint serves" in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "README.md").write_text("---\nlicense: mit\n---\n# Someone's dataset\n")
    assert main(["benchmark", str(pairs), "-o", str(results), "--update-card", str(foreign)]) == 2
    assert "not a SciQAG dataset card" in capsys.readouterr().err and not results.exists()
    for command in (["benchmark", str(pairs)], ["export-task", "lm-eval", str(pairs)]):
        assert main(command + ["-o", str(foreign)]) == 2
        assert "was not created by sciqag" in capsys.readouterr().err
    assert sorted(p.name for p in foreign.iterdir()) == ["README.md"]
    assert (foreign / "README.md").read_text().endswith("# Someone's dataset\n")
    (tmp_path / "bad.jsonl").write_text('{"question": "Q?", "answer": "A."}\n{"question": \n')
    assert main(["benchmark", str(tmp_path / "bad.jsonl"), "-o", str(tmp_path / "r2")]) == 2
    assert "bad.jsonl, line 2: not valid JSON" in capsys.readouterr().err


def test_model_flags_apply_to_the_embedded_default_and_a_llama_cpp_judge_gets_plain_requests(tmp_path):
    from sciqag_dataset.cli import build_parser
    from sciqag_dataset.cli.benchmark import _model_template
    from sciqag_dataset.evaluation.judging import make_judges
    from sciqag_dataset.llm.endpoint import JudgeEndpointConfig
    from sciqag_dataset.orchestration.pipeline import Endpoints

    args = build_parser().parse_args(["benchmark", "d.json", "--max-tokens", "64", "--temperature", "0.3"])
    assert _model_template(args) == {"max_tokens": 64, "temperature": 0.3}
    for backend, takes_schema in (("llama.cpp", False), ("transformers", True)):
        cfg = Config(work_dir=str(tmp_path / backend))
        cfg.embedded.backend = backend
        with Endpoints(cfg) as endpoints:  # no request is sent: no server starts
            judge = endpoints.client(JudgeEndpointConfig(), "benchmark-judge")
            assert judge.json_schema is takes_schema and make_judges([judge])[0].structured is takes_schema
            assert not endpoints.started


def test_a_model_that_answers_nothing_and_two_models_of_one_name(says_server, tmp_path):
    pairs = write_pairs_file(tmp_path / "pairs.json")
    results = tmp_path / "res"
    dead = LLMClient("http://127.0.0.1:9/v1", "dead", max_retries=0, timeout=2)
    run = run_benchmark(str(pairs), results, [dead], bertscore_model=None, progress=False)
    entry = run.board["models"][0]
    assert (entry["answered"], entry["failed"], entry["metrics"]) == (0, len(PAIRS), {})
    assert run.summaries["dead"][0].failed == len(PAIRS) and not (results / "leaderboard.png").exists()
    # a reply cut at max_tokens is the model's answer, scored, not a failure left out of the means
    run = run_benchmark(
        str(pairs), results, [client(says_server, results, max_tokens=2)], bertscore_model=None, progress=False
    )
    rows = read_jsonl(results / answer_module.model_dir(says_server.model) / "predictions.jsonl")
    assert {(r["status"], r["finish_reason"]) for r in rows} == {("answered", "length")}
    with pytest.raises(UserError, match="share a name"):
        run_benchmark(
            str(pairs),
            results,
            [client(says_server, results), client(says_server, results)],
            bertscore_model=None,
            progress=False,
        )


# --- the judge --------------------------------------------------------------------------------------------


class ScriptedJudge(ScriptedChat):
    """FAKE OpenAI-style endpoint (loopback): judge replies written by the test, chosen by the dimension the
    prompt asks for; it counts the questions in the prompt and returns ``scores[dim]`` for each."""

    def __init__(self, scores: dict[str, int]):
        def reply(body):
            prompt = body["messages"][-1]["content"]
            dim = next(d for d in scores if f"Rate the {d}" in prompt)
            n = prompt.count("\nModel answer ")
            return json.dumps([{"score": scores[dim], "reasons": f"{dim} {k}"} for k in range(n)])

        super().__init__(reply)


def test_a_judge_committee_scores_batches_and_a_gibberish_judge_invents_nothing(says_server, tiny_server, tmp_path):
    pairs = write_pairs_file(tmp_path / "pairs.json")
    results = tmp_path / "res"
    a, b = ScriptedJudge({"correctness": 3, "completeness": 2}), ScriptedJudge({"correctness": 1, "completeness": 2})
    try:
        judges = [LLMClient(a.base_url, "judge-a"), LLMClient(b.base_url, "judge-b")]
        run = run_benchmark(
            str(pairs),
            results,
            [client(says_server, results)],
            judges=judges,
            judge_batch=4,
            combine="min",
            bertscore_model=None,
            progress=False,
        )
        # 6 questions in batches of 4: 2 batches x 2 dimensions per judge, each question seen by the judge
        assert len(a.requests) == len(b.requests) == 4
        prompts = [r["messages"][0]["content"] for r in a.requests]  # (the two batches are asked concurrently)
        assert any(PAIRS[0][0] in p and PAIRS[0][1] in p and "Model answer 1:" in p for p in prompts)
    finally:
        a.close()
        b.close()
    rows = read_jsonl(results / answer_module.model_dir(says_server.model) / "predictions.jsonl")
    assert {(r["judge_correctness"], r["judge_completeness"]) for r in rows} == {(1, 2)}  # min of the committee
    assert rows[0]["judge_reasons"]["correctness"] == "judge-a: correctness 0\njudge-b: correctness 0"
    assert run.board["models"][0]["metrics"]["judge_correctness"] == {"mean": 1.0, "ci95": [1.0, 1.0], "n": 6}
    # new answers (another system prompt, a longer budget) and no judge: the old judgements are not theirs
    run = run_benchmark(
        str(pairs),
        results,
        [client(says_server, results, max_tokens=32)],
        system_prompt="Answer in one word.",
        bertscore_model=None,
        progress=False,
    )
    rows = read_jsonl(results / answer_module.model_dir(says_server.model) / "predictions.jsonl")
    assert all(r["judge_correctness"] is None and r["f1"] is not None for r in rows)
    assert "judge_correctness" not in run.board["models"][0]["metrics"]

    results2 = tmp_path / "res2"
    # (an empty reply is retried by the client, as from any server; what comes back is never read as scores)
    judge = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 16}, max_retries=3, backoff=0.05)
    run = run_benchmark(
        str(pairs),
        results2,
        [client(says_server, results2)],
        judges=[judge],
        judge_batch=10,
        max_attempts=2,
        bertscore_model=None,
        progress=False,
    )
    batch = read_jsonl(results2 / answer_module.model_dir(says_server.model) / "judgements.jsonl")[0]
    assert batch["status"] == "unjudged" and batch["judge_calls"] == 4  # 2 dimensions x 2 attempts
    assert all(
        it["judge_correctness"] is None and "[missing:" in it["judge_reasons"]["correctness"] for it in batch["items"]
    )
    assert "judge_correctness" not in run.board["models"][0]["metrics"]


# --- the card and the leaderboard across runs --------------------------------------------------------------


def test_the_card_section_is_added_then_refreshed_and_nothing_else_changes(says_server, tmp_path):
    pub = published_folder(tmp_path)
    card = pub / "README.md"
    original = card.read_text()
    results = tmp_path / "res"
    run = run_benchmark(str(pub), results, [client(says_server, results)], bertscore_model=None, progress=False)
    update_card(pub, run.board, "sciqag benchmark pub")
    text = card.read_text()
    assert text.startswith(original.rstrip("\n")) and text.count(START) == 1 and "## Benchmark" in text
    assert says_server.model in text and "Reproduce: `sciqag benchmark pub`" in text
    card.write_text(text + "\n## Notes added by hand\n\nKeep me.\n")
    update_card(pub, run.board, "sciqag benchmark pub --limit 2")
    again = card.read_text()
    assert again.count(START) == again.count(END) == 1 and "--limit 2" in again and "Keep me." in again
    assert again.split(START)[0] == text.split(START)[0]
    assert datasets.load_dataset(str(pub), "evaluated", split="test").num_rows == len(PAIRS)  # still a dataset card


def test_models_answered_on_another_question_set_are_left_out(says_server, tmp_path):
    pairs = write_pairs_file(tmp_path / "pairs.json")
    results = tmp_path / "res"
    run_benchmark(str(pairs), results, [client(says_server, results)], bertscore_model=None, progress=False)
    run = run_benchmark(
        str(pairs),
        results,
        [client(says_server, results, label="second")],
        limit=3,
        bertscore_model=None,
        progress=False,
    )
    assert [e["model"] for e in run.board["models"]] == ["second"] and run.board["left_out"] == [says_server.model]
    assert (results / "leaderboard.png").stat().st_size > 0
    assert "| second | 3 | 0 |" in (results / "leaderboard.md").read_text()


def test_a_model_that_wrote_the_questions_is_warned_about(says_server, tmp_path, capsys, caplog):
    pub = published_folder(tmp_path, teacher=says_server.model)
    assert f"- **Teacher** (the `seed` config): `{says_server.model}`" in (pub / "README.md").read_text()
    results = claim(str(tmp_path / "res"), "benchmark", option="benchmark.output_dir")  # as the CLI claims it
    other = LLMClient("http://127.0.0.1:9/v1", "other-model", max_retries=0, timeout=2)
    run_benchmark(str(pub), results, [other], bertscore_model=None, progress=False)
    argv = ["benchmark", str(pub), "-o", str(results), "--no-bertscore", "--update-card", str(pub)]
    assert main([*argv, "--endpoint", says_server.base_url, "--model", says_server.model]) == 0
    out = capsys.readouterr().out
    warning = f"**{says_server.model}** is the teacher (the `seed` config) of this dataset: it answers questions"
    assert warning in out and "other-model** is" not in out
    assert any(f"{says_server.model} is the teacher" in r.getMessage() for r in caplog.records)
    board = json.loads((results / "leaderboard.json").read_text())
    assert {e["model"]: e["wrote_the_questions"] for e in board["models"]} == {
        says_server.model: "the teacher (the `seed` config)",
        "other-model": None,
    }
    assert warning in (pub / "README.md").read_text().split(START)[1]


# --- end to end with the embedded model ----------------------------------------------------------------------


@pytest.mark.e2e
def test_benchmark_the_embedded_model_out_of_the_box_and_update_the_card(tmp_path, capsys):
    pub = published_folder(tmp_path)
    results = tmp_path / "res"
    assert (
        main(
            [
                "benchmark",
                str(pub),
                "-o",
                str(results),
                "--limit",
                "4",
                "--update-card",
                str(pub),
                "--judge",
                "--judge-batch",
                "4",
                "--max-attempts",
                "1",
                "--judge-max-tokens",
                "96",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "HuggingFaceTB/SmolLM2-135M-Instruct: answer: 4 ok; score: 4 ok; judge: 1 " in out
    # llama.cpp's server answers a json_schema response_format with a 500: its judge is asked in plain text,
    # so the batch is judged (usably or not) in one call per dimension instead of failing after retries
    batch = read_jsonl(results / "models" / "HuggingFaceTB_SmolLM2-135M-Instruct" / "judgements.jsonl")[0]
    assert batch["status"] != "failed" and batch["judge_calls"] == 2
    board = json.loads((results / "leaderboard.json").read_text())
    entry = board["models"][0]
    assert entry["answered"] == 4 and entry["completion_tokens"] > 0
    for metric in ("f1", "rougeL", "bleu", "bertscore"):
        low, high = entry["metrics"][metric]["ci95"]
        assert low <= entry["metrics"][metric]["mean"] <= high
    rows = read_jsonl(results / "models" / "HuggingFaceTB_SmolLM2-135M-Instruct" / "predictions.jsonl")
    assert all(r["prediction"] and r["bertscore"] is not None for r in rows)
    assert "## Benchmark" in (pub / "README.md").read_text()
    # a rerun asks nothing and starts no server
    assert main(["benchmark", str(pub), "-o", str(results), "--limit", "4"]) == 0
    rerun = capsys.readouterr()
    assert "answer: 4 skipped" in rerun.out and "Starting the embedded" not in rerun.err
