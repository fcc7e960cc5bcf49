"""Where a sentence stands in a text whose whitespace may differ (sentence splitting joins lines and runs of
spaces): character offsets such that ``text[start:end]`` is the text's own spelling of the sentence."""

from __future__ import annotations

import re


def find_span(text: str, sentence: str, start: int = 0) -> tuple[int, int] | None:
    """The first ``(start, end)`` at or after ``start`` where ``sentence`` occurs with any whitespace between its
    words, or None."""
    words = sentence.split()
    if not words:
        return None
    m = re.compile(r"\s+".join(map(re.escape, words))).search(text, start)
    return (m.start(), m.end()) if m else None


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with the overlapping ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out
