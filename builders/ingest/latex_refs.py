"""LaTeX cross-references resolved to the numbers LaTeX would print: "as shown in Fig.~\\ref{f}" reads "as
shown in Fig. 1", not "as shown in,". Figures, tables, equations (each numbered line of an align) and
sections are counted in document order, as the standard classes count them (one sequence each, floats by
their captions, sections hierarchical, appendix sections lettered). A label this cannot number is left to the
caller, who drops it."""

from __future__ import annotations

import re
from collections.abc import Callable

#: floats, each numbered in its own sequence (AASTeX's deluxetable and the rotated kinds are tables too)
FIGURE_ENVS = ("figure", "figure*", "wrapfigure", "sidewaysfigure", "SCfigure")
TABLE_ENVS = (
    "table",
    "table*",
    "wraptable",
    "sidewaystable",
    "deluxetable",
    "deluxetable*",
    "longtable",
    "longtable*",
    "rotatetable",
    "rotatetable*",
    "longrotatetable",
    "splitdeluxetable",
    "splitdeluxetable*",
)
_MULTILINE = ("align", "gather", "eqnarray", "flalign", "alignat")  # a number per line (multline: one in all)
_KIND = {
    **{e: "figure" for e in FIGURE_ENVS},
    **{e: "table" for e in TABLE_ENVS},
    "equation": "equation",
    "multline": "equation",
    **{e: "equation" for e in _MULTILINE},
}
_ENV_NAMES = "|".join(re.escape(e) for e in sorted(_KIND, key=len, reverse=True))
_TOKEN = re.compile(
    r"\\begin\{(?P<begin>" + _ENV_NAMES + r")\}|\\end\{(?P<end>" + _ENV_NAMES + r")\}"
    r"|\\(?P<section>section|subsection|subsubsection)(?P<star>\*?)\s*(?:\[[^\]]*\])?\s*\{"
    r"|\\(?P<appendix>appendix)(?![A-Za-z])|\\label\s*\{(?P<label>[^{}]*)\}"
    r"|(?P<newline>\\\\)|\\(?P<nonumber>nonumber|notag)(?![A-Za-z])"
    r"|\\(?P<caption>caption|tablecaption)(?![A-Za-z])|\\captionof\s*\{(?P<captionof>figure|table)\}"
    r"|\\begin\{(?P<inner>[^{}]*)\}|\\end\{(?P<outer>[^{}]*)\}"
)  # matrices, cases: rows are not lines
# environments with a counter of their own: a label in them is theirs, not the section's
_OWN_COUNTER = re.compile(
    r"theorem|lemma|proposition|corollary|definition|remark|example|conjecture|claim|"
    r"assumption|hypothesis|problem|exercise|enumerate|algorithm|listing|footnote|step|case",
    re.I,
)
_NAMES = {"figure": "Fig.", "table": "Table", "equation": "Eq.", "section": "Sec."}
_REF = re.compile(r"\\(?P<cmd>ref|eqref|autoref|cref|Cref|labelcref|subref)\*?\s*\{(?P<labels>[^{}]*)\}")


def number_labels(body: str) -> dict[str, tuple[str, str]]:
    """label -> (kind, number) for the labels of a document body, in LaTeX's own numbering: a float's number
    is its caption's (a float without one has none), a label names what was numbered last before it."""
    labels: dict[str, tuple[str, str]] = {}
    counts = {"figure": 0, "table": 0, "equation": 0}
    sections, appendix = [0, 0, 0], False
    last: tuple[str, str] | None = None  # what a \label outside an environment names: a section, a \captionof
    env: str | None = None  # the counted environment we are in
    captioned: tuple[str, str] | None = None  # the float's caption number, once its \caption came
    numbered_line, line_start = True, 0
    inner: list[str] = []  # other environments open (matrices in an align, a theorem, a list, subequations)
    base = 0  # how many of them were open when the counted environment began
    for m in _TOKEN.finditer(body):
        sub = "subequations" in inner  # numbered 1a, 1b: left unresolved
        if m["begin"] and env is None:
            env, base, captioned, pending = m["begin"], len(inner), None, []
            if _KIND[env] == "equation" and not sub:
                counts["equation"] += 1
            numbered_line, line_start = True, m.end()
        elif m["end"] and env is not None and m["end"] == env:
            if env in _MULTILINE and numbered_line and not sub and not body[line_start : m.start()].strip():
                counts["equation"] -= 1  # a trailing \\ opens no numbered line
            env, inner[base:] = None, []
        elif m["inner"] is not None or m["begin"]:
            inner.append(m["inner"] or m["begin"])
            if m["inner"] == "subequations":
                counts["equation"] += 1
        elif m["outer"] is not None or m["end"]:
            if inner:
                inner.pop()
        elif m["caption"] and env is not None and _KIND[env] in ("figure", "table"):
            counts[_KIND[env]] += 1
            captioned = (_KIND[env], str(counts[_KIND[env]]))
            labels.update(dict.fromkeys(pending, captioned))
            pending = []
        elif m["captionof"]:
            counts[m["captionof"]] += 1
            last = (m["captionof"], str(counts[m["captionof"]]))
            if env is not None and _KIND[env] in ("figure", "table"):  # a table's caption in a wrapfigure
                captioned = last
                labels.update(dict.fromkeys(pending, captioned))
                pending = []
        elif m["section"] and env is None and not m["star"]:
            depth = ("section", "subsection", "subsubsection").index(m["section"])
            sections[depth] += 1
            sections[depth + 1 :] = [0] * (2 - depth)
            head = chr(ord("A") + sections[0] - 1) if appendix else str(sections[0])
            last = ("section", ".".join([head, *map(str, sections[1 : depth + 1])]))
        elif m["appendix"]:
            appendix, sections = True, [0, 0, 0]
        elif m["newline"] and env in _MULTILINE and len(inner) == base and not sub:
            counts["equation"] += 1  # the next line's number, until a \nonumber takes it back
            numbered_line, line_start = True, m.end()
        elif m["nonumber"] and env in _MULTILINE and numbered_line and not sub:
            counts["equation"] -= 1  # this line has no number; the next one takes it
            numbered_line = False
        elif m["label"] is not None:
            kind = _KIND.get(env or "")
            if kind in ("figure", "table"):
                if captioned:
                    labels[m["label"]] = captioned
                else:
                    pending.append(m["label"])
            elif kind:
                if numbered_line and not sub:
                    labels[m["label"]] = ("equation", str(counts["equation"]))
            elif last and not sub and not any(_OWN_COUNTER.search(e) for e in inner):
                labels[m["label"]] = last  # LaTeX's: what was numbered last, wherever after it
    return labels


def resolve_refs(
    latex: str, labels: dict[str, tuple[str, str]], mark: Callable[[list[str]], tuple[str, str]] | None = None
) -> str:
    """``\\ref``, ``\\eqref``, ``\\autoref``, ``\\cref`` to labels that were numbered become their numbers;
    the others stay for the caller to drop. ``mark(labels)``: what to put around a resolved reference (the
    marks of the components it mentions)."""

    def one(m: re.Match) -> str:
        names = [name.strip() for name in m["labels"].split(",")]
        found = [labels.get(name) for name in names]
        if not found or None in found:
            return m[0]
        if m["cmd"] == "eqref":
            shown = ", ".join(f"({n})" for _, n in found)
        else:
            shown = ", ".join(f"({n})" if kind == "equation" and m["cmd"] != "ref" else n for kind, n in found)
            if m["cmd"] in ("autoref", "cref", "Cref"):  # these print the kind's name too
                shown = f"{_NAMES[found[0][0]]}~{shown}"
        before, after = mark(names) if mark else ("", "")
        return before + shown + after

    return _REF.sub(one, latex)
