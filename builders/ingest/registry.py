"""The one registry of ingest formats: every reader declares what it reads and is called one way.

A :class:`Reader` names its format, the file extensions that name it, how its content is recognised (a
``signature`` that decides whatever the name says, a ``sniff`` for files whose extension names no reader), the
pip extra its library comes with, and one ``read(source)`` that yields the raw paper(s) of a file. The
extension table, format detection (``detect.py``), dispatch (``files.py``) and the format table of the
package docstring are all read from here; the built-in readers are registered in ``formats.py``.

A reader whose library is missing is registered all the same, with the ``ImportError`` as its ``read``: its
files then fail with the extra to install, and every other format is still read.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypedDict

from sciqag_dataset.builders.ingest.decoding import BOM_UTF16, decode
from sciqag_dataset.builders.ingest.errors import IngestError, RecordError
from sciqag_dataset.core.registry import Registry

#: Bytes inspected to sniff the format and to tell binary from text.
HEAD_BYTES = 65536


class RawPaper(TypedDict, total=False):
    """What a reader yields per paper; ``record.to_record`` turns it into a ``papers`` record."""

    title: str
    text: str  # the whole text; else the sections' texts joined
    sections: list  # [heading, text] pairs
    components: list[dict]  # tables, equations, figures (``components.component``), marked in the text
    metadata: dict  # doi, journal, category, license, authors, year (or date), url, keywords
    keywords: list[str]
    existing_qa: list[dict]
    format: str  # the source_format, when more precise than the detected one (jats, sciqag-json)
    extractor: str
    has_abstract: bool
    references_dropped: int
    doi_in_text: str  # text to search for the paper's DOI when the metadata has none
    no_text_hint: str  # what was expected, for the "no text" failure
    partial: list[str]  # why part of the paper could not be read; empty or absent: it was read whole
    where: str  # a record of a multi-record file: where it is ("line 3", "item 2")
    line: int


class Head:
    """The start of a file, which sniffs look at: its first ``HEAD_BYTES`` bytes and its extension."""

    def __init__(self, data: bytes, ext: str = ""):
        self.data, self.ext = data, ext.lower()

    @cached_property
    def text(self) -> str:
        """The bytes as text (UTF-8, or UTF-16 with a BOM), undecodable bytes replaced."""
        return self.data.decode("utf-16" if self.data[:2] in BOM_UTF16 else "utf-8-sig", "replace")


@dataclass
class Source:
    """What a reader reads: one file, the format detection found (an XML flavour, say), where its notes go,
    and the run's reading options (``grobid_url``)."""

    path: str
    format: str
    warn: Callable[[str], None]
    options: Mapping[str, Any] = field(default_factory=dict)

    def data(self) -> bytes:
        return Path(self.path).read_bytes()

    def text(self) -> str:
        """The file as text: UTF-8 (a BOM tolerated; UTF-16 with a BOM), invalid bytes replaced with a note."""
        return decode(self.data(), self.warn)


ReadFunction = Callable[[Source], Iterable["RawPaper | RecordError"]]


@dataclass(frozen=True)
class Reader:
    """One format. ``read(source)`` yields the file's raw papers; it raises IngestError to fail the file
    (``SkipFile``: a note instead). A ``many`` reader streams a file of many papers (no time limit) and yields
    a ``RecordError`` for a record it cannot read; any other reader's file is one paper, read whole within
    the run's ``file_timeout``."""

    name: str  # the format: source_format of its records, the row of the report
    read: ReadFunction | ImportError  # the ImportError of a reader module whose library is not installed
    extensions: tuple[str, ...] = ()  # lower case, with the dot
    sniff: Callable[[Head], bool | str | None] | None = None  # content check: True, or a format name (a flavour)
    signature: Callable[[Head], bool] | None = None  # a header no other format has: wins over the extension
    extra: str | None = None  # the pip extra of sciqag-hf that installs its library
    label: str = ""  # in messages: "PDF", "LaTeX"
    about: str = ""  # one paragraph for the format table
    many: bool = False  # a file holds many papers
    no_signature: str | None = None  # a binary format: a file named for it without its signature fails so
    last_resort: bool = False  # sniffed after every other reader; reading a file so is noted
    selected_by: str | None = None  # a reading option that, when set, makes this reader read the format

    @property
    def title(self) -> str:
        return self.label or self.name

    @property
    def available(self) -> bool:
        return not isinstance(self.read, ImportError)

    def __call__(self, source: Source) -> Iterable[RawPaper | RecordError]:
        if isinstance(self.read, ImportError):
            raise IngestError(self.missing())
        return self.read(source)

    def missing(self) -> str:
        """What to install to read this format (for a reader whose import failed)."""
        package = (getattr(self.read, "name", None) or str(self.read)).split(".")[0]
        hint = f"pip install 'sciqag-hf[{self.extra}]'" if self.extra else f"pip install {package}"
        return f"reading {self.title} needs the `{package}` package, which is not installed: {hint}"


#: a format may have a second reader, chosen by a reading option (PDFs through GROBID): its key names the option
_READERS: Registry[Reader] = Registry("reader", key=lambda r: f"{r.name}+{r.selected_by}" if r.selected_by else r.name)


def register(reader: Reader) -> Reader:
    """Add a reader; ValueError when its name (for the same ``selected_by``) or an extension is taken."""
    for other in _READERS:
        if other.name == reader.name and other.selected_by == reader.selected_by:
            raise ValueError(f"a reader of {reader.name!r} is already registered")
        taken = set(other.extensions) & set(reader.extensions)
        if taken:
            raise ValueError(f"{', '.join(sorted(taken))} already read by the {other.name!r} reader")
    if any(not ext.startswith(".") or ext != ext.lower() for ext in reader.extensions):
        raise ValueError(f"extensions are lower case and start with a dot: {reader.extensions}")
    return _READERS.register(reader)


def unregister(reader: Reader) -> None:
    _READERS.unregister(_READERS.key(reader))


def readers() -> list[Reader]:
    """Every registered reader, in registration order (the order content is sniffed in)."""
    return _READERS.items()


def named(fmt: str, options: Mapping[str, Any] | None = None) -> Reader | None:
    """The reader of format ``fmt``: one selected by an option set in ``options`` first (PDFs through GROBID)."""
    found = [r for r in _READERS if r.name == fmt and (not r.selected_by or (options or {}).get(r.selected_by))]
    return max(found, key=lambda r: bool(r.selected_by), default=None)


def by_extension(ext: str) -> Reader | None:
    return next((r for r in _READERS if ext.lower() in r.extensions), None)


def extensions() -> dict[str, str]:
    """Extension -> format, for every registered reader."""
    return {ext: r.name for r in _READERS for ext in r.extensions}


def format_of_name(path: str) -> str:
    """The format a file's extension names ("other" when none does): for counting files that failed."""
    reader = by_extension(Path(path).suffix)
    return reader.name if reader else "other"


def format_names() -> list[str]:
    """The registered formats' names, each once, in registration order."""
    return list(dict.fromkeys(r.name for r in _READERS))


def format_table(width: int = 110) -> str:
    """The registered formats as a reStructuredText table: name, extensions, extra, what is read."""
    rows = [("format", "extensions", "extra", "what is read")]
    for r in _READERS:
        shown = " ".join(r.extensions) or (f"(with {r.selected_by})" if r.selected_by else "(by content)")
        rows.append((r.name, shown, r.extra or "-", r.about))
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    last = max(width - sum(widths) - 3, 30)
    rule = " ".join("=" * w for w in [*widths, last])
    lines = [rule]
    for k, row in enumerate(rows):
        wrapped = textwrap.wrap(row[3], last) or [""]
        lead = " ".join(cell.ljust(w) for cell, w in zip(row[:3], widths))
        lines.append(f"{lead} {wrapped[0]}".rstrip())
        lines += [f"{' ' * len(lead)} {more}" for more in wrapped[1:]]
        if k == 0:
            lines.append(rule)
    lines.append(rule)
    return "\n".join(lines)
