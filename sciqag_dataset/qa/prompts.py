"""Generation prompts: the paper's prompt and the released generator's Alpaca template.

Two styles, both reproduced word for word from the SciQAG authors because a
method's prompt is part of its specification:

- ``"paper"``: the generator prompt of the paper (arXiv 2405.09939, Appendix D),
  as written in the authors' ``Inference.ipynb`` (MasterAI-EAM/SciQAG,
  ``input_format``). The paper's count ``10`` becomes ``{n}``.
- ``"alpaca"``: the template the released generator was trained on (the ``input``
  field of the authors' ``data/select_50.json``): a fixed Alpaca instruction, the
  paper as input, then a two-step task (write keywords, then Q1/A1 ... Q10/A10).

Our additions, kept apart from the authors' wording so they can be switched off:
an output-format block after the paper prompt (the authors' own format block,
so replies are parseable; ``format_hint=False`` gives the bare Appendix D text),
and one sentence in the Alpaca task listing the extracted keywords (the released
template asks the model to invent its keywords; here TopicRank supplies them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from sciqag_dataset.qa import small_model

PROMPT_STYLES = ("paper", "alpaca")  # the styles a generator is trained on
ASK_STYLES = PROMPT_STYLES + ("small",)  # and the embedded profile's (small_model.py), for asking only

# --- style "paper": SciQAG Appendix D, verbatim (authors' Inference.ipynb) ---------------------
PAPER_INTRO = "Attached is a detailed scientific paper."
PAPER_TASK = (
    "Your task is to formulate {n} sophisticated Q&A pairs that delve into the underlying scientific "
    "principles and knowledge presented in this paper, focusing specifically on {keywords}. Steer clear "
    "of questions that are purely section-specific (e.g., 'What does Figure 5 represent?') or basic or "
    "definitional questions (e.g., 'What is XXX?'). Instead, focus on questions that require a deeper "
    "understanding of the subject matter, especially those relating to complex chemical compounds (like "
    "Al2O3, C2H5OH, TNT). Ensure diversity in your Q&A pairs, avoiding any duplication. Answers should be "
    "rich in detail, drawing on specific data, chemical properties, and contextual insights from the paper. "
    "Strive for clarity and depth in your responses, aiming to enhance the reader's comprehension of the "
    "intricate concepts discussed."
)
PAPER_PROMPT = PAPER_INTRO + "\n\n{paper}\n\n" + PAPER_TASK

# Ours: the format request of the released template, reworded for keywords that are given.
PAPER_FORMAT_HINT = "Please present the keywords and question-answer pairs in the following format:\n{block}"
PAPER_FORMAT_HINT_NO_KEYWORDS = "Please present the question-answer pairs in the following format:\n{block}"
# Small models copy a skeleton such as "Q1: [Question 1]" literally, so the paper-style hint shows one
# real-looking pair from another field instead; the parser drops it if a model copies it verbatim.
EXAMPLE_QUESTION = "Why does adding a donor dopant raise the electrical conductivity of silicon?"
EXAMPLE_ANSWER = (
    "Each donor atom contributes an extra electron to the conduction band, so the density of free "
    "carriers, and with it the conductivity, rises by orders of magnitude."
)
PAPER_EXAMPLE_NOTE = "(The first pair only shows the format; write all {n} pairs about the paper above.)"
NO_KEYWORDS_FALLBACK = "the key concepts of the paper"

# --- style "alpaca": the released generator's template (authors' data/select_50.json) ----------
ALPACA_TEMPLATE = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"
)
# The authors' prompt ends with "### Response:" and the target starts right after it; the
# trailing newline here gives the response its own line, which our generators are trained on.
ALPACA_INSTRUCTION = "As a material science expert, utilize your expertise to analyze the provided scientific paper."
ALPACA_INPUT = "Here is a scientific paper:\n{paper}\n\n{task}"
ALPACA_TASK = (
    "Given the provided scientific paper, please complete the following two steps:\n"
    "Step 1: Keyword Extraction\n\n"
    "Read the scientific paper and identify {k} keywords that capture the most important terms and "
    "concepts in the paper, avoiding generic or broad terms.{keyword_hint} Compile the selected keywords "
    "into a list.\n"
    "Step 2: Question-Answer Generation\n\n"
    "Generate {n} scientific question-answer pairs as diverse as possible based on facts and knowledge "
    "presented in the given paper, focusing on keywords you generated. Keep the following requirements in "
    "mind: Avoid asking simple or definitional questions. Assume that the reader does not have access to "
    "the original paper or any external sources, so ensure that the questions and answers are "
    "self-contained and do not rely on references to figures, tables, or other parts of the paper. "
    "Incorporate specific data and insights from the paper to provide detailed and informative answers. "
    "Keep the answers concise, accurate, and directly related to the corresponding questions.\n\n"
    "Please present the generated keywords and question-answer pairs in the following format:\n{block}"
)
ALPACA_DEFAULT_KEYWORDS = 15  # the released template's count when no keywords are supplied
ALPACA_KEYWORD_HINT = " Consider these candidate keywords extracted from the paper: {keywords}."  # ours


def _check(n: int, style: str, styles: tuple[str, ...] = PROMPT_STYLES) -> None:
    if style not in styles:
        raise ValueError(f"unknown prompt style {style!r}; choose one of {styles}")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n (the number of QA pairs to ask for) must be a positive integer, not {n!r}")


def normalise_keywords(keywords: Iterable[str] | None) -> list[str]:
    """Keywords as clean strings; None or a bare string are accepted."""
    if keywords is None:
        return []
    if isinstance(keywords, str):  # a bare string is one keyword, not a list of characters
        keywords = [keywords]
    return [str(k).strip() for k in keywords if k is not None and str(k).strip()]


def _paper(text: str, title: str | None = None) -> str:
    if not isinstance(text, str):
        raise ValueError(f"the paper text must be a string, not {type(text).__name__}")
    text = text.strip()
    if title and title.strip() and not text.startswith(title.strip()):
        return f"{title.strip()}\n\n{text}"
    return text


def format_block(n: int, n_keywords: int | None) -> str:
    """The released template's format skeleton, for ``n`` pairs (and a Keywords line if asked)."""
    shown = list(range(1, n + 1)) if n <= 3 else [1, 2, None, n]
    parts = []
    if n_keywords:
        kw = ", ".join(f"keyword {i}" for i in range(1, min(n_keywords, 2) + 1))
        if n_keywords > 2:
            kw += f", ..., keyword{n_keywords}"  # sic: the authors write "keyword15"
        parts.append(f"Keywords: [{kw}]")
    for i in shown:
        parts.append("..." if i is None else f"Q{i}: [Question {i}]\nA{i}: [Answer {i}]")
    return "\n\n".join(parts)


def _paper_hint(keywords: list[str], n: int, format_hint: bool) -> str:
    if not format_hint:
        return ""
    hint = PAPER_FORMAT_HINT if keywords else PAPER_FORMAT_HINT_NO_KEYWORDS
    parts = [f"Keywords: {', '.join(keywords[:3])}{', ...' if len(keywords) > 3 else ''}"] if keywords else []
    parts.append(f"Q1: {EXAMPLE_QUESTION}\nA1: {EXAMPLE_ANSWER}")
    parts += [f"Q{i}: ...\nA{i}: ..." if i else "..." for i in ([2, 0, n] if n > 3 else range(2, n + 1))]
    parts.append(PAPER_EXAMPLE_NOTE.format(n=n))
    block = "\n\n".join(parts)
    return "\n\n" + hint.format(block=block)


def _keyword_list(keywords: list[str]) -> str:
    return ", ".join(keywords) or NO_KEYWORDS_FALLBACK


def _alpaca_task(keywords: list[str], n: int) -> str:
    k = len(keywords) or ALPACA_DEFAULT_KEYWORDS
    hint = ALPACA_KEYWORD_HINT.format(keywords=", ".join(keywords)) if keywords else ""
    return ALPACA_TASK.format(k=k, keyword_hint=hint, n=n, block=format_block(n, k))


def instruction_text(keywords: list[str], n: int = 10, style: str = "paper", *, format_hint: bool = True) -> str:
    """The instruction without the paper, for instruction/input/output records."""
    _check(n, style)
    keywords = normalise_keywords(keywords)
    if style == "paper":
        task = PAPER_TASK.format(n=n, keywords=_keyword_list(keywords))
        return PAPER_INTRO + "\n\n" + task + _paper_hint(keywords, n, format_hint)
    return ALPACA_INSTRUCTION + "\n\n" + _alpaca_task(keywords, n)


def build_messages(
    text: str,
    keywords: list[str],
    n: int = 10,
    style: str = "paper",
    title: str | None = None,
    *,
    format_hint: bool = True,
) -> list[dict]:
    """Chat messages asking for ``n`` QA pairs on ``text`` (one user turn)."""
    _check(n, style, ASK_STYLES)
    keywords = normalise_keywords(keywords)
    paper = _paper(text, title)
    if style == "small":
        return small_model.messages(paper, keywords, n)
    if style == "paper":
        content = PAPER_PROMPT.format(paper=paper, n=n, keywords=_keyword_list(keywords))
        content += _paper_hint(keywords, n, format_hint)
    else:
        content = ALPACA_INSTRUCTION + "\n\n" + ALPACA_INPUT.format(paper=paper, task=_alpaca_task(keywords, n))
    return [{"role": "user", "content": content}]


def build_raw_prompt(text: str, keywords: list[str], n: int = 10, title: str | None = None) -> str:
    """The full Alpaca prompt, ending in ``### Response:\\n``, for a plain completions endpoint."""
    _check(n, "alpaca")
    keywords = normalise_keywords(keywords)
    paper_input = ALPACA_INPUT.format(paper=_paper(text, title), task=_alpaca_task(keywords, n))
    return ALPACA_TEMPLATE.format(instruction=ALPACA_INSTRUCTION, input=paper_input)


def fit_to_context(text: str, budget: int, mode: str) -> tuple[list[str], list[str]]:
    """Split or cut ``text`` to fit ``budget`` characters; return the pieces and warnings."""
    if len(text) <= budget:
        return [text], []
    if mode == "chunk":
        n = math.ceil(len(text) / budget)
        size = math.ceil(len(text) / n)
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        return pieces, [f"paper of {len(text)} chars split into {len(pieces)} chunks to fit the context"]
    if mode != "truncate":
        raise ValueError(f"long_paper must be 'truncate' or 'chunk', not {mode!r}")
    budget = max(budget, 0)  # a negative end would slice from the end of the text
    cut = text.rfind("\n", 0, budget)
    cut = cut if cut > budget // 2 else budget  # prefer a paragraph boundary
    return [text[:cut]], [f"paper truncated from {len(text)} to {cut} chars to fit the context"]
