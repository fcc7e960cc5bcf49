"""`sciqag run --plan`: what a run would send, counted before it runs, against what the run then sent (its
manifests), with the real parts: the sample papers, the embedded SmolLM2 and its GGUF tokenizer."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from helpers import ScriptedChat, write_jsonl

from sciqag_dataset.builders.ingest import read_file
from sciqag_dataset.cli import main
from sciqag_dataset.core.wiring import PLAN
from sciqag_dataset.llm.budget import LEDGER
from sciqag_dataset.llm.cache import ResponseCache
from sciqag_dataset.orchestration.pipeline import sample_papers
from sciqag_dataset.orchestration.plan import measured_pace, requests_by_stage
from sciqag_dataset.orchestration.plan_client import read_only_cache

DEAD = "http://127.0.0.1:9/v1"  # nothing listens on the discard port: a request there would fail


def test_plan_counts_every_llm_stage_without_asking_a_model_or_writing_the_work_dir(tmp_path, capsys):
    work = tmp_path / "work"
    plan_file = tmp_path / "plan.json"
    args = ["run", "--work", str(work), "--judge-endpoint", DEAD, "--judge-model", "judge"]
    args += ["--judge-price-prompt-per-m", "2", "--judge-price-completion-per-m", "8", "--max-cost", "0.01"]
    assert main([*args, "--plan", "--plan-json", str(plan_file)]) == 0
    out = capsys.readouterr().out
    assert not work.exists()  # nothing written, not even the folder
    plan = json.loads(plan_file.read_text())
    assert len(plan["papers"]) == 5 and all(p["words"] > 1000 for p in plan["papers"])
    by = {(r["stage"], r["endpoint"]): r for r in plan["requests"]}
    # the embedded profile: a request for each question line and each answer line, six pairs a paper; the
    # released-format paper's seed pairs come from its file, so the teacher is asked about four papers
    assert by["seed", "teacher"]["requests"] == 4 * 6 * 2 and by["generate", "generator"]["requests"] == 5 * 6 * 2
    assert by["seed", "teacher"]["tokenizer"].startswith("HuggingFaceTB/SmolLM2-135M-Instruct tokenizer")
    # the judge (RACAR: one request per dimension and paper) at a dead URL: counted, never asked
    judge = by["evaluate", "judge"]
    assert judge["requests"] == 5 * 5 and judge["url"] == DEAD and judge["prompt_tokens"] > 5 * 5 * 500
    assert judge["tokenizer"].startswith("approximation")  # no tokenizer of a model named `judge` here
    cost = judge["prompt_tokens"] * 2 / 1e6 + judge["completion_tokens_estimate"] * 8 / 1e6
    assert abs(judge["cost"] - cost) < 1e-6 and by["seed", "teacher"]["cost"] is None
    assert plan["max_cost"]["stops_in"] == "evaluate" and 0 < plan["max_cost"]["requests_that_fit"] < 25
    assert "no price set" in out and "stops in evaluate" in out and "no model was called" in out
    # the plan is refused inside the work dir it must leave as it is
    assert main([*args, "--plan-json", str(work / "plan.json")]) == 2
    assert not work.exists()


CONFIG = {
    "stages": ["ingest", "keywords", "seed", "generate"],
    # the embedded model asked with the paper's prompt (one request a paper), shortened so the run is quick
    "embedded": {"profile": False},
    "teacher": {"max_tokens": 16},
    "generator": {"max_tokens": 16},
    "seed": {"context_tokens": 1400, "n_pairs": 3},
    "generate": {"context_tokens": 1400, "n_pairs": 3},
}


def test_the_plan_predicts_the_runs_requests_and_prompt_tokens(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the config's work dir, sciqag_work, is the run's: beside the config
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    plan_file = tmp_path / "plan.json"
    assert main(["run", str(config), "--plan-json", str(plan_file)]) == 0
    assert not (tmp_path / "sciqag_work").exists()
    run = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "run", str(config)],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    work = tmp_path / "sciqag_work"
    planned = requests_by_stage(json.loads(plan_file.read_text()))
    sent = {
        stage: json.loads((work / f"{output}_manifest.json").read_text())["usage"]
        for stage, output in (("seed", "seed"), ("generate", "generated"))
    }
    print({s: (planned[s], {k: sent[s][k] for k in ("requests", "prompt_tokens")}) for s in sent})
    for stage in sent:
        assert planned[stage]["requests"] == sent[stage]["requests"]
        assert (
            abs(planned[stage]["prompt_tokens"] - sent[stage]["prompt_tokens"]) <= 0.15 * sent[stage]["prompt_tokens"]
        )
    assert (work / LEDGER).exists()  # the run spent (the plan wrote no ledger: the work dir did not exist)
    # planned again after the run: nothing is left to send, and the time per request is measured (the replies, cut
    # at max_tokens, are not cached: from the stages' manifests)
    before = {p.name: p.stat().st_mtime_ns for p in work.iterdir()}
    assert main(["run", str(config), "--plan-json", str(plan_file)]) == 0
    again = json.loads(plan_file.read_text())
    assert all(r["requests"] == 0 for r in again["requests"])
    assert all(r["pace"]["seconds_per_request"] > 0 for r in again["requests"])
    assert {p.name: p.stat().st_mtime_ns for p in work.iterdir()} == before


def test_the_time_per_request_is_measured_from_the_replies_of_that_endpoint_in_the_cache(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for i in range(6):  # a remote endpoint answers every 2 s, the embedded server (loopback) every 5 s
        cache.put(f"r{i}", {"text": "x", "completion_tokens": 10, "endpoint": "http://api.example/v1"})
        cache.put(f"e{i}", {"text": "x", "completion_tokens": 50, "endpoint": "http://127.0.0.1:4321/v1"})
    cache.close()
    db = sqlite3.connect(tmp_path / "cache.sqlite")
    for i in range(6):
        db.execute("UPDATE responses SET created = ? WHERE key = ?", (1000 + 2 * i, f"r{i}"))
        db.execute("UPDATE responses SET created = ? WHERE key = ?", (5000 + 5 * i, f"e{i}"))
    db.execute("UPDATE responses SET created = 9000 WHERE key = 'e5'")  # a pause between runs: left out
    db.commit()
    db.close()  # the last connection closed: the cache is whole in its file, as a finished run leaves it
    rows = read_only_cache(tmp_path)
    assert measured_pace(rows, "http://api.example/v1") == {
        "from": "response cache",
        "replies": 6,
        "seconds_per_request": 2.0,
        "completion_tokens_per_s": 5.0,
    }
    assert measured_pace(rows, None)["seconds_per_request"] == 5.0
    assert measured_pace(rows, None)["completion_tokens_per_s"] == 10.0
    assert measured_pace(rows, "http://elsewhere/v1") is None and measured_pace(None, None) is None


# a plugin of three stages: the documented one (asks no model), and two asking the teacher, one with a plan hook
PLUGIN = textwrap.dedent(
    """
    from sciqag_dataset.core import records
    from sciqag_dataset.core.stage import Stage
    from sciqag_dataset.core.wiring import PAPERS, Wire
    from sciqag_dataset.examples import custom_pipeline_stage  # noqa: F401 - registers question_lengths
    from sciqag_dataset.orchestration.pipeline import Planned, register_stage


    def asking(name):
        def build(cfg, endpoints):
            client = endpoints.client(cfg.teacher, name)

            async def one(paper):
                reply = await client.chat([{"role": "user", "content": "Title of: " + paper["text"][:500]}])
                return {"id": paper["id"], "title": reply.text[:80]}

            return Stage(name=name, inputs=records.papers, process=one, output=name + ".jsonl", concurrency=4)

        return build


    register_stage(Wire("titled", "titled.jsonl", (PAPERS,), "teacher"), asking("titled"))
    register_stage(
        Wire("titled_again", "titled_again.jsonl", (PAPERS,), "teacher"),
        asking("titled_again"),
        plan=lambda cfg, endpoints: [Planned(asking("titled_again")(cfg, endpoints))],
    )
    """
)


def test_the_plan_walks_the_runs_steps_and_lists_a_plugin_stage_it_cannot_plan(tmp_path):
    (tmp_path / "title_plugin.py").write_text(PLUGIN)
    config = tmp_path / "config.yaml"
    stages = ["ingest", "keywords", "question_lengths", "titled", "titled_again"]
    config.write_text(
        yaml.safe_dump({"plugins": ["title_plugin"], "stages": stages, "teacher": {"url": DEAD, "model": "teacher"}})
    )
    plan_file = tmp_path / "plan.json"
    run = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "run", str(config), "--plan-json", str(plan_file)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    plan = json.loads(plan_file.read_text())
    assert {s["stage"]: s["planned"] for s in plan["steps"]} == {
        "ingest": "asks no model",
        "keywords": "asks no model",
        "question_lengths": "asks no model",
        "titled": "not planned (no plan hook)",
        "titled_again": "planned",
    }
    # the hooked stage is counted through its own code, one request a paper; the other is in no row, and says so
    (row,) = plan["requests"]
    assert (row["stage"], row["endpoint"], row["requests"], row["requests_most"]) == (
        "titled_again",
        "teacher",
        5,
        None,
    )
    assert "titled           not planned (no plan hook)" in run.stdout
    assert "question_lengths asks no model" in run.stdout


# the embedded default's profile: paced lines, a discarded one asked again
PACED = {"stages": ["ingest", "keywords", "seed", "publish"]}


def test_a_recorded_plan_ranges_the_paced_requests_and_the_card_compares_it_with_what_was_sent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(PACED))
    run = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "run", str(config), "--record-plan"],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    work = tmp_path / "sciqag_work"
    plan = json.loads((work / PLAN).read_text())
    (seed,) = [r for r in plan["requests"] if r["stage"] == "seed"]
    sent = json.loads((work / "seed_manifest.json").read_text())["usage"]
    print("seed requests planned", seed["requests"], "to", seed["requests_most"], "; sent", sent["requests"])
    # four papers asked (the fifth has released pairs): 6 pairs each, a question and an answer line a pair
    assert seed["requests"] == 4 * 6 * 2
    # at most: two chunks a paper, each with its discards at the limit, the first chunk's shortfall left to the second
    assert seed["requests_most"] == 4 * 22
    assert seed["requests"] <= sent["requests"] <= seed["requests_most"]
    assert f"{seed['requests']}–{seed['requests_most']}" in run.stdout
    card = (work / "dataset" / "README.md").read_text()
    line = f"| seed | {seed['requests']}–{seed['requests_most']} | {sent['requests']} | {seed['prompt_tokens']} | "
    assert "**Planned and sent**" in card and line + f"{sent['prompt_tokens']} | 0 / 0 |" in card


# a paper of our own with a methods and a results section, then captions and references the chunk filter drops
FILTERED_PAPER = [
    "Nickel foam electrodes were coated with iron-nickel layered double hydroxide by electrodeposition at -1.0 V "
    "for 300 s from a solution of nickel and iron nitrates in a 3 to 1 ratio, then rinsed and dried at 60 C. Their "
    "activity for oxygen evolution was measured in 1 M potassium hydroxide with a graphite counter electrode.",
    "The coated electrode reached 10 mA per square centimetre at an overpotential of 230 mV, 120 mV less than bare "
    "nickel foam, and its Tafel slope fell from 98 to 41 mV per decade, because iron sites in the hydroxide bind "
    "oxygen intermediates more weakly than nickel sites do. The current held within 5 percent over 50 hours.",
    "Figure 1. Polarisation curves of bare and coated nickel foam. Figure 2. Tafel plots of both electrodes. "
    "Table 1: Overpotentials at 10 and 100 mA per square centimetre.",
    "[1] L. Trotochaud, S. L. Young, J. K. Ranney and S. W. Boettcher, J. Am. Chem. Soc., 2014, 136, 6744. "
    "[2] M. Gong, Y. Li, H. Wang, Y. Liang and J. Z. Wu, J. Am. Chem. Soc., 2013, 135, 8452. "
    "[3] F. Dionigi and P. Strasser, Adv. Energy Mater., 2016, 6, 1600621.",
]


def fake_teacher(body: dict) -> str:
    """FAKE teacher: every chunk it judges useful (a line per passage), and the QA pairs a prompt asks for."""
    prompt = body["messages"][-1]["content"]
    if "numbered passages" in prompt:
        return "\n".join(f"{n}: useful" for n in re.findall(r"^Passage (\d+):", prompt, re.M))
    n = int(re.search(r"formulate (\d+) ", prompt)[1])
    return "\n".join(
        f"Q{i}: Which overpotential did electrode {i} need?\nA{i}: It needed 230 mV." for i in range(1, n + 1)
    )


@pytest.mark.parametrize("mode,requests", [("signals", 2), ("llm", 3)])
def test_the_plan_counts_the_requests_of_a_run_with_the_chunk_filter(tmp_path, mode, requests):
    work = tmp_path / "work"
    text = "\n\n".join(FILTERED_PAPER)
    paper = {"id": "ldh", "title": "Layered hydroxide anodes", "text": text, "source_format": "txt"}
    paper["sections"] = [{"heading": f"s{i}", "text": s} for i, s in enumerate(FILTERED_PAPER)]
    write_jsonl(work / "papers.jsonl", [paper])
    write_jsonl(work / "keywords.jsonl", [{"id": "ldh", "keywords": ["oxygen evolution"], "status": "ok"}])
    with ScriptedChat(fake_teacher) as fake:
        config = tmp_path / "config.yaml"
        seed = {"chunk_words": 120, "chunk_filter": mode, "n_pairs": 4, "use_existing_qa": False}
        teacher = {"url": fake.base_url, "model": "fake-teacher", "max_tokens": 256}
        config.write_text(
            yaml.safe_dump({"work_dir": str(work), "stages": ["seed"], "teacher": teacher, "seed": seed})
        )
        plan_file = tmp_path / "plan.json"
        assert main(["run", str(config), "--plan-json", str(plan_file)]) == 0
        assert not fake.requests  # the plan asked nothing
        assert main(["run", str(config)]) == 0
        sent = len(fake.requests)
    planned = requests_by_stage(json.loads(plan_file.read_text()))["seed"]["requests"]
    manifest = json.loads((work / "seed_manifest.json").read_text())
    # the two chunks left (the captions and the references dropped), a request each; the llm mode's check too
    assert planned == sent == manifest["usage"]["requests"] == requests
    assert manifest["chunk_filter"]["dropped"] == {"caption": 1, "references": 1}


COMPONENTS = Path(__file__).resolve().parents[1] / "fixtures" / "components"


def test_the_plan_counts_the_component_requests_the_run_then_sends(tmp_path):
    # the sample paper with a table and a figure, and the JATS and HTML fixtures (tables, equations, a figure)
    papers = [
        read_file(path)[0]
        for path in (
            Path(sample_papers()[0]) / "photocatalytic_tio2.xml",
            COMPONENTS / "jats_paper.xml",
            COMPONENTS / "html_paper.html",
        )
    ]
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": ["heat"], "status": "ok"} for p in papers])
    reply = "Q1: What was measured?\nA1: The rate of the reaction."
    with ScriptedChat(lambda body: reply) as fake:
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "work_dir": str(work),
                    "stages": ["seed"],
                    "teacher": {"url": fake.base_url, "model": "teacher"},
                    "seed": {"n_pairs": 1, "components": {"table": 2, "equation": 1, "figure": 1}},
                }
            )
        )
        plan_file = tmp_path / "plan.json"
        assert main(["run", str(config), "--plan-json", str(plan_file)]) == 0
        assert fake.requests == []  # planned without a request
        assert main(["run", str(config)]) == 0
    planned = requests_by_stage(json.loads(plan_file.read_text()))["seed"]["requests"]
    sent = json.loads((work / "seed_manifest.json").read_text())["usage"]["requests"]
    # a request for each paper's prose, and one per component asked: the sample's table and figure, the JATS
    # paper's two tables, an equation and its figure, the HTML paper's two tables and its figure
    assert planned == sent == len(fake.requests) == 3 + 2 + 4 + 3
