"""Post-processing of generated QA pairs, as the SciQAG authors did it.

Exact-duplicate questions are dropped; questions that lean on the source
("Figure 3", "Table 2", "this paper", ...) are flagged: a closed-book question
must stand on its own. The authors enforced agnosticism with regular
expressions like these when building their test set.
"""

from __future__ import annotations

import re

SOURCE_REFERENCE = re.compile(
    r"\b(?:fig(?:ure)?s?\.?\s*\d+|tables?\s*\d+|eqs?\.?\s*\(?\d+|equations?\s*\(?\d+|sections?\s*\d+"
    r"|supplementary|supporting information|appendix"
    r"|(?:this|the present|the current|our)\s+(?:paper|study|work|article|manuscript|research|report)"
    r"|(?:this|the present|the current|our)\s+(?:findings|results|experiments?|investigation|analysis)"
    r"|the\s+(?:paper|article|manuscript|research|researchers|investigators|authors?)\b"
    r"|the\s+study\b(?!\s+of\b)"
    r"|\bref(?:erence)?s?\.?\s*\[?\d+|\[\d+(?:[,\u2013-]\d+)*\])",
    re.IGNORECASE,
)


def refers_to_source(text: str) -> bool:
    return bool(SOURCE_REFERENCE.search(text or ""))


def _norm(question: str) -> str:
    return " ".join(question.lower().split()).rstrip("?. ")


def dedupe_questions(pairs: list[dict]) -> tuple[list[dict], int]:
    """Drop pairs whose question repeats an earlier one (case and spacing ignored)."""
    seen, kept = set(), []
    for pair in pairs:
        key = _norm(pair.get("question", ""))
        if key in seen:
            continue
        seen.add(key)
        kept.append(pair)
    return kept, len(pairs) - len(kept)


def postprocess(pairs: list[dict], complete_sets_of: int | None = None) -> tuple[list[dict], list[str], bool]:
    """Dedupe and flag; return (pairs, warnings, keep). ``keep`` is False for an incomplete set
    when ``complete_sets_of`` is given (the record is then kept with status ``incomplete``)."""
    pairs, dropped = dedupe_questions(pairs)
    warnings = [f"dropped {dropped} duplicate question(s)"] if dropped else []
    flagged = [i + 1 for i, p in enumerate(pairs) if refers_to_source(p.get("question", ""))]
    if flagged:
        warnings.append(f"question(s) {flagged} refer to the source (figures/tables/'this paper')")
    keep = complete_sets_of is None or len(pairs) >= complete_sets_of
    return pairs, warnings, keep
