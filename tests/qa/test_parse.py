"""parse_qa on hand-written replies in every shape teachers and generators produce.

All fixture texts are written for these tests (invented studies, no published paper text).
"""

from __future__ import annotations

import json
import random
import time

import pytest

from sciqag_dataset.qa.parse import ParseResult, parse_qa

# Three pairs reused across shapes, so every shape must give exactly the same result.
Q = [
    "How does partial substitution of bromide for iodide change the band gap of the mixed-halide perovskite films?",
    "Why did the Cs0.1FA0.9PbI3 devices retain more of their efficiency under continuous illumination at 65 °C?",
    "What role does the PTAA hole-transport layer thickness play in the fill factor of the devices?",
]
A = [
    "Replacing 20 % of the iodide with bromide widened the optical band gap from 1.55 eV to 1.68 eV, "
    "because the Br 4p states push the valence band maximum down.",
    "Caesium incorporation shrinks the pseudo-cubic lattice and raises the activation energy for iodide "
    "migration from 0.28 eV to 0.41 eV, so ion accumulation at the interfaces slowed and the devices kept "
    "92 % of their initial efficiency after 1000 h.",
    "A 12 nm PTAA layer gave the highest fill factor of 0.81; thicker layers added series resistance, while "
    "thinner layers left pinholes that increased shunt losses.",
]
PAIRS = list(zip(Q, A))
KW = ["mixed-halide perovskite", "band gap", "ion migration", "PTAA"]


def pairs(result: ParseResult) -> list[tuple[str, str]]:
    return [(p["question"], p["answer"]) for p in result.pairs]


def check(text: str, expected=PAIRS, keywords=None, status="ok", n=None):
    result = parse_qa(text, expected=len(expected) if n is None else n)
    assert pairs(result) == expected, result
    assert result.status == status, result
    if keywords is not None:
        assert result.keywords == keywords
    return result


# --- the released format and its punctuation variants --------------------------------------------
RELEASED = "Keywords: mixed-halide perovskite, band gap, ion migration, PTAA\n\n" + "\n\n".join(
    f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1)
)


def test_released_format_with_keywords():
    r = check(RELEASED, keywords=KW)
    assert r.reason is None


@pytest.mark.parametrize("sep", [":", ".", ")", " -", " :", "："])
def test_numbered_marker_separators(sep):
    text = "\n\n".join(f"Q{i}{sep} {q}\nA{i}{sep} {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_markdown_bold_markers():
    text = "\n\n".join(f"**Q{i}:** {q}\n**A{i}:** {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)
    text = "\n\n".join(f"**Q{i}: {q}**\n\n**A{i}:** {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)
    text = "\n\n".join(f"- **Q{i}**: {q}\n- **A{i}**: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_question_answer_words():
    text = "\n\n".join(f"Question {i}: {q}\nAnswer {i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)
    text = "\n\n".join(f"**Question {i}:** {q}\n**Answer:** {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_markdown_headings():
    text = "# Questions and answers\n\n" + "\n\n".join(
        f"### Question {i}\n{q}\n\n### Answer\n{a}" for i, (q, a) in enumerate(PAIRS, 1)
    )
    check(text)


def test_unnumbered_q_a():
    text = "\n\n".join(f"Q: {q}\nA: {a}" for q, a in PAIRS)
    check(text)
    text = "\n\n".join(f"Question: {q}\nAnswer: {a}" for q, a in PAIRS)
    check(text)


def test_list_number_with_word_markers():
    text = "\n\n".join(f"{i}. Question: {q}\n   Answer: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)
    text = "\n\n".join(f"{i}. **Q:** {q}\n   **A:** {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_parenthetical_topic_after_number():
    text = "\n\n".join(f"Q{i} ({k}): {q}\nA{i}: {a}" for i, ((q, a), k) in enumerate(zip(PAIRS, KW), 1))
    check(text)


def test_inline_answer_on_question_line():
    text = "\n".join(f"Q{i}: {q} A{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)
    text = "\n".join(f"Q: {q} A: {a}" for q, a in PAIRS)
    check(text)


def test_question_marker_without_answer_marker():
    text = "\n\n".join(f"Q{i}: {q}\n{a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


# --- numbered lists without Q/A markers -----------------------------------------------------------
def test_numbered_list_with_answer_paragraph():
    text = "Here are three questions about the perovskite study.\n\n" + "\n\n".join(
        f"{i}. {q}\n{a}" for i, (q, a) in enumerate(PAIRS, 1)
    )
    check(text)


def test_numbered_list_with_indented_answers_and_bold():
    text = "\n\n".join(f"{i}. **{q}**\n   {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_numbered_list_markdown_autonumber():
    # Markdown renderers number "1." items themselves, so some models write "1." every time.
    text = "\n\n".join(f"1. {q}\n\n{a}" for q, a in PAIRS)
    check(text)


def test_numbered_list_with_answer_lines():
    text = "\n\n".join(f"{i}. {q}\nAnswer: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_answer_markers_only():
    text = "Sure, here they are:\n\n" + "\n\n".join(f"{q}\nAnswer: {a}" for q, a in PAIRS)
    check(text)
    # the question run straight into the previous answer without a blank line
    text = "\n".join(f"{q}\nA: {a}" for q, a in PAIRS)
    check(text)


def test_answer_markers_only_with_multiline_answers():
    qa = [(Q[0], LIST_ANSWER), (Q[1], A[1]), (Q[2], A[2])]
    text = "\n".join(f"{q}\nAnswer: {a}" for q, a in qa)  # no blank line before each question
    check(text, qa)


def test_numbered_questions_with_nested_question_list_in_answer():
    nested = "Two open issues remain:\n   1. Is the gain stable beyond 2000 h?\n   2. Does it hold for 1 cm2 cells?"
    qa = [(Q[0], nested), (Q[1], A[1])]
    check("\n\n".join(f"{i}. {q}\n{a}" for i, (q, a) in enumerate(qa, 1)), qa)


def test_bold_question_then_answer_on_same_line():
    text = "\n".join(f"{i}. **{q}** {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


# --- multi-line answers ---------------------------------------------------------------------------
LIST_ANSWER = (
    "Three effects combined:\n"
    "1. the larger grains reduced grain-boundary recombination;\n"
    "2. the passivated surface lowered the trap density to 3 × 10^15 cm^-3;\n"
    "3. the improved energy alignment raised the open-circuit voltage by 60 mV.\n"
    "Together they lifted the efficiency from 18.2 % to 21.4 %."
)
BULLET_ANSWER = (
    "The degradation followed two routes.\n\n"
    "- Under humidity, hydrate phases formed within 48 h.\n"
    "- Under heat, PbI2 segregated at the grain boundaries.\n"
    "* A. thaliana-derived additives were not involved; the A-site cation mix mattered more.\n\n"
    "Encapsulation suppressed the first route but not the second."
)


def test_lists_inside_answers_stay_in_the_answer():
    qa = [(Q[0], LIST_ANSWER), (Q[1], BULLET_ANSWER), (Q[2], A[2])]
    text = "\n\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(qa, 1))
    check(text, qa)
    text = "\n\n".join(f"**Question {i}:** {q}\n**Answer:** {a}" for i, (q, a) in enumerate(qa, 1))
    check(text, qa)


def test_lists_inside_numbered_mode_answers():
    qa = [(Q[0], LIST_ANSWER), (Q[1], BULLET_ANSWER), (Q[2], A[2])]
    indented = [(q, "\n".join("   " + s if s else s for s in a.split("\n"))) for q, a in qa]
    text = "\n\n".join(f"{i}. {q}\n{a}" for i, (q, a) in enumerate(indented, 1))
    result = parse_qa(text, expected=3)
    assert [p["question"] for p in result.pairs] == Q
    assert [p["answer"].replace("   ", "") for p in result.pairs] == [a for _, a in qa]


def test_separators_and_closing_text_do_not_leak_into_questions():
    text = (
        "Sure! Below are the pairs.\n\n---\n\n"
        + "\n\n---\n\n".join(f"**Q{i}:** {q}\n**A{i}:** {a}" for i, (q, a) in enumerate(PAIRS, 1))
        + "\n\n---"
    )
    check(text)


# --- keywords -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "Keywords: mixed-halide perovskite, band gap, ion migration, PTAA",
        "Keywords: [mixed-halide perovskite, band gap, ion migration, PTAA]",
        "**Keywords:** mixed-halide perovskite; band gap; ion migration; PTAA.",
        "Key words: mixed-halide perovskite, band gap, ion migration, PTAA",
        "Keywords:\n- mixed-halide perovskite\n- band gap\n- ion migration\n- PTAA",
        "Keywords:\n1. mixed-halide perovskite\n2. band gap\n3. ion migration\n4. PTAA",
    ],
)
def test_keyword_line_shapes(line):
    body = "\n\n".join(f"{i}. {q}\n{a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(f"{line}\n\n{body}", keywords=KW)
    body = "\n\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(f"Here is my analysis.\n{line}\n\n{body}", keywords=KW)


def test_keywords_paragraph_after_the_pairs():
    body = "\n\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(body + "\n\nKeywords: mixed-halide perovskite, band gap, ion migration, PTAA", keywords=KW)


def test_no_keywords_line_gives_empty_list():
    assert check("\n\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))).keywords == []


# --- JSON -----------------------------------------------------------------------------------------
def test_json_list():
    text = json.dumps([{"question": q, "answer": a} for q, a in PAIRS], indent=2)
    check(text)


def test_json_fenced_q_a_keys_with_preface():
    body = json.dumps([{"Q": q, "A": a} for q, a in PAIRS], ensure_ascii=False, indent=2)
    check(f"Here are the pairs in JSON:\n\n```json\n{body}\n```\nLet me know if you need more.")


def test_json_object_with_keywords_and_pairs():
    obj = {"keywords": KW, "qa_pairs": [{"Question": q, "Answer": a} for q, a in PAIRS]}
    check("```\n" + json.dumps(obj) + "\n```", keywords=KW)


def test_json_numbered_keys():
    obj = {f"{k}{i}": v for i, (q, a) in enumerate(PAIRS, 1) for k, v in (("Q", q), ("A", a))}
    check(json.dumps(obj))


def test_truncated_json_keeps_complete_pairs():
    text = json.dumps([{"question": q, "answer": a} for q, a in PAIRS], indent=2)
    cut = text[: text.rindex('"answer"') + 30]  # the last answer is cut mid-string
    r = check(cut, PAIRS[:2], status="short", n=3)
    assert "parsed 2 of 3" in r.reason


def test_latex_braces_do_not_trigger_json():
    a = "The rate follows k = A\\exp{-E_a/RT} with E_a = 54 kJ mol^{-1}."
    check(f"Q1: {Q[0]}\nA1: {a}", [(Q[0], a)])


# --- damage: newlines, truncation, repeats, thinking ----------------------------------------------
def test_windows_newlines():
    check(RELEASED.replace("\n", "\r\n"), keywords=KW)
    check(RELEASED.replace("\n", "\r"), keywords=KW)


def test_question_without_answer_is_dropped_and_counted():
    text = RELEASED + "\n\nQ4: What limited the device area to 0.1 cm2?"
    r = parse_qa(text, expected=4)
    assert pairs(r) == PAIRS and r.status == "short"
    assert "1 question(s) without an answer" in r.reason
    text = RELEASED + "\n\nQ4: What limited the device area to 0.1 cm2?\nA4:"
    assert "1 question(s) without an answer" in parse_qa(text, expected=4).reason


def test_duplicated_numbering_keeps_every_pair():
    text = "\n\n".join(f"Q1: {q}\nA1: {a}" for q, a in PAIRS)
    check(text)
    text = "\n\n".join(f"Q{min(i, 2)}: {q}\nA{min(i, 2)}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    check(text)


def test_repeated_block_is_deduplicated():
    block = "\n\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(PAIRS, 1))
    r = check(block + "\n\n" + block.replace("Q1", "Q4").replace("A1", "A4"))
    assert "3 repeated question(s)" in r.reason


def test_think_block_is_ignored():
    text = "<think>\nQ1: should I ask about the band gap?\nA1: maybe.\n</think>\n" + RELEASED
    check(text, keywords=KW)


def test_copied_template_placeholders_are_dropped():
    # what a 135M model wrote when shown the format skeleton
    text = (
        "The catalysts were treated with NaOH.\n\nKeywords: [keyword 1, keyword2, keyword3]\n\n"
        "Q1: [Question 1]\nA1: [Answer 1]\n\nQ2: [Question 2]\nA2: [Answer 2]\n\n"
        f"Q3: [{Q[2]}]\nA3: [{A[2]}]\n\nA1: [Answer 1]\nA2: [Answer 2]"
    )
    r = check(text, PAIRS[2:], keywords=[], n=1)
    assert r.reason == "2 answer(s) without a question ignored; 2 template placeholder pair(s) dropped"
    r = parse_qa("Q1: [Question 1]\nA1: [Answer 1]\n\nQ2: Why?\nA2: ...")
    assert r.status == "unparsed" and "1 template placeholder" in r.reason and "1 question(s) without" in r.reason


def test_answer_before_any_question_is_ignored():
    text = "A: I will write three pairs.\n\n" + RELEASED
    r = check(text)
    assert "1 answer(s) without a question" in r.reason


def test_prose_lines_that_start_like_markers_stay_in_the_answer():
    a = (
        "A-site mixing with caesium stabilised the black phase.\n"
        "A. thaliana is unrelated to this study.\n"
        "Q-factor measurements were not reported.\n"
        "Question 2 of the survey is irrelevant here."
    )
    check(f"Q1: {Q[0]}\nA1: {a}\n\nQ2: {Q[1]}\nA2: {A[1]}", [(Q[0], a), (Q[1], A[1])])


# --- status, reasons, odd input ---------------------------------------------------------------
def test_status_and_min_pairs():
    assert parse_qa(RELEASED, expected=10).status == "short"
    assert parse_qa(RELEASED, expected=10).reason.startswith("parsed 3 of 10")
    assert parse_qa(RELEASED, expected=10, min_pairs=3).status == "ok"
    assert parse_qa(RELEASED, expected=2).status == "ok"
    assert len(parse_qa(RELEASED, expected=2).pairs) == 3  # extra pairs are kept


@pytest.mark.parametrize(
    "text,reason",
    [
        ("", "empty output"),
        ("   \n\t\n", "empty output"),
        (None, "empty output"),
        ("I'm sorry, but I cannot read the attached paper.", "no question/answer markers found"),
        ("Q1: Why does the band gap widen?", "1 question(s) without an answer dropped"),
    ],
)
def test_unparsed(text, reason):
    r = parse_qa(text)
    assert r.status == "unparsed" and r.pairs == [] and r.reason == reason


def test_bytes_input():
    check(RELEASED.encode("utf-8"))


# --- never raises ---------------------------------------------------------------------------------
SEEDS = [
    RELEASED,
    json.dumps([{"question": q, "answer": a} for q, a in PAIRS]),
    "\n\n".join(f"{i}. **{q}**\n   {a}" for i, (q, a) in enumerate(PAIRS, 1)),
    "\n".join(f"{q}\nAnswer: {a}" for q, a in PAIRS),
    f"Q1: {Q[0]}\nA1: {LIST_ANSWER}\n\nQ2: {Q[1]}\nA2: {BULLET_ANSWER}",
]
FRAGMENTS = [
    "Q1:",
    "A1:",
    "Q:",
    "A:",
    "**",
    "__",
    "1.",
    "2)",
    "\n",
    "\r\n",
    "\n\n",
    "?",
    "Keywords:",
    "[",
    "]",
    "{",
    "}",
    '"question": "',
    '"answer": "',
    "```json\n",
    "```",
    "<think>",
    "</think>",
    "- ",
    "#",
    "Question 3",
    "Answer",
    "\\",
    "\t",
    "\u00a0",
    "：",
    "\x00",
    "\ud800",
    "é",
    "(",
    ")",
    "Q10.",
    "A99 -",
]


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(5)
        i = rng.randint(0, len(text))
        if op == 0:
            text = text[:i] + rng.choice(FRAGMENTS) + text[i:]
        elif op == 1:
            text = text[:i] + text[i + rng.randint(1, 40) :]
        elif op == 2:
            text = text[:i]
        elif op == 3:
            text = text[:i] + "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(1, 8))) + text[i:]
        else:
            j = rng.randint(0, len(text))
            text = text[:i] + text[min(i, j) : max(i, j)] + text[i:]
    return text


def assert_well_formed(r: ParseResult, text) -> None:
    assert isinstance(r, ParseResult)
    assert r.status in ("ok", "short", "unparsed")
    assert not (r.reason or "").startswith("parser error"), (r.reason, text)
    assert (r.status == "unparsed") == (not r.pairs)
    assert r.status == "ok" or r.reason
    for p in r.pairs:
        assert set(p) == {"question", "answer"}
        assert isinstance(p["question"], str) and p["question"].strip()
        assert isinstance(p["answer"], str) and p["answer"].strip()
    assert all(isinstance(k, str) and k for k in r.keywords)


def test_never_raises_on_mutated_replies():
    rng = random.Random(20240515)
    start = time.perf_counter()
    for _ in range(5000):
        text = mutate(rng, rng.choice(SEEDS))
        assert_well_formed(parse_qa(text, expected=rng.randint(-1, 12)), text)
    assert time.perf_counter() - start < 20


@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000,
        "{" * 50_000 + "}",
        '{"question": ' * 5000,
        "Q1:" * 20_000,
        "1. ?\n" * 5000,
        "**" * 20_000,
        "A:\n" * 5000,
        "Keywords:" + ",".join(["x"] * 5000),
        "\n" * 100_000,
        "Q1: " + "why " * 30_000 + "? A1: " + "because " * 30_000,
        '"question":"' + "\\" * 10_001,
    ],
)
def test_never_raises_on_adversarial_input(text):
    start = time.perf_counter()
    assert_well_formed(parse_qa(text), text[:80])
    assert time.perf_counter() - start < 5
