"""Plain text: the first short line is the title, ``Key: value`` lines are metadata, lone short lines head sections."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sciqag_dataset.builders.ingest.normalize import MAX_TITLE_CHARS, normalize_text
from sciqag_dataset.builders.ingest.registry import RawPaper, Source

_HEADER_KEYS = {
    "author": "authors",
    "authors": "authors",
    "journal": "journal",
    "doi": "doi",
    "license": "license",
    "licence": "license",
    "year": "year",
    "published": "year",
    "keywords": "keywords",
    "url": "url",
    "category": "category",
    # recognised and dropped: front-page lines that are not paper text
    "affiliation": None,
    "affiliations": None,
    "received": None,
    "accepted": None,
    "correspondence": None,
    "email": None,
}
HEADER_LINE = re.compile(r"^\s*([A-Za-z]+)\s*:\s*(.+?)\s*$")
_BARE_DOI = re.compile(r"^\s*(?:https?://(?:dx\.)?doi\.org/)(10\.\d{4,9}/\S+)\s*$", re.I)


def header_fields(lines: list[str], meta: dict) -> int:
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
        m = HEADER_LINE.match(line)
        if not m or m[1].lower() not in _HEADER_KEYS:
            break
        key = _HEADER_KEYS[m[1].lower()]
        if key:
            meta[key] = m[2]
        used = i + 1
    return used


def _is_heading_paragraph(block: str) -> bool:
    """A lone short line without end punctuation, such as ``2. Results`` or ``Abstract``."""
    return (
        "\n" not in block.strip()
        and len(block.strip()) <= 80
        and len(block.split()) <= 10
        and bool(re.match(r"^[\dA-Z]", block.strip()))
        and not re.search(r"[.,;:!?]$", block.strip())
    )


def sections_from_blocks(blocks: list[str]) -> list[list[str]]:
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


def read(source: Source) -> Iterator[RawPaper]:
    lines = source.text().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    title, start = "", 0
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and any(ln.strip() for ln in lines[first + 1 :]):
        candidate = lines[first].strip()
        if (
            len(candidate) <= MAX_TITLE_CHARS
            and not candidate.endswith((".", ","))
            and not HEADER_LINE.match(candidate)
        ):
            title, start = candidate, first + 1
    meta: dict = {}
    start += header_fields(lines[start:], meta)
    body = normalize_text("\n".join(lines[start:]))
    yield {"title": title, "sections": sections_from_blocks(body.split("\n\n") if body else []), "metadata": meta}
