"""PDF through a GROBID server (``--pdf-backend grobid --grobid-url URL``), the reference tool for scholarly PDFs,
for users who run it (``docker run -p 8070:8070 grobid/grobid``): the PDF is posted to
``/api/processFulltextDocument`` and its TEI becomes our record. Header: title, authors, DOI, abstract; body:
``div``/``head`` sections, formulas as their text; ``back``: annexes kept as appendix sections, the
bibliography counted and left out; figures, tables and bibliographic references (``ref type="bibr"``) removed.
A busy server (503) is asked again with backoff; a dead one fails this paper with the reason, not the run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from lxml import etree

from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.normalize import inline
from sciqag_dataset.builders.ingest.registry import RawPaper, Source

TEI = "{http://www.tei-c.org/ns/1.0}"
ATTEMPTS = 4
TIMEOUT = 300.0  # a long paper on a loaded server takes minutes


def read(source: Source) -> Iterator[RawPaper]:
    """The PDF through the GROBID server at the ``grobid_url`` reading option."""
    yield tei_to_paper(_post(Path(source.path), source.options["grobid_url"].rstrip("/")), source.warn)


#: url -> when it last could not be reached: the next PDFs fail at once for a minute, not after 4 tries each
_down: dict[str, float] = {}


def _post(path: Path, url: str) -> bytes:
    endpoint = f"{url}/api/processFulltextDocument"
    if time.monotonic() - _down.get(url, -1e9) < 60:
        raise IngestError(f"GROBID at {url} cannot be reached (it was not a minute ago); is it running?")
    data = path.read_bytes()
    for attempt in range(ATTEMPTS):
        try:
            reply = httpx.post(
                endpoint,
                files={"input": (path.name, data, "application/pdf")},
                data={"includeRawAffiliations": "0", "consolidateHeader": "0"},
                timeout=TIMEOUT,
            )
        except httpx.HTTPError as exc:
            if attempt == ATTEMPTS - 1:
                _down[url] = time.monotonic()
                raise IngestError(
                    f"GROBID at {url} cannot be reached ({type(exc).__name__}); is it running?"
                ) from None
        else:
            if reply.status_code == 200:
                return reply.content
            if reply.status_code != 503:  # 503: all its threads are busy; anything else will not pass
                raise IngestError(f"GROBID answered HTTP {reply.status_code}: {reply.text[:200]}")
            if attempt == ATTEMPTS - 1:
                raise IngestError(f"GROBID at {url} stayed busy (HTTP 503) after {ATTEMPTS} tries")
        time.sleep(min(0.5 * 2**attempt, 30))
    raise IngestError("GROBID: no reply")  # not reached


def tei_to_paper(tei: bytes, warn) -> dict:
    try:
        root = etree.fromstring(tei, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"GROBID returned invalid TEI: {exc}") from None
    header = root.find(f"{TEI}teiHeader")
    title = inline(_text(header.find(f".//{TEI}titleStmt/{TEI}title"))) if header is not None else ""
    analytic = header.find(f".//{TEI}sourceDesc//{TEI}analytic") if header is not None else None
    authors = []
    for pers in analytic.iter(f"{TEI}persName") if analytic is not None else []:
        names = [_text(n) for n in pers if n.tag in (f"{TEI}forename", f"{TEI}surname")]
        if names:
            authors.append(inline(" ".join(names)))
    doi = next(
        (
            inline(_text(i))
            for i in (header.iter(f"{TEI}idno") if header is not None else [])
            if (i.get("type") or "").upper() == "DOI"
        ),
        None,
    )
    sections = []
    abstract = header.find(f".//{TEI}profileDesc/{TEI}abstract") if header is not None else None
    if abstract is not None and inline(_text(abstract)):
        sections.append(
            ["Abstract", "\n\n".join(inline(_text(p)) for p in abstract.iter(f"{TEI}p")) or inline(_text(abstract))]
        )
    body = root.find(f".//{TEI}text/{TEI}body")
    for div in body.findall(f"{TEI}div") if body is not None else []:
        sections += _div(div, "")
    back = root.find(f".//{TEI}text/{TEI}back")
    references = 0
    if back is not None:
        references = len(back.findall(f".//{TEI}listBibl/{TEI}biblStruct"))
        for div in back.iter(f"{TEI}div"):
            if div.get("type") == "annex":
                sections += _div(div, "Appendix")
    if not any(text for _, text in sections):
        raise IngestError("GROBID found no text in the PDF (scanned? run OCR first)")
    return {
        "format": "pdf",
        "extractor": "pdf/grobid",
        "title": title,
        "sections": sections,
        "metadata": {"doi": doi, "authors": authors},
        "references_dropped": references,
        "has_abstract": bool(sections and sections[0][0] == "Abstract"),
    }


def _div(div, prefix: str) -> list[list[str]]:
    """A div's section, then those of the divs inside it (GROBID nests an annex's sections in its div)."""
    head = div.find(f"{TEI}head")
    heading = inline(_text(head)) if head is not None else ""
    if prefix:
        heading = f"{prefix}: {heading}" if heading else prefix
    nested = [s for child in div.findall(f"{TEI}div") for s in _div(child, prefix)]
    paras = [inline(_text(el)) for el in div if el.tag in (f"{TEI}p", f"{TEI}formula", f"{TEI}list")]
    # where a reference was: "water [12], yet" -> "water, yet"
    paras = [re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]", "", p)) for p in paras]
    paras = [p for p in paras if p]
    return ([[heading, "\n\n".join(paras)]] if paras else []) + nested


def _text(el) -> str:
    """Text of a TEI element without figures, tables, notes and bibliographic references."""
    if el is None:
        return ""
    parts = [el.text or ""]
    for child in el:
        drop = child.tag in (f"{TEI}figure", f"{TEI}note", f"{TEI}table") or (
            child.tag == f"{TEI}ref" and child.get("type") == "bibr"
        )
        if not drop:
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)
