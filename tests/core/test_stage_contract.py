"""The stage contract, for every per-paper stage: two shards and a merge equal one unsharded run, and a
changed input redoes just that record. Real parts throughout: spaCy + pke, the packaged MiniLM, a real
`transformers serve` (``says_server``: complete, deterministic replies) as teacher, generator and judge."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import write_jsonl

from sciqag_dataset.builders import generate, keywords, seed
from sciqag_dataset.config.config_file import GenerateConfig, SeedConfig
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.runner import in_shard, merge_shards, run_stage, shard_files
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation import coverage, diversity, numeric, racar
from sciqag_dataset.evaluation import filter as filtering
from sciqag_dataset.evaluation.merge import merge_evaluation
from sciqag_dataset.llm import LLMClient

TOPICS = [
    "sodium layered oxide cathode",
    "halide perovskite film",
    "nickel iron hydroxide catalyst",
    "garnet solid electrolyte",
    "zeolite membrane",
    "bismuth telluride thermoelectric",
]


def paper(i: int) -> dict:
    t = TOPICS[i]
    text = (
        f"The {t} was prepared at {400 + 25 * i} C for {i + 2} hours. Its performance improved by {10 + i} % "
        f"after annealing. Grain growth at 450 C raised the density of the {t}. We measured a band gap of "
        f"{1.1 + i / 10:.1f} eV and a conductivity of {i + 3}.5 S/cm. The {t} kept 90 % of its capacity."
    )
    return {"id": f"paper-{i}", "title": f"A study of the {t}", "text": text}  # ids in both of 2 shards


@pytest.fixture(scope="module")
def base(tmp_path_factory, says_server) -> Path:
    """A work directory that has been through every per-paper stage once (its inputs for the next)."""
    work = tmp_path_factory.mktemp("contract") / "work"
    write_jsonl(work / "papers.jsonl", [paper(i) for i in range(len(TOPICS))])
    for stage in stages(says_server):
        run_stage(stage, work, progress=False)
        if stage.name == "racar":
            merge_evaluation(work, plots=False)
    return work


def client(server) -> LLMClient:
    return LLMClient(server.base_url, server.model, params={"max_tokens": 40, "temperature": 0.0})


def stages(server) -> list:
    qa_cfg = {"n_pairs": 1, "context_tokens": 2048, "chars_per_token": 1.0}
    return [
        keywords.stage(n=5, workers=1),
        seed.stage(client(server), SeedConfig(**qa_cfg)),
        generate.stage(client(server), GenerateConfig(prompt_style="paper", **qa_cfg)),
        numeric.stage(),
        coverage.stage(),
        diversity.stage(),
        racar.stage([client(server)], max_attempts=1, context_tokens=2048, chars_per_token=1.0),
        filtering.stage(drop_source_references=True, min_numeric_ratio=0.5),
    ]


def outputs(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in iter_latest(path)}


@pytest.mark.parametrize(
    "name", ["keywords", "seed", "generate", "numeric", "coverage", "diversity", "racar", "filter"]
)
def test_two_shards_and_a_merge_equal_one_run(base, says_server, tmp_path, name):
    stage = next(s for s in stages(says_server) if s.name == name)
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    for work in (whole, sharded):
        shutil.copytree(base, work)
        (work / stage.output_file).unlink()
    run_stage(stage, whole, progress=False)
    for i in range(2):
        run_stage(next(s for s in stages(says_server) if s.name == name), sharded, shard=(i, 2), progress=False)
    shards = shard_files(sharded, stage.output_file)
    assert len(shards) == 2 and all(outputs(p) for p in shards)  # both slices hold papers
    merge_shards(sharded, stage.output_file)
    assert outputs(sharded / stage.output_file) == outputs(whole / stage.output_file)
    assert len(outputs(whole / stage.output_file)) == len(TOPICS)


def test_a_changed_paper_is_redone_in_every_stage_and_nothing_else(base, says_server, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(base, work)
    edited = paper(2)
    edited["text"] += " A new sentence: the film was 2 um thick."
    with (work / "papers.jsonl").open("a") as f:
        f.write(json.dumps(edited) + "\n")  # what ingest writes for a changed source (the newer line wins)
    model_calls = {}
    for stage in stages(says_server):
        before = outputs(work / stage.output_file)
        if stage.name == "filter":
            merge_evaluation(work, plots=False)  # the filter reads the merged rows
        summary = run_stage(stage, work, progress=False)
        assert summary.counts["skipped"] == len(TOPICS) - 1, (stage.name, summary.counts)
        after = outputs(work / stage.output_file)
        assert [pid for pid in after if after[pid]["fingerprint"] != before[pid]["fingerprint"]] == ["paper-2"], (
            stage.name
        )
        if stage.describe:  # the LLM stages: their clients count what they asked
            described = stage.describe()
            usages = [j["usage"] for j in described["judges"]] if "judges" in described else [described["usage"]]
            model_calls[stage.name] = sum(u["requests"] + u["cached"] for u in usages)
    # one paper: one teacher call, one generator call, five judge calls (one per RACAR dimension)
    assert model_calls == {"seed": 1, "generate": 1, "racar": 5}


@pytest.mark.e2e
def test_an_edited_paper_is_redone_by_sciqag_run_and_nothing_else(says_server, tmp_path):
    """The whole pipeline through the CLI: edit one source file, rerun, and count what was asked again."""
    papers = tmp_path / "papers"
    papers.mkdir()
    for i in range(3):
        p = paper(i)
        (papers / f"{p['id']}.txt").write_text(f"{p['title']}\n\nDOI: 10.5555/contract.{i}\n\n{p['text']}\n")
    endpoint = {"url": says_server.base_url, "model": says_server.model, "max_tokens": 40}
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "work_dir": str(tmp_path / "work"),
                "inputs": [str(papers)],
                "keywords": {"n": 5, "workers": 1},
                "teacher": endpoint,
                "generator": endpoint,
                "judge": endpoint,
                "seed": {"n_pairs": 1, "context_tokens": 2048, "chars_per_token": 1.0},
                "generate": {"n_pairs": 1, "context_tokens": 2048, "chars_per_token": 1.0, "prompt_style": "paper"},
                "evaluate": {"max_attempts": 1, "context_tokens": 2048, "chars_per_token": 1.0, "plots": False},
            }
        )
    )
    work = tmp_path / "work"

    def run() -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "sciqag_dataset.cli", "run", str(config)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        manifests = [json.loads(m.read_text()) for m in work.glob("*_manifest.json")]
        return {m["stage"]: m for m in manifests}

    first = run()
    assert first["seed"]["usage"]["requests"] == 3 and first["racar"]["counts"] == {"unjudged": 3}
    edited = papers / "paper-1.txt"
    edited.write_text(edited.read_text().replace("band gap", "optical band gap"))
    second = run()
    ingest = json.loads((work / "ingest_report.json").read_text())["counts"]
    assert (ingest["updated"], ingest["skipped"]) == (1, 2)
    for stage in ("keywords", "seed", "generate", "numeric", "coverage", "diversity", "racar"):
        counts = second[stage]["counts"]
        assert counts.get("skipped") == 2 and sum(counts.values()) == 3, (stage, counts)
    assert second["seed"]["usage"]["requests"] == 1 and second["generate"]["usage"]["requests"] == 1
    # One paper, five dimensions: the prompts that do not show the paper's text are answered from the cache.
    usage = second["racar"]["judges"][0]["usage"]
    assert usage["requests"] + usage["cached"] == 5 and usage["requests"] >= 1


def test_resume_reads_the_latest_line_of_each_record_and_keeps_no_records(tmp_path):
    """What a rerun skips: a record whose latest line is finished with the same fingerprint; a failure after a
    finished line, an older fingerprint or a line that is not JSON are redone or ignored. The runner keeps
    hashes, never the records (bench/runner.py measures the memory)."""
    from sciqag_dataset.core.runner import Finished

    out = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"id": "a", "status": "ok", "fingerprint": "f1", "qa": ["x" * 1000]},
            {"id": "b", "status": "ok", "fingerprint": "f1"},
            {"id": "b", "status": "failed", "error": "boom"},
            {"id": "c", "status": "failed", "error": "boom"},
            {"id": "c", "status": "short", "fingerprint": "f2"},
            {"id": "d", "status": "ok", "fingerprint": "old"},
            {"id": "d", "status": "ok", "fingerprint": "new"},
        ],
    )
    with out.open("a") as f:
        f.write("{not json\n")
    done = Finished(out)
    assert [
        done.has(i, fp)
        for i, fp in [("a", "f1"), ("a", "f2"), ("b", "f1"), ("c", "f2"), ("d", "old"), ("d", "new"), ("e", "f1")]
    ] == [True, False, False, True, False, True, False]
    assert [done.has_id(i) for i in "abcde"] == [True, True, True, True, False]
    assert done.duplicates == 3 and len(done) == 3
    assert len(Finished(tmp_path / "absent.jsonl")) == 0


class _Version:
    """A stage function whose output names the version of the code that wrote it; one id can be made to stop the
    run (as a dead server does), after the records before it."""

    def __init__(self, v: int, stop_at: str | None = None):
        self.v, self.stop_at = v, stop_at

    def __call__(self, rec: dict) -> dict:
        if rec["id"] == self.stop_at:
            raise KeyboardInterrupt  # not a record's failure: the run stops here
        return {"id": rec["id"], "status": "ok", "v": self.v}


def _papers(n: int):
    return lambda work: iter([{"id": f"p{i}"} for i in range(n)])


@pytest.mark.parametrize("interrupted", [False, True])
def test_a_sharded_rerun_never_lets_a_merge_restore_an_older_line(tmp_path, interrupted):
    """Shard 0 ran with v1 (its file holds v1 lines); then an unsharded v2 run finished everything. A rerun of
    shard 0 skips its records (finished in the unsharded output) and copies their v2 lines into the shard file,
    so that a merge keeps v2: also when that rerun stops early."""
    params = {"v": 1}
    run_stage(
        Stage(name="s", inputs=_papers(12), process=_Version(1), params=params), tmp_path, shard=(0, 2), progress=False
    )
    run_stage(Stage(name="s", inputs=_papers(12), process=_Version(2), params={"v": 2}), tmp_path, progress=False)
    shard_ids = [r["id"] for r in iter_latest(tmp_path / "s.shard-0-of-2.jsonl")]
    assert shard_ids
    # one new paper in shard 0 whose processing stops the rerun
    new = next(f"p{i}" for i in range(12, 100) if in_shard(f"p{i}", 0, 2))
    stage = Stage(
        name="s",
        inputs=lambda work: iter([{"id": f"p{i}"} for i in range(12)] + [{"id": new}]),
        process=_Version(2, stop_at=new if interrupted else None),
        params={"v": 2},
    )
    if interrupted:
        with pytest.raises(KeyboardInterrupt):
            run_stage(stage, tmp_path, shard=(0, 2), progress=False)
    else:
        assert run_stage(stage, tmp_path, shard=(0, 2), progress=False).counts["skipped"] == len(shard_ids)
    merge_shards(tmp_path, "s.jsonl")
    assert {r["id"]: r["v"] for r in iter_latest(tmp_path / "s.jsonl") if r["id"] != new} == {
        f"p{i}": 2 for i in range(12)
    }


def test_a_resume_with_nothing_to_do_leaves_the_output_as_it_is(tmp_path):
    stage = Stage(name="s", inputs=_papers(5), process=_Version(1))
    run_stage(stage, tmp_path, progress=False)
    out = tmp_path / "s.jsonl"
    before = out.stat()
    assert run_stage(stage, tmp_path, progress=False).counts["skipped"] == 5
    assert out.stat().st_ino == before.st_ino and out.stat().st_mtime_ns == before.st_mtime_ns  # not rewritten
    with out.open("a") as f:  # a line a killed run left twice is compacted away by the next resume
        f.write(out.read_text().splitlines()[0] + "\n")
    run_stage(stage, tmp_path, progress=False)
    assert len(out.read_text().splitlines()) == 5
