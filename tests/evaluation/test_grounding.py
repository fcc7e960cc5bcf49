"""Quotes with offsets and the `grounded` score (coverage's evidence, no model call): offsets slice to their
quotes, an answer the paper does not support scores low, and `sciqag filter --min-grounding` drops it."""

from __future__ import annotations

from helpers import read_jsonl, write_jsonl

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.evaluation.filter import filter_pairs
from sciqag_dataset.evaluation.grounding import content_words, grounded

STEEL = (
    "We studied a low-carbon steel annealed at 900 C for two hours.\n"
    "Annealing coarsened the ferrite grains from 12 to 35 micrometres.   The yield strength fell from 410 to 320 MPa "
    "after annealing. Hardness followed the same trend. Elongation at break rose from 18 to 27 percent. "
    "Samples were cut from the middle of a hot-rolled plate and polished before testing."
)
FAITHFUL = (
    "How did annealing change the yield strength?",
    "The yield strength fell from 410 to 320 MPa after annealing.",
)
INVENTED = (
    "Why was the steel treated before testing?",
    "It was treated to remove the oxygen atoms that give the steel its blue color.",
)


def test_content_words_fold_forms_and_drop_stop_words():
    assert content_words("The cracks appeared at 3.5 K in these cracked films") == {"crack", "appea", "3.5", "films"}
    assert content_words("1,000 cycles at 3.20 V and 320.0 K on hot-rolled steel") == {
        "1000",
        "cycle",
        "3.2",
        "320",
        "hot",
        "rolle",
        "steel",
    }
    assert grounded("It is.", []) is None
    assert grounded("Grains coarsened to 35 micrometres.", [{"text": "the grains coarsened (35 micrometres)"}]) == 1.0


def test_offsets_slice_to_their_quotes_and_invented_answers_are_ungrounded(tmp_path):
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [{"id": "steel", "title": "Annealed steel", "text": STEEL}])
    qa = [{"question": q, "answer": a, "origin": "generator"} for q, a in (FAITHFUL, INVENTED)]
    write_jsonl(work / "generated.jsonl", [{"id": "steel", "status": "ok", "qa": qa}])
    run_evaluate(work, EvaluateConfig(metrics=["coverage"]))
    rows = read_jsonl(work / "evaluated.jsonl")
    for row in rows:
        assert row["quotes"] and all(STEEL[q["start"] : q["end"]] == q["text"] for q in row["quotes"])
        # the quotes are coverage's evidence sentences, found where they stand (the text's own whitespace)
        assert [" ".join(q["text"].split()) for q in row["quotes"]] == [" ".join(c.split()) for c in row["context"]]
        assert all(-1 <= q["score"] <= 1 for q in row["quotes"])
    faithful, invented = rows
    assert any("410 to 320 MPa" in q["text"] for q in faithful["quotes"])
    assert faithful["grounded"] >= 0.8 and invented["grounded"] <= 0.3
    result = filter_pairs(work, min_grounding=0.5)
    assert result["kept"] == 1 and result["failed_by_rule"] == {"min_grounding": 1}
    assert [r["answer"] for r in read_jsonl(work / "filtered.jsonl")] == [FAITHFUL[1]]
