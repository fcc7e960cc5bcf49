"""The evaluation stage: metrics merged into one row per QA pair, summary, plots, filtering, CLI.

Real parts only: the packaged all-MiniLM-L6-v2, the session's `transformers serve` tiny model as a
(gibberish) judge, the real runner files. Expected values are worked out by hand from the texts below.
"""

from __future__ import annotations

import json
import logging

import datasets
import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import EvaluateConfig, FilterConfig
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.records import qa_hash
from sciqag_dataset.core.schema import RACAR_DIMENSIONS, evaluated_features
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.evaluation.evaluated_pairs import pair_verdict
from sciqag_dataset.evaluation.filter import filter_pairs
from sciqag_dataset.evaluation.merge import merge_evaluation, stale_reason
from sciqag_dataset.llm import JudgeEndpointConfig, LLMClient
from sciqag_dataset.orchestration.pipeline import committee

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# --- a work directory of three papers, written for these tests ---------------------------------------

SODIUM = """Layered sodium oxides are attractive cathodes because sodium is abundant and cheap.
Their weakness is a phase transition at high voltage that cracks the particles.
We substituted a small amount of titanium for manganese in the transition-metal layer.
The substituted cathode delivered 142 mAh/g in the first cycle.
After 500 cycles at 0.5 C it kept 91 % of its initial capacity.
The unsubstituted cathode kept only 58 % under the same conditions.
Diffraction during charging showed that the interlayer spacing grew from 5.3 to 5.6 angstrom.
No new phase appeared in the substituted material at the top of charge.
Titanium ions stay in the layer and pin the oxygen stacking in place.
Electron microscopy found far fewer cracks in cycled substituted particles.
The sodium diffusion coefficient was close to that of the pristine oxide.
We conclude that a small titanium content stabilises the layered structure.
Larger titanium contents lowered the capacity because titanium is electrochemically inactive.
"""

PEROVSKITE = """Halide perovskite solar cells degrade quickly in humid air.
Water molecules enter the film along grain boundaries and hydrate the lattice.
We coated the films with a thin layer of a fluorinated ammonium salt.
The coating made the surface hydrophobic, with a water contact angle of 104 degrees.
Uncoated films turned yellow within 40 hours at 85 % relative humidity.
Coated films kept their dark colour for more than 600 hours under the same conditions.
The power conversion efficiency of coated cells was 21.3 % at the start.
After 1,000 hours of storage in air the coated cells retained 90 % of that efficiency.
Photoluminescence lifetimes increased after coating, which points to passivated surface defects.
The salt does not penetrate deep into the film, so the bulk absorption is unchanged.
Thicker coatings blocked charge extraction and lowered the fill factor.
"""

CATALYST = """Nickel iron hydroxides are among the best catalysts for oxygen evolution in alkaline water.
Their activity depends strongly on the iron content of the layers.
We grew the hydroxide directly on nickel foam by a two-step electrodeposition.
The best film needed an overpotential of 230 mV to reach 10 mA per square centimetre.
Its Tafel slope was 38 mV per decade, lower than that of iridium oxide.
Raman spectra showed that the surface turned into an oxyhydroxide during operation.
Iron sites in this oxyhydroxide are thought to be the active centres.
The electrode ran for 100 hours without a measurable loss of activity.
Iron slowly leached into the electrolyte when no iron was added to it.
Adding a trace of iron to the electrolyte kept the composition of the film stable.
"""

QA = {
    "p1": [
        {
            "question": "How well did the titanium-substituted sodium cathode retain capacity on cycling?",
            "answer": "After 500 cycles at 0.5 C it kept 91 % of its initial capacity.",
            "origin": "teacher",
        },
        {
            "question": "How did the interlayer spacing change during charging?",
            "answer": "It grew from 5.3 to 5.6 angstrom, and the voltage plateau sat near 3.4 V.",
            "origin": "teacher",
        },
        {
            "question": "What does Figure 2 show about the phase transition?",
            "answer": "Titanium substitution suppresses the phase transition that cracks the particles.",
            "origin": "teacher",
        },
    ],
    "p2": [
        {
            "question": "Why do halide perovskite films degrade in humid air?",
            "answer": "Water enters along grain boundaries and hydrates the lattice.",
            "origin": "teacher",
        },
        {
            "question": "How long did coated films survive at high humidity?",
            "answer": "More than 600 hours at 85 % relative humidity, against 40 hours uncoated.",
            "origin": "teacher",
        },
        {
            "question": "What efficiency did the coated cells reach?",
            "answer": "21.3 % at the start, and 92 % of it was retained after 1,000 hours.",
            "origin": "teacher",
        },
    ],
    "p3": [
        {
            "question": "What overpotential did the best nickel iron hydroxide film need?",
            "answer": "230 mV to reach 10 mA per square centimetre.",
            "origin": "teacher",
        },
        {
            "question": "Which sites are thought to be active in the oxyhydroxide?",
            "answer": "The iron sites of the oxyhydroxide formed during operation.",
            "origin": "teacher",
        },
        {
            "question": "How stable was the electrode?",
            "answer": "It ran for 100 hours without loss; a trace of iron in the electrolyte kept the film stable.",
            "origin": "teacher",
        },
    ],
}
# Numbers by hand (distinct, in order; "unsupported" = not in the paper's text):
NUMERIC = {
    ("p1", 0): (["500", "0.5", "91"], [], 1.0),
    ("p1", 1): (["5.3", "5.6", "3.4"], ["3.4"], 2 / 3),
    ("p1", 2): ([], [], None),
    ("p2", 0): ([], [], None),
    ("p2", 1): (["600", "85", "40"], [], 1.0),
    ("p2", 2): (["21.3", "92", "1000"], ["92"], 2 / 3),
    ("p3", 0): (["230", "10"], [], 1.0),
    ("p3", 1): ([], [], None),
    ("p3", 2): (["100"], [], 1.0),
}
TEXTS = {
    "p1": ("Titanium-stabilised layered sodium oxide cathodes", SODIUM, "10.1234/na.1"),
    "p2": ("A hydrophobic salt coating for humid-air perovskite cells", PEROVSKITE, "10.1234/pv.2"),
    "p3": ("Nickel iron hydroxide electrodes for oxygen evolution", CATALYST, None),
}


def make_work(tmp_path):
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl",
        [{"id": pid, "title": t, "text": text, "metadata": {"doi": doi}} for pid, (t, text, doi) in TEXTS.items()],
    )
    write_jsonl(
        work / "seed.jsonl",
        [{"id": pid, "qa": qa, "status": "ok", "keywords": [f"kw {pid}"]} for pid, qa in QA.items()],
    )
    return work


def rows_by_key(path):
    rows = read_jsonl(path)
    return {(r["paper_id"], [p["question"] for p in QA[r["paper_id"]]].index(r["question"])): r for r in rows}


def is_png(path) -> bool:
    data = path.read_bytes()
    return data.startswith(PNG_MAGIC) and len(data) > 2000


# --- metrics that need no LLM ----------------------------------------------------------------------


def test_no_llm_metrics_merge_summary_plots_and_resume(tmp_path):
    work = make_work(tmp_path)
    cfg = EvaluateConfig(metrics=["coverage", "numeric", "diversity"])
    summaries = run_evaluate(work, cfg)  # no endpoint anywhere
    assert {m: s.counts["ok"] for m, s in summaries.items()} == {"coverage": 3, "numeric": 3, "diversity": 3}

    path = work / "evaluated.jsonl"
    rows = read_jsonl(path)
    assert len(rows) == 9 and all(list(r) == list(evaluated_features()) for r in rows)  # exactly the schema, in order
    by = rows_by_key(path)
    assert [k for k in by] == [(p, i) for p in ("p1", "p2", "p3") for i in range(3)]  # paper order, pair order
    for key, (numbers, unsupported, ratio) in NUMERIC.items():
        r = by[key]
        assert (r["numbers"], r["unsupported_numbers"]) == (numbers, unsupported), key
        assert r["numeric_ratio"] == (None if ratio is None else pytest.approx(ratio)), key
    first = by["p1", 0]
    assert (first["title"], first["doi"], first["keywords"], first["origin"]) == (
        TEXTS["p1"][0],
        "10.1234/na.1",
        ["kw p1"],
        "teacher",
    )
    assert by["p3", 0]["doi"] is None
    # the agnosticism regex needs no judge: "Figure 2" is flagged
    assert [by["p1", i]["refers_to_source"] for i in range(3)] == [False, False, True]
    # no judge ran: RACAR is empty, never a made-up value
    assert all(r[d] is None for r in rows for d in RACAR_DIMENSIONS) and all(r["racar_mean"] is None for r in rows)
    assert first["racar_reasons"] == {d: None for d in RACAR_DIMENSIONS}

    coverage = {r["id"]: r for r in read_jsonl(work / "coverage.jsonl")}
    diversity = {r["id"]: r for r in read_jsonl(work / "diversity.jsonl")}
    for (pid, i), r in by.items():
        assert r["coverage"] == pytest.approx(coverage[pid]["paper_metrics"]["coverage"])
        assert r["chunk_rate"] == pytest.approx(coverage[pid]["pair_metrics"][i]["chunk_rate"])
        assert r["context"] == coverage[pid]["pair_metrics"][i]["context"] and len(r["context"]) == 3
        assert all(sentence in TEXTS[pid][1] for sentence in r["context"])
        div = diversity[pid]["pair_metrics"][i]["max_question_similarity"]
        assert r["max_question_similarity"] == pytest.approx(div)
        assert r["diversity_mean"] == pytest.approx(diversity[pid]["paper_metrics"]["diversity_mean"])
    # the evidence of the capacity answer is the capacity sentence
    assert by["p1", 0]["context"][0] == "After 500 cycles at 0.5 C it kept 91 % of its initial capacity."

    ds = datasets.Dataset.from_json(str(path), features=evaluated_features())
    assert ds.num_rows == 9 and ds.features == evaluated_features()
    assert datasets.Dataset.from_list(rows, features=evaluated_features()).num_rows == 9

    summary = json.loads((work / "evaluation_summary.json").read_text())
    assert (summary["papers"], summary["pairs"], summary["source"]) == (3, 9, "seed")
    assert summary["metrics"]["coverage"] == {"merged": 3, "stale": 0, "failed": 0, "absent": 0}
    assert summary["metrics"]["racar"] == {"merged": 0, "stale": 0, "failed": 0, "absent": 3}
    assert summary["racar"] is None
    # numeric by hand: 6 of 9 answers have numbers; 15 numbers, 2 unsupported
    assert summary["numeric"] == {
        "answers": 9,
        "answers_with_numbers": 6 / 9,
        "numbers": 15,
        "supported_ratio": 13 / 15,
    }
    cov = summary["coverage"]
    assert cov["definition"] == "released" and cov["papers"] == 3
    assert cov["coverage"] == pytest.approx(sum(c["info"]["coverage_released"] for c in coverage.values()) / 3)
    assert cov["coverage_eq1"] == pytest.approx(
        sum(c["info"]["coverage_eq1"] for c in coverage.values()) / 3, abs=1e-4
    )
    assert set(summary["diversity"]["bins"]) == {"<0.3", "0.3-0.5", "0.5-0.7", ">0.7", "mean"}
    assert summary["diversity"]["pairs"] == 9  # 3 question pairs per paper

    plots = summary["plots"]
    assert set(plots) == {
        "question_similarity",
        "answer_sentence_similarity",
        "coverage_histogram",
        "chunk_rate_histogram",
    }
    assert [s["paper_id"] for s in plots["question_similarity"]] == ["p1", "p2", "p3"]
    for rel in [s["path"] for s in plots["question_similarity"]] + [
        plots["answer_sentence_similarity"]["path"],
        plots["coverage_histogram"],
    ]:
        assert is_png(work / rel), rel

    # resume: nothing is recomputed; switching the coverage definition needs no recomputation
    again = run_evaluate(work, EvaluateConfig(metrics=["coverage", "numeric"], coverage_definition="eq1", plots=False))
    assert again["coverage"].counts["skipped"] == 3 and again["numeric"].counts["skipped"] == 3
    eq1 = rows_by_key(path)
    assert eq1["p2", 0]["coverage"] == pytest.approx(coverage["p2"]["info"]["coverage_eq1"])
    assert json.loads((work / "evaluation_summary.json").read_text())["plots"] == {}


def test_clear_errors_before_anything_runs(tmp_path):
    work = make_work(tmp_path)
    with pytest.raises(ValueError, match="RACAR needs a judge"):
        run_evaluate(work, EvaluateConfig(metrics=["numeric", "racar"]))
    with pytest.raises(ValueError, match="'llm' needs a judge"):
        run_evaluate(work, EvaluateConfig(metrics=["diversity"], diversity="llm"))
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        run_evaluate(work, EvaluateConfig(metrics="numeric,bleu"))
    with pytest.raises(ValueError, match="unknown combine mode"):
        run_evaluate(work, EvaluateConfig(metrics=["numeric"], combine="median"))
    assert not (work / "numeric.jsonl").exists()  # nothing ran
    with pytest.raises(FileNotFoundError, match="generated.jsonl not found"):
        run_evaluate(work, EvaluateConfig(metrics=["numeric"], source="generated"))
    with pytest.raises(FileNotFoundError, match="sciqag evaluate"):
        filter_pairs(work, min_racar=2)


# --- the judge: the session's tiny model writes gibberish ------------------------------------------


def test_racar_and_llm_diversity_against_tiny_server(tiny_server, tmp_path):
    work = make_work(tmp_path)
    judge = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 8, "temperature": 0.0})
    cfg = EvaluateConfig(metrics=["racar", "diversity"], diversity="llm", max_attempts=1, context_tokens=2048)
    summaries = run_evaluate(work, cfg, [judge])
    # 5 RACAR calls per paper (one per dimension, all pairs at once) + 3 question pairs per paper
    assert judge.usage.requests == 3 * 5 + 3 * 3
    assert [r["judge_calls"] for r in read_jsonl(work / "racar.jsonl")] == [5, 5, 5]
    assert summaries["racar"].counts["unjudged"] == 3 and summaries["diversity"].counts["unjudged"] == 3

    rows = read_jsonl(work / "evaluated.jsonl")
    assert len(rows) == 9
    for r in rows:  # unusable replies are recorded as missing, with the reply, never as a score
        assert all(r[d] is None for d in RACAR_DIMENSIONS) and r["racar_mean"] is None
        assert all("missing" in r["racar_reasons"][d] for d in RACAR_DIMENSIONS)
        assert r["max_question_similarity"] is None and r["diversity_mean"] is None
        assert r["coverage"] is None and r["context"] == []  # not run
    assert datasets.Dataset.from_list(rows, features=evaluated_features()).num_rows == 9
    summary = json.loads((work / "evaluation_summary.json").read_text())
    assert summary["racar"]["judge_calls_per_paper"] == 5
    assert all(summary["racar"]["dimensions"][d]["missing"] == 9 for d in RACAR_DIMENSIONS)
    assert summary["diversity"]["missing_pairs"] == 9 and "question_similarity" not in summary["plots"]
    assert is_png(work / summary["plots"]["racar_distribution"])

    # the authors' rule keeps nothing it cannot check: every pair is missing a score
    result = filter_pairs(work, authors_test_set=True)
    assert (result["kept"], result["dropped"], result["missing"]) == (0, 1, 8)  # p1 Q3 cites "Figure 2"

    # resume: a second run asks the judge nothing
    fresh = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 8, "temperature": 0.0})
    again = run_evaluate(work, cfg, [fresh])
    assert fresh.usage.requests == 0 and again["racar"].counts["skipped"] == 3


# --- filtering on hand-written scores ----------------------------------------------------------------


def _racar_record(pid, scores):
    pms = []
    for i, s in enumerate(scores):
        m = dict(zip(RACAR_DIMENSIONS, s))
        present = [v for v in s if v is not None]
        m["racar_mean"] = sum(present) / len(present) if present else None
        m["racar_reasons"] = {d: "hand-written" for d in RACAR_DIMENSIONS}
        m["refers_to_source"] = "Figure" in QA[pid][i]["question"]
        pms.append(m)
    return {
        "id": pid,
        "status": "ok",
        "pair_metrics": pms,
        "paper_metrics": {"judge_agreement": None},
        "judge_calls": 5,
        "judges": ["hand"],
        "combine": "mean",
        "judge_scores": {"hand": {d: [s[k] for s in scores] for k, d in enumerate(RACAR_DIMENSIONS)}},
    }


#           relevance, agnosticism, completeness, accuracy, reasonableness
SCORES = {
    "p1": [(3, 3, 3, 3, 3), (3, 1, 3, 3, 3), (3, 3, 3, 3, 3)],  # mean 3, 2.6, 3 (Q3 cites "Figure 2")
    "p2": [(3, 3, 2, 3, 3), (2.5, 3, 3, 3, 3), (3, 3, 3, None, 3)],  # 2.8, 2.9, accuracy missing
    "p3": [(1, 1, 1, 1, 1), (3, 3, 3, 3, 2), (None,) * 5],  # 1, 2.8, unjudged
}


def _kept(work):
    return sorted(rows_by_key(work / "filtered.jsonl"))


def test_filter_exact_rows_on_hand_written_scores(tmp_path, caplog):
    work = make_work(tmp_path)
    write_jsonl(work / "racar.jsonl", [_racar_record(pid, s) for pid, s in SCORES.items()])
    run_evaluate(work, EvaluateConfig(metrics=["numeric"], plots=False))  # merges the hand RACAR too
    rows = rows_by_key(work / "evaluated.jsonl")
    assert rows["p2", 1]["relevance"] == 2.5 and rows["p2", 2]["racar_mean"] == 3.0
    assert rows["p2", 2]["accuracy"] is None

    r = filter_pairs(work, min_racar=2.5)  # needs all five scores: p2 Q3 and p3 Q3 are missing
    assert (r["pairs"], r["kept"], r["dropped"], r["missing"]) == (9, 6, 1, 2)
    assert _kept(work) == [("p1", 0), ("p1", 1), ("p1", 2), ("p2", 0), ("p2", 1), ("p3", 1)]
    assert r["missing_by_rule"] == {"min_racar": 2} and r["failed_by_rule"] == {"min_racar": 1}

    r = filter_pairs(work, authors_test_set=True)  # 3 everywhere but agnosticism, no source reference
    assert _kept(work) == [("p1", 0), ("p1", 1)]
    assert (r["kept"], r["dropped"], r["missing"]) == (2, 5, 2)

    r = filter_pairs(work, min_dims={"accuracy": 3}, drop_source_references=True)
    assert _kept(work) == [("p1", 0), ("p1", 1), ("p2", 0), ("p2", 1), ("p3", 1)]
    assert (r["dropped"], r["missing"]) == (2, 2)  # p1 Q3 (Figure 2), p3 Q1; p2 Q3 and p3 Q3 unscored

    r = filter_pairs(work, min_numeric_ratio=1.0)  # answers without numbers pass
    assert _kept(work) == sorted(k for k, (_, _, ratio) in NUMERIC.items() if ratio in (None, 1.0))
    assert r["failed_by_rule"] == {"min_numeric_ratio": 2}

    with pytest.raises(UserError, match="min_chunk_rate needs coverage scores"):  # coverage never ran
        filter_pairs(work, min_chunk_rate=0.1)
    r = filter_pairs(work, min_chunk_rate=0.1, allow_missing=True)  # asked for: nobody passes, all counted missing
    assert (r["kept"], r["missing"]) == (0, 9)
    assert json.loads((work / "filter_summary.json").read_text())["rules"]["min_chunk_rate"] == 0.1

    # the same rules from a config section
    assert FilterConfig(min_accuracy=3, drop_source_references=True).rules()["min_dims"] == {"accuracy": 3}
    assert pair_verdict(rows["p3", 0], min_racar=2, min_dims={"relevance": 2}) == (["min_racar", "min_relevance"], [])
    with pytest.raises(ValueError, match="unknown RACAR dimension"):
        filter_pairs(work, min_dims={"clarity": 2})
    with pytest.raises(ValueError, match="no filter rule"):
        filter_pairs(work)

    # QA regenerated for p3 (2 pairs now): its old metric records are left out, not misaligned ...
    with (work / "seed.jsonl").open("a") as f:
        f.write(json.dumps({"id": "p3", "qa": QA["p3"][:2], "status": "ok"}) + "\n")
    with caplog.at_level(logging.WARNING):
        merge_evaluation(work, plots=False)
    assert "do not fit their paper's current QA pairs" in caplog.text
    rows = rows_by_key(work / "evaluated.jsonl")
    assert len(rows) == 8 and rows["p3", 0]["relevance"] is None
    assert rows["p3", 0]["numbers"] == [] and rows["p1", 0]["relevance"] == 3
    summary = json.loads((work / "evaluation_summary.json").read_text())
    assert summary["metrics"]["racar"]["stale"] == 1 and summary["metrics"]["numeric"]["stale"] == 1
    assert summary["racar"]["pairs"] == 6  # the summary covers exactly the merged records
    # ... and the next run recomputes the metrics it runs
    assert run_evaluate(work, EvaluateConfig(metrics=["numeric"], plots=False))["numeric"].counts["ok"] == 1
    rows = rows_by_key(work / "evaluated.jsonl")
    assert rows["p3", 0]["numbers"] == ["230", "10"] and rows["p3", 0]["relevance"] is None


def test_stale_reasons():
    qa = QA["p1"]
    fits = {"pair_metrics": [{}] * 3, "qa_hash": qa_hash(qa), "qa_source": "seed"}
    assert stale_reason(fits, qa, "seed") is None
    assert stale_reason({**fits, "pair_metrics": [{}] * 2}, qa, "seed") == "2 pair metrics for 3 QA pairs"
    assert "different QA pairs" in stale_reason({**fits, "qa_hash": qa_hash(QA["p2"])}, qa, "seed")
    assert "seed QA pairs, not generated" in stale_reason(fits, qa, "generated")
    assert stale_reason({"status": "failed"}, qa, "seed") == "it has no pair metrics"


# --- the CLI ---------------------------------------------------------------------------------------


def _run(*argv) -> int:
    return main([str(a) for a in argv])


def test_committee_flags_pair_endpoints_with_models():
    base = JudgeEndpointConfig(url="http://a/v1", model="m")
    assert base.temperature == 0.0
    extra = [JudgeEndpointConfig(url="http://x/v1", model="x")]
    assert committee(base, extra, None, None) == [base, *extra]
    assert [j.model for j in committee(base, [], None, ["n"])] == ["n"]
    two = committee(base, extra, ["http://b/v1", "http://c/v1"], ["mb", "mc"])  # flags replace the config's
    assert [(j.url, j.model, j.temperature) for j in two] == [("http://b/v1", "mb", 0.0), ("http://c/v1", "mc", 0.0)]
    assert [j.model for j in committee(base, [], ["http://b/v1", "http://c/v1"], ["k"])] == ["k", "k"]
    assert [j.model for j in committee(base, [], ["http://b/v1"], None)] == ["m"]
    with pytest.raises(ValueError, match="2 --judge-model values for 3"):
        committee(base, [], ["u1", "u2", "u3"], ["a", "b"])
    # YAML judges (mappings) become judge endpoints, temperature 0 unless given
    cfg = EvaluateConfig(
        judges=[{"url": "http://y/v1", "model": "y"}, {"url": "http://z/v1", "model": "z", "temperature": 0.2}]
    )
    assert [j.temperature for j in cfg.judges] == [0.0, 0.2]


def test_cli_evaluate_and_filter(tiny_server, tmp_path, capsys):
    work = make_work(tmp_path)
    assert _run("evaluate", work, "--metrics", "numeric", "--no-plots") == 0
    out = capsys.readouterr().out
    assert "Evaluated 9 QA pairs of 3 papers (seed)" in out and "66.7% of answers have numbers" in out
    assert "86.7% of their 15 numbers occur in the paper" in out

    # a committee of two judges on the tiny server, through the CLI's endpoint resolution
    url, model = tiny_server.base_url, tiny_server.model
    assert (
        _run(
            "evaluate",
            work,
            "--metrics",
            "racar,diversity",
            "--diversity",
            "llm",
            "--judge-endpoint",
            url,
            "--judge-endpoint",
            url,
            "--judge-model",
            model,
            "--judge-max-tokens",
            8,
            "--max-attempts",
            1,
            "--context-tokens",
            2048,
            "--combine",
            "min",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "RACAR (" in out and "10 calls/paper" in out and "missing 9" in out
    recs = read_jsonl(work / "racar.jsonl")
    assert [r["judge_calls"] for r in recs] == [10] * 3 and all(len(r["judges"]) == 2 for r in recs)
    assert all(r["combine"] == "min" for r in recs)

    assert _run("filter", work, "--min-numeric-ratio", 1, "--drop-source-references") == 0
    out = capsys.readouterr().out
    assert "filter: 9 pairs -> 6 kept, 3 dropped, 0 missing" in out
    assert len(read_jsonl(work / "filtered.jsonl")) == 6
    assert _run("filter", work, "--min-racar", 2.5) == 0
    assert "0 kept, 0 dropped, 9 missing" in capsys.readouterr().out
