"""PDFs with the structures real papers have, drawn with reportlab (the text is written for these tests):
two columns, running headers and footers, a two-line title, an abstract, numbered bold headings, a ligature,
a loose accent, a word hyphenated at a line end, a figure caption, a reference list, and optionally pages with
no text layer (a scan)."""

from __future__ import annotations

import os
from pathlib import Path

import reportlab
from PIL import Image, ImageDraw
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

FONTS = Path(os.path.dirname(reportlab.__file__)) / "fonts"
pdfmetrics.registerFont(TTFont("Vera", str(FONTS / "Vera.ttf")))
pdfmetrics.registerFont(TTFont("VeraBd", str(FONTS / "VeraBd.ttf")))

TITLE = ("Oxygen Vacancies Control the Band Gap", "of Sputtered Zinc Oxide Films")
DOI = "10.5555/imag.2031.042"
LEFT = [
    ("h", "1. Introduction"),
    ("p", "Zinc oxide films are grown by sputtering for"),
    ("p", "transparent electrodes. Their band gap de\ufb01nes"),
    ("p", "the optical window, and vacancy concen-"),
    ("p", "trations change it by up to 0.2 eV [4, 5]."),
    ("gap", ""),
    ("p", "Lema\u02c6\u0131tre and co-workers measured the"),
    ("p", "gap of annealed films in 2029 [6]."),
    ("gap", ""),
    ("h", "2. Methods"),
    ("p", "Films of 200 nm were sputtered at 300 K"),
    ("p", "in argon with 2 % oxygen, then annealed"),
    ("p", "for 1 h at 673 K under vacuum."),
]
RIGHT = [
    ("caption", "Figure 1. Transmission spectra of the films."),
    ("gap", ""),
    ("h", "3. Results"),
    ("p", "The gap fell from 3.30 eV to 3.12 eV as the"),
    ("p", "oxygen vacancy density rose; the \ufb01t of the"),
    ("p", "absorption edge gave a slope of 1.8."),
    ("gap", ""),
    ("p", [("Like Ni", ""), ("12", "sub"), ("P", ""), ("5", "sub"), (" films", ""), ("7,8", "sup"), (", the", "")]),
    (
        "p",
        [
            ("gap tracks the 10", ""),
            ("18", "sup"),
            (" cm", ""),
            ("\u22123", "sup"),
            (" donors over 4 cm", ""),
            ("2", "sup"),
            (".", ""),
            ("9\u201311", "sup"),
        ],
    ),
    ("gap", ""),
    ("h", "4. Conclusions"),
    ("p", "Vacancies set the gap of sputtered films,"),
    ("p", "so annealing tunes the optical window."),
]
REFERENCES = [
    "[1] A. Writer, J. Imag. Mater. 1 (2025) 1.",
    "[2] B. Writer, J. Imag. Mater. 2 (2026) 2.",
    "[3] C. Writer, Imag. Lett. 3 (2027) 3.",
    "[4] D. Writer, Imag. Lett. 4 (2028) 4.",
    "[5] E. Writer, Imag. Lett. 5 (2029) 5.",
    "[6] F. Writer, Imag. Lett. 6 (2029) 6.",
]


# the running head as OCR reads it off a scan: a letter misread on every page
_HEADS = [
    f"{journal} 12 (2031) 101\u2013109"
    for journal in (
        "Journal of Imaginary Materials",
        "Journa1 of Imaginary Materials",
        "Journal of lmaginary Materials",
        "Journal of Imaginary Materia1s",
    )
]


def _furniture(c, page: int, pages: int, doi: str = DOI, ocr: bool = False) -> None:
    width, height = A4
    c.setFont("Vera", 8)
    c.drawString(56, height - 40, _HEADS[page % len(_HEADS)] if ocr else _HEADS[0])
    c.drawRightString(width - 56, 30, f"Page {page} of {pages}")
    if page == 1 and doi:
        c.drawString(56, 30, f"https://doi.org/{doi}")


def _column(c, x: float, y: float, items) -> float:
    for kind, text in items:
        if kind == "gap":
            y -= 8
            continue
        c.setFont("VeraBd" if kind == "h" else "Vera", 11 if kind == "h" else 9)
        if kind == "h":
            y -= 6
        if isinstance(text, list):
            _scripts(c, x, y, text)
        else:
            c.drawString(x, y, text)
        y -= 16 if kind == "h" else 12
    return y


def _scripts(c, x: float, y: float, parts) -> None:
    """A line with superscripts and subscripts, set smaller and raised or lowered as a typesetter does."""
    for text, kind in parts:
        size = 6 if kind in ("sup", "sub") else 9
        rise = {"sup": 3.5, "sub": -2}.get(kind, 0)
        font = "VeraBd" if kind == "bold" else "Vera"
        c.setFont(font, size)
        c.drawString(x, y + rise, text)
        x += pdfmetrics.stringWidth(text, font, size)


def _chart(c, x: float, y: float) -> None:
    """A drawn bar chart in its frame, with its axis labels: figure text, not the paper's sentences."""
    c.rect(x - 15, y - 30, 190, 125, fill=0)
    c.setFont("Vera", 7)
    for k, h in enumerate([20, 45, 70, 60, 35, 25, 50, 40]):
        c.rect(x + 20 + 18 * k, y, 12, h, fill=1)
        c.drawString(x + 20 + 18 * k, y - 10, f"{400 + 50 * k}")
    c.drawString(x + 50, y - 22, "Wavelength (nm)")
    c.drawString(x - 10, y + 80, "Intensity (a.u.)")


def _scan(c) -> None:
    """A page that is an image and nothing else, as a scanner makes it."""
    width, height = A4
    image = Image.new("L", (120, 170), 200)
    ImageDraw.Draw(image).rectangle([10, 10, 110, 40], fill=40)  # a "line of print" in the picture
    c.drawImage(ImageReader(image), 40, 40, width - 80, height - 80)
    c.showPage()


def make_paper_pdf(
    path: Path,
    scanned_pages: int = 0,
    batch: str = "a week",
    doi: str = DOI,
    cover_scan: bool = False,
    methods_last: bool = False,
    bmc: bool = False,
    ocr: bool = False,
) -> Path:
    """``cover_scan``: a first page without a text layer (a scanned cover sheet) before the paper;
    ``methods_last``: a Methods section after the reference list, as some journals print it; ``bmc``: as
    BioMed Central sets it, the DOI only on the last page under "Cite this article as", the reference list
    headed in body type run into its first entry, and a paragraph with a run-in bold heading; ``ocr``: the
    running head misread differently on every page, as OCR reads it."""
    pages = 3 + scanned_pages + cover_scan
    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setTitle("doi:" + doi)  # a metadata title that is not a title
    c.setAuthor("Ada Quill; Bo Renner")
    if cover_scan:
        _scan(c)
    # page 1: title, authors, abstract across the page, then two columns
    _furniture(c, 1, pages, None if bmc else doi, ocr)
    c.setFont("VeraBd", 17)
    c.drawString(56, height - 90, TITLE[0])
    c.drawString(56, height - 112, TITLE[1])
    c.setFont("Vera", 10)
    c.drawString(56, height - 140, "Ada Quill, Bo Renner")
    c.setFont("VeraBd", 11)
    c.drawString(56, height - 170, "Abstract")
    c.setFont("Vera", 9)
    for k, line in enumerate(
        [
            "Sputtered zinc oxide films lose up to 0.2 eV of band gap as oxygen vacancies",
            "accumulate; annealing in vacuum restores a controlled vacancy density.",
        ]
    ):
        c.drawString(56, height - 186 - 12 * k, line)
    _column(c, 56, height - 230, LEFT)
    _column(c, width / 2 + 10, height - 230, RIGHT)
    c.setFont("Vera", 7)  # page 1's own furniture: a footnote and the licence, set small above the footer
    c.drawString(56, 70, "\u2217 Corresponding author: ada.quill@example.org")
    c.drawString(56, 61, "\u00a9 2031 The Authors. Published under a CC BY 4.0 licence.")
    c.drawString(62, 100, "Both authors contributed equally to this work.")
    c.setFont("Vera", 5)
    c.drawString(56, 104, "\u2020")  # its mark raised, apart from its text
    c.showPage()
    # page 2: two columns of body text
    _furniture(c, 2, pages, ocr=ocr)
    body = [("p", f"Sample {k} kept its gap within 0.01 eV over {batch}.") for k in range(1, 9)]
    if bmc:
        body[0] = ("p", [("Drift.", "bold"), (" Sample 1 drifted by 0.02 eV.", "")])
    _column(c, 56, height - 80, [("h", "5. Stability")] + body[:4])
    y = _column(c, width / 2 + 10, height - 80, body[4:])
    _chart(c, 70, 300)
    c.setFont("Vera", 8)  # a table without a caption: its rows are not text
    for k, row in enumerate(["Sample Gap (eV) Shift (eV)", "1 3.30 0.01", "2 3.21 0.02", "3 3.12 0.01"]):
        c.drawString(width / 2 + 10, y - 30 - 11 * k, row)
    c.showPage()
    # scanned pages: drawn shapes, no text
    for _ in range(scanned_pages):
        _scan(c)
    # last page: the reference list
    _furniture(c, pages, pages, ocr=ocr)
    y = height - 80 if bmc else _column(c, 56, height - 80, [("h", "References")])
    c.setFont("Vera", 8)
    for k, ref in enumerate(REFERENCES):
        c.drawString(56, y, ("References " + ref.replace("[1]", "1.")) if bmc and k == 0 else ref)
        y -= 11
    if bmc:
        c.setFont("Vera", 7)
        c.drawString(56, 70, f"doi:{doi}")
        c.drawString(56, 61, "Cite this article as: Quill and Renner: Oxygen vacancies control the band gap.")
    if methods_last:  # Methods set in smaller type, a paragraph opening with an isotope, then an appendix
        y = _column(c, 56, y - 10, [("h", "Methods"), ("p", "Targets were cleaned in argon plasma for 10 min first.")])
        c.setFont("Vera", 7.5)
        c.drawString(56, y - 4, "13C NMR spectra of the precursors were recorded at 100 MHz in chloroform.")
        c.drawString(56, y - 13, "Figure 3 (a) shows the same trend for the thicker films we grew later.")
        _column(c, 56, y - 30, [("h", "Appendix B"), ("p", "The fit used a single Tauc line for all films.")])
    c.showPage()
    c.save()
    return path


def make_unmapped_font_pdf(path: Path, unmapped_body: bool = False) -> Path:
    """A one-page PDF written by hand: a CID font with no ToUnicode map, as subset fonts without one are, so
    that text extractors print its glyphs as "(cid:NN)". ``unmapped_body``: the body is set in it too."""
    plain = [
        b"The band gap of the films is wide and stable in air over months",
        b"of storage; the value from the fit agrees with the optical one",
    ]
    content = (
        b"BT /F1 11 Tf 72 720 Td "
        + b" ".join(b"(%s) Tj 0 -14 Td" % line for line in plain)
        + b" /F2 11 Tf <000D00420043> Tj /F1 11 Tf "
        b"( matters for the devices.) Tj ET"
    )
    if unmapped_body:
        content = b"BT /F2 11 Tf 72 720 Td <" + b"0042" * 120 + b"> Tj ET"
    return hand_pdf(
        path,
        content,
        [
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            b"<< /Type /Font /Subtype /Type0 /BaseFont /SubsetFont /Encoding /Identity-H /DescendantFonts [7 0 R] >>",
        ],
        [
            b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /SubsetFont /CIDSystemInfo << /Registry (Adobe) "
            b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 600 >>",
            b"<< /Type /FontDescriptor /FontName /SubsetFont /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 "
            b"/Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>",
        ],
    )


def hand_pdf(path: Path, content: bytes, fonts: list[bytes], extra: tuple | list = ()) -> Path:
    """A one-page PDF written object by object: ``content`` the page's content stream, ``fonts`` its fonts
    (/F1, /F2, ... objects 5, 6, ...), ``extra`` the objects after them that the fonts refer to."""
    names = b" ".join(b"/F%d %d 0 R" % (k, k + 4) for k in range(1, len(fonts) + 1))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << "
        + names
        + b" >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        *fonts,
        *extra,
    ]
    out, offsets = b"%PDF-1.4\n", []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(out)
    return path
