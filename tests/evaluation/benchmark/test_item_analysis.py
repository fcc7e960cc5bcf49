"""Item analysis of the benchmark: the pure analysis on hand-built correctness matrices, `sciqag benchmark` runs over
scripted models whose right answers are chosen by the test (FAKE endpoints: ``ScriptedChat``, no model here answers
exactly what a test needs), and one end-to-end run where the embedded SmolLM2 (llama.cpp) and its `transformers
serve` twin answer beside the scripted ones."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import ScriptedChat, read_jsonl, write_jsonl
from published import PAIRS, SECRET, published_folder

from sciqag_dataset.cli import main
from sciqag_dataset.evaluation.benchmark.card import PLOT
from sciqag_dataset.evaluation.benchmark.general_knowledge import mask
from sciqag_dataset.evaluation.benchmark.items import FILES, analyse, item_analysis, kr20
from sciqag_dataset.evaluation.benchmark.leaderboard import leaderboard
from sciqag_dataset.evaluation.benchmark.questions import load_questions
from sciqag_dataset.llm import embedded

# models in leaderboard order (strongest first) x six questions: q0 everyone knows, q5 no one, q4 only the weakest
KNOWS = [{0, 1, 2, 3}, {0, 1, 2}, {0, 1}, {0, 4}]
IDS = [f"q{j}" for j in range(6)]


def matrix(knows):
    return [[int(j in k) for j in range(6)] for k in knows]


def test_planted_items_are_flagged_and_discrimination_orders_the_items():
    result = analyse(IDS, ["a", "b", "c", "d"], matrix(KNOWS))
    assert result["flagged"] == {"all_right": ["q0"], "none_right": ["q5"], "negative_discrimination": ["q4"]}
    item = {i["id"]: i for i in result["items"]}
    assert [item[q]["difficulty"] for q in IDS] == [1.0, 0.75, 0.5, 0.25, 0.25, 0.0]
    # constant items have no correlation; the items only strong models get separate best, then the one all
    # but the weakest get, then the one only the weakest gets (negative)
    assert item["q0"]["discrimination"] is None and item["q5"]["discrimination"] is None
    disc = {q: item[q]["discrimination"] for q in ("q1", "q2", "q3", "q4")}
    assert disc["q2"] > disc["q1"] > disc["q4"] and disc["q3"] > disc["q1"] and disc["q4"] < 0
    assert item["q4"]["right"] == ["d"]


def test_kr20_matches_a_hand_computed_value():
    # totals 5, 3, 1: variance 8/3; p = 1, 2/3, 2/3, 1/3, 1/3, 0: sum p(1-p) = 8/9; 6/5 * (1 - (8/9)/(8/3)) = 0.8
    m = [[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]]
    assert kr20(np.array(m, dtype=float)) == pytest.approx(0.8)
    assert analyse(list("abcdef"), ["x", "y", "z"], m)["kr20"] == 0.8


def test_ranking_stability_is_one_when_models_are_far_apart_and_less_when_they_tie():
    apart = [[1] * 8, [1] * 4 + [0] * 4, [0] * 8]
    assert analyse([str(j) for j in range(8)], ["x", "y", "z"], apart)["ranking_stability"] == 1.0
    tied = [[1, 0] * 4, [0, 1] * 4, [0] * 8]
    stable = analyse([str(j) for j in range(8)], ["x", "y", "z"], tied)["ranking_stability"]
    assert 0 < stable < 1
    assert analyse([str(j) for j in range(8)], ["x", "y", "z"], tied)["ranking_stability"] == stable  # seeded


def scripted(knows: set[int]) -> ScriptedChat:
    """A model that answers the questions numbered in ``knows`` with the reference, the others wrongly."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        j = next(j for j, (q, _) in enumerate(PAIRS) if q in prompt)
        return PAIRS[j][1] if j in knows else "I do not know that."

    return ScriptedChat(reply)


def benchmark(pub, results, knows: list[set[int]], *more: str) -> None:
    """`sciqag benchmark` over scripted models (model-a, model-b, ... knowing the questions in ``knows``)."""
    servers = [scripted(k) for k in knows]
    try:
        args = ["benchmark", str(pub), "-o", str(results), "--no-bertscore", *more]
        for s, name in zip(servers, "abcdefgh"):
            args += ["--endpoint", s.base_url, "--model", f"model-{name}"]
        assert main(args) == 0
    finally:
        for s in servers:
            s.close()


def test_four_models_item_analysis_in_results_and_card_filter_drops_flagged(tmp_path, capsys):
    pub = published_folder(tmp_path)
    results = tmp_path / "res"
    benchmark(pub, results, KNOWS, "--update-card", str(pub))
    out = capsys.readouterr().out
    assert "Item analysis over 4 models" in out and "item_analysis.json" in out
    board = json.loads((results / "leaderboard.json").read_text())
    assert [e["model"] for e in board["models"]][:2] == ["model-a", "model-b"]
    summary = json.loads((results / "item_analysis.json").read_text())
    questions = {r["question"]: r["id"] for r in read_jsonl(results / "questions.jsonl")}
    qid = [questions[q] for q, _ in PAIRS]
    assert summary["metric"] == "f1" and summary["flagged"] == {
        "all_right": [qid[0]],
        "none_right": [qid[5]],
        "negative_discrimination": [qid[4]],
    }
    items = {i["id"]: i for i in read_jsonl(results / "items.jsonl")}
    assert len(items) == len(PAIRS) and items[qid[4]]["right"] == ["model-d"]
    assert items[qid[2]]["discrimination"] > items[qid[1]]["discrimination"] > items[qid[4]]["discrimination"]
    assert (results / "item_analysis.png").stat().st_size > 0
    card = (pub / "README.md").read_text()
    assert "### Item analysis" in card and "KR-20" in card and f"]({PLOT})" in card and (pub / PLOT).is_file()
    # the flagged questions are dropped from the work dir the dataset was published from
    work = tmp_path / "work"
    assert main(["filter", str(work), "--drop-flagged-items", str(results)]) == 0
    kept = [r["question"] for r in read_jsonl(work / "filtered.jsonl")]
    assert kept == [PAIRS[j][0] for j in (1, 2, 3)]
    summary = json.loads((work / "filter_summary.json").read_text())
    assert summary["flagged_items"] == {"questions": 3, "dropped": 3}
    capsys.readouterr()
    assert main(["filter", str(work), "--drop-flagged-items", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert "items.jsonl not found" in err and len(err.splitlines()) == 1
    # with one model left there is nothing to analyse: the earlier analysis does not stay behind
    rows = {"model-a": read_jsonl(results / "models" / "model-a" / "predictions.jsonl")}
    assert item_analysis(results, {"ranked_by": "f1", "models": [board["models"][0]]}, rows) is None
    assert not any((results / name).exists() for name in FILES)


def test_scores_per_kind_of_question_in_the_leaderboard_its_table_and_the_predictions(tmp_path):
    table, equation = {"kind": "table", "component_id": "T1"}, {"kind": "equation", "component_id": "E2"}
    pub = published_folder(tmp_path, grounding={0: table, 1: table, 2: equation, 3: {"kind": "prose"}})
    results = tmp_path / "res"
    benchmark(pub, results, KNOWS[:2])  # a knows q0-q3, b q0-q2
    asked = [r["asked_from"] for r in read_jsonl(results / "questions.jsonl")]
    assert asked == ["table", "table", "equation", "prose", "prose", "prose"]  # q4, q5 record none: the text
    board = json.loads((results / "leaderboard.json").read_text())
    per = {e["model"]: e["by_asked_from"] for e in board["models"]}
    assert list(per["model-a"]) == ["prose", "table", "equation"]
    em = {m: {k: v["metrics"]["exact_match"]["mean"] for k, v in kinds.items()} for m, kinds in per.items()}
    assert em == {
        "model-a": {"prose": 0.3333, "table": 1.0, "equation": 1.0},  # rounded to 4 places
        "model-b": {"prose": 0.0, "table": 1.0, "equation": 1.0},
    }
    assert per["model-b"]["prose"]["questions"] == 3 and per["model-b"]["table"]["metrics"]["f1"]["n"] == 2
    md = (results / "leaderboard.md").read_text()
    assert "by what the question was asked from" in md and "| prose (3 questions) | table (2 questions) |" in md
    preds = read_jsonl(results / "models" / "model-a" / "predictions.jsonl")
    assert [p["asked_from"] for p in preds] == asked
    # a model answered before questions recorded what they were asked from: the question set says it
    older = results / "models" / "model-b" / "predictions.jsonl"
    write_jsonl(older, [{k: v for k, v in p.items() if k != "asked_from"} for p in read_jsonl(older)])
    again = {e["model"]: e["by_asked_from"] for e in leaderboard(results, samples=50)["models"]}
    assert again["model-b"]["table"]["metrics"]["exact_match"]["mean"] == 1.0
    # a grounding that is not an object is no grounding
    write_jsonl(tmp_path / "odd.jsonl", [{"question": "Q?", "answer": "A.", "grounding": "table"}])
    assert load_questions(str(tmp_path / "odd.jsonl"))[0][0]["asked_from"] == "prose"
    # every question asked from the text: no breakdown
    plain = published_folder(tmp_path / "plain")
    benchmark(plain, tmp_path / "res2", KNOWS[:1])
    board = json.loads((tmp_path / "res2" / "leaderboard.json").read_text())
    assert board["models"][0]["by_asked_from"] == {}
    assert "asked from" not in (tmp_path / "res2" / "leaderboard.md").read_text()


def test_a_2pl_fit_recovers_simulated_item_parameters_and_needs_enough_models():
    rng = np.random.default_rng(1)
    theta, a, b = rng.normal(size=40), np.exp(rng.normal(0, 0.4, size=30)), rng.normal(0, 1, size=30)
    x = (rng.random((40, 30)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(int)
    result = analyse([str(j) for j in range(30)], [f"m{i}" for i in range(40)], x)
    fit_b = [i["irt_b"] for i in result["items"]]
    fit_a = [i["irt_a"] for i in result["items"]]
    assert np.corrcoef(fit_b, b)[0, 1] > 0.8 and np.corrcoef(fit_a, a)[0, 1] > 0.4
    assert np.corrcoef(list(result["irt_2pl"]["ability"].values()), theta)[0, 1] > 0.8
    few = analyse(IDS, ["a", "b", "c", "d"], matrix(KNOWS))
    assert "irt_a" not in few["items"][0] and few["irt_2pl"].startswith("not fitted")


def test_a_question_a_small_model_answers_with_its_terms_masked_is_flagged_general_knowledge(tmp_path, capsys):
    pub = published_folder(tmp_path)
    results, work = tmp_path / "res", tmp_path / "work"
    terms = {"paper-0": ["anatase titanium dioxide", "cobalt"], "paper-1": ["skutterudite", "perovskite film"]}
    keywords = write_jsonl(tmp_path / "keywords.jsonl", [{"id": p, "keywords": k} for p, k in terms.items()])

    def small(body):  # FAKE small model: right only on the planted question, which it reads masked
        prompt = body["messages"][-1]["content"]
        return PAIRS[3][1] if "annealed in humid air" in prompt else "I do not know that."

    servers = [scripted({0, 1, 2, 3}), scripted({0}), ScriptedChat(small)]
    try:
        args = ["benchmark", str(pub), "-o", str(results), "--no-bertscore", "--update-card", str(pub)]
        for s, name in zip(servers, "ab"):
            args += ["--endpoint", s.base_url, "--model", f"model-{name}"]
        args += ["--general-knowledge-endpoint", servers[2].base_url, "--general-knowledge-model", "small"]
        assert main([*args, "--general-knowledge-keywords", str(keywords)]) == 0
    finally:
        for s in servers:
            s.close()
    asked = [b["messages"][-1]["content"] for b in servers[2].requests]
    assert len(asked) == len(PAIRS)
    # the domain terms are masked, whole phrases first; no paper text, title or keyword reaches the prompt
    assert "Which phase forms when the [TERM] is annealed in humid air?" in asked
    assert "What band gap does [TERM] have?" in asked and "Why does [TERM] substitution" in " ".join(asked)
    assert not any(w in " ".join(asked).lower() for w in ("perovskite", "skutterudite", "cobalt", SECRET))
    questions = {r["question"]: r["id"] for r in read_jsonl(results / "questions.jsonl")}
    qid = [questions[q] for q, _ in PAIRS]
    summary = json.loads((results / "item_analysis.json").read_text())
    assert summary["flagged"]["general_knowledge"] == [qid[3]]
    assert summary["general_knowledge"] == {"model": "small", "placeholder": "[TERM]"}
    items = {i["id"]: i for i in read_jsonl(results / "items.jsonl")}
    assert [q for q, i in items.items() if "general_knowledge" in i["flags"]] == [qid[3]]
    assert items[qid[3]]["flags"] == ["general_knowledge"]  # model-a alone was right: flagged by the check only
    card = (pub / "README.md").read_text()
    shown = "general knowledge (answered right by small without the paper, its domain terms masked as [TERM])"
    assert f"{shown}: 1 ({qid[3]})" in card
    assert "general knowledge check (small)" in capsys.readouterr().out
    # `sciqag filter --drop-flagged-items` drops it with the other flagged questions
    assert main(["filter", str(work), "--drop-flagged-items", str(results)]) == 0
    kept = [r["question"] for r in read_jsonl(work / "filtered.jsonl")]
    assert kept == [PAIRS[1][0], PAIRS[2][0]]  # q0 every model right, q4 and q5 none, q3 general knowledge
    # a run without the check flags nothing as general knowledge
    benchmark(pub, results, [{0, 1, 2, 3}, {0}])
    assert "general_knowledge" not in json.loads((results / "item_analysis.json").read_text())["flagged"]


def test_mask_replaces_whole_terms_longest_first_in_any_case():
    words = ["perovskite", "perovskite film", "Ti"]
    assert mask("Does the Perovskite film of Ti or Tin crack?", words) == "Does the [TERM] of [TERM] or Tin crack?"
    assert mask("No terms here.", []) == "No terms here."


# --- end to end: the embedded model, its `transformers serve` twin and scripted models --------------------------

# Our own questions. q0 is planted always right: both SmolLM2 engines answer it with the reference's words (greedy;
# token F1 1.0 on llama.cpp and on transformers). q5 is planted never right, and q1-q4 are right only for the fakes
# built to know them: their references are made-up words no model says unprompted.
PLANTED = [
    ("What is the chemical symbol for gold?", "The chemical symbol for gold is Au."),
    ("Which additive stabilised the K-7 electrolyte?", "Trimethyl quorvane borate."),
    ("What did the pressed pellets turn into after sintering?", "Zelvarite nodules."),
    ("Which instrument mapped the grain boundaries of the foil?", "Pilvar kestrometer."),
    ("What coated the anode after the first cycle?", "Brovelline quessite."),
    ("What name did the authors give the unknown phase?", "Ostravine delta."),
]
# the scripted models, strongest first: every fake knows q0 and q1 (the small models know only q0), and q4 is
# known by the weakest fake alone
FAKES = {"fake-strong": {0, 1, 2, 3}, "fake-mid": {0, 1, 2}, "fake-weak": {0, 1, 4}}


def planted(knows: set[int]) -> ScriptedChat:
    def reply(body):
        prompt = body["messages"][-1]["content"]
        j = next(j for j, (q, _) in enumerate(PLANTED) if q in prompt)
        return PLANTED[j][1] if j in knows else "I do not know that."

    return ScriptedChat(reply)


@pytest.mark.e2e
def test_embedded_model_its_transformers_twin_and_fakes_flag_the_planted_items_and_the_card_shows_them(
    tmp_path, capsys
):
    """Five models answer: the embedded SmolLM2 on llama.cpp (the config's model without a url), the same model
    served by `transformers serve` (an endpoint), and three FAKE endpoints (``ScriptedChat``: their right answers
    are chosen by the test). The planted always-right and never-right questions are flagged, discrimination
    orders q1-q4 as the fakes were built, and the card shows the analysis."""
    pub = published_folder(tmp_path, PLANTED)
    results = tmp_path / "res"
    twin = embedded.start(embedded.choose_here("transformers"), log_path=tmp_path / "twin.log")
    fakes = {name: planted(k) for name, k in FAKES.items()}
    try:
        models = [{}, {"url": twin.base_url, "model": twin.model}]
        models += [{"url": s.base_url, "model": name} for name, s in fakes.items()]
        config = {"embedded": {"backend": "llama.cpp"}, "benchmark": {"models": models}}
        (tmp_path / "bench.yaml").write_text(json.dumps(config))  # JSON is YAML
        args = ["benchmark", str(pub), "--config", str(tmp_path / "bench.yaml"), "-o", str(results)]
        assert main([*args, "--no-bertscore", "--max-tokens", "12", "--update-card", str(pub)]) == 0
    finally:
        twin.stop()
        for s in fakes.values():
            s.close()
    out = capsys.readouterr().out
    assert "Item analysis over 5 models" in out
    board = json.loads((results / "leaderboard.json").read_text())
    assert {e["model"] for e in board["models"]} == {embedded.DEFAULT_MODEL_ID, twin.model, *FAKES}
    questions = {r["question"]: r["id"] for r in read_jsonl(results / "questions.jsonl")}
    qid = [questions[q] for q, _ in PLANTED]
    items = {i["id"]: i for i in read_jsonl(results / "items.jsonl")}
    right = {j: set(items[q]["right"]) for j, q in enumerate(qid)}
    # both SmolLM2 engines got the planted easy question and nothing else: the matrix is the one built here
    assert right[0] == {embedded.DEFAULT_MODEL_ID, twin.model, *FAKES}
    assert all(right[j] == {n for n, k in FAKES.items() if j in k} for j in range(1, 6))
    summary = json.loads((results / "item_analysis.json").read_text())
    assert summary["flagged"] == {"all_right": [qid[0]], "none_right": [qid[5]], "negative_discrimination": [qid[4]]}
    disc = [items[q]["discrimination"] for q in qid]
    assert disc[0] is None and disc[5] is None  # constant items have no correlation
    # q1 splits the fakes from the small models; q2 and q3 the stronger fakes from the rest; q4 the wrong way
    assert disc[1] > disc[2] > disc[3] > 0 > disc[4]
    card = (pub / "README.md").read_text()
    assert "### Item analysis" in card and "Item analysis over 5 models" in card and f"]({PLOT})" in card
    assert f"- every model right: 1 ({qid[0]})" in card and f"- no model right: 1 ({qid[5]})" in card
    assert f"- negative: 1 ({qid[4]})" in card and (pub / PLOT).is_file()
