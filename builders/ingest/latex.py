"""LaTeX: a ``.tex`` file, or an arXiv source archive (``.tar.gz``/``.tgz``/``.tar``, or one gzipped ``.tex``).

``latex_source.py`` finds the main file and gives its source as one text (inputs and simple macros expanded).
Here the structure is read: ``\\title``, the abstract and ``\\section``s (appendix sections kept, marked); the
bibliography, figures and tables are removed (their captions too). Text is rendered by pylatexenc with **math
kept verbatim as LaTeX** (inline and display), so that questions can be asked about equations; siunitx
quantities become "5 nm".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from sciqag_dataset.builders.ingest.components import keep_marks, unmark
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.latex_cites import Bibliography, author_year, bibliography, resolve_cites
from sciqag_dataset.builders.ingest.latex_components import latex_components
from sciqag_dataset.builders.ingest.latex_refs import FIGURE_ENVS, TABLE_ENVS, resolve_refs
from sciqag_dataset.builders.ingest.latex_source import (
    drop_definitions,
    expand_inputs,
    expand_macros,
    macros,
    sources,
    split_document,
)
from sciqag_dataset.builders.ingest.latex_units import group, siunitx
from sciqag_dataset.builders.ingest.normalize import DOI_IN_TEXT, EMPTY_BRACKETS, inline
from sciqag_dataset.builders.ingest.registry import RawPaper, Source


def read(source: Source) -> Iterator[RawPaper]:
    files, main = sources(Path(source.path), source.warn)
    missing: list[str] = []
    preamble, body = split_document(expand_inputs(files, main, source.warn, missing))
    defined = macros(preamble + body)
    body = expand_macros(drop_definitions(body), defined)
    preamble = expand_macros(preamble, defined)
    yield {**_paper(preamble, body, bibliography(body, files, main)), "partial": missing}


# ---------------------------------------------------------------- structure and text

_DROP_ENVS = (*FIGURE_ENVS, *TABLE_ENVS, "thebibliography", "filecontents", "filecontents*", "tikzpicture")
_DROP_ENV = re.compile(r"\\begin\{(" + "|".join(map(re.escape, _DROP_ENVS)) + r")\}.*?\\end\{\1\}", re.S)
_ABSTRACT_ENV = re.compile(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", re.S)
_SECTION = re.compile(r"\\(part|chapter|section|subsection|subsubsection)\*?\s*(?:\[[^\]]*\])?(?=\s*\{)")
#: Front matter read elsewhere (title, authors) or not text at all: the command and its arguments go.
_GONE_ARGS = (
    "label",
    "bibliography",
    "bibliographystyle",
    "nocite",
    "includegraphics",
    "vspace",
    "hspace",
    "title",
    "author",
    "affiliation",
    "altaffiliation",
    "address",
    "email",
    "thanks",
    "date",
    "keywords",
    "pacs",
    "orcid",
    "institute",
    "homepage",
    "received",
    "accepted",
    "collaboration",
    "subjclass",
    "dedicatory",
    "acknowledgments",
    "setlength",
    "addtolength",
    "input",
    "include",
    "caption",
    "subcaption",
)
_GONE_ARG = re.compile(r"\\(?:" + "|".join(_GONE_ARGS) + r")\*?(?![A-Za-z])\s*(?:\[[^\]]*\])?(?=\s*\{)")
_GONE = re.compile(
    r"\\(?:maketitle|tableofcontents|newpage|clearpage|noindent|centering|onecolumngrid|"
    r"twocolumngrid|appendix)(?![A-Za-z])"
)
# a citation, or a cross-reference with the word before it ("Fig.~\\ref{x}"): both mean nothing without the paper
_CITE = re.compile(
    r"(?:(?:\b(?:Figs?\.?|Figures?|Eqs?\.?|Equations?|Tables?|Tabs?\.|Sections?|Secs?\.|Refs?\.|"
    r"Appendix|Chapter|Lemma|Theorem|Proposition|Corollary|Definition|Algorithm|Listing)|\\S)[~\s]*)?~?\\(?:[cC]ite[a-zA-Z]*|ref|eqref|autoref|cref|Cref|pageref)\*?\s*"
    r"(?:\[[^\]]*\]\s*){0,2}\{[^{}]*\}"
)


def _paper(preamble: str, body: str, bib: Bibliography) -> RawPaper:
    references = (
        sum(
            len(re.findall(r"\\bibitem\b", m[0]))
            for m in re.finditer(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", body, re.S)
        )
        or bib.listed
    )
    # "Fig.~\\ref{f}" -> "Fig.~1" (before the figures go), "\\citet{s}" -> "Smith et~al. (2016)"; tables,
    # figures and equations are kept as components, and marked where they stand and where a reference names them
    textual_cite = author_year(preamble + body, bib.labelled)
    components, body, labels, mark = latex_components(body, _render, resolve_refs)
    body = resolve_cites(resolve_refs(body, labels, mark), bib.entries, textual_cite)
    abstract = _ABSTRACT_ENV.search(body) or _ABSTRACT_ENV.search(preamble)
    body = _DROP_ENV.sub("", _ABSTRACT_ENV.sub("", body))
    sections = []
    if abstract:
        sections.append(["Abstract", _render(_no_thanks(abstract[1]))])
    else:
        macro = _macro_arg(preamble + body, "abstract")  # \abstract{...} of some journal classes
        if macro:
            sections.append(["Abstract", _render(_no_thanks(macro))])
    appendix = body.find("\\appendix")
    heading, pos = "", 0
    for m in _SECTION.finditer(body):
        arg = group(body, m.end())
        if arg is None:
            continue
        sections.append([heading, _render(body[pos : m.start()])])
        heading = inline(_render(arg[0]))
        if 0 <= appendix < m.start():
            heading = f"Appendix: {heading}"
        pos = arg[1]
    sections.append([heading, _render(body[pos:])])
    sections = [s for s in sections if unmark(s[1]).strip()]
    if not sections:
        raise IngestError("no text in the LaTeX document body")
    body = unmark(body)  # the front matter is read from the rest: no marks there
    title = _macro_arg(preamble + body, "title")
    authors = [
        a for arg in _macro_args(preamble + body, "author") for a in re.split(r"\\and\b|,|\band\b", _author_names(arg))
    ]
    # the preamble only: a DOI in the body or the bibliography is another work's, and would become this id
    doi = _macro_arg(preamble, "doi") or next(
        (m[1] for m in (_META_DOI.search(preamble), DOI_IN_TEXT.search(preamble)) if m), None
    )
    return {
        "format": "latex",
        "extractor": "latex/pylatexenc",
        "title": inline(_render(_no_thanks(title or ""))),
        "sections": sections,
        "components": components,
        "metadata": {"doi": doi, "authors": [inline(_render(a)) for a in authors]},
        "references_dropped": references,
    }


# a class's metadata command for the DOI (``\acmDOI{10.1145/...}``, ``\articleDOI{https://doi.org/...}``)
_META_DOI = re.compile(
    r"\\[A-Za-z@]*doi[A-Za-z@]*\*?\s*\{\s*(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/[^\s{}]+)\s*\}", re.I
)


def _macro_args(text: str, name: str) -> list[str]:
    out = []
    for m in re.finditer(r"\\" + name + r"\*?\s*(?:\[[^\]]*\])?(?=\s*\{)", text):
        arg = group(text, m.end())
        if arg is not None:
            out.append(arg[0])
    return out


def _macro_arg(text: str, name: str) -> str | None:
    found = _macro_args(text, name)
    return found[0] if found else None


def _author_names(arg: str) -> str:
    """The names in an \\author argument: marks ($^{1,2}$, \\textsuperscript) and affiliation lines out."""
    arg = re.sub(r"\$[^$]*\$|\\textsuperscript\s*\{[^{}]*\}", "", arg)
    return _no_thanks(re.split(r"\\\\", arg, maxsplit=1)[0] if "\\\\" in arg else arg)


def _no_thanks(text: str) -> str:
    """Notes attached to a title, an author or the abstract (``\\footnote[2]{...}``, ``\\thanks{...}``): not
    its text."""
    for name in ("thanks", "footnote", "footnotetext", "inst", "affiliation", "email", "orcid"):
        pattern = r"\\" + name + r"\s*(?:\[[^\]]*\]\s*)?(?=\{)"
        while (m := re.search(pattern, text)) and (arg := group(text, m.end())):
            text = text[: m.start()] + text[arg[1] :]
    return re.sub(r"\\footnotemark\b(?:\[[^\]]*\])?", "", text).replace("\\\\", " ")


def _context():
    """pylatexenc's macros, plus font commands whose text it drops (``\\texttt{astropy.io}``)."""
    db = get_default_latex_context_db()  # a new copy on every call
    db.add_context_category(
        "sciqag-fonts",
        prepend=True,
        macros=[
            *(MacroTextSpec(name, "%s") for name in ("texttt", "textsf", "textup", "textmd", "mbox")),
            MacroTextSpec("S", "§"),
            MacroTextSpec("P", "¶"),
        ],
    )
    return db


_L2T = LatexNodes2Text(latex_context=_context(), math_mode="verbatim", strict_latex_spaces=False)
_MARK = "\x01"  # where a citation was, until the spaces around it are tidied


def _unmark(text: str) -> str:
    """Citations out, and the spaces before them where punctuation or a space follows ("light [1]." ->
    "light."); linear, whatever the text."""
    parts = text.split(_MARK)
    out = parts[0]
    for part in parts[1:]:
        if not part or part[0] in ",.;:)] \t\n":
            out = out.rstrip(" \t\u00a0")
        out += part
    return out


def _drop_commands(latex: str) -> str:
    out, pos = [], 0
    for m in _GONE_ARG.finditer(latex):
        if m.start() < pos:
            continue
        arg = group(latex, m.end())
        out.append(latex[pos : m.start()])
        pos = arg[1] if arg else m.end()
    return _GONE.sub("", "".join(out) + latex[pos:])


# setup code, never text: expl3 (``\ExplSyntaxOn ... \ExplSyntaxOff``, ``\keys_set:nn {..} {..}``: names with
# "_" and a ":signature"), and any command whose argument is a key=value list (``\hypersetup{a=b, c=d}``,
# ``\sisetup{...}``); a text command's "n = 3" is one short pair, not a list
_EXPL_BLOCK = re.compile(r"\\ExplSyntaxOn(?![A-Za-z]).*?(?:\\ExplSyntaxOff(?![A-Za-z])|$)", re.S)
_EXPL_CALL = re.compile(r"\\[A-Za-z@]+(?:_[A-Za-z@]+)+(?::[A-Za-z]*)?")
_ANY_CALL = re.compile(r"\\[A-Za-z@]+\*?\s*(?:\[[^\]]*\]\s*)?(?=\{)")
_PAIR = r"\s*[A-Za-z][\w -]*?\s*=\s*[^,=]*"
_KEY_VALUES = re.compile(rf"(?:{_PAIR},)+(?:{_PAIR})?\s*|\s*[A-Za-z][\w-]{{2,}}\s*=\s*[^,=]*")


def _drop_setup(latex: str) -> str:
    """expl3 code and key=value setup commands out, with all their brace arguments."""
    latex = _EXPL_BLOCK.sub("", latex)
    out, pos = [], 0
    for m in re.finditer(f"{_EXPL_CALL.pattern}|{_ANY_CALL.pattern}", latex):
        if m.start() < pos:
            continue
        arg = group(latex, m.end())
        if not _EXPL_CALL.fullmatch(m[0].rstrip()) and not (arg and _KEY_VALUES.fullmatch(arg[0])):
            continue
        out.append(latex[pos : m.start()])
        pos = m.end()
        while (arg := group(latex, pos)) is not None:  # every brace argument that follows
            pos = arg[1]
    return "".join(out) + latex[pos:]


_HREF = re.compile(r"\\href\s*\{[^{}]*\}\s*(?=\{)")
_URL = re.compile(r"\\(?:url|nolinkurl)\s*\{([^{}]*)\}")


def _render(latex: str) -> str:
    latex = _HREF.sub(
        "", _drop_setup(latex)
    )  # \href{url}{text} -> {text} (pylatexenc's rule for it fails on some input)
    latex = re.sub(r"\\captionof\s*\{[^{}]*\}", r"\\caption", latex)  # a caption outside a float goes too
    latex = _URL.sub(lambda m: m[1].replace("_", "\\_").replace("%", "\\%").replace("#", "\\#"), latex)
    latex = re.sub(r"\\xspace\b", "{}", latex)  # keeps the space after a macro that ends with it
    latex = _CITE.sub(_MARK, _drop_commands(siunitx(latex)))
    try:
        text = _L2T.latex_to_text(latex)
    except Exception:  # a construct pylatexenc cannot take: the chunk's words, its commands dropped
        text = re.sub(r"\\[A-Za-z]+\*?|[{}]", " ", latex)
    # citations, then "(Fig. 2)" once the reference is gone: on the text without the marks of its components
    return keep_marks(text.replace("\u00a0", " "), lambda t: EMPTY_BRACKETS.sub("", _unmark(t)))
