"""Textual citations (natbib's ``\\citet``, ``\\citealt``, ``\\citeauthor``...) written as the paper prints them:
"as described in \\citet{smith}" reads "as described in Smith et al. (2016)", not "as described in". The
names and years come from the paper's own bibliography: ``\\bibitem[Smith et al.(2016)]{smith}`` in the
document or its ``.bbl`` (what arXiv keeps), else the ``.bib`` files ``\\bibliography`` names. Parenthetical
citations (``\\citep``, ``\\cite``) are the caller's to drop: the sentence reads whole without them."""
from __future__ import annotations

import posixpath
import re
from typing import Callable

_BIBITEM = re.compile(r"\\bibitem\s*(?:\[(?P<opt>(?:[^\[\]{}]|\{[^{}]*\})*)\])?\s*\{(?P<key>[^{}]+)\}")
_BIB_ENTRY = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s]+)\s*,")
_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_AUTHOR = re.compile(r"\bauthor\s*=\s*(" + _BRACED + r'|"[^"]*")', re.I)
_YEAR = re.compile(r"\b(?:year|date)\s*=\s*[{\"]?\s*(\d{4})", re.I)
_TEXTUAL = re.compile(r"\\(?P<cmd>[cC]ite(?:t|alt|alp|author|year|yearpar))\*?\s*(?:\[[^\]]*\]\s*){0,2}"
                      r"\{(?P<keys>[^{}]*)\}")


def bibliography(body: str, load: Callable[[str], str | None], main: str) -> tuple[dict[str, tuple[str, str]], int]:
    """(cite key -> (authors as natbib prints them, year), entries in a ``.bbl`` read for it)."""
    bbl = 0
    text = body
    if "\\bibitem" not in body:
        text = load(posixpath.splitext(main)[0] + ".bbl") or ""
        bbl = len(_BIBITEM.findall(text))
    items = {m["key"].strip(): _natbib_label(m["opt"]) for m in _BIBITEM.finditer(text)}
    if items:
        return {k: v for k, v in items.items() if v}, bbl
    entries: dict[str, tuple[str, str]] = {}
    for arg in re.findall(r"\\bibliography\s*\{([^{}]*)\}", body):
        for name in filter(None, (n.strip() for n in arg.split(","))):
            for candidate in (f"{name}.bib", name):
                found = load(posixpath.normpath(posixpath.join(posixpath.dirname(main), candidate)))
                if found:
                    entries.update(_bib_entries(found))
                    break
    return entries, 0


def _natbib_label(opt: str | None) -> tuple[str, str] | None:
    """``Smith et~al.(2016)Smith, Jones, and Lee`` -> ("Smith et~al.", "2016"); None for a numbered style."""
    m = re.match(r"^\s*(.+?)\s*\(\s*([^()]*\d{4}[a-z]?)\s*\)", (opt or "").replace("{", "").replace("}", ""))
    return (m[1], m[2]) if m else None


def _bib_entries(text: str) -> dict[str, tuple[str, str]]:
    out = {}
    starts = [m for m in _BIB_ENTRY.finditer(text) if m[1].lower() not in ("string", "comment", "preamble")]
    for m, nxt in zip(starts, [*starts[1:], None]):
        entry = text[m.end():nxt.start() if nxt else None]
        author, year = _AUTHOR.search(entry), _YEAR.search(entry)
        if author and year:
            out[m[2]] = (_short_names(author[1][1:-1]), year[1])
    return out


def _short_names(authors: str) -> str:
    """BibTeX's "Last, First and First Last and ..." as natbib prints it: Last, Last and Last, Last et al."""
    names, depth, start = [], 0, 0
    for i, c in enumerate(authors):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth == 0 and authors.startswith(" and ", i):
            names.append(authors[start:i])
            start = i + 5
    names.append(authors[start:])
    last = []
    for name in (n.strip() for n in names):
        if name.startswith("{") and name.endswith("}"):
            last.append(name)  # {The Astropy Collaboration}: an institution, whole
        elif "," in name:
            last.append(name.split(",", 1)[0].strip())
        else:
            last.append(name.rsplit(" ", 1)[-1])
    if len(last) > 2 or last[-1].lower() == "others":
        return f"{last[0]} et~al."
    return " and ".join(last)


def resolve_cites(latex: str, bib: dict[str, tuple[str, str]]) -> str:
    """Textual citations whose every key the bibliography names, written out; the others left as they are."""
    def one(m: re.Match) -> str:
        found = [bib.get(k.strip()) for k in m["keys"].split(",") if k.strip()]
        if not found or None in found:
            return m[0]
        cmd = m["cmd"].lower()
        form = {"citet": "{} ({})", "citealt": "{} {}", "citealp": "{}, {}", "citeauthor": "{}",
                "citeyear": "{1}", "citeyearpar": "({1})"}[cmd]
        return "; ".join(form.format(*entry) for entry in found)
    return _TEXTUAL.sub(one, latex)
