"""RACAR judge committee: prompts, tolerant parsing, combining, and runs against real servers.

Parsing and combining are checked on judge replies written here, with exact expected scores. Runs
use the real `transformers serve` (tiny random model: its gibberish exercises the fallback parser,
the retries and the "missing, never invented" path). One fake is used where no real part can run
here: ``ScriptedJudge``, a loopback OpenAI-style endpoint that answers with replies written in this
file and can reject ``response_format`` with a 400, as some servers do (transformers serve ignores
the field, and no judge able to write the exact replies runs on this machine).
"""

from __future__ import annotations

import json

import pytest
from helpers import ScriptedJudge, read_jsonl, write_jsonl

from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.evaluation import racar
from sciqag_dataset.evaluation.judge_prompts import build_racar_messages, racar_response_format
from sciqag_dataset.evaluation.judgements import combine_scores, judge_agreement, parse_judgements, valid_score
from sciqag_dataset.evaluation.racar import racar_summary
from sciqag_dataset.llm import LLMClient, ResponseCache

PAIRS = [
    {
        "question": "Why does cobalt doping stabilise the layered cathode?",
        "answer": "Cobalt suppresses cation mixing, so the layers stay ordered over 300 cycles.",
        "origin": "teacher",
    },
    {"question": "What does Figure 2 show?", "answer": "It shows the capacity after cycling.", "origin": "teacher"},
]
PAPER_TEXT = (
    "We prepared layered sodium cathodes with 5 % cobalt substitution.\n"
    "Cobalt suppressed cation mixing and the cells kept 91 % of their capacity after 300 cycles."
)


def run_racar(work, judges, **options):
    return run_stage(racar.stage(judges, **options), work)


def make_work(tmp_path, n_papers=2, pairs=PAIRS):
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl",
        [{"id": f"p{i}", "title": f"Cathode study {i}", "text": PAPER_TEXT} for i in range(n_papers)],
    )
    write_jsonl(work / "seed.jsonl", [{"id": f"p{i}", "qa": pairs, "status": "ok"} for i in range(n_papers)])
    return work


# --- prompts ----------------------------------------------------------------------------------------


def test_each_dimension_sees_what_the_paper_gives_it():
    """Appendix B: Relevance the paper and the questions, Agnosticism the questions only, Completeness and
    Accuracy the paper and the pairs, Reasonableness the paper and the answers as statements."""
    content = {d: build_racar_messages(d, PAIRS, PAPER_TEXT, "Cathode study")[0]["content"] for d in RACAR_DIMENSIONS}
    q, a = PAIRS[0]["question"], PAIRS[0]["answer"]
    for d in ("completeness", "accuracy"):
        assert q in content[d] and a in content[d] and "91 % of their capacity" in content[d]
    rel, agn, rea = content["relevance"], content["agnosticism"], content["reasonableness"]
    assert q in rel and a not in rel and "91 % of their capacity" in rel  # paper + questions
    assert q in agn and a not in agn and "91 %" not in agn  # questions only
    assert a in rea and q not in rea and "91 % of their capacity" in rea and "S1: " in rea  # paper + statements
    assert "figure or table" in agn and "scores 1" in agn
    assert "unrelated to the paper scores 1" in rel and "contradiction, scores 1" in rea
    for text in content.values():
        assert "list of dictionaries" in text and "'score'" in text and "'reasons'" in text
        assert "one for each of the 2" in text
    retry = build_racar_messages("accuracy", PAIRS, PAPER_TEXT, retry_problem="expected 2 judgements, found 1")
    assert "expected 2 judgements, found 1" in retry[0]["content"]
    assert retry != build_racar_messages("accuracy", PAIRS, PAPER_TEXT)  # so the retry is not the cached call
    schema = racar_response_format("accuracy")["json_schema"]["schema"]
    assert schema["properties"]["judgements"]["items"]["properties"]["score"]["enum"] == [1, 2, 3]


# --- parsing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, scores, reasons",
    [
        (
            '[{"score": 3, "reasons": "on topic"}, {"score": 1, "reasons": "needs Figure 2"}]',
            [3, 1],
            ["on topic", "needs Figure 2"],
        ),
        (
            "```json\n[{'score': 2, 'reasons': \"doesn't say why\"}, {'score': 3, 'reasons': 'clear'},]\n```",
            [2, 3],
            ["doesn't say why", "clear"],
        ),
        ('{"judgements": [{"score": 3, "reasons": "a"}, {"score": "2", "reasons": "b"}]}', [3, 2], ["a", "b"]),
        ('Sure:\n{"score": 3.0, "reasons": "a"},\n{"score": "1/3", "reason": "b"}\nThat is all.', [3, 1], ["a", "b"]),
        (
            "Q1: Score: 2, Reasons: vague.\nQ2: Score: 3, Reasons: precise, self-contained.",
            [2, 3],
            ["vague.", "precise, self-contained."],
        ),
        ("**Score:** 3\n**Reasons:** good\n\n**Score:** 1\n**Reasons:** bad", [3, 1], ["good", "bad"]),
        (
            '<think>score: 1 maybe</think>{"Q1": {"score": 1, "reasons": "x"}, "Q2": {"score": 2, "reasons": "y"}}',
            [1, 2],
            ["x", "y"],
        ),
    ],
)
def test_parser_reads_the_usual_reply_shapes(reply, scores, reasons):
    parsed = parse_judgements(reply, 2)
    assert parsed.problem is None
    assert [i["score"] for i in parsed.items] == scores and [i["reasons"] for i in parsed.items] == reasons


def test_parser_never_invents_or_clamps():
    out_of_range = parse_judgements('[{"score": 5, "reasons": "x"}, {"score": 2, "reasons": "y"}]', 2)
    assert [i["score"] for i in out_of_range.items] == [None, 2] and "5" in out_of_range.problem
    wrong_count = parse_judgements('[{"score": 3, "reasons": "x"}]', 2)
    assert wrong_count.items is None and wrong_count.problem == "expected 2 judgements, found 1"
    assert parse_judgements("the pairs look fine to me", 2).items is None
    assert [valid_score(v) for v in (1, 3, 2.0, "3", " 2 / 3", 0, 4, 2.5, True, None, "high")] == [
        1,
        3,
        2,
        3,
        2,
        None,
        None,
        None,
        None,
        None,
        None,
    ]


# --- combining --------------------------------------------------------------------------------------


def test_combine_modes_and_agreement_by_hand():
    assert combine_scores([3, 2, 2], "mean") == pytest.approx(7 / 3, abs=1e-4)
    assert combine_scores([3, 1], "mean") == 2 and isinstance(combine_scores([3, 1], "mean"), int)
    assert combine_scores([3, None, 2], "min") == 2
    assert combine_scores([3, 2, 3], "majority") == 3
    assert combine_scores([3, 2], "majority") == 2  # a tie goes to the stricter score
    assert combine_scores([None, None], "mean") is None
    with pytest.raises(ValueError, match="combine mode"):
        combine_scores([3], "median")
    # judge A: 3 3 2 None ; judge B: 3 2 2 1 ; judge C: 3 3 1 1
    # pairs scored by >= 2 judges: all four. all agree: pair 1 and pair 4 (1, 1) -> 2/4
    # |diffs|: pair1 0,0,0; pair2 1,0,1; pair3 0,1,1; pair4 0 -> sum 4 over 10 comparisons
    agr = judge_agreement([[3, 3, 2, None], [3, 2, 2, 1], [3, 3, 1, 1]])
    assert agr == {"all_agree": 0.5, "mean_abs_diff": 0.4, "n_pairs": 4}
    assert judge_agreement([[3, 2]]) == {"all_agree": None, "mean_abs_diff": None, "n_pairs": 0}


# --- against the real server ------------------------------------------------------------------------


def test_tiny_server_five_calls_per_paper_and_missing_never_invented(tiny_server, tmp_path):
    work = make_work(tmp_path, n_papers=2)
    judge = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 8, "temperature": 0.0})
    summary = run_racar(work, [judge], max_attempts=1, context_tokens=2048)
    assert summary.counts["unjudged"] == 2
    assert judge.usage.requests == 5 * 2  # one call per dimension and paper, not one per pair
    recs = {r["id"]: r for r in read_jsonl(work / "racar.jsonl")}
    for rec in recs.values():
        assert rec["judge_calls"] == 5 and rec["status"] == "unjudged" and len(rec["pair_metrics"]) == 2
        for m in rec["pair_metrics"]:
            assert all(m[d] is None for d in RACAR_DIMENSIONS) and m["racar_mean"] is None
            assert all(
                "missing" in m["racar_reasons"][d] and "raw reply" in m["racar_reasons"][d] for d in RACAR_DIMENSIONS
            )
        assert [m["refers_to_source"] for m in rec["pair_metrics"]] == [False, True]
        assert set(rec["problems"]) == {f"{judge.name}/{d}" for d in RACAR_DIMENSIONS}
    # resume: finished papers are not judged again (same judge and settings: the same fingerprint)
    again = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 8, "temperature": 0.0})
    assert run_racar(work, [again], max_attempts=1, context_tokens=2048).counts["skipped"] == 2
    assert again.usage.requests == 0


def test_tiny_server_malformed_reply_is_retried_as_a_new_request(says_server, tmp_path):
    # says_server answers every prompt with one QA pair, never a judgement, and its replies are complete
    # (finish_reason "stop"), so they are cached: a reply cut at max_tokens would not be
    work = make_work(tmp_path, n_papers=1)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    judge = LLMClient(
        says_server.base_url, says_server.model, params={"max_tokens": 40, "temperature": 0.0}, cache=cache
    )
    run_racar(work, [judge], max_attempts=2, context_tokens=2048)
    # the retry carries a note, so it is a real second request rather than the cached first reply
    assert judge.usage.requests == 10 and judge.usage.cached == 0 and len(cache) == 10
    assert read_jsonl(work / "racar.jsonl")[0]["judge_calls"] == 10
    summary = racar_summary(work)
    assert summary["judge_calls_per_paper"] == 10 and summary["dimensions"]["accuracy"]["missing"] == 2


# --- the scripted fake endpoint -----------------------------------------------------------------------


def _judgements(scores):
    return json.dumps([{"score": s, "reasons": f"scored {s}"} for s in scores])


def test_committee_with_retry_and_structured_fallback(tmp_path):
    work = make_work(tmp_path, n_papers=1)
    a_replies = {
        "relevance": [_judgements([3, 2])],
        "agnosticism": ["Score: 3, Reasons: standalone.\nScore: 1, Reasons: cites Figure 2."],
        "completeness": ["I think they are fine.", _judgements([2, 2])],  # unusable, then a good retry
        "accuracy": [_judgements([3, 7])] * 3,  # 7 is out of range on every attempt
        "reasonableness": [_judgements([3, 3])],
    }
    b_replies = {
        "relevance": [_judgements([3, 3])],
        "agnosticism": [_judgements([3, 1])],
        "completeness": [_judgements([1, 2])],
        "accuracy": [_judgements([2, 2])],
        "reasonableness": ['{"results": ' + _judgements([3, 2]) + "}"],
    }
    with ScriptedJudge(a_replies) as a, ScriptedJudge(b_replies, reject_structured=True) as b:
        judges = [LLMClient(a.base_url, "judge-a", max_retries=0), LLMClient(b.base_url, "judge-b", max_retries=0)]
        run_racar(work, judges, combine="min", max_attempts=3)
        rec = read_jsonl(work / "racar.jsonl")[0]
        # judge A: one call per dimension, +1 retry for completeness, +2 for accuracy
        assert len(a.requests) == 8 and all("response_format" in r for r in a.requests)
        # judge B: its first (structured) requests were refused, then it was asked in plain text
        plain = [r for r in b.requests if "response_format" not in r]
        assert len(plain) == 5 and len(b.requests) - len(plain) >= 1
    assert rec["judge_calls"] == 8 + 5 and rec["status"] == "ok"
    m1, m2 = rec["pair_metrics"]
    assert {d: m1[d] for d in RACAR_DIMENSIONS} == {
        "relevance": 3,
        "agnosticism": 3,
        "completeness": 1,
        "accuracy": 2,
        "reasonableness": 3,
    }
    # accuracy of pair 2: judge A never gave a valid score, so only judge B's 2 counts
    assert {d: m2[d] for d in RACAR_DIMENSIONS} == {
        "relevance": 2,
        "agnosticism": 1,
        "completeness": 2,
        "accuracy": 2,
        "reasonableness": 2,
    }
    assert m1["racar_mean"] == pytest.approx(12 / 5) and m2["racar_mean"] == pytest.approx(9 / 5)
    accuracy_reasons = m2["racar_reasons"]["accuracy"]
    assert "judge-a: [missing" in accuracy_reasons and "judge-b: scored 2" in accuracy_reasons
    assert "judge-a: cites Figure 2." in m2["racar_reasons"]["agnosticism"]
    agreement = rec["paper_metrics"]["judge_agreement"]
    assert agreement["relevance"] == {"all_agree": 0.5, "mean_abs_diff": 0.5, "n_pairs": 2}
    assert agreement["accuracy"] == {"all_agree": 0.0, "mean_abs_diff": 1.0, "n_pairs": 1}
    assert agreement["agnosticism"] == {"all_agree": 1.0, "mean_abs_diff": 0.0, "n_pairs": 2}
    assert rec["judge_scores"]["judge-a"]["accuracy"] == [3, None]

    s = racar_summary(work)
    assert s["pairs"] == 2 and s["dimensions"]["completeness"] == {
        "mean": 1.5,
        "distribution": {"1": 1, "2": 1},
        "missing": 0,
    }
    assert s["agreement"]["relevance"]["all_agree"] == 0.5 and s["judges"] == ["judge-a", "judge-b"]


def test_long_paper_is_fitted_to_the_context_and_plain_mode_sends_no_schema(tmp_path):
    long_text = "\n".join(f"Paragraph {i}: " + "cation mixing in layered oxides " * 10 for i in range(300))
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "Long", "text": long_text}])
    write_jsonl(work / "seed.jsonl", [{"id": "p0", "qa": PAIRS, "status": "ok"}])
    with ScriptedJudge({d: [_judgements([3, 3])] for d in RACAR_DIMENSIONS}) as fake:
        judge = LLMClient(fake.base_url, "judge", params={"max_tokens": 1024})
        run_racar(work, [judge], context_tokens=4096, chars_per_token=3.5, structured=False)
        requests = fake.requests
    rec = read_jsonl(work / "racar.jsonl")[0]
    assert rec["status"] == "ok" and any("truncated" in w for w in rec["warnings"])
    assert len(requests) == 5 and not any("response_format" in r for r in requests)
    for r in requests:
        content = r["messages"][0]["content"]
        assert len(content) <= (4096 - 1024) * 3.5  # paper, prompt and pairs fit beside the reply
        assert ("Paragraph 0:" in content) == ("Rate the agnosticism" not in content)  # all but Agnosticism


def test_a_pair_asked_from_a_table_is_judged_with_the_table_beside_the_text(tmp_path):
    table = {
        "id": "T1",
        "kind": "table",
        "label": "Table 1",
        "caption": "Capacity retention of the cathodes.",
        "content": "| cobalt (%) | retention after 300 cycles (%) |\n|---|---|\n| 0 | 64 |\n| 5 | 91 |",
        "content_format": "markdown",
        "cells": [["cobalt (%)", "retention after 300 cycles (%)"], ["0", "64"], ["5", "91"]],
        "header_rows": 1,
    }
    unused = {**table, "id": "T2", "label": "Table 2", "content": "| a | b |\n|---|---|\n| 7777 | 8888 |"}
    grounded = [
        {**PAIRS[0], "grounding": {"kind": "prose", "component_id": None}},
        {
            "question": "How much capacity does an undoped layered sodium cathode keep after 300 cycles?",
            "answer": "64 %.",
            "origin": "teacher",
            "grounding": {"kind": "table", "component_id": "T1"},
        },
    ]
    work = tmp_path / "work"
    long_text = "\n".join(f"Paragraph {i}: " + "cation mixing in layered oxides " * 10 for i in range(300))
    write_jsonl(
        work / "papers.jsonl",
        [
            {"id": "p0", "title": "Cathodes", "text": long_text, "components": [table, unused]},
            {"id": "p1", "title": "Cathodes", "text": PAPER_TEXT, "components": [table]},
        ],
    )
    write_jsonl(
        work / "seed.jsonl", [{"id": "p0", "qa": grounded, "status": "ok"}, {"id": "p1", "qa": PAIRS, "status": "ok"}]
    )
    with ScriptedJudge({d: [_judgements([3, 3])] for d in RACAR_DIMENSIONS}) as fake:
        judge = LLMClient(fake.base_url, "judge", params={"max_tokens": 1024})
        run_racar(work, [judge], context_tokens=4096, chars_per_token=3.5)
        requests = [r["messages"][0]["content"] for r in fake.requests]
    accuracy = [c for c in requests if "Rate the accuracy" in c]
    long_paper, prose_paper = (next(c for c in accuracy if ("Paragraph 0:" in c) == first) for first in (True, False))
    # the table survives the cut of a long text, after it; a table no pair was asked from is not shown
    assert "| 0 | 64 |" in long_paper and "Table 1: Capacity retention" in long_paper and "8888" not in long_paper
    assert long_paper.index("Paragraph 0:") < long_paper.index("| 0 | 64 |")
    assert len(long_paper) <= (4096 - 1024) * 3.5
    # a paper whose pairs were asked from its text is judged on its text alone, as before
    assert "| 0 | 64 |" not in prose_paper and "asked from" not in prose_paper
    agnosticism = next(c for c in requests if "Rate the agnosticism" in c and "undoped" in c)
    assert "| 0 | 64 |" not in agnosticism  # closed-book still: agnosticism sees the questions alone


def test_many_components_and_a_small_context_still_fit(tmp_path):
    tables = [
        {"id": f"T{k}", "kind": "table", "label": f"Table {k}", "caption": "Rates.", "content": "| 1 | 2 |\n" * 200}
        for k in range(8)
    ]
    pairs = [{**PAIRS[0], "grounding": {"kind": "table", "component_id": f"T{k}"}} for k in range(8)]
    work = tmp_path / "work"
    text = "Cation mixing in layered oxides.\n" * 2500
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "T", "text": text, "components": tables}])
    write_jsonl(work / "seed.jsonl", [{"id": "p0", "qa": pairs, "status": "ok"}])
    with ScriptedJudge({d: [_judgements([3] * 8)] for d in RACAR_DIMENSIONS}) as fake:
        judge = LLMClient(fake.base_url, "judge", params={"max_tokens": 256})
        run_racar(work, [judge], context_tokens=1024, chars_per_token=3.5)
        sizes = [len(r["messages"][0]["content"]) for r in fake.requests]
    # the paper's text is cut to leave room for the tables, and the tables to their share: nothing near the
    # 80,000 characters of the text gets through
    assert len(sizes) == 5 and max(sizes) < 6000
