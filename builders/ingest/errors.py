"""What a reader raises: a file (or one record of a file) that cannot be read as a paper."""

from __future__ import annotations


class IngestError(ValueError):
    """A file, or one record of a multi-record file, that cannot be read as a paper."""


class SkipFile(IngestError):
    """A file that holds no paper of its own (a LaTeX fragment, read through the main file that inputs it):
    a note in the report, not a failure."""


class RecordError(IngestError):
    """One record of a multi-record file that cannot be read: a ``many`` reader yields it (never raises it),
    and the records after it are read."""

    def __init__(self, message: str, where: str = "", line: int | None = None):
        super().__init__(message)
        self.where, self.line = where, line
