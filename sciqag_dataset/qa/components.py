"""Asking about a paper's tables, equations and figures: which of them, the prompt, and what a pair records.

A paper record keeps its tables, equations and figures apart from its prose (``components``, see
``core/schema.py``). Besides the pairs asked from the prose, seed and generate can ask about some of them
(``components: {table: 2, equation: 1, figure: 1}``), one request each: the prompt shows the component (a table
as Markdown, an equation as LaTeX, a figure by its caption), its label and caption, and the paragraphs around it,
and asks for pairs that stand on their own: a reader of the dataset never sees the table, so a question states
what it asks about instead of pointing at "Table 2". Every pair records where it came from in ``grounding``:
``{"kind": "prose" | "table" | "equation" | "figure", "component_id": ...}`` (None for prose).
"""

from __future__ import annotations

from sciqag_dataset.core.schema import COMPONENT_KINDS
from sciqag_dataset.qa.prompts import ALPACA_INSTRUCTION, ALPACA_TEMPLATE

#: the most characters of the text before and after a component that a prompt shows
CONTEXT_CHARS = 1500

SHOWN = {
    "table": "a table",
    "equation": "an equation",
    "figure": "the caption of a figure",
}
ABOUT = {
    "table": "the facts the table gives: its values with their units and conditions, and the trends and "
    "comparisons they show",
    "equation": "what the equation expresses: the quantities it relates, what its symbols stand for, and what "
    "it predicts or how it is used",
    "figure": "the facts the figure's caption and the text around it give about what the figure shows",
}
COMPONENT_PROMPT = (
    "Below is {shown} from a scientific paper{title}, with the text just before and after it.\n\n"
    "{block}\n\n"
    "Text before it:\n{before}\n\n"
    "Text after it:\n{after}\n\n"
    "Please write {n} question-answer pairs about {about}. The pairs are for readers who will never see the "
    "{kind} or the paper, so each question must make sense on its own: name the material, the quantity and the "
    "conditions it asks about, and never refer to the {kind}, its label ({label}), the paper or its authors. "
    "Each answer must state the facts it draws on in full, with the numbers and units as given above.\n\n"
    "Present the pairs in this format:\n{format}"
)


def prose() -> dict:
    """The grounding of a pair asked from the paper's prose."""
    return {"kind": "prose", "component_id": None}


def grounding_of(component: dict) -> dict:
    """The grounding of a pair asked about ``component``."""
    return {"kind": component["kind"], "component_id": component["id"]}


def kind_of(pair: dict) -> str | None:
    """The grounding kind of a pair; None where the pair records none (written before pairs recorded it)."""
    return (pair.get("grounding") or {}).get("kind")


def askable(component: dict) -> bool:
    """Whether a prompt about ``component`` would show anything to ask about: a table's content or cells, an
    equation's content, a figure's caption."""
    kind = component.get("kind")
    if kind == "table":
        return bool((component.get("content") or "").strip() or component.get("cells"))
    if kind == "equation":
        return bool((component.get("content") or "").strip())
    return kind == "figure" and bool((component.get("caption") or "").strip())


def pick(components: list[dict] | None, mix: dict[str, int]) -> list[dict]:
    """The components of a paper to ask about: per kind, up to ``mix[kind]`` of those with something to show,
    those the prose mentions most first (they matter most to the paper), ties in the paper's order."""
    chosen = []
    for kind in COMPONENT_KINDS:
        wanted = mix.get(kind) or 0
        found = [c for c in components or [] if c.get("kind") == kind and askable(c)]
        ranked = sorted(enumerate(found), key=lambda ic: (-len(ic[1].get("mentions") or []), ic[0]))
        chosen += [c for _, c in ranked[:wanted]]
    return chosen


def _table(component: dict) -> str:
    content = (component.get("content") or "").strip()
    if content:
        return content
    return "\n".join(" | ".join(row) for row in component.get("cells") or [])


def component_block(component: dict, max_chars: int | None = None) -> str:
    """The component as the prompt shows it: its label and caption, then its content (cut at a line end to
    ``max_chars``, a long table's first rows)."""
    kind = component["kind"]
    label = (component.get("label") or "").strip() or kind.capitalize()
    caption = " ".join((component.get("caption") or "").split())
    head = f"{label}: {caption}" if caption else label
    if kind == "table":
        body = _table(component)
    elif kind == "equation":
        body = (component.get("content") or "").strip()
        if component.get("content_format") == "latex" and not body.startswith("\\begin"):
            body = f"$$ {body} $$"  # display math, as a model has read it in papers; an environment stands alone
    else:
        return head
    if max_chars is not None and len(body) > max_chars:
        body = body[:max_chars].rsplit("\n", 1)[0] + "\n[... cut ...]"
    return f"{head}\n\n{body}"


def _before(text: str | None, max_chars: int) -> str:
    text = " ".join((text or "").split())
    if len(text) <= max_chars:
        return text or "(none)"
    tail = text[len(text) - max_chars :]
    return tail[tail.find(". ") + 2 :] if ". " in tail else tail  # from a sentence's start


def _after(text: str | None, max_chars: int) -> str:
    text = " ".join((text or "").split())
    if len(text) <= max_chars:
        return text or "(none)"
    head = text[:max_chars]
    return head[: head.rfind(". ") + 1] if ". " in head else head  # to a sentence's end


def asked_components(paper: dict) -> list[dict]:
    """The components of a paper (``components``) that some of its pairs (``qa``) were asked from."""
    wanted = {(p.get("grounding") or {}).get("component_id") for p in paper.get("qa") or []} - {None}
    return [c for c in paper.get("components") or [] if c.get("id") in wanted]


def asked_about(paper: dict, max_chars: int) -> str:
    """The tables, equations and figures a paper's pairs were asked from, as their prompt showed them, for a
    judge that reads the paper's text beside the pairs (the text alone lacks them); "" when every pair was asked
    from the prose. At most ``max_chars``: each component gets an equal share (a long table is cut), and those
    past the limit are left out."""
    found = asked_components(paper)
    if not found:
        return ""
    head = "Tables, equations and figures of the paper that some questions were asked from:"
    share = max((max_chars - len(head)) // len(found) - 2, 200)
    return "\n\n".join([head, *(component_block(c, share)[:share] for c in found)])[:max_chars]


def _format(n: int) -> str:
    return "\n".join(f"Q{i}: ...\nA{i}: ..." for i in range(1, n + 1))


def component_prompt(component: dict, n: int, title: str | None = None, max_chars: int | None = None) -> str:
    """The request for ``n`` pairs about one table, equation or figure of a paper. ``max_chars``: about the
    most characters the component and the text around it may take, so the request fits the model's context
    (the text around it is shortened first, to a sixth of them each at most; then a long table is cut)."""
    kind = component["kind"]
    context = CONTEXT_CHARS if max_chars is None else min(CONTEXT_CHARS, max_chars // 6)
    return COMPONENT_PROMPT.format(
        shown=SHOWN[kind],
        title=f" ({' '.join(title.split())})" if title and title.strip() else "",
        block=component_block(component, None if max_chars is None else max(max_chars - 2 * context, 200)),
        before=_before(component.get("context_before"), context),
        after=_after(component.get("context_after"), context),
        n=n,
        about=ABOUT[kind],
        kind=kind,
        label=(component.get("label") or "").strip() or f"its {kind} number",
        format=_format(n),
    )


def component_messages(component: dict, n: int, title: str | None = None, max_chars: int | None = None) -> list[dict]:
    """The request as chat messages (one user turn)."""
    return [{"role": "user", "content": component_prompt(component, n, title, max_chars)}]


def component_raw_prompt(component: dict, n: int, title: str | None = None, max_chars: int | None = None) -> str:
    """The request in the released generator's Alpaca template, for a plain completions endpoint."""
    prompt = component_prompt(component, n, title, max_chars)
    return ALPACA_TEMPLATE.format(instruction=ALPACA_INSTRUCTION, input=prompt)
