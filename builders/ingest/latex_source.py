"""A LaTeX paper's source, as one text: the main file found (a ``.tex`` file, or the one with ``\\documentclass``
in an arXiv archive: ``.tar.gz``/``.tgz``/``.tar``, or one gzipped ``.tex``), its ``\\input``/``\\include``
expanded from the archive or the main file's folder (never above it), comments, ``\\iffalse`` blocks and the
``comment`` environment removed, and argument-less ``\\newcommand``/``\\def`` macros expanded. ``latex.py``
reads the paper from it."""

from __future__ import annotations

import gzip
import posixpath
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

from sciqag_dataset.builders.ingest.errors import IngestError, SkipFile
from sciqag_dataset.builders.ingest.latex_units import group

MAX_SOURCE_BYTES = 64 << 20  # TeX read from one archive: more is not a paper (and guards against gzip bombs)
MAX_BIB_BYTES = 8 << 20  # a shared .bib of a whole group: not read, not counted against the paper's TeX
_MAX_DEPTH = 12
_SOURCE_SUFFIXES = (".tex", ".bbl", ".bib", ".ltx")  # what an archive is read for: TeX and its bibliography


def split_document(source: str) -> tuple[str, str]:
    """(preamble, body) of the expanded source."""
    begin = source.find("\\begin{document}")
    if begin < 0:
        return "", source
    end = source.find("\\end{document}", begin)
    return source[:begin], source[begin + len("\\begin{document}") : end if end >= 0 else None]


# ---------------------------------------------------------------- finding the source


def _decode(data: bytes, name: str, warn) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{name}: not UTF-8; read as Latin-1")  # older arXiv sources
        return data.decode("latin-1")


def sources(path: Path, warn) -> tuple[Callable[[str], str | None], str]:
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
        raise SkipFile("a LaTeX file without \\documentclass (part of a paper?): read the main file, which inputs it")
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
                warn(
                    f"{name}: a bibliography of {member.size >> 20} MB, left unread (textual citations of it "
                    "are removed)"
                )
                continue
            total += member.size
            if total > MAX_SOURCE_BYTES:
                raise IngestError(f"more than {MAX_SOURCE_BYTES >> 20} MB of TeX in the archive: not a paper's source")
            texts[name] = _decode(tar.extractfile(member).read(), name, warn)
    mains = [n for n, t in texts.items() if n.endswith((".tex", ".ltx")) and _is_main(t)]
    if not mains:
        raise IngestError("no main LaTeX file (with \\documentclass) in the archive")
    # the one with a document body; then the conventional names; then the longest
    main = max(
        mains,
        key=lambda n: (
            "\\begin{document}" in _strip_comments(texts[n]),
            posixpath.basename(n) in ("main.tex", "ms.tex", "paper.tex", "article.tex"),
            len(texts[n]),
        ),
    )
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


def expand_inputs(load: Callable[[str], str | None], main: str, warn, missing: list[str]) -> str:
    """The main file with its inputs in place; ``missing``: what the paper lacks (an input not in the source)."""
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
                missing.append(f"\\input{{{wanted}}}: not in the source; that part of the paper is missing")
                warn(missing[-1])
            return ""

        text = _strip_comments(text)
        return _INPUT.sub(one, text)

    return expand(main, load(main) or "", (main,))


# ---------------------------------------------------------------- macros

#: redefined by classes and templates to change their looks; their meaning (the structure) stays ours
_STRUCTURAL = {
    "section",
    "subsection",
    "subsubsection",
    "paragraph",
    "chapter",
    "part",
    "title",
    "author",
    "maketitle",
    "abstract",
    "appendix",
    "cite",
    "ref",
    "label",
    "caption",
    "item",
    "emph",
    "textbf",
}
_DEFINE = re.compile(
    r"\\(?:(?:re|provide)?newcommand\*?\s*(?:\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+))|"
    r"def\s*\\([A-Za-z]+))\s*(\[\d\])?"
)


def macros(text: str) -> dict[str, str]:
    """Argument-less macros: name -> body (those with arguments are left to the renderer)."""
    found = {}
    for m in _DEFINE.finditer(text):
        if m[4] or (m[1] or m[2] or m[3]) in _STRUCTURAL:
            continue
        body = group(text, m.end())
        if body is not None:
            found[m[1] or m[2] or m[3]] = body[0]
    return found


def drop_definitions(text: str) -> str:
    out, pos = [], 0
    for m in _DEFINE.finditer(text):
        body = group(text, m.end())
        if body is None or m.start() < pos:
            continue
        out.append(text[pos : m.start()])
        pos = body[1]
    return "".join(out) + text[pos:]


def expand_macros(text: str, macros: dict[str, str]) -> str:
    if not macros:
        return text
    pattern = re.compile(r"\\(" + "|".join(map(re.escape, sorted(macros, key=len, reverse=True))) + r")(?![A-Za-z])")
    limit = 4 * len(text) + (1 << 20)
    size = [0]

    def body(m: re.Match) -> str:
        # counted per substitution, not after the pass: one pass of a long macro used many times is gigabytes
        size[0] += len(macros[m[1]]) - len(m[0])
        if size[0] > limit:  # macros that multiply: not a paper's text
            raise IngestError(
                "macro expansion grows without bound (macros that expand into many copies of themselves)"
            )
        return macros[m[1]]

    for _ in range(4):  # macros defined through other macros
        size[0] = len(text)
        text, n = pattern.subn(body, text)
        if not n:
            break
    return text
