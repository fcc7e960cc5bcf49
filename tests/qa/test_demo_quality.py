"""What a run says of its pairs: the share of each paper's words the model was shown (per record, in total, in
the published `seed` config and the card), chunks spread over the paper's sections, and a plain note when the
model is the embedded 135M one."""

from __future__ import annotations

import datasets
from helpers import ScriptedChat, read_jsonl, write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.core.records import section_starts, with_keywords
from sciqag_dataset.llm.models import DEFAULT_MODEL_ID
from sciqag_dataset.qa.small_model import chunks

SECTION_WORDS = {"Introduction": 500, "Methods": 250, "Results": 450, "Discussion": 400}


def section(name: str, words: int) -> dict:
    sentences = [f"{name} sentence {i} states a finding of {i} units." for i in range(words // 9)]
    return {"heading": name, "text": " ".join(sentences)}


def sectioned_paper() -> dict:
    sections = [section(name, n) for name, n in SECTION_WORDS.items()]
    return {
        "id": "long",
        "title": "A long paper",
        "text": "\n\n".join(s["text"] for s in sections),
        "sections": sections,
    }


def test_chunks_spread_over_the_paper_open_at_a_section_near_their_place():
    paper = sectioned_paper()
    starts = section_starts(paper["text"], paper["sections"])
    assert [paper["text"][s:].split()[0] for s in starts] == list(SECTION_WORDS)
    kept, warnings = chunks(paper["text"], 100, max_chunks=2, section_starts=starts)
    # chunk 2 of 2 belongs half way through the paper (word ~800): the Results open 50 words before it
    assert kept[0].startswith("Introduction sentence 0 ") and kept[1].startswith("Results sentence 0 ")
    assert "left out" in warnings[0]
    alone, _ = chunks(paper["text"], 100, max_chunks=2)
    assert alone[0] == kept[0] and not alone[1].startswith(("Results sentence 0 ", "Methods sentence 0 "))


def test_a_run_by_the_135m_model_says_it_is_demo_quality_and_how_much_of_each_paper_it_saw(tmp_path, capsys):
    work = tmp_path / "work"
    short = {"id": "short", "title": "A short paper", "text": "Results sentence 1 states a finding of 2 units. " * 5}
    papers = [sectioned_paper(), short]
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": ["finding"], "status": "ok"} for p in papers])
    reply = "Q1: What finding does the results sentence state?\nA1: A finding of 2 units."
    with ScriptedChat(lambda body: reply) as server:
        argv = ["run", "--work", str(work), "--stages", "seed,publish", "--endpoint", server.base_url]
        argv += ["--model", DEFAULT_MODEL_ID, "--n-pairs", "2", "--chunk-words", "100", "--max-chunks", "2"]
        assert main(argv) == 0, capsys.readouterr().err
        asked = [body["messages"][-1]["content"] for body in server.requests]
    assert any("Results sentence 0 states" in prompt for prompt in asked)  # the second chunk opens the Results

    recs = {r["id"]: r for r in read_jsonl(work / "seed.jsonl")}
    long_words = len(papers[0]["text"].split())
    assert recs["long"]["paper_words"] == long_words and 150 < recs["long"]["seen_words"] < 250
    assert recs["long"]["seen_share"] == round(recs["long"]["seen_words"] / long_words, 4)
    assert recs["short"]["seen_share"] == 1.0
    total = (recs["long"]["seen_words"] + recs["short"]["seen_words"]) / (long_words + recs["short"]["paper_words"])

    out = capsys.readouterr().out
    assert f"the model saw {total:.0%} of the papers' words" in out
    assert "quality   seed: the embedded SmolLM2-135M-Instruct (135M parameters) writes demo-quality pairs" in out
    assert "good for trying the pipeline, not for a dataset" in out
    assert "`teacher:`" in out and "--endpoint URL --model NAME" in out

    seed = datasets.load_dataset(str(work / "dataset"), "seed")
    shares = {r["id"]: r["seen_share"] for split in seed.values() for r in split}
    assert shares["short"] == 1.0 and abs(shares["long"] - recs["long"]["seen_share"]) < 1e-6
    card = (work / "dataset" / "README.md").read_text()
    assert "> **Demo data** (the `seed` config): the embedded SmolLM2-135M-Instruct" in card
    assert "`teacher:`" in card and f"It saw {total * 100:.0f} % of the papers' words." in card


def test_section_starts_reach_only_a_stage_that_asks_about_chunks(tmp_path):
    """The input record of a stage that reads the whole paper holds what it always held, so its finished records
    keep their fingerprints; only the chunked profile gets where the sections start."""
    paper = {"id": "p", "title": "T", "sections": [section(n, w) for n, w in SECTION_WORDS.items()]}
    paper["text"] = "\n\n".join(s["text"] for s in paper["sections"])
    write_jsonl(tmp_path / "papers.jsonl", [paper])
    (whole,) = with_keywords(tmp_path)
    assert set(whole) == {"id", "title", "text", "keywords", "existing_qa"}
    (chunked,) = with_keywords(tmp_path, sections=True)
    assert len(chunked["section_starts"]) == len(SECTION_WORDS) and chunked["section_starts"][0] == 0
