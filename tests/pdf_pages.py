"""PDF pages drawn line by line with reportlab, for reductions of real layouts (the words are written for these
tests): a page is a list of ``(x, y, font, size, text)``, y measured from the page's top, so a test reads as the
page's layout. ``body_lines`` makes a column of ordinary prose to stand around the structure a test is about."""

from __future__ import annotations

import random
from pathlib import Path

from pdf_samples import FONTS  # noqa: F401  (registers Vera and VeraBd)
from reportlab.lib.pagesizes import LETTER
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

pdfmetrics.registerFont(TTFont("VeraIt", str(FONTS / "VeraIt.ttf")))
pdfmetrics.registerFont(TTFont("VeraBI", str(FONTS / "VeraBI.ttf")))

WIDTH, HEIGHT = LETTER
LEFT, RIGHT = 54.0, WIDTH / 2 + 9  # the two columns' left edges

_WORDS = (
    "the thin films were annealed in dry nitrogen before each sweep and their resistance was logged while "
    "stage cooled slowly so every sample passed through transition at same rate no drift of contacts could "
    "be mistaken for change carriers themselves we repeated runs on three days with fresh leads after which "
    "scatter between cooldowns fell below one part in thousand though oldest batch kept small offset"
).split()


def body_lines(n: int, seed: int = 0, words: int = 8) -> list[str]:
    """n lines of plain prose, no two alike (a line repeated on every page would be a running head)."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(_WORDS, words)) for _ in range(n)]


def column(x: float, top: float, lines: list[str], size: float = 10, font: str = "Vera", lead: float = 12.5):
    """One column's lines, a line every ``lead`` points from ``top``."""
    return [(x, top + k * lead, font, size, text) for k, text in enumerate(lines)]


def draw(path: Path, pages: list[list[tuple]]) -> Path:
    c = canvas.Canvas(str(path), pagesize=LETTER)
    for items in pages:
        for x, y, font, size, text in items:
            c.setFont(font, size)
            c.drawString(x, HEIGHT - y, text)
        c.showPage()
    c.save()
    return path
