"""Markdown: ``# Title``, ``##``/``###`` sections, optional YAML front matter, header lines."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import yaml

from sciqag_dataset.builders.ingest.normalize import TAG, inline
from sciqag_dataset.builders.ingest.plain_text import header_fields
from sciqag_dataset.builders.ingest.registry import RawPaper, Source

_FENCE = re.compile(r"^\s*(```|~~~)")
_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def strip_markdown(text: str) -> str:
    text = re.sub(r"^\s*(```|~~~).*$", "", text, flags=re.M)
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"\1", text)
    text = re.sub(r"`([^`\n]*)`", r"\1", text)
    text = re.sub(r"^\s{0,3}>\s?", "", text, flags=re.M)
    return html.unescape(TAG.sub("", text))


def read(source: Source) -> Iterator[RawPaper]:
    text = source.text().replace("\r\n", "\n").replace("\r", "\n")
    meta: dict = {}
    if text.startswith("---\n"):  # YAML front matter
        end = re.search(r"^(?:---|\.\.\.)\s*$", text[4:], re.M)
        if end:
            front, text = text[4 : 4 + end.start()], text[4 + end.end() :]
            try:
                data = yaml.safe_load(front)
            except Exception as exc:  # yaml.YAMLError: keep the body, say why the header was lost
                source.warn(f"front matter ignored: {exc}")
                data = None
            if isinstance(data, dict):
                meta.update({k.lower(): v for k, v in data.items() if isinstance(k, str)})
    title = inline(meta.pop("title", ""))
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    m = _ATX.match(lines[start]) if start < len(lines) else None
    if m and m[1] == "#":
        title = title or strip_markdown(m[2])
        start += 1
    start += header_fields(lines[start:], meta)
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
            current = [strip_markdown(m[2]), ""]
        else:
            current[1] += line + "\n"
    sections.append(current)
    yield {
        "title": title,
        "sections": [[h, strip_markdown(t)] for h, t in sections if h or t.strip()],
        "metadata": meta,
    }
