"""Reasoning type and difficulty: given by the judge in its completeness call (no call more), combined over a
committee, summarised for the card, selected by `sciqag filter`, corrected in `sciqag review` and covered by
`sciqag agreement`.

The judge is ``ScriptedJudge`` (FAKE: a loopback endpoint answering with replies written here; no model on
this machine writes exact labels); everything else is the real code path.
"""

from __future__ import annotations

import json

import pytest
from helpers import ScriptedJudge, read_jsonl, write_jsonl
from review_samples import DIFFICULTY, TYPES

from sciqag_dataset.cli import main
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.core.wiring import REVIEWS
from sciqag_dataset.evaluation import racar
from sciqag_dataset.evaluation.agreement import agreement
from sciqag_dataset.evaluation.filter import unscored
from sciqag_dataset.evaluation.judgements import parse_judgements
from sciqag_dataset.evaluation.ratings import collect, read_ratings_file
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.review.session import ReviewSession
from sciqag_dataset.review.store import apply_decision, decisions, read_reviews

PAIRS = [
    {"question": "Why does cobalt keep the layers ordered?", "answer": "It suppresses cation mixing.", "origin": "t"},
    {"question": "How does the cobalt cathode compare with the plain one?", "answer": "It keeps more capacity."},
    {"question": "What cobalt fraction was used?", "answer": "Five percent.", "origin": "t"},
]


def scores(values, **labels) -> str:
    items = [{"score": v, "reasons": "r"} for v in values]
    for key, given in labels.items():
        for item, value in zip(items, given):
            item[key] = value
    return json.dumps(items)


def test_labels_are_read_tolerantly_and_never_guessed():
    reply = json.dumps(
        [
            {"score": 3, "reasons": "ok", "reasoning_type": "Causal reasoning", "difficulty": "hard"},
            {"score": 2, "reasons": "ok", "reasoning_type": "causal or comparative", "difficulty": 5},
            {"score": 1, "reasons": "ok"},
        ]
    )
    items = parse_judgements(reply, 3).items
    assert [(it["score"], it["reasoning_type"], it["difficulty"]) for it in items] == [
        (3, "causal", 3),
        (2, None, None),  # two types named, a difficulty off the scale: not guessed
        (1, None, None),
    ]
    prose = "Score: 2, Reasons: misses a part. Reasoning type: comparative, Difficulty: 2\nScore: 3, Reasons: fine."
    items = parse_judgements(prose, 2).items
    assert [(it["score"], it["reasons"], it["reasoning_type"], it["difficulty"]) for it in items] == [
        (2, "misses a part.", "comparative", 2),  # the labels are not part of the reasons
        (3, "fine.", None, None),
    ]
    # a judge's "reasoning" is its justification, not a type, whatever words it uses
    (item,) = parse_judgements('[{"score": 3, "reasoning": "A factual recall of the paper."}]', 1).items
    assert item["reasoning_type"] is None and item["reasons"] == "A factual recall of the paper."
    # labels written before their score could be read as the previous item's: none is read
    before = "1. Reasoning type: causal, Difficulty: 3. Score: 3\n2. Reasoning type: factual, Difficulty: 1. Score: 2"
    items = parse_judgements(before, 2).items
    assert [(it["score"], it["reasoning_type"], it["difficulty"]) for it in items] == [
        (3, None, None),
        (2, None, None),
    ]


def test_a_label_filter_on_pairs_without_labels_is_refused(tmp_path):
    """Old RACAR results, or a judge that never labels: a label rule would drop every pair, so it is refused."""
    work = tmp_path / "work"
    summary = {"metrics": {"racar": {"merged": 3}}, "racar": {"reasoning_types": {"missing": 3}, "difficulty": {}}}
    work.mkdir()
    (work / "evaluation_summary.json").write_text(json.dumps(summary))
    rules = {"reasoning_types": ["causal"], "max_difficulty": 2, "min_racar": 2}
    assert unscored(work, rules) == {"reasoning_types": "racar", "max_difficulty": "racar"}
    summary["racar"]["reasoning_types"] = {"causal": 1, "missing": 2}
    (work / "evaluation_summary.json").write_text(json.dumps(summary))
    assert unscored(work, rules) == {}


def test_labels_ride_on_the_completeness_call_and_a_committee_combines_them(tmp_path):
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "Cathodes", "text": "Cobalt suppressed mixing."}])
    write_jsonl(work / "seed.jsonl", [{"id": "p0", "qa": PAIRS, "status": "ok"}])
    plain = {d: [scores([3, 3, 3])] for d in RACAR_DIMENSIONS}
    a = plain | {
        "completeness": [scores([3, 2, 3], reasoning_type=["causal", "comparative", "factual"], difficulty=[2, 2, 1])]
    }
    b = plain | {  # judge B answers in prose (it rejects structured output) and names another type for pair 3
        "completeness": [
            "Score: 3, Reasons: fine, Reasoning type: causal, Difficulty: hard\n"
            "Score: 2, Reasons: partial, Reasoning type: comparative, Difficulty: medium\n"
            "Score: 3, Reasons: fine, Reasoning type: conditional, Difficulty: 1"
        ]
    }
    with ScriptedJudge(a) as ja, ScriptedJudge(b, reject_structured=True) as jb:
        judges = [LLMClient(ja.base_url, "judge-a", max_retries=0), LLMClient(jb.base_url, "judge-b", max_retries=0)]
        run_stage(racar.stage(judges, combine="mean"), work)
        assert len(ja.requests) == 5  # one call per dimension: the labels cost none
        schema = next(
            r["response_format"]["json_schema"]["schema"] for r in ja.requests if "Rate the completeness" in str(r)
        )
        item = schema["properties"]["judgements"]["items"]
        assert "reasoning_type" in item["required"] and "factual" in item["properties"]["reasoning_type"]["enum"]
        others = [r for r in ja.requests if "Rate the completeness" not in str(r)]
        assert all("reasoning_type" not in json.dumps(r) for r in others)
    rec = read_jsonl(work / "racar.jsonl")[0]
    got = [(m["reasoning_type"], m["difficulty"]) for m in rec["pair_metrics"]]
    # pair 3: a tie (factual, conditional) goes to the judge listed first
    assert got == [("causal", 2.5), ("comparative", 2), ("factual", 1)]
    assert rec["judge_scores"]["judge-b"]["reasoning_type"] == ["causal", "comparative", "conditional"]
    summary = racar.racar_summary(work)
    assert summary["reasoning_types"] == {"factual": 1, "comparative": 1, "causal": 1}
    assert summary["difficulty"] == {"mean": pytest.approx(5.5 / 3, abs=1e-4), "distribution": {
        "1": 1, "2": 1, "2.5": 1}, "missing": 0}  # fmt: skip
    card = racar.METRIC.card(summary)
    assert "factual 1, comparative 1, causal 1" in card and "easy 1, medium 1, 2.5 1" in card


def test_filter_selects_by_reasoning_type_and_difficulty(review_work, capsys):
    status = main(["filter", str(review_work), "--reasoning-types", "explanatory,causal", "--max-difficulty", "2"])
    assert status == 0, capsys.readouterr()
    kept = read_jsonl(review_work / "filtered.jsonl")
    # of each paper's five pairs: #1 explanatory (difficulty 2) passes; #2 causal fails on difficulty 3
    assert {r["question"] for r in kept} and {(r["reasoning_type"], r["difficulty"]) for r in kept} == {
        ("explanatory", 2)
    }
    assert len(kept) == 4
    summary = json.loads((review_work / "filter_summary.json").read_text())
    assert "reasoning type one of explanatory, causal" in summary["rules_described"]
    capsys.readouterr()
    assert main(["filter", str(review_work), "--reasoning-types", "poetic"]) == 2  # refused by name
    assert "unknown reasoning type 'poetic'" in capsys.readouterr().err


def test_people_correct_labels_and_agreement_covers_them(review_work, tmp_path):
    session = ReviewSession(review_work, review_work / REVIEWS)
    first = session.show("ann", 0)
    assert first["judge"]["reasoning_type"]["score"] in TYPES and "predictive" in first["reasoning_types"]
    ids = {}
    for i in range(len(session.queue("ann"))):
        shown = session.show("ann", i)
        ids[shown["pair_id"]] = shown
    zeolite = sorted((p for p in ids.values() if p["paper_id"] == "zeolite"), key=lambda p: p["pair_id"])
    by_question = {p["question"]: p for p in zeolite}
    order = [
        "How much water does the zeolite membrane adsorb at room temperature?",
        "What happens to water uptake at 80 degrees Celsius?",
        "Why did thin membranes crack?",
        "How was the membrane grown?",
        "What does Figure 2 show?",
    ]
    ann_types = ["factual", "explanatory", "causal", "factual", "factual"]  # pair 4: comparative -> factual
    ann_difficulty = [1, 2, 2, 2, 1]  # pair 3: hard -> medium
    for q, t, d in zip(order, ann_types, ann_difficulty):
        session.save("ann", by_question[q]["pair_id"], {"reasoning_type": t, "difficulty": d})
    with pytest.raises(UserError, match="reasoning_type must be one of"):
        session.save("ann", by_question[order[0]]["pair_id"], {"reasoning_type": "poetic"})
    with pytest.raises(UserError, match="difficulty must be 1, 2 or 3"):
        session.save("ann", by_question[order[0]]["pair_id"], {"difficulty": 4})

    decided = decisions(read_reviews(review_work / REVIEWS))
    row = apply_decision({"question": order[3]}, decided[by_question[order[3]]["pair_id"]])
    assert row["human_reasoning_type"] == "factual" and row["human_difficulty"] == 2

    # the known answers below are worked out from the sample judge's labels
    assert TYPES == ["factual", "explanatory", "causal", "comparative", "factual"] and DIFFICULTY == [1, 2, 3, 2, 1]
    result = agreement(collect(review_work), rounds=0)
    kinds = result["dimensions"]["reasoning_type"]["pairs"][0]
    assert kinds["n"] == 5 and "spearman" not in kinds  # nominal: no ranking
    # judge [f, e, c, m, f] against ann [f, e, c, f, f]: p_o 0.8, p_e 8/25 -> kappa 0.48 / 0.68
    assert kinds["kappa"]["value"] == pytest.approx(0.48 / 0.68, abs=1e-4)
    assert kinds["exact"]["value"] == pytest.approx(0.8)
    hard = result["dimensions"]["difficulty"]["pairs"][0]
    # judge [1, 2, 3, 2, 1] against ann [1, 2, 2, 2, 1], quadratic weights: 1 - 0.25 / 1.05
    assert hard["kappa"]["value"] == pytest.approx(1 - 0.25 / 1.05, abs=1e-4) and hard["exact"]["value"] == 0.8

    csv = tmp_path / "ratings.csv"
    csv.write_text("pair_id,rater,reasoning_type,difficulty\nx-1,bob,Causal,3\n", encoding="utf-8")
    assert list(read_ratings_file(csv))[0] == {
        "pair_id": "x-1", "rater": "bob", **dict.fromkeys(RACAR_DIMENSIONS), "difficulty": 3,
        "reasoning_type": "causal", "keep": None,
    }  # fmt: skip
    csv.write_text("pair_id,rater,reasoning_type\nx-1,bob,poetic\n", encoding="utf-8")
    with pytest.raises(UserError, match="ratings.csv:2: reasoning_type must be one of"):
        list(read_ratings_file(csv))
