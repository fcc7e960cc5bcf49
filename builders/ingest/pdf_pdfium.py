"""A page's words from PDFium (pypdfium2, Apache-2.0/BSD-3): characters with their boxes, font size and font
name, grouped into words the way ``pdfplumber``'s ``extract_words(x_tolerance=1.5, extra_attrs=["size",
"fontname"])`` does (a space, a gap wider than the tolerance, or a change of size or font ends a word), in
the same dict shape (``text``, ``x0``, ``x1``, ``top``, ``bottom``, ``size``, ``fontname``, ``upright``), so that
the layout pass (``pdf_layout.py``) can run on either. pdfplumber builds a Python object per character through
pdfminer; PDFium parses in C and this loop only reads numbers back, which is what makes it faster (measured
side by side in ``bench/ingest.py``). Glyphs without a Unicode map are counted and kept as marks
(``pdf_glyphs.mark``, from the glyph's code, which PDFium gives), as pdfminer's "(cid:N)" are."""

from __future__ import annotations

import ctypes

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from sciqag_dataset.builders.ingest.pdf_glyphs import mark

X_TOLERANCE = 1.5


def page_words(page: pdfium.PdfPage) -> tuple[list[dict], int]:
    """The page's words, top-down coordinates in points, and how many glyphs had no Unicode map."""
    height = page.get_height()
    tp = page.get_textpage()
    try:
        return _words(tp.raw, tp.count_chars(), height)
    finally:
        tp.close()


def _words(tp, n: int, height: float) -> tuple[list[dict], int]:
    rect = raw.FS_RECTF()
    left, right, low, high = (ctypes.c_double() for _ in range(4))
    buf = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    fonts: dict[int, str] = {}  # text object -> font name: one lookup per run of text, not per character
    words: list[dict] = []
    cur: dict | None = None
    unmapped = 0
    for i in range(n):
        code = raw.FPDFText_GetUnicode(tp, i)
        ch = chr(code) if 0 < code < 0x110000 else ""
        unmapped_glyph = raw.FPDFText_HasUnicodeMapError(tp, i)
        if not unmapped_glyph and (not ch or ch.isspace() or raw.FPDFText_IsGenerated(tp, i) == 1):
            cur = None  # a space, a line end PDFium inferred: the word ends
            continue
        if not unmapped_glyph and 0xD800 <= code <= 0xDFFF:  # half of a surrogate pair (beyond the BMP): left out
            continue
        # across: the glyph's own box (a loose box is wider and closes up a word space); up and down: the
        # font's ascent and descent, as pdfplumber's boxes are, so one line's words share a baseline row
        raw.FPDFText_GetLooseCharBox(tp, i, rect)
        raw.FPDFText_GetCharBox(tp, i, ctypes.byref(left), ctypes.byref(right), ctypes.byref(low), ctypes.byref(high))
        size = round(raw.FPDFText_GetFontSize(tp, i), 2)
        obj = raw.FPDFText_GetTextObject(tp, i)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        font = fonts.get(key)
        if font is None:
            k = raw.FPDFText_GetFontInfo(tp, i, buf, len(buf), ctypes.byref(flags))
            font = fonts[key] = buf.raw[: max(k - 1, 0)].decode("utf-8", "replace")
        if unmapped_glyph:  # PDFium gives the glyph's code: a mark, as pdfminer's "(cid:N)" becomes one
            unmapped += 1
            ch = mark(font, code)
        x0, x1, top, bottom = left.value, right.value, height - rect.top, height - rect.bottom
        if (
            cur is not None
            and cur["size"] == size
            and cur["fontname"] == font
            and x0 - cur["x1"] <= max(X_TOLERANCE, 0.25 * size)  # glyph boxes: letter-spaced titles; a word
            # space is a space character, or one PDFium generated where it saw the gap
            and x0 >= cur["x0"]  # the letters of a ligature ("ffi") share its box: they overlap
            and abs(bottom - cur["bottom"]) < 0.5 * size
        ):
            cur["text"] += ch
            cur["x1"] = max(cur["x1"], x1)
            cur["top"] = min(cur["top"], top)
            cur["bottom"] = max(cur["bottom"], bottom)
            continue
        cur = {"text": ch, "x0": x0, "x1": x1, "top": top, "bottom": bottom, "size": size, "fontname": font}
        cur["upright"] = raw.FPDFText_GetCharAngle(tp, i) in (0.0,) or abs(raw.FPDFText_GetCharAngle(tp, i)) < 0.01
        words.append(cur)
    return words, unmapped


class Page:
    """What the layout pass asks of a page (pdfplumber's names): size, words, drawn shapes and images."""

    def __init__(self, page: pdfium.PdfPage):
        self.width, self.height = page.get_width(), page.get_height()
        self._words, self.unmapped = page_words(page)
        self.curves, self.images, self.rects = [], [], []
        for obj in page.get_objects(filter=(raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_IMAGE), max_depth=2):
            left, bottom, right, top = obj.get_bounds()
            box = {"x0": left, "x1": right, "top": self.height - top, "bottom": self.height - bottom}
            # a path's kind (rule, box, curve) is not told apart here: the figure finder keeps only shapes with
            # both sides over 1.5 pt, which leaves rules out either way
            (self.images if obj.type == raw.FPDF_PAGEOBJ_IMAGE else self.curves).append(box)

    def extract_words(self, **_) -> list[dict]:
        return self._words

    def close(self) -> None:
        pass


def open_pages(path, password: str = ""):
    """(metadata, pages) of the PDF; the pages are read one at a time, as they are asked for."""
    pdf = pdfium.PdfDocument(str(path), password=password or None)
    info = {k: v for k, v in pdf.get_metadata_dict(skip_empty=True).items()}

    def pages():
        try:
            for k in range(len(pdf)):
                page = pdf[k]
                try:
                    yield Page(page)
                finally:
                    page.close()
        finally:
            pdf.close()

    return info, len(pdf), pages()
