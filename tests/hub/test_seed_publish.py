"""Seed stage against a real server, the `datasets` builder, and the published folder."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import datasets
import pytest
import yaml
from helpers import MATERIALS, FakeHfApi, read_jsonl, write_jsonl

from sciqag_dataset.builders import seed
from sciqag_dataset.builders.seed import seed_one
from sciqag_dataset.config.config_file import Config, SeedConfig
from sciqag_dataset.core.pair_ids import pair_id
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.hub.dataset_builder import SciQAG, split_of
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.hub.upload import push_to_hub
from sciqag_dataset.llm import LLMClient, ResponseCache
from sciqag_dataset.llm.server import LocalServer
from sciqag_dataset.qa.prompts import fit_to_context


def run_seed(work, client, cfg):
    return run_stage(seed.stage(client, cfg), work)


TOPICS = MATERIALS


def paper(i: int, text: str | None = None, **extra) -> dict:
    topic = TOPICS[i % len(TOPICS)]
    body = text or (
        f"We grew {topic} samples at {400 + 10 * i} C for {i + 2} h. The {topic} reached "
        f"{1.5 + i / 10:.1f} eV and a conductivity of {i + 1}.2 S/cm."
    )
    return {
        "id": f"paper-{i:02d}",
        "title": f"A study of {topic} {i}",
        "text": body,
        "sections": [],
        "source_format": "txt",
        "source_path": f"/papers/{i}.txt",
        "content_hash": f"h{i}",
        "metadata": {"doi": f"10.5555/test.{i}", "license": "cc-by-4.0"},
        "existing_qa": [],
        **extra,
    }


def make_work(tmp_path: Path, n: int = 4) -> Path:
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [paper(i) for i in range(n)])
    write_jsonl(
        work / "keywords.jsonl",
        [{"id": f"paper-{i:02d}", "keywords": [TOPICS[i], "conductivity"], "status": "ok"} for i in range(n)],
    )
    return work


def client_for(server, work: Path, **kw) -> LLMClient:
    return LLMClient(
        server.base_url,
        server.model,
        params={"max_tokens": kw.pop("max_tokens", 12), "temperature": 0.6, "top_p": 0.9},
        cache=ResponseCache(work / "cache.sqlite"),
        max_retries=kw.pop("max_retries", 2),
        backoff=0.05,
        **kw,
    )


def test_fit_to_context():
    text = "para one\n" * 500
    pieces, warns = fit_to_context(text, 1000, "truncate")
    assert len(pieces) == 1 and len(pieces[0]) <= 1000 and "truncated" in warns[0]
    pieces, warns = fit_to_context(text, 1000, "chunk")
    assert "".join(pieces) == text and all(len(p) <= 1000 for p in pieces) and "chunks" in warns[0]
    assert fit_to_context("short", 1000, "truncate") == (["short"], [])


def test_seed_records_every_paper_and_resumes_from_cache(tiny_server, tmp_path):
    work = make_work(tmp_path)
    cfg = SeedConfig(n_pairs=10, context_tokens=2048)
    client = client_for(tiny_server, work)
    s = run_seed(work, client, cfg)
    recs = read_jsonl(work / "seed.jsonl")
    assert sorted(r["id"] for r in recs) == [f"paper-{i:02d}" for i in range(4)]
    for r in recs:
        # the tiny model writes no QA: the reply is kept raw with the reason, not dropped
        assert r["status"] == "unparsed" and r["raw_output"] is not None and r["error"]
        assert r["completion_tokens"] > 0 and r["prompt_style"] == "paper"
    assert s.counts["unparsed"] == 4 and client.usage.requests == 4

    again = client_for(tiny_server, work)
    s2 = run_seed(work, again, cfg)
    assert s2.counts["skipped"] == 4 and again.usage.requests == 0  # finished papers are not re-sent


def test_a_deleted_output_is_rebuilt_from_the_cache(says_server, tmp_path):
    # says_server's replies are complete: the tiny random model's always stop at max_tokens, and a reply
    # cut short is never cached
    work = make_work(tmp_path)
    cfg = SeedConfig(n_pairs=10, context_tokens=2048)
    first = client_for(says_server, work, max_tokens=40)
    run_seed(work, first, cfg)
    assert first.usage.requests == 4
    (work / "seed.jsonl").unlink()
    third = client_for(says_server, work, max_tokens=40)
    run_seed(work, third, cfg)
    assert third.usage.requests == 0 and third.usage.cached == 4  # the cache proves it


def test_long_paper_is_truncated_with_a_warning(tiny_server, tmp_path):
    long_text = "\n".join(f"Sentence {i} about lattice strain of 0.{i}% in the film." for i in range(3000))
    client = client_for(tiny_server, tmp_path)
    rec = asyncio.run(
        seed_one(
            {**paper(0, long_text), "keywords": ["strain"]},
            client,
            SeedConfig(context_tokens=2048, chars_per_token=1.0),
        )
    )  # tiny BPE vocab
    assert any("truncated" in w for w in rec["warnings"])
    assert rec["prompt_tokens"] < 2048


def test_existing_qa_is_kept_without_asking(tiny_server, tmp_path):
    qa = [{"question": f"Q{i}?", "answer": f"A{i}.", "origin": "released"} for i in range(10)]
    client = client_for(tiny_server, tmp_path)
    rec = asyncio.run(seed_one({**paper(1, existing_qa=qa), "keywords": []}, client, SeedConfig()))
    assert rec["qa"] == qa and rec["status"] == "ok" and rec["model"] == "released"
    assert client.usage.requests == 0


def test_server_down_at_start_records_failures_and_rerun_finishes(tiny_model_dir, tmp_path):
    work = make_work(tmp_path, n=3)
    server = LocalServer(tiny_model_dir)  # not started yet
    client = client_for(server, work, max_retries=1)
    s = run_seed(work, client, SeedConfig(context_tokens=2048))
    assert s.failed == 3
    assert all(r["status"] == "failed" and "APIConnectionError" in r["error"] for r in read_jsonl(work / "seed.jsonl"))
    with server:
        s2 = run_seed(work, client_for(server, work), SeedConfig(context_tokens=2048))
    assert s2.failed == 0 and s2.counts["unparsed"] == 3


def test_server_dying_mid_run_loses_nothing(tiny_model_dir, tmp_path):
    work = make_work(tmp_path, n=8)
    server = LocalServer(tiny_model_dir).start()
    out = work / "seed.jsonl"

    def kill_after_first_record():
        deadline = time.time() + 120
        while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
            time.sleep(0.05)
        server.stop()

    killer = threading.Thread(target=kill_after_first_record)
    killer.start()
    # the same request settings as the rerun's below: a finished paper is skipped only for the same settings
    client = LLMClient(
        server.base_url,
        server.model,
        params={"max_tokens": 12, "temperature": 0.6, "top_p": 0.9},
        concurrency=1,
        cache=ResponseCache(work / "cache.sqlite"),
        max_retries=1,
        backoff=0.05,
    )
    s = run_seed(work, client, SeedConfig(context_tokens=2048))
    killer.join()
    assert s.failed >= 1 and s.counts["unparsed"] >= 1
    done_first = {r["id"] for r in read_jsonl(out) if r["status"] != "failed"}

    with LocalServer(tiny_model_dir) as again:  # a new server on another port
        c2 = client_for(again, work)
        s2 = run_seed(work, c2, SeedConfig(context_tokens=2048))
    assert s2.counts["skipped"] == len(done_first) and s2.failed == 0
    assert c2.usage.requests == 8 - len(done_first)
    latest = {r["id"]: r["status"] for r in read_jsonl(out)}
    assert len(latest) == 8 and "failed" not in latest.values()


def seeded_work(tmp_path: Path, n: int = 12) -> Path:
    """A work dir whose seed.jsonl holds parsed teacher pairs (written as a teacher would)."""
    work = make_work(tmp_path, n=min(n, len(TOPICS)))
    recs = []
    for i in range(n):
        qa = [
            {
                "question": f"Why does {TOPICS[i]} sample {i} change at step {k}?",
                "answer": f"Because of effect {k}, measured at {k}.5 eV.",
                "origin": "teacher",
            }
            for k in range(10)
        ]
        recs.append(
            {
                "id": f"paper-{i:02d}",
                "qa": qa,
                "status": "ok" if i % 5 else "short",
                "model": "teacher-x",
                "prompt_style": "paper",
                "raw_output": "...",
            }
        )
    # a later line wins: paper-11's latest reply could not be parsed
    recs.append({"id": "paper-11", "qa": [], "status": "unparsed", "raw_output": "gibberish", "error": "none"})
    write_jsonl(work / "seed.jsonl", recs)
    return work


def test_builder_splits_are_paper_level_and_deterministic(tmp_path):
    work = seeded_work(tmp_path)
    builder = SciQAG(config_name="seed", data_dir=str(work), cache_dir=str(tmp_path / "cache"))
    builder.download_and_prepare()
    dsd = builder.as_dataset()
    ids = {split: set(dsd[split]["id"]) for split in dsd}
    all_ids = [i for s in ids.values() for i in s]
    assert len(all_ids) == len(set(all_ids)) == 11  # paper-11 is unparsed: excluded
    for split, members in ids.items():
        assert all(split_of(i) == split for i in members)
    row = dsd["train"][0]
    assert row["output"].startswith("Keywords:") and "Q1:" in row["output"]
    assert [m["role"] for m in row["messages"]][-1] == "assistant"
    assert row["input"].startswith("We grew")
    assert dsd["train"].features["qa"] == datasets.List(
        {
            "question": datasets.Value("string"),
            "answer": datasets.Value("string"),
            "origin": datasets.Value("string"),
            "grounding": {"kind": datasets.Value("string"), "component_id": datasets.Value("string")},
            "pair_id": datasets.Value("string"),
        }
    )
    # every published pair carries its stable id: the paper id and a hash of the question; these pairs were
    # written without a grounding, and load with none
    for pair in row["qa"]:
        assert pair["pair_id"] == pair_id(row["id"], pair["question"]) and pair["grounding"] is None


def test_publish_folder_loads_with_load_dataset(tmp_path):
    work = seeded_work(tmp_path)
    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed", "papers"]
    out = write_folder(work, tmp_path / "pub", cfg)
    ds = datasets.load_dataset(str(out), "seed")
    assert sum(len(d) for d in ds.values()) == 11
    assert set(ds) <= {"train", "validation", "test"}
    papers = datasets.load_dataset(str(out), "papers")
    assert sum(len(d) for d in papers.values()) == 12
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"] for c in front["configs"]} == {"seed", "papers"}
    assert front["license"] == "cc-by-4.0"
    assert "arXiv:2405.09939" in card and "| unparsed | 1 |" in card
    # republishing replaces the folder whole
    write_folder(work, out, cfg)
    # the folder holds the publish and the project's ownership marker (hidden; not uploaded)
    assert sorted(p.name for p in out.iterdir()) == [".sciqag.json", "README.md", "papers", "seed"]


def test_push_uploads_the_same_folder(tmp_path):
    api = FakeHfApi()
    url = push_to_hub(tmp_path, "me/sciqag", private=True, api=api)
    assert url.endswith("commit/1")
    assert api.calls[0] == ("create_repo", "me/sciqag", {"repo_type": "dataset", "private": True, "exist_ok": True})
    assert api.calls[1][2]["folder_path"] == str(tmp_path) and api.calls[1][2]["repo_type"] == "dataset"


def test_config_refuses_keys_and_unknown_options(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("teacher:\n  api_key: sk-abc\n")
    with pytest.raises(ValueError, match="environment variable"):
        Config.load(bad)
    bad.write_text("teacher:\n  modle: x\n")
    with pytest.raises(ValueError, match="unknown option"):
        Config.load(bad)
    ok = tmp_path / "ok.yaml"
    ok.write_text("teacher:\n  url: http://localhost:8080/v1\n  model: m\nseed:\n  n_pairs: 5\n")
    cfg = Config.load(ok)
    assert cfg.seed.n_pairs == 5 and cfg.teacher.url.endswith("/v1")
    cfg.save(tmp_path / "saved.yaml")
    assert Config.load(tmp_path / "saved.yaml") == cfg
    assert "sk-" not in (tmp_path / "saved.yaml").read_text()


def test_example_config_documents_the_defaults():
    from importlib import resources

    example = resources.files("sciqag_dataset.examples").joinpath("sciqag.yaml")
    with resources.as_file(example) as path:
        assert Config.load(path) == Config()


def test_evaluated_config_and_quality_section(tmp_path):
    """coverage + numeric need no endpoint; their columns are published one row per QA pair."""
    from sciqag_dataset.config.config_file import EvaluateConfig
    from sciqag_dataset.evaluation.evaluate import run_evaluate
    from sciqag_dataset.evaluation.filter import filter_pairs

    work = seeded_work(tmp_path)
    run_evaluate(work, EvaluateConfig(metrics=["coverage", "numeric"]))
    cfg = Config(work_dir=str(work))
    out = write_folder(work, tmp_path / "pub", cfg)
    front = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert {c["config_name"] for c in front["configs"]} == {"seed", "evaluated"}
    rows = [r for split in datasets.load_dataset(str(out), "evaluated").values() for r in split]
    assert len(rows) == 110  # 11 usable papers x 10 pairs
    assert all(r["context"] and r["chunk_rate"] is not None for r in rows)
    assert {r["paper_id"] for r in rows} == {f"paper-{i:02d}" for i in range(11)}
    card = (out / "README.md").read_text()
    assert "## Quality" in card and "RACAR was not run" in card and "(plots/coverage_histogram.png)" in card
    assert (out / "plots" / "coverage_histogram.png").stat().st_size > 1000

    kept = filter_pairs(work, min_numeric_ratio=0.5)["kept"]
    out = write_folder(work, tmp_path / "pub", cfg)
    assert sum(len(d) for d in datasets.load_dataset(str(out), "evaluated").values()) == kept < 110
    assert f"`sciqag filter` kept {kept} of 110 pairs" in (out / "README.md").read_text()


def test_publish_without_any_usable_record_is_a_clear_error(tmp_path):
    work = make_work(tmp_path, n=2)
    write_jsonl(
        work / "seed.jsonl",
        [
            {"id": "paper-00", "status": "unparsed", "qa": [], "raw_output": "?"},
            {"id": "paper-01", "status": "failed", "error": "boom"},
        ],
    )
    with pytest.raises(ValueError, match="no config has usable records"):
        write_folder(work, tmp_path / "pub", Config(work_dir=str(work)))


def test_card_renders_when_metrics_have_no_value(tmp_path):
    """One paper with one pair: no question pairs for diversity, so several figures are None."""
    from sciqag_dataset.config.config_file import EvaluateConfig
    from sciqag_dataset.evaluation.evaluate import run_evaluate

    work = make_work(tmp_path, n=1)
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": "paper-00",
                "status": "short",
                "model": "gen",
                "qa": [{"question": "Why anneal the film?", "answer": "Grain growth.", "origin": "generator"}],
            }
        ],
    )
    run_evaluate(work, EvaluateConfig())
    out = write_folder(work, tmp_path / "pub", Config(work_dir=str(work)))
    card = (out / "README.md").read_text()
    assert "mean pairwise similarity n/a" in card and "0 % of answers contain" in card
