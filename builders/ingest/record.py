"""A reader's raw parse -> a schema-conformed paper record."""

from __future__ import annotations

import re

from sciqag_dataset.builders.ingest.components import resolve, unmark
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.normalize import (
    DOI_IN_TEXT,
    content_hash,
    inline,
    normalize_doi,
    normalize_text,
    paper_id,
    parse_authors,
    parse_keywords,
    parse_year,
)
from sciqag_dataset.core import schema
from sciqag_dataset.core.text_repair import repair, repair_text

PAPER_FEATURES = schema.features_for("papers")


def to_record(raw: dict, path: str, fmt: str, warn, notes=()) -> dict:
    """A reader's raw paper (``registry.RawPaper``) -> a schema-conformed paper record; IngestError when there
    is no text.

    ``notes``: the reader's warnings about this paper so far; they go into the record's ``ingest`` column with
    the quality signals, among them ``partial`` and its reasons (the raw paper's ``partial``).

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
        body = normalize_text(unmark(body))
        if body:
            sections.append({"heading": inline(unmark(heading)), "text": body})
    text = normalize_text(unmark(raw["text"])) if raw.get("text") else "\n\n".join(s["text"] for s in sections)
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
        m = DOI_IN_TEXT.search(raw["doi_in_text"])
        doi = normalize_doi(m[1]) if m else None
    digest = content_hash(text)
    record = {
        "id": paper_id(doi, digest),
        "title": inline(unmark(raw.get("title"))),
        "text": text,
        "sections": sections,
        # the marks readers leave in their text say where each table, equation and figure is mentioned and stands
        "components": resolve(
            raw.get("components") or [],
            [raw["text"]] if raw.get("text") else [body for _, body in raw.get("sections") or []],
            text,
            warn,
        ),
        "source_format": raw.get("format") or fmt,
        "source_path": path,
        "content_hash": digest,
        "metadata": {
            "doi": doi,
            "journal": inline(meta.get("journal")) or None,
            "category": inline(meta.get("category")) or None,
            "license": inline(meta.get("license")) or None,
            "authors": parse_authors(meta.get("authors")),
            "year": parse_year(meta.get("year") or meta.get("date")),
            "url": inline(meta.get("url")) or None,
        },
        "existing_qa": raw.get("existing_qa") or [],
        "keywords": raw.get("keywords") or parse_keywords(meta.get("keywords")),
    }
    partial = raw.get("partial") or []
    partial = [partial] if isinstance(partial, str) else list(partial)
    record["ingest"] = {
        "extractor": raw.get("extractor") or raw.get("format") or fmt,
        "words": len(text.split()),
        "n_sections": len(sections),
        "has_abstract": bool(raw.get("has_abstract")) or any(_ABSTRACT.match(s["heading"]) for s in sections),
        "references_dropped": int(raw.get("references_dropped") or 0),
        "partial": bool(partial),
        "partial_reason": "; ".join(partial) or None,
        "warnings": list(notes),
    }
    return schema.conform(record, PAPER_FEATURES)


_ABSTRACT = re.compile(r"^\s*(?:abstract|summary)\b", re.I)
