"""What the readers share to write a paper: text normalised, DOIs, ids, authors, years, keywords, QA pairs."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable

#: A title longer than this is more likely the first paragraph.
MAX_TITLE_CHARS = 200

_FORMFEED = re.compile(r"\f")
#: characters the text never keeps (controls, zero-width spaces, BOMs), as the body of a regex class
INVISIBLE_CHARS = r"\x00-\x08\x0b\x0e-\x1f\x7f\u200b-\u200d\u2060\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")
_SPACES = re.compile(r"[ \t\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_BLANK_LINE = re.compile(r"\n[ ]*\n")
TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_BLOCKTAG = re.compile(r"</?(?:p|br|div|li|h[1-6]|jats:p|jats:sec|sec|title)\b[^<>]*>", re.I)


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


def inline(value) -> str:
    """One line of text: a title, a heading, a metadata value."""
    if value is None:
        return ""
    return " ".join(_INVISIBLE.sub("", str(value)).split())


def capitalised(text: str) -> float:
    """The share of words that start with a capital: names and affiliations, not sentences."""
    words = re.findall(r"[^\W\d_][\w'’-]*", text)
    return sum(w[0].isupper() for w in words) / max(len(words), 1)


def plain_words(text: str) -> str:
    """The text's words, lower case, one space apart."""
    return " ".join(re.findall(r"\w+", text.lower()))


def strip_tags(text: str) -> str:
    """Markup inside JSON values (e.g. Crossref's ``<jats:p>``): blocks become paragraphs."""
    if "<" not in text or not TAG.search(text):
        return text
    text = _BLOCKTAG.sub("\n\n", text)
    return html.unescape(TAG.sub("", text))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.I)
# a DOI marked as one ("doi:", IEEE's "Digital Object Identifier", a doi.org address); a preprint server's stamp
# runs the DOI into its next words ("…20116806.this version posted June 11"): they stop it
DOI_IN_TEXT = re.compile(
    r"(?:\bdoi\s*:?\s*|\bdigital object identifier\s*:?\s*|doi\.org/|/doi/(?:abs/|full/|pdf/|epdf/)?)"
    r"(10\.\d{4,9}/(?:(?!\.?this\s+version\b)[^\s\"'<>])+)",
    re.I,
)
# a publication year (1800-2099, "2004a"): what marks a reference entry, in PDFs and web pages alike
YEAR = re.compile(r"\b(?:1[89]|20)\d\d[a-z]?\b")
# an English month's name, full or abbreviated ("May", "Feb.", "Sept"): what makes "12 May 2016" a date
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
# brackets left holding nothing but separators once the citations or references inside them are removed:
# "station [] and", "logger [, ]", "(Fig. 2)" -> "()"; with the space before them. Not a hyphen alone, nor
# brackets a word or hyphen goes on from: "(-)-epicatechin", a unit "Re [-] and" are text
EMPTY_BRACKETS = re.compile(r"\s?(?:\[\s*(?:[,;–—]\s*)*\]|\(\s*(?:[,;–—]\s*)*\))(?![\w-])")
# a figure or table label at the start of a caption: "Fig. 2", "Table S1", "Scheme 3b", "Plate 4"
CAPTION_LABEL = re.compile(r"^(?:fig(?:ure)?|table|scheme|chart|plate|listing)\.?\s*S?\d+[a-z]?\b", re.I)


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


def parse_year(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1000 <= value <= 2999 else None
    m = re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", str(value or ""))
    return int(m[1]) if m else None


def split_list(value: str) -> list[str]:
    sep = ";" if ";" in value else ","
    return [v.strip() for v in value.split(sep) if v.strip()]


def parse_authors(value) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        parts = value.split(";") if ";" in value else re.split(r",|\band\b", value)
        return [inline(a) for a in parts if inline(a)]
    out = []
    for a in value if isinstance(value, list) else [value]:
        if isinstance(a, dict):
            name = a.get("name") or " ".join(
                str(a[k]) for k in ("given", "given-names", "first", "family", "surname", "last") if a.get(k)
            )
            a = name
        if inline(a):
            out.append(inline(a))
    return out


def parse_keywords(value) -> list[str]:
    if not value:
        return []
    items = split_list(value) if isinstance(value, str) else value if isinstance(value, list) else []
    return [inline(k) for k in items if isinstance(k, str) and inline(k)]


def parse_qa_pairs(value, origin: str, warn: Callable[[str], None]) -> list[dict]:
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
