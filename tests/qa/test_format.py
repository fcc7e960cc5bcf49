"""Prompts (both styles), the released target format, and instruction records."""

from __future__ import annotations

import random

import pytest

from sciqag_dataset.qa.format import render_output, to_instruction
from sciqag_dataset.qa.parse import parse_qa
from sciqag_dataset.qa.prompts import (
    ALPACA_INSTRUCTION,
    ALPACA_TEMPLATE,
    EXAMPLE_QUESTION,
    PAPER_PROMPT,
    PROMPT_STYLES,
    build_messages,
    build_raw_prompt,
    instruction_text,
)

PAPER = (
    "Zeolite H-ZSM-5 catalysts were treated with 0.2 M NaOH to create mesopores.\n\n"
    "The desilicated samples kept 85 % of their Brønsted acid sites and converted methanol to olefins "
    "for 60 h before deactivation, compared with 22 h for the parent zeolite. Coke {formed} mainly "
    "on the external surface."
)
KW = ["H-ZSM-5", "desilication", "methanol-to-olefins", "coke deposition"]
QA = [
    {
        "question": "How does alkaline desilication extend the catalytic lifetime of H-ZSM-5 in methanol conversion?",
        "answer": "Mesopores shorten diffusion paths, so coke forms on the external surface instead of blocking "
        "micropores; the lifetime rose from 22 h to 60 h.",
        "origin": "teacher",
    },
    {
        "question": "Which property of the acid sites survives a 0.2 M NaOH treatment?",
        "answer": "About 85 % of the Brønsted acid sites remain, because:\n- aluminium is not leached;\n"
        "- framework Al stays tetrahedral.\n\nThe acid strength is unchanged.",
        "origin": "teacher",
    },
]
RECORD = {"id": "paper-1", "title": "Mesoporous H-ZSM-5", "text": PAPER, "keywords": KW, "qa": QA}


# --- prompts --------------------------------------------------------------------------------------
def test_paper_prompt_is_the_appendix_text():
    assert PAPER_PROMPT.startswith(
        "Attached is a detailed scientific paper.\n\n{paper}\n\nYour task is to formulate {n} sophisticated Q&A pairs"
    )
    assert "focusing specifically on {keywords}." in PAPER_PROMPT
    bare = build_messages(PAPER, KW, format_hint=False)[0]["content"]
    assert bare == PAPER_PROMPT.format(paper=PAPER, n=10, keywords=", ".join(KW))


@pytest.mark.parametrize("style", PROMPT_STYLES)
@pytest.mark.parametrize("n", [1, 3, 10])
def test_messages_carry_paper_keywords_and_n(style, n):
    messages = build_messages(PAPER, KW, n=n, style=style)
    assert [m["role"] for m in messages] == ["user"]
    content = messages[0]["content"]
    assert PAPER in content  # braces in the paper are kept, not treated as placeholders
    assert all(k in content for k in KW)
    last = (
        f"Q{n}: [Question {n}]\nA{n}: [Answer {n}]"
        if style == "alpaca"
        else (f"Q{n}: ...\nA{n}: ..." if n > 1 else f"Q1: {EXAMPLE_QUESTION}")
    )
    assert last in content
    assert f"Q{n + 1}:" not in content
    assert (f"formulate {n} sophisticated" if style == "paper" else f"Generate {n} scientific") in content
    if style == "alpaca":
        assert content.startswith(ALPACA_INSTRUCTION + "\n\nHere is a scientific paper:\n" + PAPER)


def test_title_is_put_before_the_paper():
    content = build_messages(PAPER, KW, title="Mesoporous H-ZSM-5")[0]["content"]
    assert "Mesoporous H-ZSM-5\n\n" + PAPER in content


def test_no_keywords():
    paper = build_messages(PAPER, [], n=10)[0]["content"]
    assert "focusing specifically on the key concepts of the paper." in paper
    assert "Keywords:" not in paper
    alpaca = build_raw_prompt(PAPER, [], n=10)
    # without supplied keywords the released template is reproduced: the model picks 15 itself
    assert "identify 15 keywords" in alpaca and "candidate keywords" not in alpaca
    assert "Keywords: [keyword 1, keyword 2, ..., keyword15]" in alpaca


def test_raw_alpaca_prompt():
    raw = build_raw_prompt(PAPER, KW, n=4)
    assert raw.startswith("Below is an instruction that describes a task, paired with an input")
    assert raw.endswith("Q4: [Question 4]\nA4: [Answer 4]\n\n### Response:\n")
    head, rest = raw.split("### Instruction:\n", 1)
    instruction, rest = rest.split("\n\n### Input:\n", 1)
    assert instruction == ALPACA_INSTRUCTION
    assert rest.startswith("Here is a scientific paper:\n" + PAPER + "\n\n")
    assert "identify 4 keywords" in rest and ", ".join(KW) in rest
    assert ALPACA_TEMPLATE.count("{") == 2


def test_instruction_text_has_no_paper():
    for style in PROMPT_STYLES:
        text = instruction_text(KW, n=5, style=style)
        assert "0.2 M NaOH" not in text and all(k in text for k in KW)
        assert ("Q5: [Question 5]" if style == "alpaca" else "Q5: ...\nA5: ...") in text


@pytest.mark.parametrize("bad", [dict(style="chatml"), dict(n=0), dict(n="10")])
def test_bad_arguments_are_clear_errors(bad):
    with pytest.raises(ValueError, match="style|n "):
        build_messages(PAPER, KW, **bad)
    with pytest.raises(ValueError, match="string"):
        build_messages(None, KW)


# --- target format --------------------------------------------------------------------------------
def test_render_output_exact_shape():
    out = render_output(QA[:1], ["a", "b"])
    assert out == f"Keywords: a, b\n\nQ1: {QA[0]['question']}\nA1: {QA[0]['answer']}"
    assert render_output(QA[:1], []) == f"Q1: {QA[0]['question']}\nA1: {QA[0]['answer']}"


def test_render_skips_incomplete_pairs_and_tidies():
    qa = [
        {"question": " Why?\n", "answer": "Because.  "},
        {"question": "Orphan?", "answer": ""},
        {"Q": "Old keys?", "A": "Yes."},
    ]
    assert render_output(qa, [" x ", ""]) == "Keywords: x\n\nQ1: Why?\nA1: Because.\n\nQ2: Old keys?\nA2: Yes."


def test_round_trip():
    r = parse_qa(render_output(QA, KW), expected=2)
    assert r.status == "ok" and r.keywords == KW
    assert r.pairs == [{"question": p["question"], "answer": p["answer"]} for p in QA]


def test_round_trip_random_pairs():
    rng = random.Random(7)
    words = (
        "zeolite pore acid coke 0.2 M NaOH 85 % Brønsted (MFI) yield: selectivity; "
        "C2H4 propene 450 °C 1.5 h-1 e.g. i.e. A. Q."
    ).split()
    for _ in range(200):
        qa, kws = [], [" ".join(rng.choices(words[:8], k=rng.randint(1, 3))) for _ in range(rng.randint(0, 6))]
        for _ in range(rng.randint(1, 12)):
            q = " ".join(rng.choices(words, k=rng.randint(3, 15))) + "?"
            lines = ["The " + " ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(rng.randint(1, 4))]
            a = "\n".join(rng.choice(["", "- ", "1. ", "2) ", "* "]) + s if i else s for i, s in enumerate(lines))
            qa.append({"question": q, "answer": a.replace(" \n", "\n").strip()})
        r = parse_qa(render_output(qa, kws), expected=len(qa))
        assert r.pairs == qa and r.status == "ok"
        assert r.keywords == [k for k in kws if k]


# --- instruction records --------------------------------------------------------------------------
@pytest.mark.parametrize("style", PROMPT_STYLES)
def test_to_instruction(style):
    rec = to_instruction(RECORD, style=style, n=2)
    assert set(rec) == {"instruction", "input", "output", "messages"}
    assert rec["instruction"] == instruction_text(KW, n=2, style=style)
    assert rec["input"] == PAPER
    assert rec["output"] == render_output(QA, KW)
    assert [m["role"] for m in rec["messages"]] == ["user", "assistant"]
    # the title goes before the paper, as the generation stage sends it
    assert rec["messages"][:1] == build_messages(PAPER, KW, n=2, style=style, title=RECORD.get("title"))
    assert rec["messages"][-1]["content"] == rec["output"]


def test_to_instruction_rejects_unusable_records():
    with pytest.raises(ValueError, match="paper-1: no paper text"):
        to_instruction({**RECORD, "text": "  "})
    with pytest.raises(ValueError, match="paper-1: no complete QA pair"):
        to_instruction({**RECORD, "qa": [{"question": "Why?", "answer": None}]})
    rec = to_instruction({**RECORD, "keywords": None})
    assert rec["output"].startswith("Q1: ")
