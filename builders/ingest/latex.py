"""LaTeX: a ``.tex`` file, or an arXiv source archive (``.tar.gz``/``.tgz``/``.tar``, or one gzipped ``.tex``).

The main file is the one with ``\\documentclass`` (and ``\\begin{document}``); ``\\input``/``\\include`` are
expanded from the archive or the main file's folder (never above it); comments, ``\\iffalse`` blocks and the
``comment`` environment go; argument-less ``\\newcommand``/``\\def`` macros are expanded. The structure is
``\\title``, the abstract and ``\\section``s (appendix sections kept, marked); the bibliography, figures and
tables are removed (their captions too). Text is rendered by pylatexenc with **math kept verbatim as LaTeX**
(inline and display), so that questions can be asked about equations; siunitx quantities become "5 nm".
"""
from __future__ import annotations

import gzip
import posixpath
import re
import tarfile
from pathlib import Path
from typing import Callable, Iterator

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from .latex_cites import Bibliography, author_year, bibliography, resolve_cites
from .latex_refs import FIGURE_ENVS, TABLE_ENVS, number_labels, resolve_refs
from .latex_units import group, siunitx
from .text import DOI_IN_TEXT, IngestError, LatexFragment, inline

MAX_SOURCE_BYTES = 64 << 20  # TeX read from one archive: more is not a paper (and guards against gzip bombs)
MAX_BIB_BYTES = 8 << 20  # a shared .bib of a whole group: not read, not counted against the paper's TeX
_MAX_DEPTH = 12
_SOURCE_SUFFIXES = (".tex", ".bbl", ".bib", ".ltx")  # what an archive is read for: TeX and its bibliography


def read_latex(path: str, warn) -> Iterator[dict]:
    files, main = _sources(Path(path), warn)
    source = _expand_inputs(files, main, warn)
    preamble, body = _split_document(source)
    macros = _macros(preamble + body)
    body = _expand_macros(_drop_definitions(body), macros)
    preamble = _expand_macros(preamble, macros)
    yield _paper(preamble, body, bibliography(body, files, main))


# ---------------------------------------------------------------- finding the source

def _decode(data: bytes, name: str, warn) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{name}: not UTF-8; read as Latin-1")  # older arXiv sources
        return data.decode("latin-1")


def _sources(path: Path, warn) -> tuple[Callable[[str], str | None], str]:
    """(load(name) -> text, main file name) from an archive or a file on disk. Archives are streamed: only
    their TeX members are read, up to MAX_SOURCE_BYTES (figures may make an archive much larger)."""
    with path.open("rb") as f:
        head = f.read(512)
    if head[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as gz:
            inner = gz.read(512)
        if _is_tar(inner):
            return _from_tar(path, warn)
        with gzip.open(path, "rb") as gz:  # arXiv gzips a lone .tex file without a tar around it
            data = gz.read(MAX_SOURCE_BYTES + 1)
        if len(data) > MAX_SOURCE_BYTES:
            raise IngestError(f"a gzipped file of more than {MAX_SOURCE_BYTES >> 20} MB: not a paper's source")
        text = _decode(data, path.name, warn)
        if not _is_main(text):
            raise IngestError("a gzipped file with no \\documentclass: not a LaTeX paper")
        return (lambda name: text if name == "main.tex" else None), "main.tex"
    if _is_tar(head):
        return _from_tar(path, warn)
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise IngestError(f"a .tex file of more than {MAX_SOURCE_BYTES >> 20} MB: not a paper's source")
    text = _decode(path.read_bytes(), path.name, warn)
    if not _is_main(text):
        raise LatexFragment("a LaTeX file without \\documentclass (part of a paper?): read the main file, which "
                            "inputs it")
    folder = path.parent.resolve()

    def load(name: str) -> str | None:
        if name == path.name:
            return text  # as read (the path may be a link, e.g. into a Hub cache's blobs)
        target = (folder / name).resolve()
        if folder not in target.parents or not target.is_file():  # nothing above the paper's folder
            return None
        if target.suffix.lower() == ".bib" and target.stat().st_size > MAX_BIB_BYTES:
            return None
        return _decode(target.read_bytes(), name, warn)
    return load, path.name


def _is_tar(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def _from_tar(path: Path, warn) -> tuple[Callable[[str], str | None], str]:
    texts: dict[str, str] = {}
    total = 0
    with tarfile.open(path, "r|*") as tar:  # a stream: members in order, nothing kept but the TeX
        for member in tar:
            name = posixpath.normpath(member.name)
            if not member.isfile() or not name.lower().endswith(_SOURCE_SUFFIXES) or name.startswith(".."):
                continue
            if posixpath.basename(name).startswith("._") or name.startswith("__MACOSX/"):
                continue  # macOS resource forks, not sources
            if name.lower().endswith(".bib") and member.size > MAX_BIB_BYTES:
                warn(f"{name}: a bibliography of {member.size >> 20} MB, left unread (textual citations of it "
                     "are removed)")
                continue
            total += member.size
            if total > MAX_SOURCE_BYTES:
                raise IngestError(f"more than {MAX_SOURCE_BYTES >> 20} MB of TeX in the archive: not a paper's source")
            texts[name] = _decode(tar.extractfile(member).read(), name, warn)
    mains = [n for n, t in texts.items() if n.endswith((".tex", ".ltx")) and _is_main(t)]
    if not mains:
        raise IngestError("no main LaTeX file (with \\documentclass) in the archive")
    # the one with a document body; then the conventional names; then the longest
    main = max(mains, key=lambda n: ("\\begin{document}" in _strip_comments(texts[n]),
                                      posixpath.basename(n) in ("main.tex", "ms.tex", "paper.tex", "article.tex"),
                                      len(texts[n])))
    if len(mains) > 1:
        warn(f"{len(mains)} files with \\documentclass in the archive; read {main}")
    return texts.get, main


def _is_main(text: str) -> bool:
    return "\\documentclass" in _strip_comments(text) or "\\documentstyle" in _strip_comments(text)


_COMMENT = re.compile(r"(?<!\\)%.*")
_IFFALSE = re.compile(r"\\iffalse\b.*?\\fi\b", re.S)
_COMMENT_ENV = re.compile(r"\\begin\{comment\}.*?\\end\{comment\}", re.S)


def _strip_comments(text: str) -> str:
    text = _COMMENT.sub("", text)
    return _COMMENT_ENV.sub("", _IFFALSE.sub("", text))


_INPUT = re.compile(r"\\(?:input|include|subfile)(?:\s*\{([^{}]*)\}|\s+([^\s{}\\]+))")


def _expand_inputs(load: Callable[[str], str | None], main: str, warn) -> str:
    base = posixpath.dirname(main)
    size = [0]  # TeX read through inputs so far: a file input many times over is refused, not expanded

    def expand(name: str, text: str, stack: tuple[str, ...]) -> str:
        def one(m: re.Match) -> str:
            wanted = (m[1] or m[2] or "").strip()
            if not wanted:
                return ""
            for candidate in (wanted, f"{wanted}.tex"):
                key = posixpath.normpath(posixpath.join(base, candidate))
                if key in stack:
                    warn(f"\\input{{{wanted}}} includes itself; left out")
                    return ""
                found = load(key)
                if found is not None:
                    size[0] += len(found)
                    if size[0] > MAX_SOURCE_BYTES:
                        raise IngestError(f"inputs expand to more than {MAX_SOURCE_BYTES >> 20} MB of TeX")
                    if len(stack) > _MAX_DEPTH:
                        warn(f"\\input{{{wanted}}}: nested too deep; left out")
                        return ""
                    return "\n" + expand(key, found, (*stack, key)) + "\n"
            if wanted.endswith((".tikz", ".pgf", ".pdf_tex", ".table")) or wanted.startswith(("fig", "tab")):
                return ""  # a figure's or table's body: removed anyway
            begin = text.find("\\begin{document}")
            if name == main and (begin < 0 or m.start() < begin) and "\\documentclass" in text:
                warn(f"\\input{{{wanted}}} (in the preamble): not in the source; left out")  # settings, not text
            else:
                warn(f"\\input{{{wanted}}}: not in the source; that part of the paper is missing", True)
            return ""
        text = _strip_comments(text)
        return _INPUT.sub(one, text)
    return expand(main, load(main) or "", (main,))


# ---------------------------------------------------------------- macros

#: redefined by classes and templates to change their looks; their meaning (the structure) stays ours
_STRUCTURAL = {"section", "subsection", "subsubsection", "paragraph", "chapter", "part", "title", "author",
               "maketitle", "abstract", "appendix", "cite", "ref", "label", "caption", "item", "emph", "textbf"}
_DEFINE = re.compile(r"\\(?:(?:re|provide)?newcommand\*?\s*(?:\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+))|"
                     r"def\s*\\([A-Za-z]+))\s*(\[\d\])?")


def _macros(text: str) -> dict[str, str]:
    """Argument-less macros: name -> body (those with arguments are left to the renderer)."""
    found = {}
    for m in _DEFINE.finditer(text):
        if m[4] or (m[1] or m[2] or m[3]) in _STRUCTURAL:
            continue
        body = group(text, m.end())
        if body is not None:
            found[m[1] or m[2] or m[3]] = body[0]
    return found


def _drop_definitions(text: str) -> str:
    out, pos = [], 0
    for m in _DEFINE.finditer(text):
        body = group(text, m.end())
        if body is None or m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        pos = body[1]
    return "".join(out) + text[pos:]


def _expand_macros(text: str, macros: dict[str, str]) -> str:
    if not macros:
        return text
    pattern = re.compile(r"\\(" + "|".join(map(re.escape, sorted(macros, key=len, reverse=True))) + r")(?![A-Za-z])")
    limit = 4 * len(text) + (1 << 20)
    size = [0]

    def body(m: re.Match) -> str:
        # counted per substitution, not after the pass: one pass of a long macro used many times is gigabytes
        size[0] += len(macros[m[1]]) - len(m[0])
        if size[0] > limit:  # macros that multiply: not a paper's text
            raise IngestError("macro expansion grows without bound (macros that expand into many copies of "
                              "themselves)")
        return macros[m[1]]

    for _ in range(4):  # macros defined through other macros
        size[0] = len(text)
        text, n = pattern.subn(body, text)
        if not n:
            break
    return text


# ---------------------------------------------------------------- structure and text

def _split_document(source: str) -> tuple[str, str]:
    begin = source.find("\\begin{document}")
    if begin < 0:
        return "", source
    end = source.find("\\end{document}", begin)
    return source[:begin], source[begin + len("\\begin{document}"):end if end >= 0 else None]


_DROP_ENVS = (*FIGURE_ENVS, *TABLE_ENVS, "thebibliography", "filecontents", "filecontents*", "tikzpicture")
_DROP_ENV = re.compile(r"\\begin\{(" + "|".join(map(re.escape, _DROP_ENVS)) + r")\}.*?\\end\{\1\}", re.S)
_ABSTRACT_ENV = re.compile(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", re.S)
_SECTION = re.compile(r"\\(part|chapter|section|subsection|subsubsection)\*?\s*(?:\[[^\]]*\])?(?=\s*\{)")
#: Front matter read elsewhere (title, authors) or not text at all: the command and its arguments go.
_GONE_ARGS = ("label", "bibliography", "bibliographystyle", "nocite", "includegraphics", "vspace", "hspace",
              "title", "author", "affiliation", "altaffiliation", "address", "email", "thanks", "date", "keywords",
              "pacs", "orcid", "institute", "homepage", "received", "accepted", "collaboration", "subjclass",
              "dedicatory", "acknowledgments", "setlength", "addtolength", "input", "include", "caption",
              "subcaption")
_GONE_ARG = re.compile(r"\\(?:" + "|".join(_GONE_ARGS) + r")\*?(?![A-Za-z])\s*(?:\[[^\]]*\])?(?=\s*\{)")
_GONE = re.compile(r"\\(?:maketitle|tableofcontents|newpage|clearpage|noindent|centering|onecolumngrid|"
                   r"twocolumngrid|appendix)(?![A-Za-z])")
# a citation, or a cross-reference with the word before it ("Fig.~\\ref{x}"): both mean nothing without the paper
_CITE = re.compile(r"(?:(?:\b(?:Figs?\.?|Figures?|Eqs?\.?|Equations?|Tables?|Tabs?\.|Sections?|Secs?\.|Refs?\.|"
                   r"Appendix|Chapter|Lemma|Theorem|Proposition|Corollary|Definition|Algorithm|Listing)|\\S)[~\s]*)?~?\\(?:[cC]ite[a-zA-Z]*|ref|eqref|autoref|cref|Cref|pageref)\*?\s*"
                   r"(?:\[[^\]]*\]\s*){0,2}\{[^{}]*\}")


def _paper(preamble: str, body: str, bib: Bibliography) -> dict:
    references = sum(len(re.findall(r"\\bibitem\b", m[0])) for m in re.finditer(
        r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", body, re.S)) or bib.listed
    # "Fig.~\\ref{f}" -> "Fig.~1" (before the figures go), "\\citet{s}" -> "Smith et~al. (2016)"
    textual_cite = author_year(preamble + body, bib.labelled)
    body = resolve_cites(resolve_refs(body, number_labels(body)), bib.entries, textual_cite)
    abstract = _ABSTRACT_ENV.search(body) or _ABSTRACT_ENV.search(preamble)
    body = _DROP_ENV.sub("", _ABSTRACT_ENV.sub("", body))
    sections = []
    if abstract:
        sections.append(["Abstract", _render(abstract[1])])
    else:
        macro = _macro_arg(preamble + body, "abstract")  # \abstract{...} of some journal classes
        if macro:
            sections.append(["Abstract", _render(macro)])
    appendix = body.find("\\appendix")
    heading, pos = "", 0
    for m in _SECTION.finditer(body):
        arg = group(body, m.end())
        if arg is None:
            continue
        sections.append([heading, _render(body[pos:m.start()])])
        heading = inline(_render(arg[0]))
        if 0 <= appendix < m.start():
            heading = f"Appendix: {heading}"
        pos = arg[1]
    sections.append([heading, _render(body[pos:])])
    sections = [s for s in sections if s[1].strip()]
    if not sections:
        raise IngestError("no text in the LaTeX document body")
    title = _macro_arg(preamble + body, "title")
    authors = [a for arg in _macro_args(preamble + body, "author")
               for a in re.split(r"\\and\b|,|\band\b", _author_names(arg))]
    # the preamble only: a DOI in the body or the bibliography is another work's, and would become this id
    doi = _macro_arg(preamble, "doi") or (m[1] if (m := DOI_IN_TEXT.search(preamble)) else None)
    return {"format": "latex", "extractor": "latex/pylatexenc", "title": inline(_render(_no_thanks(title or ""))),
            "sections": sections, "metadata": {"doi": doi, "authors": [inline(_render(a)) for a in authors]},
            "references_dropped": references}


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
    for name in ("thanks", "footnote", "inst", "affiliation", "email", "orcid"):
        while (m := re.search(r"\\" + name + r"\s*(?=\{)", text)) and (arg := group(text, m.end())):
            text = text[:m.start()] + text[arg[1]:]
    return text.replace("\\\\", " ")


def _context():
    """pylatexenc's macros, plus font commands whose text it drops (``\\texttt{astropy.io}``)."""
    db = get_default_latex_context_db()  # a new copy on every call
    db.add_context_category("sciqag-fonts", prepend=True, macros=[
        *(MacroTextSpec(name, "%s") for name in ("texttt", "textsf", "textup", "textmd", "mbox")),
        MacroTextSpec("S", "§"), MacroTextSpec("P", "¶")])
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
        out.append(latex[pos:m.start()])
        pos = arg[1] if arg else m.end()
    return _GONE.sub("", "".join(out) + latex[pos:])


_HREF = re.compile(r"\\href\s*\{[^{}]*\}\s*(?=\{)")
_URL = re.compile(r"\\(?:url|nolinkurl)\s*\{([^{}]*)\}")


def _render(latex: str) -> str:
    latex = _HREF.sub("", latex)  # \href{url}{text} -> {text} (pylatexenc's rule for it fails on some input)
    latex = re.sub(r"\\captionof\s*\{[^{}]*\}", r"\\caption", latex)  # a caption outside a float goes too
    latex = _URL.sub(lambda m: m[1].replace("_", "\\_").replace("%", "\\%").replace("#", "\\#"), latex)
    latex = re.sub(r"\\xspace\b", "{}", latex)  # keeps the space after a macro that ends with it
    latex = _CITE.sub(_MARK, _drop_commands(siunitx(latex)))
    try:
        text = _L2T.latex_to_text(latex)
    except Exception:  # a construct pylatexenc cannot take: the chunk's words, its commands dropped
        text = re.sub(r"\\[A-Za-z]+\*?|[{}]", " ", latex)
    text = _unmark(text).replace("\u00a0", " ")
    return re.sub(r" ?\(\s*\)", "", text)  # "(Fig. 2)" once the reference is gone
