"""Ingest stage: papers on disk -> one ``papers``-config record per paper.

Formats (by extension, checked against the content; files with no or an unknown
extension are recognised by content alone):

=========== ===========================================================================
txt         first non-empty short line is the title; ``Key: value`` header lines
            (Authors, Journal, DOI, License, Year, Keywords, URL) become metadata;
            a lone short line such as ``Introduction`` starts a section
md          ``# Title``, ``##``/``###`` sections, optional YAML front matter, header lines
json        a paper dict (title, text | abstract + body | sections, doi, ...), a list of
            them (streamed), or JSON Lines (also when the file is called ``.json``)
sciqag-json the SciQAG authors' release: dicts with ``doi``, ``txt``, ``journal``,
            ``keywords``, ``Q&A``; their pairs go to ``existing_qa`` (origin "released")
jats        JATS/NLM ``<article>`` XML
elsevier    Elsevier full-text XML (``ce:``/``dc:``/``prism:`` elements)
html        citation_* meta tags, h1-h3 as section headings; script/style/nav dropped
pdf         pypdf text per page; title from the metadata or the first line
=========== ===========================================================================

Ids are stable: ``doi-<slug>`` from the DOI, else ``sha-`` + 16 hex of the
SHA-256 of the normalised text (``content_hash``). ``run_ingest`` appends to
``WORK/papers.jsonl`` and rewrites ``WORK/ingest_report.json`` on every run:
``{"counts", "failures": [{path, error}], "duplicates": [{id, kept, duplicate,
reason}], "warnings": [{path, warning}]}``.
"""
from __future__ import annotations

import codecs
import hashlib
import html
import json
import logging
import os
import re
import stat
from pathlib import Path
from typing import Callable, Iterable, Iterator

from tqdm.auto import tqdm

from sciqag_dataset import runner, schema
from sciqag_dataset.errors import UserError
from sciqag_dataset.text_repair import repair, repair_text

log = logging.getLogger(__name__)

PAPER_FEATURES = schema.features_for("papers")
ON_DUPLICATE = ("skip", "keep", "error")
PAPERS_FILE = "papers.jsonl"
REPORT_FILE = "ingest_report.json"

EXTENSIONS = {
    ".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md",
    ".json": "json", ".jsonl": "json", ".ndjson": "json",
    ".xml": "xml", ".nxml": "xml", ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
}
#: A title longer than this is more likely the first paragraph.
MAX_TITLE_CHARS = 200
#: Bytes inspected to sniff the format and to tell binary from text.
HEAD_BYTES = 65536
JSON_CHUNK = 1 << 20


class IngestError(ValueError):
    """A file, or one record of a multi-record file, that cannot be read as a paper."""


# ---------------------------------------------------------------- text helpers

_FORMFEED = re.compile(r"\f")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u200b-\u200d\u2060\ufeff]")
_SPACES = re.compile(r"[ \t\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_BLANK_LINE = re.compile(r"\n[ ]*\n")
_SURROGATES = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by surrogateescape
_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_BLOCK_TAG = re.compile(r"</?(?:p|br|div|li|h[1-6]|jats:p|jats:sec|sec|title)\b[^<>]*>", re.I)


def normalize_text(text: str | None) -> str:
    """Collapse spaces, unwrap hard-wrapped lines, keep paragraph breaks as one blank line."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _FORMFEED.sub("\n\n", text)
    text = _SPACES.sub(" ", _INVISIBLE.sub("", text))
    paragraphs = []
    for block in _BLANK_LINE.split(text):
        lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
        if lines:
            paragraphs.append(_unwrap(lines))
    return "\n\n".join(paragraphs)


def _unwrap(lines: list[str]) -> str:
    out = lines[0]
    for line in lines[1:]:
        # "thermo-\nelectric": keep the hyphen, drop the break (right for compounds; a word split
        # across lines keeps a stray hyphen, which is less harmful than a space inside it)
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out += line
        else:
            out += " " + line
    return out


def _inline(value) -> str:
    """One line of text: a title, a heading, a metadata value."""
    if value is None:
        return ""
    return " ".join(_INVISIBLE.sub("", str(value)).split())


def _strip_tags(text: str) -> str:
    """Markup inside JSON values (e.g. Crossref's ``<jats:p>``): blocks become paragraphs."""
    if "<" not in text or not _TAG.search(text):
        return text
    text = _BLOCK_TAG.sub("\n\n", text)
    return html.unescape(_TAG.sub("", text))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.I)
_DOI_IN_TEXT = re.compile(r"(?:\bdoi\s*:?\s*|doi\.org/)(10\.\d{4,9}/[^\s\"'<>]+)", re.I)


def normalize_doi(value) -> str | None:
    """A bare DOI (``10.x/y``) or None. Accepts URLs, ``doi:`` prefixes and the SciQAG
    release's file-name form ``10.1016-j.ab.2008.07.041.json``."""
    if not value or not isinstance(value, str):
        return None
    doi = _DOI_PREFIX.sub("", value.strip()).strip().rstrip(".,;")
    if doi.endswith(")") and doi.count("(") < doi.count(")"):  # "(doi:10.1/x)" in running text
        doi = doi[:-1]
    doi = re.sub(r"\.(?:json|xml|txt|pdf|html?)$", "", doi, flags=re.I)
    if "/" not in doi:  # the release replaced the first "/" with "-" to make a file name
        m = re.match(r"^(10\.\d{4,9})-(.+)$", doi)
        if m:
            doi = f"{m[1]}/{m[2]}"
    return doi if _DOI.match(doi) else None


def paper_id(doi: str | None, text_hash: str) -> str:
    """``doi-10.1000-xyz123`` (DOIs are case-insensitive, so lower-cased), else ``sha-<16 hex>``."""
    if doi:
        slug = re.sub(r"[^a-z0-9._]+", "-", doi.lower()).strip("-.")
        return f"doi-{slug}"
    return f"sha-{text_hash[:16]}"


def _year(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1000 <= value <= 2999 else None
    m = re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", str(value or ""))
    return int(m[1]) if m else None


def _split_list(value: str) -> list[str]:
    sep = ";" if ";" in value else ","
    return [v.strip() for v in value.split(sep) if v.strip()]


def _authors(value) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        parts = value.split(";") if ";" in value else re.split(r",|\band\b", value)
        return [_inline(a) for a in parts if _inline(a)]
    out = []
    for a in value if isinstance(value, list) else [value]:
        if isinstance(a, dict):
            name = a.get("name") or " ".join(
                str(a[k]) for k in ("given", "given-names", "first", "family", "surname", "last") if a.get(k))
            a = name
        if _inline(a):
            out.append(_inline(a))
    return out


def _keywords(value) -> list[str]:
    if not value:
        return []
    items = _split_list(value) if isinstance(value, str) else value if isinstance(value, list) else []
    return [_inline(k) for k in items if isinstance(k, str) and _inline(k)]


def _qa_pairs(value, origin: str, warn: Callable[[str], None]) -> list[dict]:
    out = []
    for i, pair in enumerate(value if isinstance(value, list) else [], 1):
        if not isinstance(pair, dict):
            warn(f"QA pair {i} is not an object; ignored")
            continue
        q = pair.get("question", pair.get("Q", pair.get("q")))
        a = pair.get("answer", pair.get("A", pair.get("a")))
        if not isinstance(q, str) or not isinstance(a, str) or not q.strip() or not a.strip():
            warn(f"QA pair {i} lacks a question or an answer; ignored")
            continue
        out.append({"question": q.strip(), "answer": a.strip(), "origin": pair.get("origin") or origin})
    return out


# ---------------------------------------------------------------- decoding and sniffing

def _looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    text = sample.decode("utf-8", "replace")
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\f"))
    return bad > 0.1 * max(len(text), 1)


def _decode(data: bytes, warn: Callable[[str], None]) -> str:
    """UTF-8 (BOM tolerated; UTF-16 with a BOM); invalid bytes become U+FFFD with a warning."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    if _looks_binary(data[:HEAD_BYTES]):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    return _replace_invalid(data.decode("utf-8-sig", "surrogateescape"), warn)


def _replace_invalid(text: str, warn: Callable[[str], None]) -> str:
    text, n = _SURROGATES.subn("\ufffd", text)
    if n:
        warn(f"not valid UTF-8: {n} undecodable byte(s) replaced with U+FFFD")
    return text


_MD_HEADING = re.compile(r"^#{1,6}\s+\S", re.M)
_WORD = re.compile(r"^[\"'(\[]*[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*[)\]\"'.,;:!?]*$")


def _looks_like_prose(text: str) -> bool:
    tokens = text.split()
    words = sum(1 for t in tokens if _WORD.match(t))
    return len(tokens) >= 5 and words >= 0.6 * len(tokens)


def _sniff(text: str) -> str | None:
    """Format from content alone, for files whose extension says nothing."""
    s = text.lstrip()
    low = s[:2000].lower()
    if s[:1] in "[{":
        return "json"
    if low.startswith("<!doctype html") or "<html" in low:
        return "html"
    if s[:1] == "<":
        return _xml_flavour(s[:HEAD_BYTES]) or "xml"
    if s.startswith("---\n") or _MD_HEADING.match(s):
        return "md"
    return None


def _xml_flavour(head: str) -> str | None:
    if re.search(r"<(?:ce|xocs|ja):|elsevier\.com/xml|<full-text-retrieval-response", head):
        return "elsevier"
    if re.search(r"<article[\s>]|JATS|NLM//DTD|<pmc-articleset", head):
        return "jats"
    if re.search(r"<html[\s>]", head, re.I):
        return "html"
    return None


def detect_format(path: str | os.PathLike) -> str:
    """One of txt, md, json, jats, elsevier, xml (flavour decided on parsing), html, pdf.

    Raises IngestError for empty, binary or unrecognisable files.
    """
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if not head.strip():
        raise IngestError("empty file")
    ext = Path(path).suffix.lower()
    if head.startswith(b"%PDF-") or (ext == ".pdf" and b"%PDF-" in head[:1024]):
        return "pdf"
    family = EXTENSIONS.get(ext)
    if family == "pdf":
        raise IngestError("not a PDF: no %PDF- header")
    if not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and _looks_binary(head):
        raise IngestError("binary file (not text, JSON, XML, HTML or PDF)")
    text = head.decode("utf-16" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8-sig",
                       "replace")
    if family == "xml":
        return _xml_flavour(text) or "xml"
    if family:
        return family
    sniffed = _sniff(text)
    if sniffed:
        return sniffed
    if _looks_like_prose(text):
        return "txt"
    what = f"unknown extension {ext!r}" if ext else "no extension"
    raise IngestError(f"unrecognised format: {what}, and the content is not PDF, JSON, XML, HTML, "
                      "Markdown or prose")


# ---------------------------------------------------------------- plain text and Markdown

_HEADER_KEYS = {
    "author": "authors", "authors": "authors", "journal": "journal", "doi": "doi", "license": "license",
    "licence": "license", "year": "year", "published": "year", "keywords": "keywords", "url": "url",
    "category": "category",
    # recognised and dropped: front-page lines that are not paper text
    "affiliation": None, "affiliations": None, "received": None, "accepted": None, "correspondence": None,
    "email": None,
}
_HEADER_LINE = re.compile(r"^\s*([A-Za-z]+)\s*:\s*(.+?)\s*$")
_BARE_DOI = re.compile(r"^\s*(?:https?://(?:dx\.)?doi\.org/)(10\.\d{4,9}/\S+)\s*$", re.I)


def _header_fields(lines: list[str], meta: dict) -> int:
    """Consume ``Key: value`` lines (and blanks) at the top; return how many lines were used."""
    used = 0
    for i, line in enumerate(lines):
        if not line.strip():
            used = i + 1
            continue
        bare = _BARE_DOI.match(line)
        if bare:
            meta["doi"] = bare[1]
            used = i + 1
            continue
        m = _HEADER_LINE.match(line)
        if not m or m[1].lower() not in _HEADER_KEYS:
            break
        key = _HEADER_KEYS[m[1].lower()]
        if key:
            meta[key] = m[2]
        used = i + 1
    return used


def _is_heading_paragraph(block: str) -> bool:
    """A lone short line without end punctuation, such as ``2. Results`` or ``Abstract``."""
    return ("\n" not in block.strip() and len(block.strip()) <= 80 and len(block.split()) <= 10
            and bool(re.match(r"^[\dA-Z]", block.strip())) and not re.search(r"[.,;:!?]$", block.strip()))


def _sections_from_blocks(blocks: list[str]) -> list[list[str]]:
    """[[heading, text], ...] from paragraphs where heading paragraphs open a section."""
    sections: list[list[str]] = []
    for i, block in enumerate(blocks):
        if _is_heading_paragraph(block) and i + 1 < len(blocks):
            sections.append([block.strip(), ""])
        elif sections:
            sections[-1][1] += "\n\n" + block
        else:
            sections.append(["", block])
    return sections


def _read_txt(text: str, warn) -> Iterator[dict]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    title, start = "", 0
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and any(ln.strip() for ln in lines[first + 1:]):
        candidate = lines[first].strip()
        if len(candidate) <= MAX_TITLE_CHARS and not candidate.endswith((".", ",")) \
                and not _HEADER_LINE.match(candidate):
            title, start = candidate, first + 1
    meta: dict = {}
    start += _header_fields(lines[start:], meta)
    body = normalize_text("\n".join(lines[start:]))
    yield {"title": title, "sections": _sections_from_blocks(body.split("\n\n") if body else []),
           "metadata": meta}


_FENCE = re.compile(r"^\s*(```|~~~)")
_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _strip_markdown(text: str) -> str:
    text = re.sub(r"^\s*(```|~~~).*$", "", text, flags=re.M)
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"\1", text)
    text = re.sub(r"`([^`\n]*)`", r"\1", text)
    text = re.sub(r"^\s{0,3}>\s?", "", text, flags=re.M)
    return html.unescape(_TAG.sub("", text))


def _read_md(text: str, warn) -> Iterator[dict]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    meta: dict = {}
    if text.startswith("---\n"):  # YAML front matter
        end = re.search(r"^(?:---|\.\.\.)\s*$", text[4:], re.M)
        if end:
            front, text = text[4:4 + end.start()], text[4 + end.end():]
            try:
                import yaml

                data = yaml.safe_load(front)
            except Exception as exc:  # yaml.YAMLError: keep the body, say why the header was lost
                warn(f"front matter ignored: {exc}")
                data = None
            if isinstance(data, dict):
                meta.update({k.lower(): v for k, v in data.items() if isinstance(k, str)})
    title = _inline(meta.pop("title", ""))
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    m = _ATX.match(lines[start]) if start < len(lines) else None
    if m and m[1] == "#":
        title = title or _strip_markdown(m[2])
        start += 1
    start += _header_fields(lines[start:], meta)
    sections: list[list[str]] = []
    abstract = meta.pop("abstract", None)
    if isinstance(abstract, str):
        sections.append(["Abstract", abstract])
    current = ["", ""]
    in_fence = False
    for line in lines[start:]:
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _ATX.match(line)
        if m:
            sections.append(current)
            current = [_strip_markdown(m[2]), ""]
        else:
            current[1] += line + "\n"
    sections.append(current)
    yield {"title": title, "sections": [[h, _strip_markdown(t)] for h, t in sections if h or t.strip()],
           "metadata": meta}


# ---------------------------------------------------------------- JSON and JSON Lines

_WS_COMMA = re.compile(r"[\s,]*")
_TEXT_KEYS = ("text", "full_text", "fulltext", "body_text", "content", "txt")


def _json_text(value) -> str:
    """A JSON text value: markup stripped; a single newline already separates paragraphs there
    (the SciQAG release writes one paragraph per line), unlike hard-wrapped plain text."""
    return _strip_tags(value).replace("\n", "\n\n") if isinstance(value, str) else ""


def _is_released(d: dict) -> bool:
    return "txt" in d and any(k in d for k in ("Q&A", "num_Q&A", "output", "input"))


def _from_released(d: dict, warn) -> dict:
    journal = d.get("journal")
    return {
        "format": "sciqag-json",
        "title": d["title"] if isinstance(d.get("title"), str) else "",
        "text": _json_text(d.get("txt")),
        # the release's "journal" holds the Web of Science category the paper was sampled from
        "metadata": {"doi": d.get("doi"), "journal": journal, "category": journal},
        "keywords": _keywords(d.get("keywords")),
        "existing_qa": _qa_pairs(d.get("Q&A"), "released", warn),
        "no_text_hint": "'txt' is missing or empty",
    }


def _from_generic(d: dict, warn) -> dict:
    meta = dict(d["metadata"]) if isinstance(d.get("metadata"), dict) else {}
    for key in ("doi", "journal", "category", "license", "authors", "year", "url"):
        if d.get(key) is not None:
            meta[key] = d[key]
    if meta.get("year") is None and d.get("date"):
        meta["year"] = d["date"]
    meta["authors"] = meta.get("authors") or d.get("author")
    text = next((d[k] for k in _TEXT_KEYS if isinstance(d.get(k), str) and d[k].strip()), None)
    sections: list[list[str]] = []
    for i, s in enumerate(d["sections"] if isinstance(d.get("sections"), list) else [], 1):
        if isinstance(s, dict):
            body = s.get("text", s.get("content", s.get("paragraphs", "")))
            if isinstance(body, list):
                body = "\n\n".join(p for p in body if isinstance(p, str))
            sections.append([_inline(s.get("heading") or s.get("title")), _json_text(body)])
        elif isinstance(s, str):
            sections.append(["", _json_text(s)])
        else:
            warn(f"section {i} is neither an object nor a string; ignored")
    if d.get("sections") is not None and not isinstance(d["sections"], list):
        warn("'sections' is not a list; ignored")
    abstract, body = d.get("abstract"), d.get("body")
    if isinstance(body, list):
        body = "\n\n".join(b for b in body if isinstance(b, str))
    if not sections and text is None and (isinstance(abstract, str) or isinstance(body, str)):
        if isinstance(abstract, str) and abstract.strip():
            sections.append(["Abstract", _json_text(abstract)])
        if isinstance(body, str) and body.strip():
            sections.append(["", _json_text(body)])
    elif isinstance(abstract, str) and abstract.strip() and not any(h.lower() == "abstract" for h, _ in sections):
        sections.insert(0, ["Abstract", _json_text(abstract)])
        if text is not None and normalize_text(abstract)[:200] not in normalize_text(text):
            text = f"{abstract}\n{text}"  # the full text is abstract + body, as in every other format
    qa = d.get("existing_qa", d.get("qa", d.get("Q&A")))
    return {
        "format": "json",
        "title": d["title"] if isinstance(d.get("title"), str) else "",
        "text": _json_text(text),
        "sections": sections,
        "metadata": meta,
        "keywords": _keywords(d.get("keywords")),
        "existing_qa": _qa_pairs(qa, "source", warn),
        "no_text_hint": "expected 'text', 'txt', 'abstract'/'body' or 'sections'; found keys: "
                        + ", ".join(sorted(map(str, d))[:12]),
    }


def _json_items(value, where: str) -> Iterator[tuple[str, object]]:
    """(where, value) per paper in a parsed JSON value: a paper, a list of them, or {"papers": [...]}."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), list) \
            and not any(k in value for k in ("sections", "Q&A")):
        value = next(iter(value.values()))
    if isinstance(value, list):
        for i, item in enumerate(value, 1):
            yield f"{where}, item {i}" if where else f"item {i}", item
    else:
        yield where, value


def _iter_json(path: str, warn) -> Iterator[tuple[str, object]]:
    """Stream the values of a JSON / JSON Lines file, never holding more than one list item."""
    ext = Path(path).suffix.lower()
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as f:
        head = f.read(JSON_CHUNK)
        lead = head.lstrip()
        line_mode = ext in (".jsonl", ".ndjson")
        if not line_mode and lead[:1] == "{" and "\n" in lead.strip():
            first_line = lead.split("\n", 1)[0]
            try:
                json.loads(first_line)
                line_mode = True  # a complete object on line 1 and more after it: JSON Lines
            except ValueError:
                pass  # (a first line over JSON_CHUNK is read as one JSON document)
        if line_mode:
            f.seek(0)
            yield from _iter_json_lines(f, warn)
        elif lead[:1] == "[":
            yield from _iter_json_array(f, lead[1:], warn)
        else:  # one pretty-printed object (or not JSON at all)
            whole = _replace_invalid(head + f.read(), warn)
            try:
                value = json.loads(whole)
            except json.JSONDecodeError as exc:
                raise IngestError(f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
            yield from _json_items(value, "")


def _json_error(exc: Exception) -> IngestError:
    """A decoding failure of one JSON value, including the decoder's own limits (nesting depth, digits)."""
    if isinstance(exc, json.JSONDecodeError):
        return IngestError(f"invalid JSON ({exc.msg}, column {exc.colno})")
    if isinstance(exc, RecursionError):
        return IngestError("JSON nested too deeply to read")
    return IngestError(f"JSON value not readable ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")


def _iter_json_lines(f, warn) -> Iterator[tuple[str, object]]:
    for lineno, line in enumerate(f, 1):
        if not line.strip():
            continue
        line = _replace_invalid(line, lambda m, n=lineno: warn(f"line {n}: {m}"))
        try:
            value = json.loads(line)
        except Exception as exc:  # one bad line never costs the lines after it
            yield f"line {lineno}", _json_error(exc)
            continue
        yield from _json_items(value, f"line {lineno}")


def _value_end(buf: str, pos: int) -> int | None:
    """Where the JSON value starting at ``pos`` ends (iteratively, so any depth), or None if ``buf`` ends
    first. Used to step over an item the decoder could not read, so the items after it are still read."""
    depth, i, n = 0, pos, len(buf)
    while i < n:
        c = buf[i]
        if c == '"':
            i += 1
            while i < n and buf[i] != '"':
                i += 2 if buf[i] == "\\" else 1
            if i >= n:
                return None
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:  # the end of the enclosing list: a scalar ended here
                return i
        elif c == "," and depth == 0:
            return i
        i += 1
        if depth == 0 and c in "]}\"":
            return i
    return None


def _iter_json_array(f, buf: str, warn) -> Iterator[tuple[str, object]]:
    """Items of a top-level JSON list, decoded one at a time from a growing buffer."""
    decoder = json.JSONDecoder()
    pos, item, eof, chunk = 0, 0, False, JSON_CHUNK
    buf = _replace_invalid(buf, warn)
    while True:
        pos = _WS_COMMA.match(buf, pos).end()
        if pos < len(buf) and buf[pos] == "]":
            return
        if pos < len(buf):
            try:
                value, end = decoder.raw_decode(buf, pos)
                if end < len(buf) or eof:  # at the buffer's end a number may be cut short
                    item += 1
                    pos = end
                    yield f"item {item}", value
                    continue
            except Exception as exc:  # the decoder's own limits too (RecursionError, digit limits)
                end = _value_end(buf, pos)
                if end is not None and (end < len(buf) or eof):  # a whole item that cannot be read: skip it
                    item += 1
                    pos = end
                    yield f"item {item}", _json_error(exc)
                    continue
                if eof:
                    msg = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
                    raise IngestError(f"invalid JSON in item {item + 1}: {msg}; the {item} item(s) "
                                      "before it were read") from None
        if eof:
            raise IngestError(f"invalid JSON: the top-level list is not closed; {item} item(s) were read")
        more = f.read(chunk)
        eof = not more
        buf = buf[pos:] + _replace_invalid(more, warn)
        pos = 0
        chunk = max(chunk, len(buf))  # grow for items bigger than a chunk


# ---------------------------------------------------------------- XML (JATS, Elsevier)

def _local(el) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _ns_kind(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    ns = tag[1:].split("}", 1)[0] if tag.startswith("{") else ""
    for key, kind in (("elsevier.com/xml/common", "ce"), ("purl.org/dc/elements", "dc"),
                      ("prismstandard.org", "prism"), ("purl.org/dc/terms", "dcterms")):
        if key in ns:
            return kind
    return ""


_XML_BLOCKS = {"p", "para", "simple-para", "list-item", "list", "disp-formula", "display", "title",
               "section-title", "label", "def-item", "disp-quote"}


_CITE = "\x01"  # stands for a removed citation marker until _drop_citations tidies around it
_CITES = re.compile(r"\s*[\[(]?\s*\x01(?:\s*[,;–-]?\s*\x01)*\s*[\])]?")


def _xml_text(el, skip: Callable[[object], str | None]) -> str:
    """Text of an element; ``skip(child)`` returns "drop" or "cite" to leave a child out (tails stay)."""
    parts = [el.text or ""]
    for child in el:
        verdict = skip(child) if isinstance(child.tag, str) else "entity"
        if verdict == "entity":  # left unresolved (no DTD is loaded): &nbsp; -> U+00A0
            parts.append(html.unescape(child.text or ""))
        elif verdict == "cite":
            parts.append(_CITE)
        elif not verdict:
            sub = _xml_text(child, skip)
            if _local(child) == "sup" and sub.strip():
                sub = "^" + sub  # 10<sup>19</sup> -> 10^19, so numbers survive for numeric validation
            parts.append(f" {sub} " if _local(child) in _XML_BLOCKS else sub)
        parts.append(child.tail or "")
    return "".join(parts)


def _drop_citations(text: str) -> str:
    """"water [1], yet" -> "water, yet": the marker, its brackets and separators go."""
    return _CITES.sub("", text) if _CITE in text else text


def _parse_xml(data: bytes, warn):
    from lxml import etree

    def parser(recover: bool):
        return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=recover,
                               remove_comments=True, remove_pis=True, huge_tree=True)

    try:
        return etree.fromstring(data, parser(False))
    except etree.XMLSyntaxError as exc:
        root = etree.fromstring(data, parser(True))
        if root is None or not len(root):
            raise IngestError(f"invalid XML: {exc}") from None
        warn(f"malformed XML read in recovery mode ({exc}); some text may be missing")
        return root


def _read_xml(path: str, data: bytes, warn) -> Iterator[dict]:
    root = _parse_xml(data, warn)
    if _local(root) == "full-text-retrieval-response" or any(_ns_kind(el) == "ce" for el in root.iter()):
        yield _read_elsevier(root, warn)
        return
    article = root if _local(root) == "article" else next(
        (el for el in root.iter() if _local(el) == "article"), None)  # e.g. <pmc-articleset><article>
    if article is not None:
        yield _read_jats(article, warn)
    elif _local(root) == "html":
        yield from _read_html(data.decode("utf-8", "replace"), warn)
    else:
        raise IngestError(f"unrecognised XML: root element <{_local(root)}> is neither a JATS <article> "
                          "nor Elsevier full text")


def _attr(el, local: str):
    """An attribute by local name (``xlink:href`` -> ``href``)."""
    return next((v for k, v in el.attrib.items() if k.rsplit("}", 1)[-1] == local), None)


def _paragraphs(container, locals_: tuple[str, ...], text) -> str:
    """Direct children paragraphs, one per line pair (an XML paragraph is one paragraph)."""
    return "\n\n".join(_inline(text(c)) for c in container if _local(c) in locals_)


_JATS_SKIP = {"fig", "table-wrap", "fn-group", "supplementary-material", "ref-list", "graphic", "media"}
_JATS_PARAS = ("p", "list", "disp-quote", "statement")


def _read_jats(art, warn) -> dict:
    idx: dict[str, list] = {}
    for el in art.iter():
        if isinstance(el.tag, str):
            idx.setdefault(_local(el), []).append(el)
    ref_ids = {r.get("id") for r in idx.get("ref", []) if r.get("id")}

    def skip(el) -> str | None:
        if _local(el) in _JATS_SKIP:
            return "drop"
        if _local(el) == "xref":  # citation markers go, "Fig. 2"-style cross-references stay
            rids = (el.get("rid") or "").split()
            if el.get("ref-type") == "bibr" or (rids and all(r in ref_ids for r in rids)):
                return "cite"
        return None

    def text(el) -> str:
        return _drop_citations(_xml_text(el, skip)) if el is not None else ""

    def first(local, pred=lambda el: True):
        return next((el for el in idx.get(local, []) if pred(el)), None)

    lic = first("license")
    pub = first("pub-date")
    self_uri = first("self-uri")
    meta = {
        "doi": text(first("article-id", lambda el: el.get("pub-id-type") == "doi")),
        "journal": text(first("journal-title")),
        "license": None if lic is None else (_attr(lic, "href") or text(first("license_ref")) or text(lic)),
        "year": None if pub is None else text(next((el for el in pub if _local(el) == "year"), None)),
        "url": None if self_uri is None else _attr(self_uri, "href"),
        "authors": [],
    }
    for contrib in idx.get("contrib", []):
        if contrib.get("contrib-type", "author") != "author":
            continue
        parts = {k: " ".join(_inline(text(el)) for el in contrib.iter() if _local(el) == k)
                 for k in ("given-names", "surname", "string-name", "collab")}
        name = _inline(f"{parts['given-names']} {parts['surname']}") or parts["string-name"] or parts["collab"]
        if name:
            meta["authors"].append(name)

    sections: list[list[str]] = []
    abstract = first("abstract", lambda el: el.get("abstract-type") not in ("graphical", "teaser", "toc"))
    if abstract is not None:
        paras = [_inline(text(p)) for p in abstract.iter() if _local(p) == "p"] or [text(abstract)]
        sections.append(["Abstract", "\n\n".join(paras)])
    if first("body") is not None:
        _jats_sections(first("body"), "", text, sections)
    return {"format": "jats", "title": text(first("article-title")), "sections": sections,
            "metadata": meta, "keywords": [_inline(text(k)) for k in idx.get("kwd", [])]}


def _jats_sections(container, heading: str, text, out: list[list[str]]) -> None:
    """Flatten ``sec`` nesting in document order: [heading, paragraphs] per run of paragraphs."""
    paras: list[str] = []
    for child in container:
        local = _local(child)
        if local in _JATS_PARAS:
            paras.append(_inline(text(child)))
        elif local == "sec":
            if paras:
                out.append([heading, "\n\n".join(paras)])
                paras = []
            title = next((c for c in child if _local(c) == "title"), None)
            _jats_sections(child, _inline(text(title)) if title is not None else "", text, out)
    if paras:
        out.append([heading, "\n\n".join(paras)])


_ELS_SKIP = {"float-anchor", "display", "figure", "table", "footnote", "bibliography"}
_ELS_PARAS = ("para", "simple-para")


def _read_elsevier(root, warn) -> dict:
    # Elsevier mixes namespaces whose versions vary; index by (namespace kind, local name)
    idx: dict[tuple[str, str], list] = {}
    for el in root.iter():
        if isinstance(el.tag, str):
            idx.setdefault((_ns_kind(el), _local(el)), []).append(el)
    bib_ids = {el.get("id") for el in idx.get(("ce", "bib-reference"), []) if el.get("id")}

    def skip(el) -> str | None:
        if _local(el) in _ELS_SKIP:
            return "drop"
        if _local(el) in ("cross-ref", "cross-refs"):  # citation markers only
            ids = (el.get("refid") or "").split()
            if ids and all(i in bib_ids for i in ids):
                return "cite"
        return None

    def text(el) -> str:
        return _drop_citations(_xml_text(el, skip)) if el is not None else ""

    def first(kind, local, pred=lambda el: True):
        return next((el for el in idx.get((kind, local), []) if pred(el)), None)

    def first_of(*keys):  # lxml elements without children are falsy: no `a or b`
        return next((el for el in (first(k, n) for k, n in keys) if el is not None), None)

    def any_ns(local):
        return next((els[0] for (_, name), els in idx.items() if name == local), None)

    scidir = first("", "link", lambda el: el.get("rel") == "scidir")
    meta = {
        "doi": text(first_of(("prism", "doi"), ("ce", "doi"))),
        "journal": text(first("prism", "publicationName")),
        "year": text(first_of(("prism", "coverDate"), ("prism", "coverDisplayDate"))),
        "license": text(any_ns("openaccessUserLicense")),
        "url": scidir.get("href") if scidir is not None else None,
    }
    creators = idx.get(("dc", "creator"), [])
    if creators:  # "Surname, Given" in the coredata block
        meta["authors"] = [" ".join(reversed([p.strip() for p in _inline(text(c)).split(",", 1)]))
                           for c in creators]
    else:
        meta["authors"] = [_inline(f"{text(a.find('{*}given-name'))} {text(a.find('{*}surname'))}")
                           for a in idx.get(("ce", "author"), [])]

    sections: list[list[str]] = []
    abstract = first("ce", "abstract", lambda el: el.get("class") in (None, "author"))  # not graphical/highlights
    if abstract is not None:
        paras = [_inline(text(p)) for p in abstract.iter() if _local(p) in _ELS_PARAS]
        sections.append(["Abstract", "\n\n".join(paras)])
    if first("ce", "sections") is not None:
        _elsevier_sections(first("ce", "sections"), "", text, sections)
    elif any_ns("rawtext") is not None:  # some API views carry only unstructured text
        sections.append(["", text(any_ns("rawtext"))])
    keywords = [_inline(text(k.find("{*}text") if k.find("{*}text") is not None else k))
                for k in idx.get(("ce", "keyword"), [])]
    keywords = keywords or [_inline(text(k)) for k in idx.get(("dcterms", "subject"), [])]
    return {"format": "elsevier", "title": text(first_of(("dc", "title"), ("ce", "title"))),
            "sections": sections, "metadata": meta, "keywords": keywords}


def _elsevier_sections(container, heading: str, text, out: list[list[str]]) -> None:
    paras = _paragraphs(container, _ELS_PARAS, text)
    if paras:
        out.append([heading, paras])
    for sec in container:
        if _local(sec) == "section":
            title = next((c for c in sec if _local(c) == "section-title"), None)
            _elsevier_sections(sec, _inline(text(title)) if title is not None else "", text, out)


# ---------------------------------------------------------------- HTML

_HTML_DROP = ["script", "style", "nav", "noscript", "aside", "form", "svg", "button", "template", "iframe",
              "figure", "table", "menu"]
_HTML_HEADINGS = ("h1", "h2", "h3")
_HTML_BLOCKS = ("p", "li", "pre", "blockquote", "dd", "dt", "h4", "h5", "h6")


def _read_html(text: str, warn) -> Iterator[dict]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "lxml")
    metas: dict[str, list[str]] = {}
    for m in soup.find_all("meta"):
        key = (m.get("name") or m.get("property") or "").strip().lower()
        if key and m.get("content"):
            metas.setdefault(key, []).append(m["content"].strip())

    def meta(*keys):
        return next((metas[k][0] for k in keys if k in metas), None)

    def link(rel):
        el = soup.find("link", rel=rel)
        return el.get("href") if el else None

    h1 = soup.find("h1")
    title = meta("citation_title", "dc.title", "og:title") or (h1.get_text(" ", strip=True) if h1 else None) \
        or (soup.title.get_text(" ", strip=True) if soup.title else "")
    for tag in soup.find_all(_HTML_DROP):
        if not tag.decomposed:  # a parent may have taken it already
            tag.decompose()
    for tag in soup.find_all(["header", "footer"]):
        if not tag.find_parent(["article", "main"]):  # site chrome, not the article's own header
            tag.decompose()
    for sup in soup.find_all("sup"):  # 10<sup>19</sup> -> 10^19, kept in one string
        parent = sup.parent
        sup.replace_with("^" + sup.get_text())
        parent.smooth()
    root = soup.find("article") or soup.find("main") or soup.body or soup
    sections: list[list[str]] = [["", ""]]
    wanted = list(_HTML_HEADINGS + _HTML_BLOCKS)
    found = False
    for el in root.find_all(wanted):
        if el.find_parent(wanted) is not None:
            continue  # inside a block already taken whole
        found = True
        content = _inline(el.get_text(" ", strip=True))
        if el.name in _HTML_HEADINGS:
            is_title = content.lower() == _inline(title).lower()
            if not (el.name == "h1" and (is_title or len(sections) == 1 and not sections[0][1])):
                sections.append([content, ""])
        elif content:
            sections[-1][1] += content + "\n\n"
    if not found:
        sections = [["", root.get_text("\n\n", strip=True)]]
    yield {"format": "html", "title": title, "sections": [s for s in sections if s[0] or s[1].strip()],
           "metadata": {
               "doi": meta("citation_doi", "prism.doi", "dc.identifier"),
               "journal": meta("citation_journal_title", "prism.publicationname"),
               "authors": metas.get("citation_author") or metas.get("dc.creator") or [],
               "year": meta("citation_publication_date", "citation_date", "dc.date", "article:published_time"),
               "license": meta("dc.rights") or link("license"),
               "url": link("canonical") or meta("og:url", "citation_fulltext_html_url"),
           },
           "keywords": [k for v in metas.get("citation_keywords", []) + metas.get("keywords", [])
                        for k in _split_list(v)]}


# ---------------------------------------------------------------- PDF

def _read_pdf(path: str, warn) -> Iterator[dict]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError("encrypted PDF (a password is needed)")
        pages = []
        for n, page in enumerate(reader.pages, 1):
            try:
                pages.append(page.extract_text() or "")
            except Exception as exc:  # one bad page must not lose the others
                warn(f"page {n}: no text extracted ({type(exc).__name__}: {exc})")
        info = reader.metadata or {}
    except IngestError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged files
        raise IngestError(f"invalid PDF: {type(exc).__name__}: {exc}") from None
    body = "\n\n".join(p for p in pages if p.strip())
    if not body.strip():
        raise IngestError("PDF has no extractable text (scanned? run OCR first)")
    title = _inline(info.get("/Title"))
    if not title or re.search(r"\.(docx?|pdf|tex|dvi|indd)$|^Microsoft Word|^untitled$", title, re.I):
        first = next((ln.strip() for ln in body.split("\n") if ln.strip()), "")
        title = first if len(first) <= MAX_TITLE_CHARS else ""
    yield {"format": "pdf", "title": title, "text": body,
           "metadata": {"doi": info.get("/doi") or info.get("/DOI"), "authors": _authors(info.get("/Author"))},
           "doi_in_text": pages[0][:3000] if pages else ""}


# ---------------------------------------------------------------- records

def _finish(raw: dict, path: str, fmt: str, warn) -> dict:
    """A raw parse -> a schema-conformed paper record; IngestError when there is no text.

    Text that cannot be written as UTF-8 (lone surrogates, from JSON escapes or a file name that is not
    UTF-8) is repaired to U+FFFD with a warning: one bad character never costs a paper.
    """
    raw, bad = repair(raw)
    path, bad_name = repair_text(path)
    if bad:
        warn(f"{bad} unencodable character(s) (lone surrogates) in the text replaced with U+FFFD")
    if bad_name:
        warn("the file name is not valid UTF-8; stored with U+FFFD in source_path")
    sections = []
    for heading, body in raw.get("sections") or []:
        body = normalize_text(body)
        if body:
            sections.append({"heading": _inline(heading), "text": body})
    text = normalize_text(raw["text"]) if raw.get("text") else "\n\n".join(s["text"] for s in sections)
    if not text:
        hint = raw.get("no_text_hint")
        raise IngestError(f"no text ({hint})" if hint else "no text")
    if all(not s["heading"] for s in sections):
        sections = []  # untitled blocks are not structure worth keeping
    meta = dict(raw.get("metadata") or {})
    raw_doi = meta.get("doi")
    doi = normalize_doi(raw_doi) if raw_doi else None
    if raw_doi and not doi:
        warn(f"ignored a value that is not a DOI: {str(raw_doi)[:80]!r}")
    if not doi and raw.get("doi_in_text"):  # PDFs print their own DOI on the first page
        m = _DOI_IN_TEXT.search(raw["doi_in_text"])
        doi = normalize_doi(m[1]) if m else None
    digest = content_hash(text)
    record = {
        "id": paper_id(doi, digest),
        "title": _inline(raw.get("title")),
        "text": text,
        "sections": sections,
        "source_format": raw.get("format") or fmt,
        "source_path": path,
        "content_hash": digest,
        "metadata": {
            "doi": doi,
            "journal": _inline(meta.get("journal")) or None,
            "category": _inline(meta.get("category")) or None,
            "license": _inline(meta.get("license")) or None,
            "authors": _authors(meta.get("authors")),
            "year": _year(meta.get("year") or meta.get("date")),
            "url": _inline(meta.get("url")) or None,
        },
        "existing_qa": raw.get("existing_qa") or [],
        "keywords": raw.get("keywords") or _keywords(meta.get("keywords")),
    }
    return schema.conform(record, PAPER_FEATURES)


#: A JSON file whose first this-many records all fail is not a paper collection (e.g. a QA-only
#: file): one failure for the file instead of one per record.
MAX_LEADING_FAILURES = 20


def _iter_json_papers(path: str, warn, flush) -> Iterator[dict]:
    papers = failed = 0
    for where, value in _iter_json(path, warn):
        try:
            if isinstance(value, IngestError):
                raise value
            if not isinstance(value, dict):
                raise IngestError(f"expected a paper object, got {type(value).__name__}")
            raw = _from_released(value, warn) if _is_released(value) else _from_generic(value, warn)
            paper = _finish(raw, path, "json", warn)
        except Exception as exc:  # one odd record must not lose the rest of the file
            failed += 1
            if papers == 0 and failed > MAX_LEADING_FAILURES:
                yield {"path": path, "error": f"stopped reading: the first {MAX_LEADING_FAILURES} records are "
                                              "not papers (see the failures before this one)"}
                return
            msg = str(exc) if isinstance(exc, IngestError) else f"unexpected {type(exc).__name__}: {exc}"
            failure = {"path": path, "error": f"{where}: {msg}" if where else msg}
            line = re.match(r"line (\d+)", where)
            yield {**failure, "line": int(line[1])} if line else failure
        else:
            papers += 1
            yield paper
        yield from flush()


def _iter_file(path: str) -> Iterator[dict]:
    """Papers, ``{"path", "error"}`` failures and ``{"path", "warning"}`` notes for one file."""
    notes: list[str] = []
    warn = notes.append

    def flush() -> Iterator[dict]:
        for note in notes:
            yield {"path": path, "warning": note}
        notes.clear()

    try:
        fmt = detect_format(path)
        if fmt == "txt" and Path(path).suffix.lower() not in (".txt", ".text"):
            warn("no known extension; read as plain text")
        if fmt == "json":
            yield from _iter_json_papers(path, warn, flush)
            return
        if fmt == "pdf":
            raws: Iterable[dict] = _read_pdf(path, warn)
        else:
            data = Path(path).read_bytes()
            if fmt in ("xml", "jats", "elsevier"):
                raws = _read_xml(path, data, warn)
            else:
                text = _decode(data, warn)
                reader = {"txt": _read_txt, "md": _read_md, "html": _read_html}[fmt]
                raws = reader(text, warn)
        for raw in raws:
            yield _finish(raw, path, fmt, warn)
            yield from flush()
    except IngestError as exc:
        yield {"path": path, "error": str(exc)}
    except OSError as exc:
        yield {"path": path, "error": f"cannot read: {exc.strerror or exc}"}
    except Exception as exc:  # a parser bug on one odd file must not stop the batch
        log.exception("unexpected error reading %s", path)
        yield {"path": path, "error": f"unexpected {type(exc).__name__}: {exc}"}
    yield from flush()


#: Folder documentation, not papers: skipped (with a note) when walking a directory, read if named.
_NOT_PAPERS = re.compile(r"^(?:readme|license|licence|changelog|citation)(?:\.[a-z]+)?$", re.I)


_SKIP, _FAIL = "warning", "error"


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _expand(paths, exclude: frozenset[str] = frozenset(),
            follow_symlinks: bool = False) -> Iterator[tuple[str, tuple[str, str] | None]]:
    """(path, None) for each file to read, or (path, (kind, reason)) for one skipped ("warning") or failed
    ("error") while finding it. Stable order: folders walked sorted, hidden entries left out, each real
    file once. Folders that cannot be listed are reported, never skipped silently; links that lead out
    of the input folders are skipped (with a warning) unless ``follow_symlinks``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(map(os.fspath, paths))
    roots = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    seen: set[str] = set()
    for p in paths:
        if not os.path.isdir(p):
            if _key(os.path.realpath(p)) not in seen:
                seen.add(_key(os.path.realpath(p)))
                yield p, None  # named by the user: read even if it is a link
            continue
        walked: set[str] = set()
        errors: list[OSError] = []
        for root, dirs, files in os.walk(p, followlinks=True, onerror=errors.append):
            while errors:
                err = errors.pop(0)
                yield err.filename or root, (_FAIL, f"cannot read folder: {err.strerror or err}")
            real_root = os.path.realpath(root)
            if real_root in walked:  # a link loop, or a folder reached twice through links
                dirs[:] = []
                continue
            walked.add(real_root)
            keep = []
            for d in sorted(d for d in dirs if not d.startswith(".")):
                full = os.path.join(root, d)
                if os.path.islink(full) and not follow_symlinks and not _inside(os.path.realpath(full), roots):
                    yield full, (_SKIP, "a link that leads out of the input folders; not followed "
                                        "(use --follow-symlinks)")
                else:
                    keep.append(d)
            dirs[:] = keep
            for name in sorted(files):
                full = os.path.join(root, name)
                if name.startswith(".") or _key(full) in exclude:
                    continue
                real = os.path.realpath(full)
                if _key(real) in seen or _key(real) in exclude:
                    continue
                seen.add(_key(real))
                if os.path.islink(full):
                    if not os.path.exists(full):
                        yield full, (_FAIL, "a broken symbolic link")
                        continue
                    if not follow_symlinks and not _inside(real, roots):
                        yield full, (_SKIP, "a link that leads out of the input folders; not followed "
                                            "(use --follow-symlinks)")
                        continue
                yield full, ((_SKIP, "not a paper (folder documentation); name the file to ingest it")
                             if _NOT_PAPERS.match(name) else None)
        for err in errors:  # a folder that failed after the last one listed
            yield err.filename or p, (_FAIL, f"cannot read folder: {err.strerror or err}")


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _not_regular(path: str) -> tuple[str, str] | None:
    """("error"|"warning", why) when ``path`` must not be opened (a FIFO would block forever, a device
    never end), else None. Special files are not papers: skipped with a warning, not failed."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _FAIL, ("no such file or directory" if isinstance(exc, FileNotFoundError)
                       else f"cannot read: {exc.strerror or exc}")
    if stat.S_ISREG(mode):
        return None
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return _SKIP, f"{kind}, not a paper file; skipped"


def _iter_items(paths, exclude: frozenset[str] = frozenset(), follow_symlinks: bool = False) -> Iterator[dict]:
    for path, verdict in _expand(paths, exclude, follow_symlinks):
        verdict = verdict or _not_regular(path)
        if verdict:
            yield {"path": path, verdict[0]: verdict[1]}
        else:
            yield from _iter_file(path)


def iter_papers(paths, follow_symlinks: bool = False) -> Iterator[dict]:
    """Stream paper records and ``{"path", "error"}`` failures (a record has ``id``, a failure not).

    ``paths``: a file, a directory (walked recursively), or a list of them. Warnings are logged.
    """
    for item in _iter_items(paths, follow_symlinks=follow_symlinks):
        if "warning" in item:
            log.warning("%s: %s", item["path"], item["warning"])
        else:
            yield item


def read_file(path: str | os.PathLike) -> list[dict]:
    """The records of one file, as :func:`iter_papers` yields them (papers and failures)."""
    return list(iter_papers([path]))


# ---------------------------------------------------------------- the stage

_DUP_SUFFIX = re.compile(r"-dup\d+$")


class _Seen:
    """Ids and hashes already stored or met in this run, and what earlier runs stored per source."""

    def __init__(self, out: Path):
        self.ids: dict[str, str] = {}
        self.hashes: dict[str, str] = {}
        # (source, base id) -> content hashes stored by earlier runs; a resumed paper consumes one,
        # so a file holding the same id twice resumes both and reports the copy again
        self.stored: dict[tuple[str, str], list[str]] = {}
        for rec in runner.read_jsonl(out):
            if "id" not in rec or rec.get("status") == runner.FAILED:
                continue
            self.ids.setdefault(rec["id"], rec.get("source_path") or "")
            if rec.get("content_hash"):
                self.hashes.setdefault(rec["content_hash"], rec.get("source_path") or "")
            key = (_key(rec.get("source_path") or ""), _DUP_SUFFIX.sub("", rec["id"]))  # "-dupN" copies too
            self.stored.setdefault(key, []).append(rec.get("content_hash") or "")

    def resumed(self, rec: dict, warn: Callable[[str], None]) -> bool:
        """True when an earlier run stored this paper from this source."""
        hashes = self.stored.get((_key(rec["source_path"]), rec["id"]))
        if not hashes:
            return False
        if rec["content_hash"] in hashes:
            hashes.remove(rec["content_hash"])
        else:
            hashes.pop(0)
            warn(f"{rec['id']} changed since it was stored; the stored version is kept "
                 "(use a new work directory to ingest it again)")
        return True

    def duplicate_of(self, rec: dict) -> tuple[str, str] | None:
        """(kept source_path, reason) when the id or the text was seen before."""
        if rec["content_hash"] in self.hashes:
            return self.hashes[rec["content_hash"]], "same content"
        if rec["id"] in self.ids:
            return self.ids[rec["id"]], "same id"
        return None

    def add(self, rec: dict) -> None:
        self.ids.setdefault(rec["id"], rec["source_path"])
        self.hashes.setdefault(rec["content_hash"], rec["source_path"])

    def free_id(self, base: str) -> str:
        n = 2
        while f"{base}-dup{n}" in self.ids:
            n += 1
        return f"{base}-dup{n}"


def _note(warnings: list[dict], path: str, message: str) -> None:
    warnings.append({"path": path, "warning": message})
    log.warning("%s: %s", path, message)


def run_ingest(paths, work_dir: str | os.PathLike, *, on_duplicate: str = "skip",
               follow_symlinks: bool = False) -> runner.Summary:
    """Read ``paths`` into ``WORK/papers.jsonl``; write ``WORK/ingest_report.json``.

    Rerunning with the same inputs resumes: papers already stored from the same source count as
    "skipped". ``on_duplicate``: "skip" keeps the first, "keep" stores the copy as ``<id>-dupN``,
    "error" stores the others and then raises UserError listing the duplicates. Whatever goes wrong
    with one input (finding, naming, opening, decoding, parsing or storing it) is recorded as a failure
    with its path (and line) and the other inputs are read.
    """
    if on_duplicate not in ON_DUPLICATE:
        raise UserError(f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}, not {on_duplicate!r}")
    work = Path(work_dir)
    out, report_path = work / PAPERS_FILE, work / REPORT_FILE
    summary = runner.Summary("ingest")
    for key in ("ok", "failed", "skipped", "duplicate"):
        summary.counts[key] = 0
    failures: list[dict] = []
    duplicates: list[dict] = []
    warnings: list[dict] = []
    seen = _Seen(out)
    exclude = frozenset({_key(str(out)), _key(str(report_path))})  # a work dir inside an input dir
    complete = False
    try:
        with runner.JsonlWriter(out) as writer, tqdm(desc="ingest", unit="paper") as bar:
            for item in _iter_items(paths, exclude, follow_symlinks):
                if "warning" in item:
                    _note(warnings, item["path"], item["warning"])
                    continue
                bar.update(1)
                if "error" in item:
                    failures.append(item)
                    summary.counts[runner.FAILED] += 1
                    log.warning("%s: %s", item["path"], item["error"])
                    continue
                try:
                    _store(item, writer, seen, summary, warnings, duplicates, on_duplicate)
                except Exception as exc:  # storing one paper must not stop the others either
                    log.exception("could not store %s", item.get("id"))
                    failures.append({"path": item.get("source_path"), "error": f"could not store the paper "
                                     f"({type(exc).__name__}: {exc})"})
                    summary.counts[runner.FAILED] += 1
        complete = True
    finally:
        report = {"counts": dict(summary.counts), "complete": complete, "on_duplicate": on_duplicate,
                  "papers": str(out), "failures": failures, "duplicates": duplicates, "warnings": warnings}
        report, _ = repair(report)  # paths that are not UTF-8 must not cost the report
        work.mkdir(parents=True, exist_ok=True)
        tmp = report_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, report_path)
    if on_duplicate == "error" and duplicates:
        listing = "\n".join(f"  {d['id']} ({d['reason']}): {d['duplicate']} duplicates {d['kept']}"
                            for d in duplicates)
        raise UserError(f"{len(duplicates)} duplicate paper(s) found and not stored (on_duplicate='error'); "
                        f"details in {report_path}:\n{listing}")
    return summary


def _store(item: dict, writer, seen: _Seen, summary, warnings: list, duplicates: list, on_duplicate: str) -> None:
    """Append one paper unless it resumes an earlier run or duplicates another (then report it)."""
    if seen.resumed(item, lambda m, p=item["source_path"]: _note(warnings, p, m)):
        summary.counts["skipped"] += 1
        return
    dup = seen.duplicate_of(item)
    if dup is None:
        seen.add(item)
        writer.write(item)
        summary.counts["ok"] += 1
        return
    kept, reason = dup
    entry = {"id": item["id"], "kept": kept, "duplicate": item["source_path"], "reason": reason}
    summary.counts["duplicate"] += 1
    if on_duplicate == "keep":
        if item["id"] in seen.ids:
            item = {**item, "id": seen.free_id(item["id"])}
        entry["stored_as"] = item["id"]
        seen.add(item)
        writer.write(item)
    log.warning("duplicate %s (%s): %s, first seen in %s%s", entry["id"], reason, entry["duplicate"],
                kept, f"; stored as {item['id']}" if on_duplicate == "keep" else "; skipped")
    duplicates.append(entry)
