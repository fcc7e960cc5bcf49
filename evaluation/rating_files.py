"""The records of a ratings file as spreadsheets and scripts write it: CSV separated by commas, semicolons or
tabs (the header line tells which), or JSON Lines; in UTF-8 (with or without a byte-order mark), UTF-16 with a
byte-order mark, or Windows-1252 when the bytes are not UTF-8. ``FileFormat`` says which was read."""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sciqag_dataset.core.errors import UserError

SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}
RESAVE = "save it as 'CSV UTF-8' (or JSON Lines in UTF-8)"


@dataclass
class FileFormat:
    encoding: str  # utf-8, utf-8-sig (with a byte-order mark), utf-16 or cp1252
    separator: str | None = None  # comma, semicolon or tab; None for JSON Lines

    def describe(self) -> str:
        encoding = {"utf-8-sig": "UTF-8 with BOM", "utf-16": "UTF-16", "cp1252": "Windows-1252"}
        text = encoding.get(self.encoding, "UTF-8")
        return f"{text}, {self.separator}-separated" if self.separator else f"{text}, JSON Lines"


def decode(path: Path) -> tuple[str, str]:
    """The file's text and the encoding it was read in; UserError for bytes no spreadsheet writes."""
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    else:
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        if encoding != "utf-8":
            raise UserError(f"{path}: not valid {encoding} at byte {e.start}: {RESAVE}") from None
        try:
            text, encoding = data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            raise UserError(f"{path}: neither UTF-8 nor Windows-1252 text (byte {e.start}): {RESAVE}") from None
    if "\x00" in text:  # UTF-16 without a byte-order mark reads as text full of NULs
        raise UserError(f"{path}: looks like UTF-16 without a byte-order mark: {RESAVE}")
    return text, encoding


def _separator(header: str) -> str:
    try:
        return csv.Sniffer().sniff(header, delimiters="".join(SEPARATORS)).delimiter
    except csv.Error:  # one column only: the header check names what is missing
        return ","


def records(path: Path, required: tuple[str, ...], columns: tuple[str, ...]) -> tuple[FileFormat, Iterator]:
    """How the file is written, and its records as ``(file:line, dict)``; UserError for a header without the
    ``required`` columns or a JSON line that is not an object."""
    text, encoding = decode(path)
    if text.lstrip().startswith("{"):
        return FileFormat(encoding), _json_lines(path, text)
    header = text.lstrip("\r\n").split("\n", 1)[0]
    separator = _separator(header)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=separator)
    names = [name.strip() for name in reader.fieldnames or ()]
    reader.fieldnames = names
    missing = [c for c in required if c not in names]
    if missing:
        raise UserError(
            f"{path}: the header lacks {', '.join(missing)} (columns: {', '.join(columns)}; "
            "separated by commas, semicolons or tabs)"
        )
    return FileFormat(encoding, SEPARATORS[separator]), _csv_rows(path, reader)


def _csv_rows(path: Path, reader: csv.DictReader) -> Iterator[tuple[str, dict]]:
    for rec in reader:
        yield f"{path}:{reader.line_num}", rec


def _json_lines(path: Path, text: str) -> Iterator[tuple[str, dict]]:
    for n, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 may stand inside a string
        if line.strip():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{n}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise UserError(f"{path}:{n}: a JSON object per line, please")
            yield f"{path}:{n}", rec
