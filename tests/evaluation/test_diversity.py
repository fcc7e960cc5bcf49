"""Question diversity: reply parsing, bins and matrices by hand, the real embedding model, the real server."""

from __future__ import annotations

import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.evaluation.diversity import (
    diversity_summary,
    matrix_from_pairs,
    pair_indices,
    paper_diversity,
    parse_similarity,
    similarity_bins,
    stage,
)
from sciqag_dataset.evaluation.judge_prompts import build_diversity_messages
from sciqag_dataset.llm import LLMClient

GARNET = "What limits the ionic conductivity of the garnet solid electrolyte?"
GARNET_REWORDED = "Which factors limit ionic conductivity in garnet solid electrolytes?"
SOURDOUGH = "How should a sourdough starter be fed during a cold winter?"


def make_work(tmp_path, papers: dict[str, list[str]]):
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [{"id": pid, "title": pid, "text": "Some text."} for pid in papers])
    write_jsonl(
        work / "seed.jsonl",
        [
            {
                "id": pid,
                "status": "ok",
                "qa": [{"question": q, "answer": "An answer.", "origin": "teacher"} for q in qs],
            }
            for pid, qs in papers.items()
        ],
    )
    return work


@pytest.mark.parametrize(
    "reply, score",
    [
        ("Analysis: both ask about the same catalyst use.\nSimilarity Score: 85", 85.0),
        ("similarity score: 70\n\nBoth concern conductivity.", 70.0),
        ("**Similarity Score:** 35%", 35.0),
        ("Similarity Score: 0 ... on reflection, Similarity Score: 40", 40.0),  # the last one stated
        ("Score: 12", 12.0),
        ("42", 42.0),
        ("<think>similarity score: 90</think>Similarity Score: 10", 10.0),
        ("Similarity Score: 150", None),  # out of range: invalid, not clamped
        ("They are about different things.", None),  # no score: None, not 0
        ("", None),
    ],
)
def test_parse_similarity(reply, score):
    assert parse_similarity(reply) == score


def test_prompt_is_the_appendix_c_text_with_the_questions():
    text = build_diversity_messages("Why {x}?", "How?")[0]["content"]
    assert text.startswith("**Objective**: Assess the similarity of two questions")
    assert "Similarity Score: 100" in text and text.endswith("Question1: Why {x}?\nQuestion2: How?")


def test_bins_and_paper_figures_by_hand():
    # left-closed bins. <0.3: 0.1 | 0.3-0.5: 0.3, 0.45 | 0.5-0.7: 0.5, 0.69 | >0.7: 0.7, 0.71
    # mean = (0.1 + 0.3 + 0.45 + 0.5 + 0.69 + 0.7 + 0.71) / 7 = 3.45 / 7
    assert similarity_bins([0.1, 0.3, 0.45, 0.5, 0.69, 0.7, 0.71, None]) == {
        "<0.3": round(1 / 7, 4),
        "0.3-0.5": round(2 / 7, 4),
        "0.5-0.7": round(2 / 7, 4),
        ">0.7": round(2 / 7, 4),
        "mean": round(3.45 / 7, 4),
    }
    assert similarity_bins([None]) == {"<0.3": None, "0.3-0.5": None, "0.5-0.7": None, ">0.7": None, "mean": None}
    assert pair_indices(3) == [(1, 0), (2, 0), (2, 1)] and len(pair_indices(10)) == 45
    m = matrix_from_pairs(3, {(1, 0): 0.9, (2, 0): 0.2, (2, 1): None})
    assert m == [[1.0, 0.9, 0.2], [0.9, 1.0, None], [0.2, None, 1.0]]
    mean_sim, per_question = paper_diversity(m)
    assert mean_sim == 0.55 and per_question == [0.9, 0.9, 0.2]


def test_embedding_method_real_model(tmp_path):
    work = make_work(tmp_path, {"a": [GARNET, GARNET_REWORDED, SOURDOUGH], "b": [SOURDOUGH]})
    summary = run_stage(stage(method="embedding"), work)
    assert summary.counts["ok"] == 1 and summary.counts["too_few_questions"] == 1
    recs = {r["id"]: r for r in read_jsonl(work / "diversity.jsonl")}
    a = recs["a"]
    m = a["similarity_matrix"]
    assert [m[i][i] for i in range(3)] == [1.0] * 3 and all(m[i][j] == m[j][i] for i in range(3) for j in range(3))
    near, far1, far2 = m[1][0], m[2][0], m[2][1]
    assert near > 0.8 and far1 < 0.3 and far2 < 0.3  # a reworded question scores high, an unrelated one low
    assert a["paper_metrics"]["diversity_mean"] == pytest.approx((near + far1 + far2) / 3, abs=1e-4)
    assert [p["max_question_similarity"] for p in a["pair_metrics"]] == [near, near, max(far1, far2)]
    assert recs["b"]["paper_metrics"]["diversity_mean"] is None
    s = diversity_summary(work)
    # by hand: one pair > 0.7, two < 0.3
    assert s["bins"] == {
        "<0.3": round(2 / 3, 4),
        "0.3-0.5": 0.0,
        "0.5-0.7": 0.0,
        ">0.7": round(1 / 3, 4),
        "mean": round((near + far1 + far2) / 3, 4),
    }
    assert s["pairs"] == 3 and s["methods"] == ["embedding"]
    assert run_stage(stage(method="embedding"), work).counts["skipped"] == 2  # resumes by id


def test_llm_method_tiny_server_one_call_per_pair_and_no_invented_scores(tiny_server, tmp_path):
    qs = [GARNET, GARNET_REWORDED, SOURDOUGH, "Why does cobalt doping suppress cation mixing?"]
    work = make_work(tmp_path, {"a": qs, "b": [SOURDOUGH]})
    client = LLMClient(tiny_server.base_url, tiny_server.model, params={"max_tokens": 6, "temperature": 0.0})
    run_stage(stage(method="llm", client=client), work)
    assert client.usage.requests == 6  # 4 * 3 / 2 pairs, one call each; none for a single question
    recs = {r["id"]: r for r in read_jsonl(work / "diversity.jsonl")}
    a = recs["a"]
    assert a["judge_calls"] == 6 and a["method"] == "llm" and len(a["failures"]) == 6
    assert a["status"] == "unjudged" and a["paper_metrics"]["diversity_mean"] is None  # gibberish: no score
    assert all(p["max_question_similarity"] is None for p in a["pair_metrics"])
    assert recs["b"]["status"] == "too_few_questions" and recs["b"]["judge_calls"] == 0
    with pytest.raises(ValueError, match="needs a judge client"):
        stage(method="llm")
