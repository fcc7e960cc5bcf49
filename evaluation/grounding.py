"""Quotes with offsets and a grounding score for every answer, from coverage's evidence: no model call beyond
the embeddings coverage already computed.

- ``quotes``: the answer's best ``top_context`` evidence sentences as they stand in the paper's text,
  ``{"start", "end", "text", "score"}`` with ``text == paper_text[start:end]`` always (whitespace is the
  text's own), ``score`` the cosine similarity of the sentence to the question + answer. A sentence the
  splitter changed beyond whitespace is left out rather than given wrong offsets.
- ``grounded``: the share of the answer's content words found in its quotes. Content words: not an English
  stop word (scikit-learn's list), three letters or more (a hyphenated word counts as its parts), or a number
  (1,000 = 1000, 3.20 = 3.2); compared on their first five letters, so "cracked" finds "cracks" and "treatment"
  finds "treated". None when the answer has no content word ("Yes."): a rule on it counts it as missing. It is
  word overlap, not entailment: an answer adding facts the paper lacks scores low, one that rearranges the
  paper's own words into a wrong claim ("it rose from 320 to 410 MPa" for "fell from 410 to 320") does not.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sciqag_dataset.core.spans import find_span

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")  # hyphenated words count as their parts
STEM = 5


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # ~0.5 s: only when coverage runs

    return frozenset(ENGLISH_STOP_WORDS)


def _number(token: str) -> str:
    """One spelling per number: 1,000 -> 1000; 3.20 -> 3.2; 320.0 -> 320 (a comma before 3 digits groups them)."""
    token = re.sub(r",(?=\d{3}\b)", "", token).replace(",", ".")
    return token.rstrip("0").rstrip(".") if "." in token else token


def content_words(text: str) -> set[str]:
    """The text's content words, lower-cased and cut to their first ``STEM`` letters (numbers whole)."""
    out = set()
    for token in _TOKEN.findall(text.lower()):
        if token[0].isdigit():
            out.add(_number(token))
        elif len(token) >= 3 and token not in _stop_words():
            out.add(token[:STEM])
    return out


def quotes(text: str, sentences: list[str], ranked, sims, n: int) -> list[dict]:
    """The ``n`` best distinct evidence sentences located in ``text`` (see the module doc)."""
    out: list[dict] = []
    seen: set[str] = set()
    for i in ranked:
        if len(out) == n:
            break
        if sentences[i] in seen:
            continue
        seen.add(sentences[i])
        span = find_span(text, sentences[i])
        if span:
            start, end = span
            out.append({"start": start, "end": end, "text": text[start:end], "score": round(float(sims[i]), 4)})
    return out


def grounded(answer: str, found: list[dict]) -> float | None:
    """The share of the answer's content words that its quotes hold (None: no content word)."""
    words = content_words(answer or "")
    if not words:
        return None
    evidence = set().union(*(content_words(q["text"]) for q in found)) if found else set()
    return round(len(words & evidence) / len(words), 4)
