"""XML shared by the JATS and Elsevier readers: parsing, text of an element, citation markers."""
from __future__ import annotations

import html
import re
from typing import Callable

from lxml import etree

from .text import IngestError, inline


def local_name(el) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def ns_kind(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    ns = tag[1:].split("}", 1)[0] if tag.startswith("{") else ""
    for key, kind in (("elsevier.com/xml/common", "ce"), ("purl.org/dc/elements", "dc"),
                      ("prismstandard.org", "prism"), ("purl.org/dc/terms", "dcterms")):
        if key in ns:
            return kind
    return ""


_XML_BLOCKS = {"p", "para", "simple-para", "list-item", "list", "disp-formula", "display", "title",
               "section-title", "label", "def-item", "disp-quote"}


_CITE = "\x01"  # stands for a removed citation marker until drop_citations tidies around it
_CITES = re.compile(r"\s*[\[(]?\s*\x01(?:\s*[,;–-]?\s*\x01)*\s*[\])]?")


def xml_text(el, skip: Callable[[object], str | None]) -> str:
    """Text of an element; ``skip(child)`` returns "drop" or "cite" to leave a child out (tails stay)."""
    parts = [el.text or ""]
    for child in el:
        verdict = skip(child) if isinstance(child.tag, str) else "entity"
        if verdict == "entity":  # left unresolved (no DTD is loaded): &nbsp; -> U+00A0
            parts.append(html.unescape(child.text or ""))
        elif verdict == "cite":
            parts.append(_CITE)
        elif not verdict:
            sub = xml_text(child, skip)
            if local_name(child) == "sup" and sub.strip():
                sub = "^" + sub  # 10<sup>19</sup> -> 10^19, so numbers survive for numeric validation
            parts.append(f" {sub} " if local_name(child) in _XML_BLOCKS else sub)
        parts.append(child.tail or "")
    return "".join(parts)


def drop_citations(text: str) -> str:
    """"water [1], yet" -> "water, yet": the marker, its brackets and separators go."""
    return _CITES.sub("", text) if _CITE in text else text


def parse_xml(data: bytes, warn):
    def parser(recover: bool):
        return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=recover,
                               remove_comments=True, remove_pis=True, huge_tree=True)

    try:
        return etree.fromstring(data, parser(False))
    except etree.XMLSyntaxError as exc:
        root = etree.fromstring(data, parser(True))
        if root is None or not len(root):
            raise IngestError(f"invalid XML: {exc}") from None
        warn(f"malformed XML read in recovery mode ({exc}); some text may be missing", True)
        return root


def attr(el, local: str):
    """An attribute by local name (``xlink:href`` -> ``href``)."""
    return next((v for k, v in el.attrib.items() if k.rsplit("}", 1)[-1] == local), None)


def paragraphs(container, locals_: tuple[str, ...], text) -> str:
    """Direct children paragraphs, one per line pair (an XML paragraph is one paragraph)."""
    return "\n\n".join(inline(text(c)) for c in container if local_name(c) in locals_)


