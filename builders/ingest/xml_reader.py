"""XML papers: JATS / NLM articles and Elsevier full text, told apart by their elements."""

from __future__ import annotations

from collections.abc import Iterator

from sciqag_dataset.builders.ingest.elsevier import read_elsevier
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.html import read_html
from sciqag_dataset.builders.ingest.jats import read_jats
from sciqag_dataset.builders.ingest.registry import RawPaper, Source
from sciqag_dataset.builders.ingest.xml_common import local_name, ns_kind, parse_xml


def read(source: Source) -> Iterator[RawPaper]:
    data = source.data()
    root, recovered = parse_xml(data, source.warn)
    if local_name(root) == "full-text-retrieval-response" or any(ns_kind(el) == "ce" for el in root.iter()):
        paper = read_elsevier(root, source.warn)
    else:
        article = (
            root
            if local_name(root) == "article"
            else next((el for el in root.iter() if local_name(el) == "article"), None)
        )  # e.g. <pmc-articleset><article>
        if article is not None:
            paper = read_jats(article, source.warn)
        elif local_name(root) == "html":
            paper = read_html(data.decode("utf-8", "replace"), source.warn)
        else:
            raise IngestError(
                f"unrecognised XML: root element <{local_name(root)}> is neither a JATS <article> "
                "nor Elsevier full text"
            )
    yield {**paper, "partial": [recovered]} if recovered else paper
