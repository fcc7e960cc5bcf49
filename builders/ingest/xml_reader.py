"""XML papers: JATS / NLM articles and Elsevier full text, told apart by their elements."""
from __future__ import annotations

from typing import Iterator

from .elsevier import read_elsevier
from .html import read_html
from .jats import read_jats
from .text import IngestError
from .xml_common import local_name, ns_kind, parse_xml


def read_xml(path: str, data: bytes, warn) -> Iterator[dict]:
    root = parse_xml(data, warn)
    if local_name(root) == "full-text-retrieval-response" or any(ns_kind(el) == "ce" for el in root.iter()):
        yield read_elsevier(root, warn)
        return
    article = root if local_name(root) == "article" else next(
        (el for el in root.iter() if local_name(el) == "article"), None)  # e.g. <pmc-articleset><article>
    if article is not None:
        yield read_jats(article, warn)
    elif local_name(root) == "html":
        yield from read_html(data.decode("utf-8", "replace"), warn)
    else:
        raise IngestError(f"unrecognised XML: root element <{local_name(root)}> is neither a JATS <article> "
                          "nor Elsevier full text")
