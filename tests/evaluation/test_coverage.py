"""Coverage with evidence: sentence splitting, hand-checked coverage numbers, the real MiniLM embedder,
and the resumable stage on a work directory."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "2")

from sciqag_dataset.core.records import qa_papers, qa_source  # noqa: E402
from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.evaluation import coverage as cov  # noqa: E402
from sciqag_dataset.evaluation.embedder import (
    E5_INSTRUCTION,
    default_instruction,  # noqa: E402
    load_embedder,
)

# --- sentence splitting -------------------------------------------------------------------------

SPLIT_CASES = [
    ("The gap is 3.5 eV. It grows.", ["The gap is 3.5 eV.", "It grows."]),
    ("Oxides, e.g. TiO2, absorb UV. Nitrides do not.", ["Oxides, e.g. TiO2, absorb UV.", "Nitrides do not."]),
    ("As Fig. 3 shows, it rises. Then it falls.", ["As Fig. 3 shows, it rises.", "Then it falls."]),
    ("Kovacs et al. Reported it first. We agree.", ["Kovacs et al. Reported it first.", "We agree."]),
    ("Anatase vs. Rutile phases differ. Both are white.", ["Anatase vs. Rutile phases differ.", "Both are white."]),
    ("It melts at 300 K. The liquid flows.", ["It melts at 300 K.", "The liquid flows."]),
    ("Data from J. Okafor were used. They fit.", ["Data from J. Okafor were used.", "They fit."]),
    ("It was known [12]. New data agree.", ["It was known [12].", "New data agree."]),
    ("It was known.[3,4] New data agree.", ["It was known.[3,4]", "New data agree."]),
    ("Is it stable? Yes! It is.", ["Is it stable?", "Yes!", "It is."]),
    (
        "Milled for 5 min. All grains shrank. See Sec. 2 for details.",
        ["Milled for 5 min.", "All grains shrank.", "See Sec. 2 for details."],
    ),
    ("A rate of 1.2e-3 per s. 10 samples were used.", ["A rate of 1.2e-3 per s.", "10 samples were used."]),
    ("Results and discussion\n\nThe film was\nhard-wrapped here. Fine.", ["The film was hard-wrapped here.", "Fine."]),
    ("## Methods\nWe mixed two powders. We pressed them.\n\n2.", ["We mixed two powders.", "We pressed them."]),
    ("", []),
]


@pytest.mark.parametrize("text,expected", SPLIT_CASES)
def test_split_sentences(text, expected):
    assert cov.split_sentences(text) == expected


# --- the coverage arithmetic on a hand-written matrix -------------------------------------------


def test_chunks_and_k_follow_the_notebook():
    # k = int(0.15 n), at least 1; chunk = int(i // (n / 10))
    assert [cov.n_top(n) for n in (1, 6, 7, 20, 23, 100)] == [1, 1, 1, 3, 3, 15]
    for n in (7, 20, 23, 37, 100, 151):
        assert [cov.chunk_of(i, n) for i in range(n)] == [int(i // (n / 10)) for i in range(n)]


def test_coverage_from_a_hand_matrix():
    # 2 answers x 20 sentences -> k = 3, chunk = i // 2
    sim = np.zeros((2, 20))
    sim[0, [4, 5, 10]] = [0.9, 0.8, 0.7]  # answer 1's top-3: sentences 4, 5, 10 -> chunks 2, 2, 5
    sim[1, [4, 15, 16]] = [0.95, 0.85, 0.6]  # answer 2's top-3: 4, 15, 16 -> chunks 2, 7, 8
    out = cov.coverage_from_matrix(sim)
    assert out["k"] == 3 and out["n_sentences"] == 20
    # released: pooled scores .95(s4) .9(s4 again) .85(s15) .8(s5) -> distinct s4, s15, s5 -> chunks {2, 7}
    assert out["pooled"] == [4, 15, 5]
    assert out["released"] == pytest.approx(0.2)
    # Eq. 1: chunks {2, 5} U {2, 7, 8} = 4 chunks
    assert out["eq1"] == pytest.approx(0.4)
    assert out["chunk_rates"] == pytest.approx([0.2, 0.3])


def test_coverage_needs_sentences():
    with pytest.raises(ValueError, match="no sentences"):
        cov.coverage_from_matrix(np.zeros((3, 0)))


# --- the real embedder --------------------------------------------------------------------------

S_A = "The perovskite film absorbed strongly at wavelengths shorter than 780 nanometres."
S_B = "The lithium battery lost a fifth of its capacity after five hundred charging cycles."
S_C = "The platinum catalyst converted most of the carbon monoxide into carbon dioxide at low temperature."
FILLER = [
    "Glaciers carved deep valleys into the granite mountains during the last ice age.",
    "The orchestra rehearsed the symphony twice before the evening concert.",
    "Migrating geese follow the coastline on their way south every autumn.",
    "The bakery sells sourdough bread with a thick and crunchy crust.",
    "Medieval merchants crossed the desert in long camel caravans.",
    "A telescope on the mountain recorded the faint light of a distant galaxy.",
    "The football match was postponed because of heavy snowfall.",
    "Volcanic ash buried the ancient village under several metres of debris.",
    "The novelist wrote her first book in a small cottage by the sea.",
    "Honeybees communicate the location of flowers through a waggle dance.",
    "The city council approved a new bicycle lane along the river.",
]
# 20 sentences: S_A at 0, 7, 19 (chunks 0, 3, 9); S_B at 2, 3, 12 (chunks 1, 1, 6);
# S_C at 5, 14, 16 (chunks 2, 7, 8); fillers elsewhere. k = int(20 * 0.15) = 3, chunk = i // 2.
LAYOUT = {0: S_A, 7: S_A, 19: S_A, 2: S_B, 3: S_B, 12: S_B, 5: S_C, 14: S_C, 16: S_C}
_fill = iter(FILLER)
SENTENCES = [LAYOUT[i] if i in LAYOUT else next(_fill) for i in range(20)]
PAPER_TEXT = "Introduction\n\n" + " ".join(SENTENCES[:10]) + "\n\n" + " ".join(SENTENCES[10:])
QA = [
    # an empty question makes the query the sentence itself: cosine 1, so the pooled top-3 is S_A's copies
    {"question": "", "answer": S_A, "origin": "teacher"},
    {"question": "How durable was the battery?", "answer": S_B, "origin": "teacher"},
    {"question": "What did the catalyst do?", "answer": S_C, "origin": "teacher"},
]


@pytest.fixture(scope="module")
def model():
    return load_embedder()


def test_fixture_splits_into_the_twenty_sentences():
    assert cov.split_sentences(PAPER_TEXT) == SENTENCES


def test_hand_checked_coverage_with_minilm(model):
    paper = {"id": "p1", "text": PAPER_TEXT, "qa": QA}
    sim, sentences = cov.answer_sentence_matrix(paper, model)
    assert sim.shape == (3, 20) and sentences == SENTENCES
    assert sim[0, 0] == pytest.approx(1.0, abs=1e-4)  # identical text
    released = cov.coverage_record(paper, model)
    eq1 = cov.coverage_record(paper, model, definition="eq1", top_context=2)
    # per answer: S_A {0, 3, 9}, S_B {1, 6}, S_C {2, 7, 8}
    assert [p["chunk_rate"] for p in released["pair_metrics"]] == pytest.approx([0.3, 0.2, 0.3])
    # released: the 3 best distinct sentences overall are S_A's copies -> chunks {0, 3, 9}
    assert released["paper_metrics"]["coverage"] == pytest.approx(0.3)
    # Eq. 1: {0, 3, 9} U {1, 6} U {2, 7, 8} = 8 of 10 chunks
    assert eq1["paper_metrics"]["coverage"] == pytest.approx(0.8)
    assert released["info"]["coverage_eq1"] == pytest.approx(0.8)
    assert released["info"]["k"] == 3 and released["info"]["n_sentences"] == 20
    # evidence: the copied sentence first, distinct texts, top_context of them
    for pair, qa in zip(released["pair_metrics"], QA):
        assert pair["context"][0] == qa["answer"]
        assert len(pair["context"]) == 3 and len(set(pair["context"])) == 3
    assert [len(p["context"]) for p in eq1["pair_metrics"]] == [2, 2, 2]


def test_instruction_only_for_instruct_embedders():
    assert default_instruction("sentence-transformers/all-MiniLM-L6-v2") == ""
    assert default_instruction("intfloat/e5-mistral-7b-instruct") == E5_INSTRUCTION
    assert cov.queries_for([{"question": "Q?", "answer": "A."}], E5_INSTRUCTION) == [
        "Instruct: Given the Question & Answer pair, retrieve relevant sentences to this answer.\nQuery: Q?\nA."
    ]


def test_unknown_model_fails_clearly(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network wait; the error must still say what to do
    with pytest.raises(RuntimeError, match="cannot load embedding model 'no-such-org/no-such-embedder'"):
        load_embedder("no-such-org/no-such-embedder")


# --- the stage ----------------------------------------------------------------------------------


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_run_coverage_streams_resumes_and_records_failures(tmp_path, model, caplog):
    _write(
        tmp_path / "papers.jsonl",
        [
            {"id": "good", "title": "Three findings", "text": PAPER_TEXT},
            {"id": "empty", "title": "No body", "text": "Abstract"},
            {"id": "unparsed", "title": "Teacher failed", "text": PAPER_TEXT},
            {"id": "no-qa", "title": "Never seeded", "text": PAPER_TEXT},
        ],
    )
    _write(
        tmp_path / "seed.jsonl",
        [
            {"id": "good", "status": "unparsed", "qa": []},  # superseded by the later line
            {"id": "good", "status": "ok", "qa": QA},
            {"id": "empty", "status": "short", "qa": QA[:1]},
            {"id": "unparsed", "status": "unparsed", "qa": []},
            {"id": "orphan", "status": "ok", "qa": QA},  # no paper text: said, not silently dropped
        ],
    )
    assert qa_source(tmp_path) == "seed"
    papers = list(qa_papers(tmp_path, "seed"))
    assert [p["id"] for p in papers] == ["good", "empty"]
    assert papers[0]["qa"] == QA and papers[0]["title"] == "Three findings"
    assert "1 seed records have no paper in papers.jsonl" in caplog.text and "orphan" in caplog.text

    summary = run_stage(cov.stage(), tmp_path)
    assert summary.counts == {"ok": 1, "failed": 1}
    lines = [json.loads(x) for x in (tmp_path / "coverage.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in lines}
    assert by_id["good"]["paper_metrics"]["coverage"] == pytest.approx(0.3)
    assert len(by_id["good"]["pair_metrics"]) == 3
    assert "no sentences" in by_id["empty"]["error"]

    again = run_stage(cov.stage(), tmp_path)  # the finished paper is skipped, the failed one retried
    assert again.counts == {"skipped": 1, "failed": 1}
    assert cov.coverage_summary(lines) == {
        "papers": 1,
        "coverage": pytest.approx(0.3),
        "chunk_rate": pytest.approx((0.3 + 0.2 + 0.3) / 3),
        "grounded": 1.0,  # the answers quote the paper
        "ungrounded": 0,
        "answers_grounded": 3,
    }
    with pytest.raises(ValueError, match="definition"):
        cov.stage(definition="union")
    with pytest.raises(FileNotFoundError, match="generate"):
        qa_source(tmp_path, "generated")
