"""Judge prompts: the five RACAR dimensions and the question-similarity prompt.

A method's prompt is part of its specification, so the sources are stated per prompt:

- Diversity (paper, Appendix C): reproduced word for word from the authors' notebook
  ``visualization/q similarity.ipynb`` (MasterAI-EAM/SciQAG, function ``format``). The
  notebook wraps it in Mixtral's ``<s> [INST] ... [/INST]`` markers by hand; here the
  server's chat template adds them, so they are left out. Its continuation lines are
  indented by the f-string in the notebook; that indentation is dropped.
- RACAR (paper, Appendix B): the authors' repository does not contain the five judge
  prompts, and the appendix text could not be retrieved here. The prompts below are
  written from the paper's definitions of the five dimensions (Table 1) and keep what
  the paper specifies: one call scores every item of one paper, scale 1-3, output "a list
  of dictionaries ... with the fields 'score' and 'reasons'"; Agnosticism sees the
  questions only, Reasonableness the answers only, the other three the paper and the
  pairs. Replace the texts in ``RACAR_CRITERIA`` with the appendix wording when at hand;
  nothing else depends on it.
"""
from __future__ import annotations

from typing import Sequence

from sciqag_dataset.schema import RACAR_DIMENSIONS

# What each dimension's judge is shown.
PAPER_AND_PAIRS, QUESTIONS, ANSWERS = "paper_and_pairs", "questions", "answers"
RACAR_INPUTS = {
    "relevance": PAPER_AND_PAIRS,
    "agnosticism": QUESTIONS,
    "completeness": PAPER_AND_PAIRS,
    "accuracy": PAPER_AND_PAIRS,
    "reasonableness": ANSWERS,
}

_ITEM_NAMES = {PAPER_AND_PAIRS: "question-answer pairs", QUESTIONS: "questions", ANSWERS: "answers"}

_INTROS = {
    PAPER_AND_PAIRS: "You will be given a scientific paper and a list of question-answer pairs generated from it.",
    QUESTIONS: ("You will be given a list of questions generated from a scientific paper. The paper itself is "
                "not shown to you, just as it will not be shown to anyone who answers these questions."),
    ANSWERS: ("You will be given a list of answers generated from a scientific paper. Judge each answer on its "
              "own; neither the paper nor the questions are shown to you."),
}

# From the paper's definitions of the dimensions (Table 1); see the module docstring.
RACAR_CRITERIA = {
    "relevance": (
        "Evaluate the relevance of each question-answer pair: how closely it relates to the information "
        "presented in the paper. A relevant pair asks about and answers with knowledge the paper actually "
        "contains.\n"
        "Score 1: not relevant - the pair is unrelated to the content of the paper.\n"
        "Score 2: partially relevant - the pair touches the paper's topic but not its specific content.\n"
        "Score 3: highly relevant - the pair is directly about the content of the paper."
    ),
    "agnosticism": (
        "Evaluate the agnosticism (context independence) of each question: whether it can be understood "
        "and answered without access to the paper. A context-independent question does not refer to "
        "demonstrative content of its source, such as figures, tables, equations, sections, references or "
        "'this paper' / 'this study'.\n"
        "Score 1: context-dependent - the question refers to figures, tables or other parts of the paper "
        "and cannot be understood without it.\n"
        "Score 2: partially independent - the question is mostly self-contained but leans on context that "
        "only the paper provides.\n"
        "Score 3: context-independent - the question is fully self-contained."
    ),
    "completeness": (
        "Evaluate the completeness of each answer: whether it comprehensively covers all aspects of its "
        "question and makes effective use of the relevant details in the paper.\n"
        "Score 1: incomplete - the answer misses the main aspects of the question.\n"
        "Score 2: partially complete - the answer addresses the question but leaves out aspects of it or "
        "relevant details from the paper.\n"
        "Score 3: complete - the answer covers every aspect of the question, using the relevant details of "
        "the paper."
    ),
    "accuracy": (
        "Evaluate the accuracy of each answer: whether its content is correct and agrees with the facts, "
        "data and evidence presented in the paper.\n"
        "Score 1: inaccurate - the answer contradicts the paper or contains clear factual errors.\n"
        "Score 2: partially accurate - the answer is mostly correct but contains statements the paper does "
        "not support or imprecise values.\n"
        "Score 3: accurate - every statement in the answer agrees with the evidence in the paper."
    ),
    "reasonableness": (
        "Evaluate the reasonableness of each answer: its internal logic, that is, whether it is coherent, "
        "logically consistent and free of contradictions.\n"
        "Score 1: unreasonable - the answer is incoherent or contradicts itself.\n"
        "Score 2: partially reasonable - the answer is mostly coherent but has gaps in its reasoning or "
        "minor inconsistencies.\n"
        "Score 3: reasonable - the answer is logically coherent and consistent throughout."
    ),
}

RACAR_OUTPUT = (
    "Output a list of dictionaries, one for each of the {n} {items}, in the order given, with the "
    "fields 'score' (1, 2 or 3) and 'reasons' (a brief justification of the score). Output only the list."
)

RETRY_NOTE = ("Note: a previous reply to this request could not be used ({problem}). Reply with exactly {n} "
              "dictionaries, each with an integer 'score' of 1, 2 or 3 and a string 'reasons'.")


def format_items(pairs: Sequence[dict], shows: str) -> str:
    lines = []
    for i, pair in enumerate(pairs, 1):
        q, a = (pair.get("question") or "").strip(), (pair.get("answer") or "").strip()
        if shows == PAPER_AND_PAIRS:
            lines.append(f"Q{i}: {q}\nA{i}: {a}")
        elif shows == QUESTIONS:
            lines.append(f"Q{i}: {q}")
        else:
            lines.append(f"A{i}: {a}")
    return "\n\n".join(lines)


def build_racar_messages(dimension: str, pairs: Sequence[dict], paper_text: str = "", title: str = "",
                         retry_problem: str | None = None) -> list[dict]:
    """The single chat message that asks one judge to score all ``pairs`` of a paper on ``dimension``.

    ``retry_problem`` (why the previous reply was unusable) adds a note, which also makes the retried
    request differ from the cached one, so a retry is a real new call and stays reproducible.
    """
    if dimension not in RACAR_CRITERIA:
        raise ValueError(f"unknown RACAR dimension {dimension!r}; choose one of {RACAR_DIMENSIONS}")
    shows = RACAR_INPUTS[dimension]
    items = _ITEM_NAMES[shows]
    output = RACAR_OUTPUT.format(n=len(pairs), items=items)
    parts = [_INTROS[shows], RACAR_CRITERIA[dimension], output]
    if shows == PAPER_AND_PAIRS:
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


def racar_response_format(dimension: str) -> dict:
    """OpenAI-style structured output: an object wrapping the list (a schema's root must be an object)."""
    item = {
        "type": "object",
        "properties": {"score": {"type": "integer", "enum": [1, 2, 3]}, "reasons": {"type": "string"}},
        "required": ["score", "reasons"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {
        "name": f"racar_{dimension}", "strict": True,
        "schema": {"type": "object", "properties": {"judgements": {"type": "array", "items": item}},
                   "required": ["judgements"], "additionalProperties": False},
    }}


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
