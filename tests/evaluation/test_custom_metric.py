"""A metric of one's own (examples/custom_metric.py) through the CLI as a user runs it: its column reaches
evaluated.jsonl, the published `evaluated` config (typed) and the card, and `sciqag filter` drops by its rule."""

from __future__ import annotations

import json
import subprocess
import sys

import datasets
import pytest
import yaml
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.config.config_file import Config, FilterConfig
from sciqag_dataset.core import metrics

PLUGIN = "sciqag_dataset.examples.custom_metric"
QUESTIONS = {  # words per question: 4, 12; 4, 14
    "p1": ["Why anneal the film?", "What band gap did the annealed titania film reach after two hours?"],
    "p2": [
        "Which dopant was used?",
        "How does the conductivity of the sodium cathode change when the sample is heated?",
    ],
}


def sciqag(*args: str, cwd) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def make_work(tmp_path):
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl",
        [
            {
                "id": pid,
                "title": f"Paper {pid}",
                "text": "The film reached 3.2 eV after 2 h at 450 C.",
                "metadata": {"doi": f"10.5555/{pid}"},
            }
            for pid in QUESTIONS
        ],
    )
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": pid,
                "status": "ok",
                "model": "gen",
                "qa": [{"question": q, "answer": "3.2 eV.", "origin": "generator"} for q in qs],
            }
            for pid, qs in QUESTIONS.items()
        ],
    )
    return work


def test_plugin_metric_reaches_evaluated_rows_published_config_card_and_filter(tmp_path):
    work = make_work(tmp_path)
    sciqag("evaluate", str(work), "--plugins", PLUGIN, "--metrics", "numeric,question_words", cwd=tmp_path)
    rows = read_jsonl(work / "evaluated.jsonl")
    assert {(r["question"].split()[0], r["question_words"]) for r in rows} == {
        ("Why", 4),
        ("What", 12),
        ("Which", 4),
        ("How", 14),
    }
    assert {r["paper_id"]: r["mean_question_words"] for r in rows} == {"p1": 8.0, "p2": 9.0}
    assert all(r["numeric_ratio"] == 1.0 for r in rows)  # a built-in metric beside it is unchanged
    summary = json.loads((work / "evaluation_summary.json").read_text())
    assert summary["question_words"] == {"questions": 4, "mean": 8.5, "longest": 14}
    assert summary["metrics"]["question_words"]["merged"] == 2

    # the rule reads the plugin's column; the plugin comes back through --plugins
    (tmp_path / "filter.yaml").write_text(
        yaml.safe_dump({"work_dir": str(work), "filter": {"thresholds": {"max_question_words": 12}}})
    )
    sciqag("filter", "--config", str(tmp_path / "filter.yaml"), "--plugins", PLUGIN, cwd=tmp_path)
    kept = read_jsonl(work / "filtered.jsonl")
    assert sorted(r["question_words"] for r in kept) == [4, 4, 12]
    assert json.loads((work / "filter_summary.json").read_text())["rules_described"] == [
        "questions of at most 12 words"
    ]

    # publish needs no plugin: the summary records the rows' columns, so the config is typed without it
    sciqag("publish", str(work), cwd=tmp_path)
    out = work / "dataset"
    ds = datasets.load_dataset(str(out), "evaluated")
    split = next(iter(ds.values()))
    assert split.features["question_words"] == datasets.Value("int32")
    assert split.features["mean_question_words"] == datasets.Value("float32")
    assert sorted(n for s in ds.values() for n in s["question_words"]) == [4, 4, 12]
    card = (out / "README.md").read_text()
    assert "**Question length**: 8.50 words per question on average, 14 at most." in card
    assert "- questions of at most 12 words" in card

    # the rule as a flag of `sciqag filter`; the plugin named by WORK/config.yaml (saved by evaluate), no --plugins
    sciqag("filter", str(work), "--max-question-words", "4", cwd=tmp_path)
    assert sorted(r["question_words"] for r in read_jsonl(work / "filtered.jsonl")) == [4, 4]
    assert json.loads((work / "filter_summary.json").read_text())["rules_described"] == [
        "questions of at most 4 words"
    ]


def test_a_plugin_option_and_rule_are_keys_of_the_config_file_like_a_built_in_metrics(tmp_path):
    """`plugins:` in the file: the plugin's option is an `evaluate:` key and its rule a `filter:` key, read and
    checked like a built-in's."""
    work = make_work(tmp_path)
    config = tmp_path / "sciqag.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "work_dir": str(work),
                "plugins": [PLUGIN],
                "evaluate": {"metrics": ["question_words"], "question_word_min_length": 4},
                "filter": {"max_question_words": 3},
            }
        )
    )
    sciqag("evaluate", "--config", str(config), cwd=tmp_path)
    rows = read_jsonl(work / "evaluated.jsonl")
    # words of at least 4 letters: "Why anneal the film?" has 2
    assert sorted(r["question_words"] for r in rows) == [2, 3, 8, 8]
    assert json.loads((work / "question_words_manifest.json").read_text())["params"] == {"min_length": 4}
    sciqag("filter", "--config", str(config), cwd=tmp_path)
    assert sorted(r["question_words"] for r in read_jsonl(work / "filtered.jsonl")) == [2, 3]

    cfg = Config.load(config)  # the plugin is imported: its option and rule are fields of their sections
    assert cfg.evaluate.question_word_min_length == 4 and cfg.filter.max_question_words == 3
    option = next(o for o in metrics.rule_options() if o.name == "max_question_words")
    assert (option.type, option.default, option.help) == (
        int | None,
        None,
        "maximum words per question (the question_words metric)",
    )
    cfg.filter.max_question_words = 0
    with pytest.raises(Exception, match="filter.max_question_words must be at least 1, got 0"):
        cfg.validate()
    cfg.filter.max_question_words, cfg.evaluate.question_word_min_length = None, "four"
    with pytest.raises(Exception, match="evaluate.question_word_min_length must be an integer, got 'four'"):
        cfg.validate()
    config.write_text(yaml.safe_dump({"plugins": [PLUGIN], "evaluate": {"question_word_min_lenght": 4}}))
    with pytest.raises(Exception, match="did you mean evaluate.question_word_min_length"):
        Config.load(config)
    with pytest.raises(Exception, match="filter.thresholds: unknown filter rule 'max_question_word' .did you mean"):
        Config(filter=FilterConfig(thresholds={"max_question_word": 3})).validate()


def test_an_unknown_metric_or_plugin_is_refused_before_any_work(tmp_path):
    work = make_work(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "evaluate", str(work), "--metrics", "question_words"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and "unknown metric 'question_words'" in proc.stderr
    assert "racar, diversity, coverage, numeric" in proc.stderr
    with pytest.raises(Exception, match="plugin 'no_such_plugin_module' cannot be imported"):
        Config(plugins=["no_such_plugin_module"]).validate()
    assert not (work / "evaluated.jsonl").exists()


def test_a_metric_is_refused_a_name_or_column_already_taken():
    import sciqag_dataset.evaluation  # noqa: F401  (registers the built-ins)

    numeric = metrics.get_metric("numeric")
    with pytest.raises(ValueError, match="already registered"):
        metrics.register(metrics.Metric(name="numeric", build=lambda ctx: None))
    with pytest.raises(ValueError, match=r"column\(s\) \['coverage'\] already belong to 'coverage'"):
        metrics.register(metrics.Metric(name="mine", build=lambda ctx: None, paper_columns={"coverage": None}))
    with pytest.raises(ValueError, match="identifier"):
        metrics.register(metrics.Metric(name="features", build=lambda ctx: None))
    assert metrics.register(numeric) is numeric and "mine" not in metrics.NAMES  # the same one again is harmless
    assert [m.name for m in metrics.run_order(["racar", "numeric", "diversity", "coverage"])] == [
        "numeric",
        "coverage",
        "diversity",
        "racar",
    ]  # cheapest first
