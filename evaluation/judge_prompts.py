"""Judge prompts: the five RACAR dimensions and the question-similarity prompt.

A method's prompt is part of its specification, so the sources are stated per prompt:

- Diversity (paper, Appendix C): reproduced word for word from the authors' notebook
  ``visualization/q similarity.ipynb`` (MasterAI-EAM/SciQAG, function ``format``). The
  notebook wraps it in Mixtral's ``<s> [INST] ... [/INST]`` markers by hand; here the
  server's chat template adds them, so they are left out. Its continuation lines are
  indented by the f-string in the notebook; that indentation is dropped.
- RACAR (paper, Appendix B): our own wording of the facts the appendix states (DESIGN.md §1): five
  prompts, each scoring every item of one paper in one call on a 1-3 scale (1 unacceptable, 3 fully
  acceptable), answering with a list holding one object per item with the keys ``score`` and ``reasons``.
  What each judge sees: Relevance the paper and the questions; Agnosticism the questions only;
  Completeness and Accuracy the paper and the pairs; Reasonableness the paper and the answers only,
  presented as statements. The rules the paper states force a 1: an unrelated question (Relevance); a
  question that refers to a specific experimental setup, figure or table (Agnosticism); a logical error
  such as a contradiction (Reasonableness).
- Labels (ours, not the paper's): the Completeness call also asks for each question's reasoning type
  (ChemLit-QA's seven types, and "factual") and difficulty (1-3), so labelling adds no call.
"""

from __future__ import annotations

from collections.abc import Sequence

from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.core.stage import digest
from sciqag_dataset.evaluation.judging import judgements_format

# What each dimension's judge is shown (Appendix B).
PAPER_AND_QUESTIONS, PAPER_AND_PAIRS, QUESTIONS, PAPER_AND_STATEMENTS = (
    "paper_and_questions",
    "paper_and_pairs",
    "questions",
    "paper_and_statements",
)
RACAR_INPUTS = {
    "relevance": PAPER_AND_QUESTIONS,
    "agnosticism": QUESTIONS,
    "completeness": PAPER_AND_PAIRS,
    "accuracy": PAPER_AND_PAIRS,
    "reasonableness": PAPER_AND_STATEMENTS,
}
SEES_PAPER = (PAPER_AND_QUESTIONS, PAPER_AND_PAIRS, PAPER_AND_STATEMENTS)

_ITEM_NAMES = {
    PAPER_AND_QUESTIONS: "questions",
    PAPER_AND_PAIRS: "question-answer pairs",
    QUESTIONS: "questions",
    PAPER_AND_STATEMENTS: "statements",
}

_INTROS = {
    PAPER_AND_QUESTIONS: "You will be given a scientific paper and a list of questions written about it.",
    PAPER_AND_PAIRS: "You will be given a scientific paper and a list of question-answer pairs written about it.",
    QUESTIONS: (
        "You will be given a list of questions written about a scientific paper. The paper is not "
        "shown to you, just as it will not be shown to anyone who answers these questions."
    ),
    PAPER_AND_STATEMENTS: (
        "You will be given a scientific paper and a list of statements written about it. "
        "Judge each statement on its own."
    ),
}

# Our wording of the dimensions and of the rules Appendix B states (see the module docstring).
RACAR_CRITERIA = {
    "relevance": (
        "Rate the relevance of each question: does it pertain to the paper, asking about knowledge the "
        "paper contains?\n"
        "Rule: a question unrelated to the paper scores 1.\n"
        "Score 1: unacceptable - the question is unrelated to the paper.\n"
        "Score 2: partly acceptable - the question touches the paper's topic but not what the paper reports.\n"
        "Score 3: fully acceptable - the question is about what the paper reports."
    ),
    "agnosticism": (
        "Rate the agnosticism of each question: can it be understood and answered without the paper, "
        "independent of the paper's context?\n"
        "Rule: a question that refers to a specific experimental setup, figure or table of the paper (for "
        "example 'from Figure 1', 'in Table 2', 'in this experiment', 'in this study') scores 1.\n"
        "Score 1: unacceptable - the question depends on the paper's context.\n"
        "Score 2: partly acceptable - the question stands mostly on its own but leans on context only the "
        "paper gives.\n"
        "Score 3: fully acceptable - the question is self-contained."
    ),
    "completeness": (
        "Rate the completeness of each answer: does it fully address its question, every sub-question "
        "included, using the relevant information of the paper?\n"
        "Score 1: unacceptable - the answer misses the main point of the question.\n"
        "Score 2: partly acceptable - the answer leaves out a sub-question or relevant details the paper gives.\n"
        "Score 3: fully acceptable - the answer addresses every part of the question with what the paper gives."
    ),
    "accuracy": (
        "Rate the accuracy of each answer: is it correctly extracted from the paper, every claim it makes "
        "supported by the paper?\n"
        "Score 1: unacceptable - the answer contradicts the paper or makes claims the paper does not support.\n"
        "Score 2: partly acceptable - the answer is mostly supported but has an imprecise value or an "
        "unsupported detail.\n"
        "Score 3: fully acceptable - every claim of the answer is supported by the paper."
    ),
    "reasonableness": (
        "Rate the reasonableness of each statement: is it logically consistent, free of contradictions?\n"
        "Rule: a statement with a logical error, such as a contradiction, scores 1.\n"
        "Score 1: unacceptable - the statement contains a logical error.\n"
        "Score 2: partly acceptable - the statement is consistent but its reasoning has a gap.\n"
        "Score 3: fully acceptable - the statement is coherent and consistent throughout."
    ),
}

# The labels ride on one dimension's call (its judge sees the paper and the whole pair), so they cost no call.
LABELLED = "completeness"
LABEL_CRITERIA = (
    "Also label each question:\n"
    "- 'reasoning_type', the reasoning its answer needs, one of: factual (recall a stated fact or value), "
    "explanatory (explain how or why something happens), comparative (compare two or more things), causal (relate "
    "a cause to its effect), conditional (what holds under a stated condition), analogical (carry over from a "
    "similar case), evaluative (judge merits, limits or significance), predictive (foresee an outcome or trend).\n"
    "- 'difficulty', how hard the question is to answer without the paper for a graduate student of the field: "
    "1 easy (one stated fact), 2 medium (a few facts combined, or some domain knowledge), 3 hard (several steps of "
    "reasoning, or specialist knowledge)."
)
RACAR_OUTPUT_LABELLED = (
    "Output a list of dictionaries, one for each of the {n} {items}, in the order given, with the keys 'score' "
    "(1, 2 or 3), 'reasons' (a brief justification of the score), 'reasoning_type' (one of the eight types) and "
    "'difficulty' (1, 2 or 3). Output only the list."
)

RACAR_OUTPUT = (
    "Output a list of dictionaries, one for each of the {n} {items}, in the order given, with the "
    "keys 'score' (1, 2 or 3) and 'reasons' (a brief justification of the score). Output only the list."
)

RETRY_NOTE = (
    "Note: a previous reply to this request could not be used ({problem}). Reply with exactly {n} "
    "dictionaries, each with an integer 'score' of 1, 2 or 3 and a string 'reasons'."
)


def format_items(pairs: Sequence[dict], shows: str) -> str:
    lines = []
    for i, pair in enumerate(pairs, 1):
        q, a = (pair.get("question") or "").strip(), (pair.get("answer") or "").strip()
        if shows == PAPER_AND_PAIRS:
            lines.append(f"Q{i}: {q}\nA{i}: {a}")
        elif shows in (QUESTIONS, PAPER_AND_QUESTIONS):
            lines.append(f"Q{i}: {q}")
        else:
            lines.append(f"S{i}: {a}")
    return "\n\n".join(lines)


def build_racar_messages(
    dimension: str, pairs: Sequence[dict], paper_text: str = "", title: str = "", retry_problem: str | None = None
) -> list[dict]:
    """The single chat message that asks one judge to score all ``pairs`` of a paper on ``dimension``.

    ``retry_problem`` (why the previous reply was unusable) adds a note, which also makes the retried
    request differ from the cached one, so a retry is a real new call and stays reproducible.
    """
    if dimension not in RACAR_CRITERIA:
        raise ValueError(f"unknown RACAR dimension {dimension!r}; choose one of {RACAR_DIMENSIONS}")
    shows = RACAR_INPUTS[dimension]
    items = _ITEM_NAMES[shows]
    labelled = dimension == LABELLED
    output = (RACAR_OUTPUT_LABELLED if labelled else RACAR_OUTPUT).format(n=len(pairs), items=items)
    parts = [_INTROS[shows], RACAR_CRITERIA[dimension], *([LABEL_CRITERIA] if labelled else []), output]
    if shows in SEES_PAPER:
        head = f"Title: {title}\n\n" if title else ""
        parts.append(f"Paper:\n{head}{paper_text.strip()}")
    parts.append(f"{items[0].upper() + items[1:]}:\n{format_items(pairs, shows)}")
    parts.append(output)  # repeated after a long paper, where instructions are easily lost
    if retry_problem:
        parts.append(RETRY_NOTE.format(problem=retry_problem, n=len(pairs)))
    return [{"role": "user", "content": "\n\n".join(parts)}]


def racar_prompt_chars(dimension: str, pairs: Sequence[dict]) -> int:
    """Characters of the prompt without the paper text (to size the paper's share of the context)."""
    return len(build_racar_messages(dimension, pairs)[0]["content"]) + len(RETRY_NOTE) + 200


def racar_prompts_digest() -> str:
    """A hash of every RACAR prompt text: part of the stage's parameters, so new prompts judge again."""
    return digest(
        [_INTROS, RACAR_CRITERIA, RACAR_OUTPUT, RETRY_NOTE, RACAR_INPUTS, _ITEM_NAMES]
        + [LABELLED, LABEL_CRITERIA, RACAR_OUTPUT_LABELLED]
    )


def racar_response_format(dimension: str) -> dict:
    return judgements_format(f"racar_{dimension}", labels=dimension == LABELLED)


# --- Diversity: SciQAG Appendix C, verbatim (authors' visualization/q similarity.ipynb) ----------------
DIVERSITY_PROMPT = """**Objective**: Assess the similarity of two questions not just based on their word content and relatedness, but primarily based on their underlying purpose or intent. This assessment should distinguish between questions that are about opposite aspects (even if related) and those that are different in wording but similar in the information they seek. Mark it from 0-100. 0 means absolutely no same intention, 100 means completely same intention. You don't need to explain your choice, just output a score in the format of similarity score: <the score>.

**Procedure**:
1. Read and Understand the Questions:
    - Carefully read the given questions.
    - Understand the core purpose behind each question.
2. Identify Key Aspects:
    - Determine what each question is specifically asking for.
    - Identify if the questions are seeking positive, negative, or neutral aspects of a subject.
3. Analyze Semantic Differences:
    - Compare the intent behind the questions.
    - Look for opposing themes such as benefits vs drawbacks, advantages vs disadvantages, etc.
4. Similarity Scoring:
    - Assign a high similarity score if both questions are asking about the same aspect of a subject, even if the wording is different.
    - Assign a low similarity score if the questions are asking about opposite aspects, even if they are related or use similar words.

**Examples**:
Question 1: "What are the pros of using zeolites?"
Question 2: "What are the drawbacks of using zeolites?"
Analysis: Though both questions are about the zeolites, one asks about pros (positive aspects) while the other asks about drawbacks (negative aspects).
Similarity Score: 0

Question 1: "Give some examples of using zeolites as catalysts."
Question 2: "What are potential applications of using zeolites as catalysts?"
Analysis: Both questions seek information on how zeolites are used as catalysts, with slightly different wording.
Similarity Score: 100

**Notes:**
Pay attention to nuanced language that may indicate different intentions even in closely related topics.
Remember, a high degree of relatedness does not necessarily imply a high degree of similarity in intent.

**Questions**
Question1: {sent1}
Question2: {sent2}"""


def build_diversity_messages(question1: str, question2: str) -> list[dict]:
    # spliced, not str.format: questions may contain braces or the placeholder names
    head, rest = DIVERSITY_PROMPT.split("{sent1}")
    middle, tail = rest.split("{sent2}")
    return [{"role": "user", "content": head + question1.strip() + middle + question2.strip() + tail}]
