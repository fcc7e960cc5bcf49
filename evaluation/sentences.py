"""Sentence splitting for coverage (and its plots): scientific text, where a period is often not a full stop.

A boundary is sentence-final punctuation (. ! ?), optionally closing quotes/brackets and a numeric
citation such as [12] or [3,4], then whitespace, then something that can start a sentence (a capital,
a digit, a Greek letter, an opening quote or bracket). A "." never splits when no whitespace follows
(3.5, 1.2e-3, e.g.TiO2), after a known abbreviation (e.g., i.e., Fig., Eq., Ref., vs., cf., approx.,
ca., et al.; Sec., No., p., min. only before a number), or after a lone capital initial that does not
follow a number (J. Smith splits not; "at 300 K. The" does). Lines inside a paragraph are joined;
blank lines always split; a paragraph with no sentence-final punctuation and at most 12 words is a
heading and is dropped, as are fragments without letters. Lowercase sentence starts are not split.
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"([.!?]+)[\"'”’)\]]*(?:\[\d+(?:\s*[,–-]\s*\d+)*\])?(?=\s+[\"'“‘(\[]?[A-Z0-9Α-Ωα-ω])")
_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "eg",
    "ie",
    "cf",
    "vs",
    "viz",
    "approx",
    "ca",
    "fig",
    "figs",
    "eq",
    "eqs",
    "ref",
    "refs",
    "tab",
    "resp",
    "dr",
    "prof",
    "mr",
    "mrs",
    "ms",
    "st",
    "wt",
    "esp",
    "incl",
    "suppl",
    "eds",
    "ed",
    "inc",
    "ltd",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
}
# these also end sentences ("5 min. All ..."), so they protect only before a number ("Sec. 3", "No. 5")
_ABBREVIATIONS_BEFORE_NUMBER = {"no", "nos", "sec", "secs", "ch", "p", "pp", "vol", "vols", "min", "max"}
_NUMBER_TOKEN = re.compile(r"^[-−+]?\d[\d.,]*$")
_HEADING_WORDS = 12


def _protected(text: str, end: int) -> bool:
    """Is the period ending at ``end`` (exclusive) part of an abbreviation rather than a full stop?"""
    if text[end - 1] != ".":
        return False
    words = text[:end].split()
    if not words:
        return False
    word = words[-1].lstrip("([\"'“‘").rstrip(".").lower()
    if word == "al" and len(words) > 1 and words[-2].lower() == "et":
        return True
    if word in _ABBREVIATIONS:
        return True
    if word in _ABBREVIATIONS_BEFORE_NUMBER and re.match(r"\s+\(?\d", text[end:]):
        return True
    token = words[-1].lstrip("([\"'“‘").rstrip(".")
    if len(token) == 1 and token.isupper():  # an initial ("J. Smith"), unless it is a unit ("300 K.")
        return not (len(words) > 1 and _NUMBER_TOKEN.match(words[-2]))
    return False


def _paragraphs(text: str) -> list[str]:
    out = []
    for para in re.split(r"\n\s*\n", text or ""):
        lines = [ln.strip() for ln in para.splitlines() if ln.strip()]
        # markdown headings inside a paragraph are their own units
        buf: list[str] = []
        for ln in lines:
            if ln.startswith("#"):
                if buf:
                    out.append(" ".join(buf))
                    buf = []
                continue
            buf.append(ln)
        if buf:
            out.append(" ".join(buf))
    return out


def split_sentences(text: str) -> list[str]:
    """Split a paper's text into sentences (rules above); headings and letterless fragments are dropped."""
    sentences: list[str] = []
    for para in _paragraphs(text):
        para = " ".join(para.split())
        if not re.search(r"[.!?][\"'”’)\]]*$", para) and len(para.split()) <= _HEADING_WORDS:
            continue  # a heading such as "Results and discussion"
        start = 0
        for m in _BOUNDARY.finditer(para):
            if _protected(para, m.end(1)):
                continue
            sentences.append(para[start : m.end()].strip())
            start = m.end()
        sentences.append(para[start:].strip())
    return [s for s in sentences if re.search(r"[^\W\d_]", s)]
