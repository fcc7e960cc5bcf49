"""JSON and JSON Lines: a paper, a list of papers (streamed), JSON Lines, and the SciQAG authors' release."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from sciqag_dataset.builders.ingest.decoding import replace_invalid
from sciqag_dataset.builders.ingest.errors import IngestError, RecordError
from sciqag_dataset.builders.ingest.normalize import inline, normalize_text, parse_keywords, parse_qa_pairs, strip_tags
from sciqag_dataset.builders.ingest.registry import RawPaper, Source

JSON_CHUNK = 1 << 20  # read at a time: a list of papers is decoded item by item, never held whole


_WS_COMMA = re.compile(r"[\s,]*")
_HEADING = re.compile(r"(?i)\s*(?:[\dIVX]+\.?\s|(?:abstract|introduction|keywords)\b)")  # a section, not a title
_TEXT_KEYS = ("text", "full_text", "fulltext", "body_text", "content", "txt")


def _json_text(value) -> str:
    """A JSON text value: markup stripped; a single newline already separates paragraphs there
    (the SciQAG release writes one paragraph per line), unlike hard-wrapped plain text."""
    return strip_tags(value).replace("\n", "\n\n") if isinstance(value, str) else ""


def _is_released(d: dict) -> bool:
    return "txt" in d and any(k in d for k in ("Q&A", "num_Q&A", "output", "input"))


def _released_title(txt) -> str:
    """The release has no title field; a ``txt`` that opens with a short line that is not a sentence, with
    more text after it, opens with the title (the text itself is kept whole)."""
    first, _, rest = (txt if isinstance(txt, str) else "").strip().partition("\n")
    first = inline(first)
    if (
        rest.strip()
        and 3 <= len(first.split()) <= 40
        and not first.endswith((".", ":", ";", ","))
        and not _HEADING.match(first)
    ):
        return first
    return ""


def _from_released(d: dict, warn) -> dict:
    journal = d.get("journal")
    return {
        "format": "sciqag-json",
        "title": d["title"]
        if isinstance(d.get("title"), str) and d["title"].strip()
        else _released_title(d.get("txt")),
        "text": _json_text(d.get("txt")),
        # the release's "journal" holds the Web of Science category the paper was sampled from
        "metadata": {"doi": d.get("doi"), "journal": journal, "category": journal},
        "keywords": parse_keywords(d.get("keywords")),
        "existing_qa": parse_qa_pairs(d.get("Q&A"), "released", warn),
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
            sections.append([inline(s.get("heading") or s.get("title")), _json_text(body)])
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
        "keywords": parse_keywords(d.get("keywords")),
        "existing_qa": parse_qa_pairs(qa, "source", warn),
        "no_text_hint": "expected 'text', 'txt', 'abstract'/'body' or 'sections'; found keys: "
        + ", ".join(sorted(map(str, d))[:12]),
    }


def _json_items(value, where: str) -> Iterator[tuple[str, object]]:
    """(where, value) per paper in a parsed JSON value: a paper, a list of them, or {"papers": [...]}."""
    if (
        isinstance(value, dict)
        and len(value) == 1
        and isinstance(next(iter(value.values())), list)
        and not any(k in value for k in ("sections", "Q&A"))
    ):
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
            whole = replace_invalid(head + f.read(), warn)
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
        line = replace_invalid(line, lambda m, n=lineno: warn(f"line {n}: {m}"))
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
        if depth == 0 and c in ']}"':
            return i
    return None


def _iter_json_array(f, buf: str, warn) -> Iterator[tuple[str, object]]:
    """Items of a top-level JSON list, decoded one at a time from a growing buffer."""
    decoder = json.JSONDecoder()
    pos, item, eof, chunk = 0, 0, False, JSON_CHUNK
    buf = replace_invalid(buf, warn)
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
                    raise IngestError(
                        f"invalid JSON in item {item + 1}: {msg}; the {item} item(s) before it were read"
                    ) from None
        if eof:
            raise IngestError(f"invalid JSON: the top-level list is not closed; {item} item(s) were read")
        more = f.read(chunk)
        eof = not more
        buf = buf[pos:] + replace_invalid(more, warn)
        pos = 0
        chunk = max(chunk, len(buf))  # grow for items bigger than a chunk


def read(source: Source) -> Iterator[RawPaper | RecordError]:
    """Every paper of the file, streamed; a record that is not a paper is a RecordError, and the next is read."""
    warn = source.warn
    for where, value in _iter_json(source.path, warn):
        line = re.match(r"line (\d+)", where)
        at = {"where": where, "line": int(line[1]) if line else None}
        if isinstance(value, IngestError):
            yield RecordError(str(value), **at)
            continue
        if not isinstance(value, dict):
            yield RecordError(f"expected a paper object, got {type(value).__name__}", **at)
            continue
        try:
            raw = _from_released(value, warn) if _is_released(value) else _from_generic(value, warn)
        except Exception as exc:  # one odd record must not lose the rest of the file
            yield RecordError(
                str(exc) if isinstance(exc, IngestError) else f"unexpected {type(exc).__name__}: {exc}", **at
            )
            continue
        yield {**raw, **at}
