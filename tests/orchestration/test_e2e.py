"""End to end with the real parts: `sciqag run` on the shipped sample papers with the embedded
SmolLM2-135M-Instruct server, then `load_dataset` on the published folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import datasets
import pytest
import yaml

from sciqag_dataset.qa import small_model

pytestmark = pytest.mark.e2e


def sciqag(*args, cwd, env=None, timeout=1500):
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# `sciqag run`, then which training libraries the process imported: DeepSpeed and TRL take seconds to import
# and only `sciqag train` needs them (PEFT is not checked: sentence-transformers imports transformers' trainer
# utilities, which import it wherever it is installed)
RUN_AND_LIST_TRAINING_IMPORTS = """import sys
from sciqag_dataset.cli import main
status = main(["run"])
print("training libraries imported:", sorted({"deepspeed", "trl"} & set(sys.modules)))
sys.exit(status)
"""


def test_run_on_the_embedded_default(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": "sk-never-written-anywhere-0123456789abcdef"}
    # README's command: no config, no endpoint; the embedded local model serves teacher and generator
    proc = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_TRAINING_IMPORTS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "training libraries imported: []" in proc.stdout
    work = tmp_path / "sciqag_work"
    out = work / "dataset"
    assert "Published" in proc.stdout
    # the summary at the end says what came out, how long each stage took, and which backend answered
    summary = proc.stdout[proc.stdout.index("\nSummary") :]
    assert "seed      5 papers" in summary and re.search(r"\d+ papers? with 5 or more", summary)
    assert "model     embedded SmolLM2-135M-Instruct on llama.cpp (Q4_1, " in summary
    assert all(f"{stage} " in summary for stage in ("ingest", "keywords", "seed", "generate", "evaluate", "publish"))
    # the pairs of the embedded 135M model are called demo quality, with what to do for real data
    assert "quality   seed, generate: the embedded SmolLM2-135M-Instruct" in summary and "`teacher:`" in summary
    assert re.search(r"seed      .*; the model saw \d+% of the papers' words", summary)

    papers = [json.loads(line) for line in (work / "papers.jsonl").read_text().splitlines()]
    assert len(papers) == 5 and {p["source_format"] for p in papers} == {"md", "jats", "txt", "sciqag-json"}
    seed = {json.loads(line)["id"]: json.loads(line) for line in (work / "seed.jsonl").read_text().splitlines()}
    assert set(seed) == {p["id"] for p in papers}  # every paper is accounted for, none dropped
    assert all(r["status"] in {"ok", "short", "unparsed"} for r in seed.values())
    released = [r for r in seed.values() if r["model"] == "released"]
    assert len(released) == 1 and len(released[0]["qa"]) == 10
    asked = [r for r in seed.values() if r["model"] != "released"]
    assert all(r["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and r["raw_output"] for r in asked)
    # the profile's parse rate on the real model: the paper's prompt gave it 0-3 pairs of 10 per paper;
    # paced, it gives ~5.6 of 6 (bench/embedded.py). A floor well under that, so sampling cannot fail it
    assert sum(len(r["qa"]) for r in asked) >= 3 * len(asked)
    # a published pair comes from its paper: none shares more with the prompt's worked example (steel
    # corrosion, which no sample paper is about) than with the paper
    text = {p["id"]: p["text"] for p in papers}
    leaked = [
        (r["id"], qa["question"])
        for r in asked
        for qa in r["qa"]
        if small_model.off_passage(qa["question"], qa["answer"], text[r["id"]])
    ]
    assert not leaked
    assert not any("corrosion" in qa["question"].lower() + qa["answer"].lower() for r in asked for qa in r["qa"])

    ds = datasets.load_dataset(str(out), "seed")
    rows = [row for split in ds.values() for row in split]
    usable = [r for r in seed.values() if r["status"] in {"ok", "short"}]
    assert len(rows) == len(usable) >= 1
    for row in rows:
        assert row["messages"][-1]["role"] == "assistant" and row["output"].startswith("Keywords:")
        assert row["qa"] and all(qa["question"] and qa["answer"] for qa in row["qa"])

    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["configs"][0]["config_name"] == "seed"
    manifest = json.loads((work / "seed_manifest.json").read_text())
    # the embedded profile asks about two ~300-word chunks of each (~1,500-word) sample paper, a request
    # for each question and each answer
    assert manifest["usage"]["requests"] >= 2 * sum(len(r["qa"]) for r in asked)
    assert all(any("asked about 2 of " in w and "chunks of ~300 words" in w for w in r["warnings"]) for r in asked)
    assert all(0 < r["seen_share"] < 1 and r["seen_words"] < r["paper_words"] for r in asked)
    assert "> **Demo data** (the `seed` and `generated` configs): the embedded SmolLM2-135M-Instruct" in card
    # the card says what the run did: the pairs the profile asked for, and an untuned generator as such
    made = card[card.index("## How it was made") :]
    assert made.count(f"{manifest['settings']['n_pairs']} pairs requested per paper") == 2
    assert "used as it is (no `sciqag train` record" in made
    for path in [
        out / "README.md",
        work / "config.yaml",
        work / "seed_manifest.json",
        work / "generated_manifest.json",
    ]:
        assert "sk-never-written" not in path.read_text()

    # the generator (the same embedded model here) wrote a record for every paper
    generated = [json.loads(line) for line in (work / "generated.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in generated) == sorted(p["id"] for p in papers)
    assert all(r["status"] in {"ok", "short", "unparsed", "incomplete"} for r in generated)
    # evaluation ran without a judge (coverage, numeric, embedding diversity) when any pair was usable
    if any(r["status"] in {"ok", "short"} for r in generated):
        evaluated = datasets.load_dataset(str(out), "evaluated")
        row = next(iter(evaluated.values()))[0]
        assert row["question"] and row["context"] and row["racar_mean"] is None
        assert "## Quality" in card

    # a rerun resumes: nothing is asked again and the same dataset comes out
    again = sciqag("run", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads((work / "seed_manifest.json").read_text())["usage"]["requests"] == 0
    assert json.loads((work / "generated_manifest.json").read_text())["usage"]["requests"] == 0
    assert "5 skipped" in again.stdout
    assert "Starting the embedded" not in again.stderr  # nothing left to ask: no server was started
