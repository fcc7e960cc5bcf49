"""Textual citations (natbib's ``\\citet``, ``\\citealt``, ``\\citeauthor``...) written as the paper prints them:
"as described in \\citet{smith}" reads "as described in Smith et al. (2016)", not "as described in". The
names and years come from the paper's own bibliography: ``\\bibitem[Smith et al.(2016)]{smith}`` in the
document or its ``.bbl`` (what arXiv keeps), else the ``.bib`` files ``\\bibliography`` names. Parenthetical
citations (``\\citep``, ``\\cite``) are the caller's to drop: the sentence reads whole without them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import NamedTuple

_BIBITEM = re.compile(r"\\bibitem\s*")
_BIB_ENTRY = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s]+)\s*,")
_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_AUTHOR = re.compile(r"\bauthor\s*=\s*(" + _BRACED + r'|"[^"]*")', re.I)
_YEAR = re.compile(r"\b(?:year|date)\s*=\s*[{\"]?\s*(\d{4})", re.I)
_TEXTUAL = re.compile(
    r"\\(?P<cmd>[cC]ite(?:t|alt|alp|author|year|yearpar)?)\*?\s*(?:\[[^\]]*\]\s*){0,2}"
    r"\{(?P<keys>[^{}]*)\}"
)
# bibliography styles that print author-year labels: in them natbib's plain \cite is textual, as \citet
_AUTHOR_YEAR_STYLE = re.compile(
    r"nat\b|^aa|^aas|apa|mnras|agu|ametsoc|chicago|harv|spbasic|jfm|copernicus|"
    r"elsarticle-harv|plainnat|abbrvnat|unsrtnat",
    re.I,
)


class Bibliography(NamedTuple):
    entries: dict[str, tuple[str, str]]  # cite key -> (authors as natbib prints them, year)
    listed: int = 0  # entries of a .bbl read for it (an inline list is counted where it is dropped)
    labelled: bool = False  # from \bibitem labels in natbib's author-year form


def bibliography(body: str, load: Callable[[str], str | None], main: str) -> Bibliography:
    """The paper's bibliography: its ``\\bibitem`` list (inline, or the ``.bbl`` LaTeX would read), else the
    ``.bib`` files ``\\bibliography`` names."""
    bbl = 0
    text = body
    if "\\bibitem" not in body:
        text = load(posixpath.splitext(main)[0] + ".bbl") or ""
        bbl = len(_BIBITEM.findall(text))
    items = dict(_bibitems(text))
    if items:
        entries = {k: v for k, v in items.items() if v}
        return Bibliography(entries, bbl, bool(entries))
    entries: dict[str, tuple[str, str]] = {}
    for arg in re.findall(r"\\bibliography\s*\{([^{}]*)\}", body):
        for name in filter(None, (n.strip() for n in arg.split(","))):
            for candidate in (f"{name}.bib", name):
                found = load(posixpath.normpath(posixpath.join(posixpath.dirname(main), candidate)))
                if found:
                    entries.update(_bib_entries(found))
                    break
    return Bibliography(entries)


def _bibitems(text: str):
    """(key, natbib label or None) per ``\\bibitem[label]{key}``; the label may hold braces and brackets."""
    for m in _BIBITEM.finditer(text):
        i, opt = m.end(), None
        if text[i : i + 1] == "[":
            depth, j = 0, i
            for j in range(i, min(len(text), i + 2000)):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if text[j] == "]" and depth == 0:
                    break
            opt, i = text[i + 1 : j], j + 1
        key = re.match(r"\s*\{([^{}]+)\}", text[i : i + 500])
        if key:
            yield key[1].strip(), _natbib_label(opt)


def _natbib_label(opt: str | None) -> tuple[str, str] | None:
    """``Smith et~al.(2016)Smith, Jones, and Lee`` -> ("Smith et~al.", "2016"); None for a numbered style."""
    m = re.match(r"^[\s{\"]*(.+?)\s*\(([^()]*\d{4}[^()]*)\)", opt or "")  # ACL's {"Smith(2016)"...}
    if not m:
        return None
    short, year = m[1].strip('"'), re.sub(r"\{?\\natexlab\s*\{(\w*)\}\}?", r"\1", m[2]).strip()  # 2020{\natexlab{a}}
    if short.count("{") != short.count("}"):  # a brace left open by the long form: drop them all
        short = short.replace("{", "").replace("}", "")
    return short, year


def _bib_entries(text: str) -> dict[str, tuple[str, str]]:
    out = {}
    starts = [m for m in _BIB_ENTRY.finditer(text) if m[1].lower() not in ("string", "comment", "preamble")]
    for m, nxt in zip(starts, [*starts[1:], None]):
        entry = text[m.end() : nxt.start() if nxt else None]
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


def author_year(source: str, bbl_labels: bool) -> bool:
    """Whether natbib prints this paper's citations as author-year (then ``\\cite`` is ``\\citet``): its
    labels or its style say so, and neither natbib's options nor the class ask for numbers."""
    if re.search(
        r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{(?:revtex|iopart|elsarticle|aip|achemso)", source
    ) and not re.search(r"authoryear", source):
        return False
    natbib = re.search(r"\\usepackage\s*\[([^\]]*)\]\s*\{natbib\}|\\setcitestyle\s*\{([^{}]*)\}", source)
    if natbib and re.search(r"numbers|super", natbib[1] or natbib[2] or ""):
        return False
    style = re.search(r"\\bibliographystyle\s*\{([^{}]*)\}", source)
    return bbl_labels or bool(style and _AUTHOR_YEAR_STYLE.search(style[1].strip()))


def resolve_cites(latex: str, bib: dict[str, tuple[str, str]], textual_cite: bool = False) -> str:
    """Textual citations whose every key the bibliography names, written out; the others left as they are.
    ``textual_cite``: a plain ``\\cite`` is one too (natbib in author-year mode)."""

    def one(m: re.Match) -> str:
        cmd = m["cmd"].lower()
        if cmd == "cite" and not textual_cite:
            return m[0]
        cmd = "citet" if cmd == "cite" else cmd
        found = [bib.get(k.strip()) for k in m["keys"].split(",") if k.strip()]
        if not found or None in found:
            return m[0]
        form = {
            "citet": "{} ({})",
            "citealt": "{} {}",
            "citealp": "{}, {}",
            "citeauthor": "{}",
            "citeyear": "{1}",
            "citeyearpar": "({1})",
        }[cmd]
        return "; ".join(form.format(*entry) for entry in found)

    return _TEXTUAL.sub(one, latex)
