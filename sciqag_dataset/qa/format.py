"""Instruction records for fine-tuning: prompt in, the released generator's text out.

The target text is the released SciQAG generator's format (``Keywords: ...`` then
``Q1:``/``A1:`` blocks), so a generator trained on it answers in a shape that
``parse_qa`` reads back exactly: ``parse_qa(render_output(qa, kw))`` returns ``qa``
and ``kw`` for clean pairs (stripped, no line inside an answer that itself starts
with a ``Q2:``-style marker, no commas inside keywords).
"""

from __future__ import annotations

from sciqag_dataset.qa.prompts import build_messages, instruction_text, normalise_keywords


def _pairs(qa) -> list[tuple[str, str]]:
    out = []
    for i, pair in enumerate(qa or []):
        if not isinstance(pair, dict):
            raise ValueError(f"QA pair {i} must be a dict with 'question' and 'answer', not {type(pair).__name__}")
        q = pair.get("question", pair.get("Q"))
        a = pair.get("answer", pair.get("A"))
        q = "" if q is None else " ".join(str(q).split())  # a question is one line in the target
        a = "" if a is None else "\n".join(line.rstrip() for line in str(a).strip().splitlines())
        if q and a:  # an incomplete pair would teach the generator to stop mid-pair
            out.append((q, a))
    return out


def render_output(qa: list[dict], keywords: list[str]) -> str:
    """``Keywords: a, b\\n\\nQ1: ...\\nA1: ...\\n\\nQ2: ...`` (no Keywords line without keywords)."""
    blocks = []
    kws = normalise_keywords(keywords)
    if kws:
        blocks.append("Keywords: " + ", ".join(kws))
    blocks += [f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(_pairs(qa), 1)]
    return "\n\n".join(blocks)


def to_instruction(record: dict, style: str = "paper", n: int = 10) -> dict:
    """instruction / input / output / messages columns for one record with text, keywords and qa."""
    rid = record.get("id", "?")
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"record {rid}: no paper text to build an instruction from")
    keywords = record.get("keywords") or []
    output = render_output(record.get("qa") or [], keywords)
    if not output or not _pairs(record.get("qa")):
        raise ValueError(f"record {rid}: no complete QA pair to use as the target")
    return {
        "instruction": instruction_text(keywords, n=n, style=style),
        "input": text.strip(),
        "output": output,
        "messages": build_messages(text, keywords, n=n, style=style, title=record.get("title") or None)
        + [{"role": "assistant", "content": output}],
    }
