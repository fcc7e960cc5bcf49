"""A line of a PDF page as the layout pass sees it: its text, size, weight, place and column."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Line:
    text: str
    size: float
    bold: bool
    top: float
    bottom: float
    x0: float
    page: int
    column: int  # 0: spans the page, 1: left column, 2: right column
    words: list = field(default_factory=list, repr=False)
