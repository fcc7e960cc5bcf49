"""The PDF reader on failure classes met on held-out papers, each as a drawn reduction (own text), read with the
default backend ("auto": the layout model where PyMuPDF is installed); and the backend choice without PyMuPDF."""

import builtins
import dataclasses
import importlib.util
import re
from pathlib import Path

import pypdf
import pytest
import reportlab
from pdf_pages import HEIGHT, LEFT, RIGHT, body_lines, column, draw
from reportlab.lib.pagesizes import LETTER
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas
from test_pdf_classes import _read

from sciqag_dataset.builders.ingest import pdf, pdf_backends, pdf_columns, pdf_mupdf, pdf_scripts
from sciqag_dataset.builders.ingest.errors import IngestError
from sciqag_dataset.builders.ingest.pdf_blocks import is_caption, is_heading, line_blocks
from sciqag_dataset.builders.ingest.pdf_furniture import furniture_block
from sciqag_dataset.builders.ingest.pdf_line import Block, Line
from sciqag_dataset.builders.ingest.pdf_title import opening_block, plausible_title, title_of

DOI = "10.5555/imag.2031.077"
TITLE = "Pebbles Settle Where Lakes Are Quiet"


def _drawn_paper(path, items=None, *, title=TITLE, body=(), meta_title=None, more=None):
    """A one-page paper drawn on a reportlab canvas, for what ``draw`` cannot set: ``items`` as ``draw``'s rows
    (x, y from the top, font, size, text), by default ``title`` in 16 pt bold at the top and ``body``'s lines in
    10 pt under it; ``meta_title`` the PDF's Title metadata; ``more(canvas)`` draws on the page what a test is
    about (links, text with its own word spacing)."""
    c = canvas.Canvas(str(path), pagesize=LETTER)
    if meta_title:
        c.setTitle(meta_title)
    if items is None:
        items = [(LEFT, 70, "Times-Bold", 16, title), *column(LEFT, 110, list(body), 10, "Times-Roman")]
    for x, y, font, size, text in items:
        c.setFont(font, size)
        c.drawString(x, HEIGHT - y, text)
    if more:
        more(c)
    c.showPage()
    c.save()
    return path


def test_auto_is_pdfplumber_without_pymupdf(monkeypatch):
    """auto reads with pdfplumber when PyMuPDF is not installed, and with layout when it is."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pymupdf" else real(name, *a))
    assert pdf_backends.resolve("auto") == "pdfplumber"
    assert pdf_backends.resolve(None) == "pdfplumber"
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: object() if n == "pymupdf" else real(n, *a))
    assert pdf_backends.resolve("auto") == "layout"
    with pytest.raises(IngestError, match="unknown PDF backend 'mupdf'"):
        pdf_backends.resolve("mupdf")


def test_the_layout_backend_without_pymupdf_names_the_extra(monkeypatch):
    """pdf_backend: layout with PyMuPDF missing is a one-line error naming the 'layout' extra."""
    real = builtins.__import__

    def no_pymupdf(name, *a, **k):
        if name.startswith("pymupdf"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pymupdf)
    with pytest.raises(IngestError) as err:
        pdf_mupdf._pymupdf()
    assert "[layout]" in str(err.value) and "\n" not in str(err.value)


def test_a_journal_masthead_larger_than_the_title_is_not_the_title(tmp_path):
    """A 28 pt journal name above a 17 pt title: the title is the 17 pt line."""
    page = [
        (LEFT, 70, "Times-Roman", 28, "Journal of Imaginary Statistics"),
        (LEFT, 130, "Times-Bold", 17, "Sampling Quiet Lakes for Drifting Pebbles"),
        (LEFT, 160, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 190, body_lines(40), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "masthead.pdf", [page]))
    assert rec["title"] == "Sampling Quiet Lakes for Drifting Pebbles"


def test_a_section_label_in_regular_weight_above_a_bold_title_is_not_the_title(tmp_path):
    """ "Research Article" at the title's size, not bold, above the bold title (Hindawi, Birkhäuser)."""
    page = [
        (LEFT, 70, "Times-Roman", 18, "Research Article"),
        (LEFT, 96, "Times-Bold", 18, "Counting Pebbles in Quiet Lakes"),
        (LEFT, 130, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 160, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 180, body_lines(40, 3), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "label.pdf", [page]))
    assert rec["title"] == "Counting Pebbles in Quiet Lakes"


def test_the_doi_printed_alone_at_the_foot_of_the_first_page_is_found(tmp_path):
    """A DOI on a line of its own under the first page's right column, after the body (JCAP's first page)."""
    page = [
        (LEFT, 70, "Times-Bold", 16, "Drift of Pebbles in Quiet Lakes"),
        (LEFT, 100, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 120, body_lines(44, 4, 6), 10, "Times-Roman"),
        *column(RIGHT, 120, body_lines(44, 5, 6), 10, "Times-Roman"),
        (RIGHT, 700, "Times-Roman", 9, f"doi:{DOI}"),
    ]
    page2 = [*column(LEFT, 60, body_lines(40, 6, 6), 10, "Times-Roman")]
    rec = _read(draw(tmp_path / "doi.pdf", [page, page2]))
    assert rec["metadata"]["doi"] == DOI


def test_a_reference_list_under_a_roman_numbered_heading_is_dropped(tmp_path):
    """IEEE's "VII. REFERENCES": the entries are not text, and the heading is no section."""
    entries = [
        f"[{k}] Writer{k} A, Other B, Pebbles and lakes, part {k}, In Proc. Quiet Lakes, 20{10 + k}."
        for k in range(1, 6)
    ]
    page = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Counted Twice in Quiet Lakes"),
        (LEFT, 100, "Times-Bold", 10, "I. INTRODUCTION"),
        *column(LEFT, 118, body_lines(44, 7), 10, "Times-Roman"),
    ]
    page2 = [
        *column(LEFT, 60, body_lines(30, 11), 10, "Times-Roman"),
        (LEFT, 440, "Times-Bold", 10, "VII. REFERENCES"),
        *column(LEFT, 458, entries, 8, "Times-Roman", 10),
    ]
    rec = _read(draw(tmp_path / "ieee.pdf", [page, page2]))
    assert "Writer3" not in rec["text"] and rec["ingest"]["references_dropped"] >= 5
    assert all("REFERENCES" not in s["heading"] for s in rec["sections"])


def test_an_abstract_set_small_under_a_licence_block_is_kept(tmp_path):
    """The abstract right under the front page's licence block, in the same small type and no heading."""
    licence = [
        "Copyright 2031 Ada Quill et al. This is an open access article distributed under the Creative",
        "Commons Attribution License, which permits unrestricted use, distribution, and reproduction.",
    ]
    abstract = body_lines(8, 8, 12)
    page = [
        (LEFT, 70, "Times-Bold", 17, "Pebbles That Drift Under Quiet Lakes"),
        (LEFT, 100, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, licence, 9, "Times-Roman", 11),
        *column(LEFT, 156, abstract, 9, "Times-Roman", 11),
        (LEFT, 260, "Times-Bold", 12, "1. Introduction"),
        *column(LEFT, 280, body_lines(36, 9), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "licence.pdf", [page]))
    assert " ".join(abstract[:3]) in rec["text"]
    assert "open access article" not in rec["text"]


def test_a_drop_capital_is_joined_to_its_word(tmp_path):
    """A 40 pt capital beside the first three lines of a paragraph: the paragraph starts with the whole word,
    and the capital is neither the title nor a word of its own."""
    lines = body_lines(30, 10)
    page = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 100, "Times-Bold", 11, "1. Introduction"),
        (LEFT, 150, "Times-Roman", 40, "T"),
        (LEFT + 30, 122, "Times-Roman", 10, "he " + lines[0]),
        *column(LEFT + 30, 134.5, lines[1:3], 10, "Times-Roman"),
        *column(LEFT, 159.5, lines[3:], 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "dropcap.pdf", [page]))
    assert rec["title"] == "Pebbles Settle Where Lakes Are Quiet"
    assert ("The " + lines[0]) in rec["text"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_line_numbers_in_the_margin_are_not_text_and_leave_the_references_found(tmp_path, monkeypatch, backend):
    """A preprint with its lines numbered in the left margin (bioRxiv, a journal's review copy): the numbers are
    not text (the layout model read the numbered lines as list items), and the reference list is still found."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(80, 21, 11)
    refs = [
        f"{k}. Quill A, Renner B. Drifting pebbles in lake {k}. J Imag Lakes. 20{10 + k};{k}:1-9." for k in range(1, 9)
    ]
    body1 = [
        (LEFT, 125, "Times-Bold", 11, "Abstract"),
        *column(LEFT, 140, lines[:8], 10, "Times-Roman"),
        (LEFT, 250, "Times-Bold", 11, "Introduction"),
        *column(LEFT, 265, lines[8:44], 10, "Times-Roman"),
    ]
    body2 = [
        *column(LEFT, 60, lines[44:], 10, "Times-Roman"),
        (LEFT, 520, "Times-Bold", 11, "References"),
        *column(LEFT, 535, refs, 9, "Times-Roman"),
    ]

    def numbered(items, start):
        return [*items, *((30, it[1], "Helvetica", 7, str(start + k)) for k, it in enumerate(items))]

    front = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
    ]
    rec = _read(draw(tmp_path / "numbered.pdf", [front + numbered(body1, 1), numbered(body2, len(body1) + 1)]))
    assert [s["heading"] for s in rec["sections"]] == ["Abstract", "Introduction"]
    assert all(ln in rec["text"] for ln in lines)
    assert not re.search(r"(?<![\w.;:-])\d{1,3}(?![\w.;:-])", rec["text"])  # no number standing alone
    assert rec["ingest"]["references_dropped"] == 8 and "Drifting pebbles" not in rec["text"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_sidebar_of_declarations_and_a_check_for_updates_badge_are_not_text(tmp_path, monkeypatch, backend):
    """A front page as PNAS sets it: a "Significance" box and, under it in the left column, a sidebar of small
    declarations (contributions, interests, "This article is a ... Direct Submission", correspondence); the
    abstract and body on the right; a "Check for updates" badge in two lines beside the title. The badge and
    the declarations are not the paper's text (nor a heading); the box, the abstract and the body are."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(164, 31, 7)
    notes = [
        "Author contributions: A.Q. designed",
        "research; B.R. counted pebbles.",
        "The authors declare no competing",
        "interest.",
        "This article is a Lakes Direct",
        "Submission.",
        "To whom correspondence may be",
        "addressed. Email: ada@lakes.example",
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 18, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (RIGHT - 40, 60, "Helvetica", 6, "Check for"),
        (RIGHT - 40, 67, "Helvetica", 6, "updates"),
        (LEFT, 130, "Times-Bold", 9, "Significance"),
        *column(LEFT, 142, lines[:10], 8, "Helvetica", 10),
        *column(LEFT, 260, notes, 6.5, "Helvetica", 8),
        (RIGHT, 130, "Times-Bold", 9, "Abstract"),
        *column(RIGHT, 142, lines[10:20], 9, "Times-Roman", 11),
        (RIGHT, 270, "Times-Bold", 11, "Introduction"),
        *column(RIGHT, 285, lines[20:56], 10, "Times-Roman"),
    ]
    page2 = [*column(LEFT, 60, lines[56:110], 10, "Times-Roman"), *column(RIGHT, 60, lines[110:], 10, "Times-Roman")]
    rec = _read(draw(tmp_path / "sidebar.pdf", [page1, page2]))
    assert [s["heading"] for s in rec["sections"]] == ["Significance", "Abstract", "Introduction"]
    assert all(ln in rec["text"] for ln in lines)
    assert not [n for n in notes if n in rec["text"]]
    assert "updates" not in rec["text"] and "Check for" not in rec["text"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_only_in_the_first_pages_links_is_found(tmp_path, monkeypatch, backend):
    """No DOI printed: the Crossmark badge's link carries the paper's (over a cited work's doi.org link on the same
    page); a doi.org link without the badge may be a cited work's or a dataset's, and is not taken."""
    monkeypatch.setattr(pdf, "BACKEND", backend)

    def paper(name, uris):
        def links(c):
            for k, uri in enumerate(uris):
                c.linkURL(uri, (LEFT + 40 * k, HEIGHT - 120, LEFT + 40 * k + 30, HEIGHT - 100), relative=0)

        return _read(_drawn_paper(tmp_path / name, body=body_lines(50, 41), more=links))["metadata"]["doi"]

    cited = "https://doi.org/10.5555/cited.2020.001"
    assert paper("badge.pdf", [cited, f"https://crossmark.crossref.org/dialog/?doi={DOI}&domain=pdf"]) == DOI
    assert paper("one.pdf", [f"https://doi.org/{DOI}"]) is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_article_info_box_beside_the_abstract_is_split_from_it(tmp_path, monkeypatch, backend):
    """Elsevier's front box: "a r t i c l e  i n f o" over a narrow column of history and keywords, "a b s t r a c
    t" over the abstract beside it, row by row at the same baselines (a layout model calls the box a table). The
    abstract is the Abstract section, whole; the history, keywords and the box's copyright line are not text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(140, 61, 8)
    info = ["Article history:", "Received 11 February 2031", "Accepted 4 August 2031", "Keywords:", "Pebble drift"]
    abstract = body_lines(9, 62, 12)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 130, "Times-Roman", 9, "a r t i c l e   i n f o"),
        (200, 130, "Times-Roman", 9, "a b s t r a c t"),
        *column(LEFT, 150, info, 7, "Times-Roman", 9.5),
        *column(200, 150, abstract, 7.5, "Times-Roman", 9.5),
        (420, 150 + 9.5 * 9, "Times-Roman", 7, "© 2031 Imaginary Press. All rights reserved."),
        (LEFT, 270, "Times-Bold", 9, "1. Introduction"),
        *column(LEFT, 285, lines[:36], 8, "Times-Roman", 10),
        *column(RIGHT, 285, lines[36:72], 8, "Times-Roman", 10),
    ]
    page2 = [
        *column(LEFT, 60, lines[72:106], 8, "Times-Roman", 10),
        *column(RIGHT, 60, lines[106:], 8, "Times-Roman", 10),
    ]
    rec = _read(draw(tmp_path / "info_box.pdf", [page1, page2]))
    assert rec["sections"][0]["heading"] == "Abstract" and rec["sections"][1]["heading"] == "Introduction"
    assert rec["sections"][0]["text"] == " ".join(abstract)
    assert not [x for x in info if x in rec["text"]] and "rights reserved" not in rec["text"]
    assert all(ln in rec["text"] for ln in lines)


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_banner_over_the_title_gives_way_to_the_title_the_metadata_names(tmp_path, monkeypatch, backend):
    """A journal's banner in larger type than the title ("Chemical Science", an MDPI logo's "future internet"):
    the PDF's Title metadata, printed on the page, says which lines are the title."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    title = "Counting Quiet Pebbles Across Two Winters"
    page = [
        (LEFT, 60, "Helvetica", 26, "Lake Letters"),
        (LEFT, 120, "Times-Bold", 16, title),
        (LEFT, 145, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 180, body_lines(40, 71), 10, "Times-Roman"),
    ]
    assert _read(_drawn_paper(tmp_path / "banner.pdf", page, meta_title=title))["title"] == title


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_article_type_larger_than_the_title_is_not_the_title(tmp_path, monkeypatch, backend):
    """ "Review" in 24 pt at the top right, the 20 pt bold title under it (Annals of Internal Medicine)."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (480, 40, "Times-Roman", 24, "Review"),
        (LEFT, 80, "Times-Bold", 20, "Systematic Review: Pebble Counts in"),
        (LEFT, 102, "Times-Bold", 20, "Quiet Lakes"),
        (LEFT, 130, "Times-Roman", 8, "Ada Quill, MD; Bo Renner, MS"),
        *column(LEFT, 160, body_lines(40, 72), 9, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "review.pdf", [page]))["title"] == "Systematic Review: Pebble Counts in Quiet Lakes"


def _line(text, top, kind="", box=-1, size=10.0, page=1):
    words = [
        {"text": w, "x0": 50 + 30 * k, "x1": 75 + 30 * k, "size": size, "fontname": "Times-Roman"}
        for k, w in enumerate(text.split())
    ]
    return Line(text, size, False, top, top + size, 50, page, 0, words, kind, box)


def _with_text(lines, top, lead, box, size, n=20):
    """``lines`` over ``n`` lines of the body's text from ``top``, one every ``lead`` points, in one block."""
    text = "pebbles settle in quiet lakes when the water rests"
    return [*lines, *[_line(text, top + lead * k, "text", box, size) for k in range(n)]]


def test_table_blocks_holding_sentences_go_back_to_the_rules():
    """A layout model read a page of prose as tables (an Elsevier review, title and body alike): the page's table
    blocks are given back to the rules. A real table's rows of cells and numbers, and a lone sentence in one, stay
    tables."""
    prose = body_lines(12, 73, 9)
    page1 = [_line(t, 100 + 12 * k, "table", 1) for k, t in enumerate(prose[:6])]
    page1 += [_line(t, 200 + 12 * k, "table", 2) for k, t in enumerate(["Current approaches to", "lake pebbles"])]
    page2 = [_line(t, 100 + 12 * k, "text", 3, page=2) for k, t in enumerate(prose[6:])]
    page2 += [_line(t, 300 + 12 * k, "table", 4, page=2) for k, t in enumerate(["Site Depth Grain", "North 2.5 0.31"])]
    page2 += [_line("the cores were cut and weighed before drying overnight", 330, "table", 5, page=2)]
    lines = page1 + page2
    pdf._prose_in_tables(lines)
    assert all(ln.kind == "" and ln.box == -1 for ln in page1)  # the whole page, its short title block too
    assert [ln.kind for ln in lines if ln.page == 2 and ln.top >= 300] == ["table", "table", "table"]


def test_a_model_title_set_smaller_than_the_body_is_a_label_not_the_title():
    """The model's "title" block is one word in 7.5 pt ("Associate", an editor's line); the 16 pt run is the title."""
    first = [
        _line("Associate", 40, "title", 1, size=7.5),
        _line("Pebbles Settle Where", 80, "", -1, size=16),
        _line("Lakes Are Quiet", 100, "", -1, size=16),
        *(_line(t, 140 + 12 * k) for k, t in enumerate(body_lines(20, 74))),
    ]
    assert [ln.text for ln in title_of(first, first, first, 10.0)] == ["Pebbles Settle Where", "Lakes Are Quiet"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_in_a_url_of_the_first_pages_small_print_is_found(tmp_path, monkeypatch, backend):
    """The DOI only in a footnote at the foot of the first page's left column, inside a URL's path
    (".../cgi/doi/10..."), while the right column runs on below it (RNA's first page)."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(110, 75, 6)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:40], 9, "Times-Roman", 11),
        (LEFT, 600, "Times-Roman", 7, "Article published online ahead of print. Article and publication date are at"),
        (LEFT, 609, "Times-Roman", 7, f"http://www.lakesjournal.example/cgi/doi/{DOI}."),
        *column(RIGHT, 130, lines[40:95], 9, "Times-Roman", 11),
    ]
    page2 = [*column(LEFT, 60, lines[95:], 9, "Times-Roman", 11)]
    rec = _read(draw(tmp_path / "footnote_doi.pdf", [page1, page2]))
    assert rec["metadata"]["doi"] == DOI


def test_metadata_naming_only_the_titles_second_line_does_not_cut_the_title(tmp_path):
    """The metadata gives the subtitle alone ("Extracting Figures ..." under "Looking Beyond Text:"): no run of
    the page starts with it, so the title is the printed one, whole."""
    page = [
        (LEFT, 80, "Times-Bold", 16, "Beyond the Shore:"),
        (LEFT, 100, "Times-Bold", 16, "Counting Pebbles in Quiet Lakes"),
        (LEFT, 130, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 170, body_lines(40, 76), 10, "Times-Roman"),
    ]
    path = _drawn_paper(tmp_path / "subtitle.pdf", page, meta_title="Counting Pebbles in Quiet Lakes")
    assert _read(path)["title"] == "Beyond the Shore: Counting Pebbles in Quiet Lakes"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_words_a_narrow_space_apart_are_not_joined_as_a_script(tmp_path, monkeypatch, backend):
    """A justified line whose word spaces are squeezed to a point ("A value of P"): the words are not joined as if
    one were a script of the other ("Avalue")."""
    monkeypatch.setattr(pdf, "BACKEND", backend)

    def squeezed(c):
        for k, line in enumerate(body_lines(40, 77)):
            text = c.beginText(LEFT, HEIGHT - 110 - 12 * k)
            text.setFont("Times-Roman", 8)
            if k == 10:
                text.setWordSpace(-0.6)  # Times' space at 8 pt is 2 pt: 1.4 pt left
                line = "A value of P less than a tenth was taken as a change"
            text.textLine(line)
            c.drawText(text)

    assert "A value of P less than a tenth" in _read(_drawn_paper(tmp_path / "narrow.pdf", more=squeezed))["text"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_link_without_its_rectangle_loses_the_link_not_the_paper(tmp_path, monkeypatch, backend):
    """A damaged link annotation (no /Rect, which pdfplumber cannot read): the paper is read; the link is gone."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    uri = f"https://crossmark.crossref.org/dialog/?doi={DOI}"
    path = _drawn_paper(
        tmp_path / "drawn.pdf",
        body=body_lines(40, 78),
        more=lambda c: c.linkURL(uri, (LEFT, HEIGHT - 80, LEFT + 30, HEIGHT - 60)),
    )
    reader, writer = pypdf.PdfReader(path), pypdf.PdfWriter()
    writer.append(reader)
    for annot in writer.pages[0]["/Annots"]:
        del annot.get_object()[pypdf.generic.NameObject("/Rect")]
    with open(tmp_path / "damaged.pdf", "wb") as f:
        writer.write(f)
    rec = _read(tmp_path / "damaged.pdf")
    assert rec["title"] == "Pebbles Settle Where Lakes Are Quiet" and len(rec["text"].split()) > 300


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_datasets_doi_in_small_print_is_not_the_papers(tmp_path, monkeypatch, backend):
    """An 8 pt note under a table on the first page names a dataset's DOI: not the paper's (the small print is
    taken only where it says where the article is published)."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(60, 79, 8)
    page = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 110, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 130, lines[:20], 10, "Times-Roman"),
        (LEFT, 390, "Times-Roman", 8, "Counts deposited at https://doi.org/10.5281/zenodo.7654321 for reuse."),
        *column(LEFT, 410, lines[20:], 10, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "dataset.pdf", [page]))["metadata"]["doi"] is None


def test_a_bracketed_number_of_a_chemical_name_is_no_citation(tmp_path):
    """ "[60]Fullerene" in the title (confirmed by the metadata) and the body keeps its bracket; "[12]" after a word
    is a citation and goes."""
    title = "Functionalized [60]Fullerenes as Quiet Acceptors"
    lines = body_lines(40, 80)
    lines[5] = "the [60]fullerene cages settled as reported before [12] in the lakes"
    rec = _read(_drawn_paper(tmp_path / "fullerene.pdf", title=title, body=lines, meta_title=title))
    assert rec["title"] == title
    assert "the [60]fullerene cages settled as reported before in the lakes" in rec["text"]


def test_a_template_banner_in_the_metadata_is_not_the_title():
    """Metadata Title "Research Article" printed large above the title: the banner is still not the title."""
    first = [
        _line("Research Article", 40, size=18),
        _line("Pebbles Settle Where", 80, size=16),
        _line("Lakes Are Quiet", 100, size=16),
        *(_line(t, 140 + 12 * k) for k, t in enumerate(body_lines(20, 81))),
    ]
    got = title_of(first, first, first, 10.0, "Research Article")
    assert [ln.text for ln in got] == ["Pebbles Settle Where", "Lakes Are Quiet"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_title_word_broken_at_its_line_end_is_joined_as_the_body_spells_it(tmp_path, monkeypatch, backend):
    """A two-line title broken inside a word ("Pebblecar-" / "bonate"), the body spelling the word whole: the
    title has the word whole; a title's real hyphen at its line end ("Self-" / "sorted", hyphenated in the body)
    stays."""
    monkeypatch.setattr(pdf, "BACKEND", backend)

    def title_of_paper(name, head, tail, word):
        lines = body_lines(40, 82)
        lines[3] = f"the {word} grains were counted in each lake"
        lines[20] = f"every core held {word} grains under the silt"
        page = [
            (LEFT, 70, "Times-Bold", 18, head),
            (LEFT, 92, "Times-Bold", 18, tail),
            (LEFT, 125, "Times-Roman", 10, "Ada Quill and Bo Renner"),
            *column(LEFT, 160, lines, 10, "Times-Roman"),
        ]
        return _read(draw(tmp_path / name, [page]))["title"]

    got = title_of_paper("broken.pdf", "Quiet Lakes Hold Fine Pebblecar-", "bonate Grains", "pebblecarbonate")
    assert got == "Quiet Lakes Hold Fine Pebblecarbonate Grains"
    got = title_of_paper("hyphen.pdf", "Quiet Lakes Hold Fine Self-", "sorted Grains", "self-sorted")
    assert got == "Quiet Lakes Hold Fine Self-sorted Grains"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_mass_number_set_before_its_element_is_kept(tmp_path, monkeypatch, backend):
    """ "³¹P NMR" and "¹³C-labelled": a raised number before an element's symbol is the isotope's mass number, not a
    mark of the kind an affiliation or a footnote opens with ("¹Department", dropped)."""
    monkeypatch.setattr(pdf, "BACKEND", backend)

    def isotopes(c):
        for k, line in enumerate(body_lines(40, 77)):
            text = c.beginText(LEFT, HEIGHT - 110 - 12 * k)
            text.setFont("Times-Roman", 10)
            if k == 8:
                for words, rise in (("Ordering was followed by ", 0), ("31", 4), ("P NMR and by ", 0), ("13", 4)):
                    text.setFont("Times-Roman", 6 if rise else 10)
                    text.setRise(rise)
                    text.textOut(words)
                text.setFont("Times-Roman", 10)
                text.setRise(0)
                line = "C-labelled samples in every run."
            if k == 12:  # a note's number raised before an initial: "¹S. Writer", not a mass number
                for words, rise in (("As shown by ", 0), ("1", 4), ("S. Writer and colleagues the rate held.", 0)):
                    text.setFont("Times-Roman", 6 if rise else 10)
                    text.setRise(rise)
                    text.textOut(words)
                text.setFont("Times-Roman", 10)
                text.setRise(0)
                line = ""
            text.textLine(line)
            c.drawText(text)

    got = _read(_drawn_paper(tmp_path / "isotopes.pdf", more=isotopes))["text"]
    assert "followed by 31P NMR and by 13C-labelled samples" in got
    assert "As shown by S. Writer and colleagues" in got


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_preprint_stamp_running_its_doi_into_the_next_words_gives_the_doi_alone(tmp_path, monkeypatch, backend):
    """A preprint server's stamp set without a space after the DOI ("…123456.this version posted"): the DOI ends
    where "this version" begins."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    stamp = "preprint doi: https://doi.org/10.1101/2031.01.02.123456.this version posted January 4, 2031."
    path = _drawn_paper(
        tmp_path / "stamp.pdf",
        body=body_lines(40, 77),
        more=lambda c: (c.setFont("Helvetica", 6), c.drawString(LEFT, HEIGHT - 30, stamp)),
    )
    assert _read(path)["metadata"]["doi"] == "10.1101/2031.01.02.123456"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_broken_after_its_prefix_in_the_first_pages_foot_is_found_whole(tmp_path, monkeypatch, backend):
    """The first page's footnote ends a line with "DOI 10.5555/" and goes on with the rest of the DOI: one DOI."""
    monkeypatch.setattr(pdf, "BACKEND", backend)

    def foot(c):
        c.setFont("Times-Roman", 7)
        c.drawString(LEFT, 60, "Received, May 22, 2031. Published, Papers in Press, November 4, 2031, DOI 10.5555/")
        c.drawString(LEFT, 51, "jx.M800231-JX200 and available in full at the journal's site.")

    path = _drawn_paper(tmp_path / "foot.pdf", body=body_lines(40, 50), more=foot)
    assert _read(path)["metadata"]["doi"] == "10.5555/jx.M800231-JX200"


def test_an_abstract_the_model_reads_as_a_caption_is_the_abstract():
    """A boxed abstract set under a graphic ("ABSTRACT: ...", full width): the model calls the block a caption.
    It is the paper's abstract; a figure's caption, opening with its label, stays out of the text."""
    abstract = [
        "ABSTRACT: Pebbles on the beds of quiet lakes settle into layers sorted by size over decades,",
        *body_lines(5, 79),
    ]
    first = [
        _line("Pebbles Settle Where Lakes Are Quiet", 60, "title", 1, size=16),
        *(_line(t, 120 + 12 * k, "caption", 2) for k, t in enumerate(abstract)),
        *(_line(t, 220 + 12 * k, "text", 3) for k, t in enumerate(body_lines(12, 73))),
        _line("Figure 1. Layers of pebbles in a core taken from the north basin.", 400, "caption", 4),
        *(_line(t, 420 + 12 * k, "text", 5) for k, t in enumerate(body_lines(12, 75))),
    ]
    rec = pdf._paper([first], {})
    text = "\n".join(s[1] for s in rec["sections"])
    assert "Pebbles on the beds of quiet lakes settle into layers sorted by size" in text
    assert "Layers of pebbles in a core" not in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_abstract_set_smaller_on_a_first_page_of_front_matter_is_kept(tmp_path, monkeypatch, backend):
    """A preprint's first page holds the title, the authors at the body's size, then affiliations and the abstract
    set smaller; the body starts on page 2. The small lines under the authors are no page foot: the abstract is
    the paper's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    abstract = ["We report how pebbles settle in quiet lakes, sorted by size in layers over decades of calm."]
    abstract += body_lines(9, 81, 11)
    first = [
        (LEFT, 120, "Vera", 17, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 160, "Vera", 12, "Ana Writer, Ben Second, Cleo Third and Dan Fourth"),
        *column(LEFT, 185, ["Department of Geology, North University, Northtown", "Lake Institute, Southtown"]),
        (LEFT, 230, "VeraBd", 10, "Abstract."),
        *column(LEFT, 245, abstract),
        (LEFT, 400, "Vera", 10, "Keywords: pebbles, lakes"),
    ]
    second = [(LEFT, 70, "VeraBd", 12, "1. Introduction"), *column(LEFT, 90, body_lines(40, 82), 12, lead=14)]
    more = [column(LEFT, 70, body_lines(45, 83 + k), 12, lead=14) for k in range(2)]
    rec = _read(draw(tmp_path / "front.pdf", [first, second, *more]))
    assert "We report how pebbles settle in quiet lakes, sorted by size" in rec["text"]


_PAREN_ENTRIES = [
    "1) A. Writer, B. Second, and C. Third: J. Lake Sci. 12 (2008) 345.",
    "2) D. Fourth and E. Fifth: Sediment Res. 7 (2010) 12.",
    "3) F. Sixth: Quiet Waters (North Press, Northtown, 2004) p. 88.",
    "4) G. Seventh, H. Eighth, and I. Ninth: J. Lake Sci. 15 (2011) 901.",
    "5) J. Tenth: Phys. Pebbles 3 (2012) 45.",
]


def test_reference_entries_numbered_with_a_parenthesis_and_no_heading_are_dropped(tmp_path, monkeypatch):
    """A letter journal's reference list: no heading, entries "1) A. Writer and B. Second: J. Lake Sci. 12 (2008)
    345." set smaller after the acknowledgments. They are references, not text."""
    monkeypatch.setattr(pdf, "BACKEND", "pdfplumber")
    first = [(LEFT, 60, "VeraBd", 16, "Pebbles Settle Where Lakes Are Quiet"), *column(LEFT, 100, body_lines(50, 84))]
    last = [
        *column(LEFT, 60, body_lines(30, 85)),
        (LEFT, 460, "Vera", 10, "We thank the lake wardens for their help with the cores in every season."),
        *column(LEFT, 490, _PAREN_ENTRIES, 8, lead=11),
    ]
    text = _read(draw(tmp_path / "refs.pdf", [first, last]))["text"]
    assert "We thank the lake wardens" in text
    assert "Writer, B. Second" not in text and "Quiet Waters" not in text


def test_reference_entries_numbered_with_a_parenthesis_the_model_lists_are_dropped():
    """The same list as the layout model reads it: each entry a list item of its own, no heading over them."""
    body = [_line(t, 100 + 12 * k, "text", 1) for k, t in enumerate(body_lines(40, 86))]
    title = _line("Pebbles Settle Where Lakes Are Quiet", 60, "title", 0, size=16)
    last = [_line(t, 100 + 12 * k, "text", 2, page=2) for k, t in enumerate(body_lines(20, 87))]
    last += [_line(t, 400 + 12 * k, "list-item", 3 + k, size=8, page=2) for k, t in enumerate(_PAREN_ENTRIES)]
    text = "\n".join(s[1] for s in pdf._paper([[title, *body], last], {})["sections"])
    assert "Writer, B. Second" not in text and "Quiet Waters" not in text


def test_authors_set_larger_than_a_title_the_size_of_the_body_leave_the_title_whole(tmp_path):
    """A short note whose two-line bold title is set a little smaller than its authors' line and no larger than the
    body (a scanned journal's notes section): nothing stands out by size, and the title is the first block's
    lines, both of them."""
    lines = body_lines(120, 83, 7)
    page = [
        (LEFT, 47, "Times-Bold", 9.3, "Quiet Solitary Pebbles in the General"),
        (LEFT, 59, "Times-Bold", 9.3, "Fifth-order Shallow Lake Models"),
        (LEFT, 77, "Times-Bold", 9.8, "Ada Quill and Bo Renner"),
        (LEFT, 92, "Times-Roman", 8, "Department of Lakes, Imaginary University,"),
        (LEFT, 100, "Times-Roman", 8, "Shore Road 12, Lakeside"),
        (LEFT, 125, "Times-Roman", 8, "received December 15, 2031"),
        *column(LEFT, 145, body_lines(6, 84, 7), 8, "Times-Roman", 9),
        *column(LEFT, 215, lines[:42], 9.8, "Times-Roman", 12),
        *column(RIGHT, 47, lines[42:100], 9.8, "Times-Roman", 12),
    ]
    page2 = [*column(LEFT, 60, lines[100:], 9.8, "Times-Roman", 12)]
    rec = _read(draw(tmp_path / "note.pdf", [page, page2]))
    assert rec["title"] == "Quiet Solitary Pebbles in the General Fifth-order Shallow Lake Models"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_caption_whose_label_a_dash_follows_is_not_text(tmp_path, monkeypatch, backend):
    """ "Fig. 1 – General ...": a caption whose number a dash follows, in bold at the body's size under a figure
    (an Elsevier review), is a caption, not the body's paragraph; the text around it stays."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(90, 85, 8)
    caption = [
        "Fig. 1 – Pebble drift in a quiet lake over two winters. Dashed arrows show the way the",
        "grains moved. Source: counts of Quill (2029) and Renner et al. (2030).",
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 110, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 130, lines[:50], 10, "Times-Roman"),
    ]
    page2 = [
        (LEFT + 60, 60, "Helvetica", 7, "Pebble"),
        (LEFT + 200, 80, "Helvetica", 7, "Lake floor"),
        (LEFT + 120, 120, "Helvetica", 7, "Drift"),
        *column(LEFT + 30, 170, caption, 10, "Times-Bold"),
        *column(LEFT, 215, lines[50:], 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "dash_caption.pdf", [page1, page2]))
    assert "Pebble drift in a quiet lake" not in rec["text"] and "Quill (2029)" not in rec["text"]
    assert all(ln in rec["text"] for ln in lines)


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_words_set_a_gap_apart_without_a_space_character_are_not_run_together(tmp_path, monkeypatch, backend):
    """A page whose lines carry no space character: each line one TJ array, its words moved apart by 0.13 em
    (1.2 pt at 9 pt, a tight justified line's word space). The words stay apart ("we expressed", not
    "weexpressed")."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(40, 90)

    def spaced_by_gaps(c):
        for k, line in enumerate(lines):
            text = c.beginText(LEFT, HEIGHT - 110 - 11 * k)
            text.setFont("Times-Roman", 9)
            text._code.append("[" + " -130 ".join(f"({w})" for w in line.split()) + "] TJ")
            c.drawText(text)

    rec = _read(_drawn_paper(tmp_path / "gaps.pdf", [(LEFT, 70, "Times-Bold", 16, TITLE)], more=spaced_by_gaps))
    assert all(ln in rec["text"] for ln in lines)


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_soft_hyphens_are_not_text_and_join_the_word_they_break(tmp_path, monkeypatch, backend):
    """Soft hyphens (U+00AD, mapped by the font's ToUnicode) at a line end ("nitro\\u00ad" / "gen") and inside a
    line ("resis\\u00adtance"): no soft hyphen in the text, and each word whole."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(40, 91)
    lines[4] = "the thin films were annealed in dry nitro\u00ad"
    lines[5] = "gen before each sweep and their resis\u00adtance was logged"
    page = [(LEFT, 70, "VeraBd", 16, TITLE), *column(LEFT, 110, lines, 10, "Vera")]
    rec = _read(draw(tmp_path / "soft.pdf", [page]))
    assert "\u00ad" not in rec["text"]
    assert "in dry nitrogen before each sweep and their resistance was logged" in rec["text"]


_NO_CLIP_NOR_RENDER_MODE = pytest.mark.xfail(
    reason="hidden text: pdfminer's characters carry no clip path nor render mode", strict=True
)


@pytest.mark.parametrize("backend", ["auto", pytest.param("pdfplumber", marks=_NO_CLIP_NOR_RENDER_MODE)])
def test_a_second_copy_of_the_text_clipped_away_is_not_read(tmp_path, monkeypatch, backend):
    """Under the page's visible lines, other lines at the same places, drawn inside a 1 pt clip path (nothing of
    them shows): only the visible lines are the text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines, hidden = body_lines(40, 92), body_lines(40, 93)

    def clipped(c):
        c.saveState()
        path = c.beginPath()
        path.rect(0, 0, 1, 1)
        c.clipPath(path, stroke=0, fill=0)
        c.setFont("Times-Roman", 10)
        for k, line in enumerate(hidden):
            c.drawString(LEFT, HEIGHT - 110 - 12.5 * k, line)
        c.restoreState()

    page = [(LEFT, 70, "Times-Bold", 16, TITLE), *column(LEFT, 110, lines, 10, "Times-Roman")]
    rec = _read(_drawn_paper(tmp_path / "clipped.pdf", page, more=clipped))
    assert all(ln in rec["text"] for ln in lines)
    assert not any(ln in rec["text"] for ln in hidden)


@pytest.mark.parametrize("backend", ["auto", pytest.param("pdfplumber", marks=_NO_CLIP_NOR_RENDER_MODE)])
def test_text_in_invisible_render_mode_over_a_visible_page_is_not_read(tmp_path, monkeypatch, backend):
    """Over the page's visible lines, other lines at the same places in render mode 3 (neither filled nor
    stroked): only the visible lines are the text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines, hidden = body_lines(40, 94), body_lines(40, 95)

    def invisible(c):
        for k, line in enumerate(hidden):
            text = c.beginText(LEFT, HEIGHT - 110 - 12.5 * k)
            text.setFont("Times-Roman", 10)
            text.setTextRenderMode(3)
            text.textLine(line)
            c.drawText(text)

    page = [(LEFT, 70, "Times-Bold", 16, TITLE), *column(LEFT, 110, lines, 10, "Times-Roman")]
    rec = _read(_drawn_paper(tmp_path / "invisible.pdf", page, more=invisible))
    assert all(ln in rec["text"] for ln in lines)
    assert not any(ln in rec["text"] for ln in hidden)


def test_an_invisible_text_layer_alone_on_a_page_is_read(tmp_path):
    """A scan's OCR layer: the page's only text is in render mode 3, and it is the text."""
    lines = body_lines(40, 96)

    def ocr_layer(c):
        for k, line in enumerate([TITLE, "", *lines]):
            text = c.beginText(LEFT, HEIGHT - 70 - 12.5 * k)
            text.setFont("Times-Roman", 10)
            text.setTextRenderMode(3)
            text.textLine(line)
            c.drawText(text)

    rec = _read(_drawn_paper(tmp_path / "ocr.pdf", [], more=ocr_layer))
    assert all(ln in rec["text"] for ln in lines)


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_title_with_an_italic_name_set_off_its_baseline_keeps_its_word_order(tmp_path, monkeypatch, backend):
    """A two-line title whose italic species name sits 2 pt above the roman words of its line (a second font
    with its own metrics): the title reads in order, not the italic run and the word after it first."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    x1 = LEFT + stringWidth("Iron Loss in Lakes Where ", "Times-Bold", 16)
    x2 = x1 + stringWidth("Dreissena lacustris ", "Times-BoldItalic", 16)
    page = [
        (LEFT, 70, "Times-Bold", 16, "Iron Loss in Lakes Where"),
        (x1, 68, "Times-BoldItalic", 16, "Dreissena lacustris"),
        (x2, 70, "Times-Bold", 16, "Settles"),
        (LEFT, 90, "Times-Bold", 16, "on Quiet Shores"),
        (LEFT, 115, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 150, body_lines(40, 97), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "italic_title.pdf", [page]))
    assert rec["title"] == "Iron Loss in Lakes Where Dreissena lacustris Settles on Quiet Shores"


@pytest.mark.parametrize(
    "backend",
    [
        "auto",
        pytest.param(
            "pdfplumber",
            marks=pytest.mark.xfail(reason="an abstract merged row by row with a box beside it", strict=True),
        ),
    ],
)
def test_an_abstract_with_a_significance_box_beside_it_is_not_merged_with_it(tmp_path, monkeypatch, backend):
    """The abstract in wide lines across most of the page, a narrow "Significance" box at its right at the same
    baselines (the rows cross the page's middle, so no column split parts them): each reads whole."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(120, 97)
    abstract = body_lines(12, 98, 11)
    box = body_lines(12, 99, 4)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 130, "Times-Bold", 10, "Abstract"),
        *column(LEFT, 145, abstract, 9, "Times-Roman", 11),
        (430, 130, "Helvetica-Bold", 9, "Significance"),
        *column(430, 145, box, 7.5, "Helvetica", 11),
        (LEFT, 300, "Times-Bold", 11, "Introduction"),
        *column(LEFT, 315, lines[:30], 10, "Times-Roman", 12),
        *column(RIGHT, 315, lines[30:60], 10, "Times-Roman", 12),
    ]
    page2 = [
        *column(LEFT, 60, lines[60:90], 10, "Times-Roman", 12),
        *column(RIGHT, 60, lines[90:], 10, "Times-Roman", 12),
    ]
    rec = _read(draw(tmp_path / "significance.pdf", [page1, page2]))
    assert " ".join(abstract) in rec["text"] and " ".join(box) in rec["text"]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_repositorys_cover_page_does_not_title_the_paper(tmp_path, monkeypatch, backend):
    """A repository's cover page before the paper (eScholarship's): the repository's name in 20 pt, then
    "Title", "Permalink", "Journal", "Authors" over their values in 11 pt. The title is the paper's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    title = "Counting Pebbles That Drift Under Quiet Lakes"
    cover = [
        (LEFT, 60, "Helvetica-Bold", 20, "UC Lakeside"),
        (LEFT, 85, "Helvetica", 12, "UC Lakeside Previously Published Works"),
        (LEFT, 130, "Helvetica-Bold", 11, "Title"),
        (LEFT, 145, "Helvetica", 11, title),
        (LEFT, 175, "Helvetica-Bold", 11, "Permalink"),
        (LEFT, 190, "Helvetica", 11, "https://repository.example.org/uc/item/4k7q2x9z"),
        (LEFT, 220, "Helvetica-Bold", 11, "Journal"),
        (LEFT, 235, "Helvetica", 11, "Journal of Imaginary Lakes, 12(3)"),
        (LEFT, 265, "Helvetica-Bold", 11, "Authors"),
        (LEFT, 280, "Helvetica", 11, "Quill, Ada; Renner, Bo"),
        (LEFT, 310, "Helvetica-Bold", 11, "Publication Date"),
        (LEFT, 325, "Helvetica", 11, "2031-04-02"),
        (LEFT, 700, "Helvetica", 9, "Peer reviewed"),
        (LEFT, 740, "Helvetica", 12, "repository.example.org"),
        (LEFT, 755, "Helvetica", 9, "Powered by the Lakeside Digital Library"),
    ]
    page = [
        (LEFT, 70, "Times-Bold", 16, title),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, body_lines(48, 100), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "cover.pdf", [cover, page, column(LEFT, 60, body_lines(48, 101), 10, "Times-Roman")]))
    assert rec["title"] == title


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_theses_university_on_its_title_page_is_not_the_title(tmp_path, monkeypatch, backend):
    """A dissertation's title page: the university's name in capitals, 14 pt, over the title in 12 pt and the
    "A dissertation submitted ..." lines. The title is the dissertation's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    title_page = [
        (150, 100, "Times-Roman", 14, "UNIVERSITY OF IMAGINARY LAKES"),
        (160, 160, "Times-Roman", 12, "Counting Pebbles That Drift Under Quiet Lakes"),
        (200, 220, "Times-Roman", 12, "A dissertation submitted in partial satisfaction of the"),
        (200, 235, "Times-Roman", 12, "requirements for the degree Doctor of Philosophy"),
        (280, 265, "Times-Roman", 12, "in"),
        (250, 295, "Times-Roman", 12, "Earth Sciences"),
        (280, 325, "Times-Roman", 12, "by"),
        (260, 355, "Times-Roman", 12, "Ada Quill"),
        (LEFT, 420, "Times-Roman", 12, "Committee in charge:"),
        (LEFT + 30, 435, "Times-Roman", 12, "Professor Bo Renner, Chair"),
        (LEFT + 30, 450, "Times-Roman", 12, "Professor Cy Writer"),
        (280, 520, "Times-Roman", 12, "2031"),
    ]
    pages = [title_page] + [column(LEFT, 70, body_lines(50, 102 + k), 12, "Times-Roman", 14) for k in range(3)]
    rec = _read(draw(tmp_path / "thesis.pdf", pages))
    assert rec["title"] == "Counting Pebbles That Drift Under Quiet Lakes"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_printed_only_at_the_foot_of_the_last_page_is_found(tmp_path, monkeypatch, backend):
    """The paper's DOI in 8 pt at the foot of its last page (the fourth), set apart below the text, nowhere else:
    it is the paper's DOI. A reference entry's DOI on the last line of that page, running on from its entry, is
    not."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(200, 111)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:50], 10, "Times-Roman"),
    ]
    later = [column(LEFT, 60, lines[k : k + 50], 10, "Times-Roman") for k in (50, 100, 150)]
    foot = [*later[-1], (LEFT, 720, "Times-Roman", 8, f"doi:{DOI}")]
    assert _read(draw(tmp_path / "doi_last.pdf", [page1, *later[:-1], foot]))["metadata"]["doi"] == DOI
    entry = [
        *later[-1][:44],
        (LEFT, 620, "Times-Bold", 11, "References"),
        (
            LEFT,
            640,
            "Times-Roman",
            8,
            "1. Quill A, Renner B. Drifting pebbles in quiet lakes. J Imag Lakes. 2030;3:1-9.",
        ),
        (LEFT, 650, "Times-Roman", 8, "doi:10.5555/cited.2030.001"),
    ]
    assert _read(draw(tmp_path / "entry_last.pdf", [page1, *later[:-1], entry]))["metadata"]["doi"] is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_broken_in_the_papers_history_at_the_body_size_is_found(tmp_path, monkeypatch, backend):
    """An author manuscript's first page prints its history at the foot of the left column, at the body's size,
    the DOI broken after its prefix ("... DOI 10.5555/" over the rest): the paper's DOI. The same page without the
    history, a cited DOI in its text, gives none."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    prefix, rest = DOI.split("/")
    lines = body_lines(140, 121, 7)
    history = [
        "Received, May 22, 2031, and in revised form, October 7, 2031",
        f"Published, Imag Papers in Press, November 4, 2031, DOI {prefix}/",
        rest,
    ]

    def paper(name, foot):
        page1 = [
            (LEFT, 70, "Times-Bold", 16, TITLE),
            (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
            *column(LEFT, 130, lines[:40] + foot, 8, "Times-Roman", 10),
            *column(RIGHT, 130, lines[40:85], 8, "Times-Roman", 10),
        ]
        page2 = [*column(LEFT, 60, lines[85:140], 8, "Times-Roman", 10)]
        return _read(draw(tmp_path / name, [page1, page2]))["metadata"]["doi"]

    assert paper("history.pdf", history) == DOI
    assert paper("cited.pdf", ["as the survey of pebbles showed,", "see 10.5555/cited.2030.001 for the data"]) is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_cited_works_publication_date_in_a_reference_entry_gives_no_doi(tmp_path, monkeypatch, backend):
    """A preprint with no DOI of its own cites a work "Published online March 3, 2029" with its DOI, the entry's
    second line opening with the date: the cited work's DOI is not the paper's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(120, 151, 6)
    entries = [
        "1. Quill A, Renner B. Drifting pebbles in quiet lakes. J Imag Lakes. 2028;3:1-9.",
        "2. Moss C. Sand on the shore. Imag Shore Rev. 2027;12:40-51.",
        "3. Renner B, Quill A. Pebbles at rest. Imag Geol. 2029;8:77-80.",
        "Published online March 3, 2029. doi:10.5555/cited.2029.003",
        "4. Fenn D. Lakes without wind. J Imag Lakes. 2026;1:5-6.",
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:50], 10, "Times-Roman"),
    ]
    page2 = [
        *column(LEFT, 60, lines[50:90], 10, "Times-Roman"),
        (LEFT, 580, "Times-Bold", 11, "References"),
        *column(LEFT, 600, entries, 8, "Times-Roman", 10),
    ]
    assert _read(draw(tmp_path / "preprint.pdf", [page1, page2]))["metadata"]["doi"] is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_sentence_wrapping_to_a_publication_date_gives_no_doi(tmp_path, monkeypatch, backend):
    """A preprint with no DOI of its own: a sentence of its body wraps to a line "published on March 3, 2029 ..."
    over a cited DOI. That date is no history of the paper, and the DOI not the paper's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(120, 151, 8)
    sentence = [
        "The counts follow the lake survey protocol, first",
        "published on March 3, 2029 in the survey's report",
        "(doi:10.5555/cited.2029.003), which we adopt here.",
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 125, "Times-Bold", 11, "1 Introduction"),
        *column(LEFT, 145, lines[:40], 10, "Times-Roman"),
    ]
    page2 = [*column(LEFT, 60, lines[40:60] + sentence + lines[60:90], 10, "Times-Roman")]
    page3 = [*column(LEFT, 60, lines[90:120], 10, "Times-Roman")]
    assert _read(draw(tmp_path / "preprint.pdf", [page1, page2, page3]))["metadata"]["doi"] is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_under_the_history_at_the_end_of_a_report_is_found(tmp_path, monkeypatch, backend):
    """A report prints its DOI only at its end, under its dates ("10 April 2031; accepted 2 July 2031") in the
    small type of its back matter: the paper's DOI."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(200, 131, 6)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:50], 10, "Times-Roman"),
    ]
    page2 = [*column(LEFT, 60, lines[50:100], 10, "Times-Roman")]
    back = ["SUPPLEMENTARY MATERIALS", "Materials and Methods", "10 April 2031; accepted 2 July 2031", DOI]
    page3 = [
        *column(LEFT, 60, lines[100:150], 10, "Times-Roman"),
        *column(RIGHT, 60, lines[150:190], 10, "Times-Roman"),
        *column(RIGHT, 570, back, 6, "Times-Roman", 8),
    ]
    assert _read(draw(tmp_path / "report.pdf", [page1, page2, page3]))["metadata"]["doi"] == DOI


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_the_closing_section_beside_a_reference_list_under_both_columns_is_read(tmp_path, monkeypatch, backend):
    """A last page with no full-width line: the left column's text ends, "References" follows in the left column,
    and its entries, set smaller, run under both columns, below the right column's closing section. The closing
    section is the paper's text; the entries are not."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(160, 141, 6)
    closing = ["Closing thoughts on drifting pebbles", *lines[130:150]]
    entries = [
        f"Writer{k}, A., and Other, B. (20{10 + k}). Pebbles and quiet lakes, part {k}. J. Imag. Lakes {k}, 1-9."
        for k in range(1, 17)
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:50], 10, "Times-Roman"),
        *column(RIGHT, 130, lines[50:100], 10, "Times-Roman"),
    ]
    last = [
        *column(LEFT, 60, lines[100:130], 10, "Times-Roman"),
        (RIGHT, 60, "Times-Bold", 12, closing[0]),
        *column(RIGHT, 80, closing[1:], 10, "Times-Roman"),
        (LEFT, 460, "Times-Bold", 12, "References"),
        *column(LEFT, 480, [e[:48] for e in entries[:8]], 7.5, "Times-Roman", 9.5),
        *column(RIGHT, 480, [e[:48] for e in entries[8:]], 7.5, "Times-Roman", 9.5),
    ]
    text = _read(draw(tmp_path / "last.pdf", [page1, last]))["text"]
    for line in (lines[129], lines[131], lines[149]):
        assert line in text
    assert "Writer3, A." not in text and "Writer12, A." not in text


@pytest.mark.parametrize(
    "backend",
    [
        "auto",
        pytest.param(
            "pdfplumber",
            marks=pytest.mark.xfail(reason="without a layout model, columns split at the page's middle", strict=True),
        ),
    ],
)
def test_columns_set_off_the_pages_middle_are_read_one_after_the_other(tmp_path, monkeypatch, backend):
    """A journal with a margin column of notes sets its two text columns right of the page's middle (the Lancet):
    the left column crosses the middle. Each column is read whole, the left before the right."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(230, 151, 7)
    notes = ["See Comment", "page e1001", "Division of", "Lake Studies,", "Quiet Lakes", "University"]

    def paragraphs(x, top, k):  # five paragraphs of nine lines, a line's gap apart; the right column's lower
        return [
            item
            for p in range(5)
            for item in column(x, top + p * 120, lines[k + 9 * p : k + 9 * p + 9], 9, "Times-Roman", 12)
        ]

    def page(k):
        return [*column(28, 130, notes, 7, "Times-Roman", 9), *paragraphs(130, 60, k), *paragraphs(352, 110, k + 45)]

    rec = _read(draw(tmp_path / "offset.pdf", [[(130, 30, "Times-Bold", 14, TITLE), *page(0)], page(90)]))
    text = " ".join(rec["text"].split())
    for k in (17, 26, 35, 53, 62, 107, 116, 143, 152):  # a paragraph's last line, then the next one's first
        assert f"{lines[k]} {lines[k + 1]}" in text, k


def test_a_model_block_across_both_columns_is_split_at_the_gutter():
    """The layout model may read a last page's text column and the reference column beside it as one block (the
    Lancet): words on either side of the gutter, in several rows each, become two blocks, each where its words
    are. A block whose words cross the gutter (a full-width paragraph), or with one row a side, or a full-width
    table whose cells leave the gutter blank, stays whole."""

    def word(x0, x1, top, text="word"):
        return {"x0": x0, "x1": x1, "top": top, "bottom": top + 8, "text": text, "size": 8}

    both = [word(120, 300, 100), word(120, 300, 110), word(350, 550, 130), word(350, 550, 140)]
    wide = [word(120, 330, 200), word(331, 550, 200), word(120, 400, 210)]
    one_row = [word(120, 300, 300), word(350, 550, 300)]
    table = [word(120, 300, 400 + 10 * k) for k in range(3)] + [word(350, 550, 400 + 10 * k) for k in range(3)]
    boxes = [(119, 90, 551, 150, "list-item"), (119, 190, 551, 220, "text"), (119, 290, 551, 310, "text")]
    boxes.append((119, 390, 551, 430, "table"))
    got_boxes, got_groups = pdf_columns.split_at_gutter(boxes, [both, wide, one_row, table], 340.0)
    assert got_boxes == [(120, 100, 300, 118, "list-item"), (350, 130, 550, 148, "list-item"), *boxes[1:]]
    assert got_groups == [both[:2], both[2:], wide, one_row, table]


def test_a_bold_references_heading_inside_a_model_block_is_a_heading():
    """The layout model may merge a reference list's heading into the list under it: set in bold, alone on its
    line, it is still the list's heading. A line of the block that is not bold, or says more, is not."""

    def line(text, bold):
        return Line(
            text, 7.0, bold, 450, 457, 119, 7, 1, [{"fontname": "Lancet-Bold" if bold else "Lancet"}], "list-item"
        )

    assert is_heading(line("References", True), 9.0)
    assert not is_heading(line("References", False), 9.0)
    assert not is_heading(line("References to the earlier surveys are in the appendix", True), 9.0)


def test_the_gutter_is_found_where_no_word_crosses_and_only_between_two_columns():
    """Two columns, the left wider (a margin column's journal): the gutter is the middle of the gap between them,
    off the page's middle. Three columns, or one: none (the page's middle stands)."""

    def columns(*spans):
        return [{"x0": a, "x1": b, "top": 10.0 * k} for a, b in spans for k in range(30)]

    assert pdf_columns.gutter_of(columns((120, 330), (350, 560)), 612) == pytest.approx(340, abs=1)
    assert pdf_columns.gutter_of(columns((40, 200), (215, 380), (395, 560)), 612) is None
    assert pdf_columns.gutter_of(columns((60, 550)), 612) is None


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_chapter_after_an_example_bibliography_in_the_text_is_read(tmp_path, monkeypatch, backend):
    """A thesis shows an example of a bibliography in its introduction, headed "References": the chapters after it
    ("2 Related Work", numbered) are its text; its own reference list at the end is not."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(160, 161, 8)
    example = [
        "[1] Writer A, Other B. Pebbles and quiet lakes. J Imag Lakes, 3(2):1-9, 2029.",
        "[2] Renner B. Drift in still water. Proc Quiet Lakes, 2030.",
    ]
    entries = [f"[{k}] Writer{k} A. Counting pebbles, part {k}. J Imag Lakes, {k}:1-9, 20{10 + k}." for k in (1, 2, 3)]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 110, "Times-Bold", 16, "1 Introduction"),
        *column(LEFT, 135, lines[:20], 12, "Times-Roman", 14),
        (LEFT, 430, "Times-Bold", 14, "References"),
        *column(LEFT, 450, example, 12, "Times-Roman", 14),
        (LEFT, 490, "Times-Bold", 10, "Figure 1 An example of a bibliography"),
    ]
    page2 = [
        (LEFT, 60, "Times-Bold", 16, "2 Related Work"),
        *column(LEFT, 85, lines[20:60], 12, "Times-Roman", 14),
    ]
    page3 = [
        (LEFT, 60, "Times-Bold", 16, "3 Counting Pebbles"),
        *column(LEFT, 85, lines[60:100], 12, "Times-Roman", 14),
        (LEFT, 660, "Times-Bold", 16, "References"),
        *column(LEFT, 685, entries, 12, "Times-Roman", 14),
    ]
    text = _read(draw(tmp_path / "thesis.pdf", [page1, page2, page3]))["text"]
    for k in (5, 25, 59, 70, 99):
        assert lines[k] in text, k
    assert "Writer2 A. Counting" not in text and "Drift in still water" not in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_the_text_after_reference_entries_without_a_heading_is_read_from_the_next_heading(
    tmp_path, monkeypatch, backend
):
    """Reference entries set in the text with no heading over them (examples a paper discusses) are not text, and
    the section after them, under a heading of its own that names no known section, is."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(120, 171, 8)
    entries = [
        f"[{k}] Writer{k} A, Other B. Pebbles and lakes, part {k}. J Imag Lakes, {k}:1-9, 20{10 + k}."
        for k in (1, 2, 3, 4)
    ]
    page1 = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 110, "Times-Bold", 14, "Introduction"),
        *column(LEFT, 135, lines[:20], 12, "Times-Roman", 14),
        *column(LEFT, 430, entries, 12, "Times-Roman", 14),
    ]
    page2 = [
        (LEFT, 60, "Times-Bold", 14, "Pebble Counts by Season"),
        *column(LEFT, 85, lines[20:60], 12, "Times-Roman", 14),
    ]
    text = _read(draw(tmp_path / "entries.pdf", [page1, page2]))["text"]
    assert lines[5] in text and lines[30] in text and lines[59] in text
    assert "Writer2 A" not in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_the_column_beside_a_drawn_figure_is_read_whole(tmp_path, monkeypatch, backend):
    """A plot drawn in the left column (axes, grid, tick labels) with its caption under it, and the right column's
    text beside it: every line of the right column and of the left column under the figure is the paper's text;
    the plot's labels and its caption are not."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(150, 181, 6)
    items = [
        (LEFT, 60, "Times-Bold", 16, TITLE),
        (LEFT, 100, "Times-Bold", 11, "1 Introduction"),
        *column(LEFT, 120, lines[:3], 10, "Times-Roman"),
        (LEFT, 380, "Times-Roman", 9, "Figure 1. Pebble counts against depth in the quiet lake."),
        *column(LEFT, 410, lines[8:36], 10, "Times-Roman"),
        *column(RIGHT, 100, lines[40:90], 10, "Times-Roman"),
    ]

    def plot(c):
        x0, y0, w, h = LEFT + 30, HEIGHT - 360, 200, 200
        c.setLineWidth(0.5)
        for k in range(6):
            c.line(x0, y0 + k * h / 5, x0 + w, y0 + k * h / 5)
            c.line(x0 + k * w / 5, y0, x0 + k * w / 5, y0 + h)
            c.setFont("Times-Roman", 7)
            c.drawString(x0 - 14, y0 + k * h / 5 - 2, f"{10 * k}")
            c.drawString(x0 + k * w / 5 - 3, y0 - 10, f"{k}.5")
        c.drawString(x0 + 70, y0 - 20, "Depth (m)")

    rec = _read(_drawn_paper(tmp_path / "plot.pdf", items, more=plot))
    text = rec["text"]
    for k in (0, 2, 8, 35, 40, 41, 60, 89):
        assert lines[k] in text, k
    assert "Depth (m)" not in text and "Pebble counts against depth" not in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_journal_name_set_large_over_the_title_is_not_the_title(tmp_path, monkeypatch, backend):
    """The journal's name as a banner, larger than the title (BMC, Medicine, an Elsevier journal), with no Title
    metadata to say which is the title: the page's citation line opens with the name ("Imaginary Lakes (2031)
    7:12"), so it is the journal's, and the title is the run under it."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 50, "Helvetica-Bold", 26, "Imaginary Lakes"),
        (LEFT, 110, "Times-Bold", 16, "Counting Quiet Pebbles Across Two Winters"),
        (LEFT, 135, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 170, body_lines(40, 201), 10, "Times-Roman"),
        (LEFT, 720, "Times-Italic", 7, "Imaginary Lakes (2031) 7:12"),
    ]
    assert _read(draw(tmp_path / "banner.pdf", [page]))["title"] == "Counting Quiet Pebbles Across Two Winters"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_subtitle_under_the_title_is_part_of_it(tmp_path, monkeypatch, backend):
    """A title in 20 pt bold over its subtitle in 16 pt bold (a meta-analysis's "A PRISMA-compliant
    meta-analysis"): the title is both; the authors' line under them is not."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 70, "Times-Bold", 20, "Pebble counts in quiet lakes and"),
        (LEFT, 92, "Times-Bold", 20, "their winters"),
        (LEFT, 116, "Times-Bold", 16, "A systematic review of two surveys"),
        (LEFT, 136, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 170, body_lines(40, 202), 9, "Times-Roman"),
    ]
    title = _read(draw(tmp_path / "subtitle.pdf", [page]))["title"]
    assert title == "Pebble counts in quiet lakes and their winters A systematic review of two surveys"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
@pytest.mark.parametrize("font", ["Times-Bold", "Times-Roman"])
def test_authors_set_large_under_the_title_are_no_subtitle(tmp_path, monkeypatch, backend, font):
    """The authors' names in 14 pt right under a 20 pt title of their weight: the title is the title alone."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 70, font, 20, "Pebble counts in quiet lakes"),
        (LEFT, 96, font, 14, "Ada Quill, Bo Renner and Cy Moss"),
        (LEFT, 112, "Times-Roman", 9, "Lake Institute, Imaginary University"),
        *column(LEFT, 150, body_lines(40, 202), 10, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "authors.pdf", [page]))["title"] == "Pebble counts in quiet lakes"


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_ieee_digital_object_identifier_is_the_doi(tmp_path, monkeypatch, backend):
    """IEEE prints "Digital Object Identifier 10.1109/..." in the first page's foot, and its Subject metadata holds
    the DOI as a field of its own ("Journal;2031;5;4;10.1109/..."): either gives the paper's DOI."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    body = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, body_lines(44, 203, 6), 10, "Times-Roman"),
    ]
    printed = [*body, (LEFT, 720, "Times-Roman", 7, f"Digital Object Identifier {DOI}")]
    assert _read(draw(tmp_path / "printed.pdf", [printed]))["metadata"]["doi"] == DOI

    def subject(c):
        c.setSubject(f"IEEE Imaginary Lakes Letters;2031;5;4;{DOI}")

    assert _read(_drawn_paper(tmp_path / "subject.pdf", body, more=subject))["metadata"]["doi"] == DOI


def test_a_title_with_a_ligature_is_found_by_the_metadata_title_spelled_out():
    """The page prints "ﬁ" as one glyph where the Title metadata spells "fi": the same title, over the larger
    banner above it."""
    lines = [_line("Lake Letters", 40, size=26), _line("Diversiﬁcation of Quiet Pebbles", 100, size=16)]
    lines.append(_line("Ada Quill", 130))
    assert title_of(lines, lines, lines, 10.0, "Diversification of Quiet Pebbles") == lines[1:2]


def test_two_pieces_of_a_title_line_in_two_blocks_read_left_to_right():
    """The layout model may cut a title's line in two blocks side by side, the right one a hair higher: its left
    piece reads first. Blocks on one row far apart (a box of article information beside the abstract) keep their
    top-down order."""
    pieces = [(182.0, 91.0, 533.0, 122.0, "title"), (63.5, 91.2, 177.5, 104.0, "title"), (60, 140, 500, 300, "text")]
    assert pdf_mupdf._top_down(pieces) == [1, 0, 2]
    apart = [(200.0, 144.9, 420.0, 228.0, "text"), (54.0, 145.2, 131.6, 188.0, "text")]
    assert pdf_mupdf._top_down(apart) == [0, 1]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_sentence_wrapping_to_a_bold_table_reference_is_not_a_caption(tmp_path, monkeypatch, backend):
    """A paragraph's line ends "is presented in" and the next opens with a bold "Table 2" ("Table 2. The null
    hypothesis ..."): the sentence runs on, so the paragraph's rest is text, not a caption."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(60, 211, 8)
    label = "Table 2"
    rest = ". The null hypothesis that the counts are equal is rejected"
    y = 130 + 12.5 * 20
    page = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        *column(LEFT, 130, [*lines[:19], "The counts of pebbles for each lake are presented in"], 10, "Times-Roman"),
        (LEFT, y, "Times-Bold", 10, label),
        (LEFT + stringWidth(label, "Times-Bold", 10), y, "Times-Roman", 10, rest),
        *column(LEFT, y + 12.5, lines[20:40], 10, "Times-Roman"),
    ]
    text = _read(draw(tmp_path / "wrap.pdf", [page]))["text"]
    assert "The null hypothesis that the counts are equal is rejected" in text
    assert lines[20] in text and lines[39] in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
@pytest.mark.parametrize("last", ["</stage> end for", "N/A", "In"])
def test_a_caption_under_a_listing_ending_in_a_short_word_is_a_caption(tmp_path, monkeypatch, backend, last):
    """A listing (or a table's last row) ends in a word a sentence could go on from ("end for", "In"), and a bold
    "Figure 1." opens the next line: no sentence runs on into it, so it is a caption, not text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    listing = ["<stage cooled='slow'>", "  <sweep rate='1 K/min'/>", "  <leads fresh='yes'/>", last]
    label, y = "Figure 1.", 390 + 12 * len(listing)
    page1 = [
        (LEFT, 80, "Times-Bold", 16, TITLE),
        (LEFT, 110, "Times-Bold", 11, "1 Introduction"),
        *column(LEFT, 130, body_lines(20, 23, 7), 10, "Times-Roman", 12),
        *column(LEFT + 20, 390, listing, 10, "Times-Roman", 12),
        (LEFT, y, "Times-Bold", 10, label),
        (LEFT + stringWidth(label + " ", "Times-Bold", 10), y, "Times-Roman", 10, "Log of a sweep"),
        *column(LEFT, 460, body_lines(20, 24, 7), 10, "Times-Roman", 12),
    ]
    page2 = [*column(LEFT, 60, body_lines(30, 25, 7), 10, "Times-Roman")]
    assert "Log of a sweep" not in _read(draw(tmp_path / "listing.pdf", [page1, page2]))["text"]


def test_a_note_the_model_sets_apart_under_a_caption_is_the_captions():
    """The layout model reads a figure's caption as one block and the note under it, in the caption's size and at
    its spacing ("(A color version of this figure is available in the online journal.)"), as a text block of its
    own (an ApJ page, its blocks as the model gave them): the note is the caption's, not the page's text. A
    paragraph of the body under a caption, at the body's size, stays text."""

    def words(texts, top, size, pitch):
        out = []
        for k, text in enumerate(texts):
            x = 43.0
            for word in text.split():
                width = stringWidth(word, "Times-Roman", size)
                out.append(
                    {"text": word, "x0": x, "x1": x + width, "top": top + k * pitch, "bottom": top + k * pitch + size}
                )
                out[-1].update(size=size, fontname="Times-Roman", upright=True)
                x += width + size / 4
        return out

    caption = words(["Figure 1. Counts of pebbles for each lake, normalised to", "a peak of unity."], 240, 8, 9)
    note = words(["(A colour version of this figure is available in the online edition.)"], 261, 8, 12)
    body = words(body_lines(6, 311, 6), 290, 10, 12.5)
    boxes = [(42, 239, 295, 258, "caption"), (42, 260, 295, 270, "text"), (42, 289, 295, 370, "text")]
    page = pdf_mupdf.Page(612, 792, caption + note + body, 0, [], boxes)
    lines = pdf_mupdf.page_lines(page, 2)[0]
    kinds = {ln.text.split()[0]: (ln.kind, ln.box) for ln in lines}
    assert kinds["(A"] == ("caption", 2000)
    assert all(kinds[text.split()[0]][0] == "text" for text in body_lines(6, 311, 6))


def test_a_superscript_stacked_over_a_subscript_is_kept():
    """ "M" with "2" set over "τ" (M²_τ, a physics title's formula), the script words where the PDF sets them:
    one word, the exponent written first; a footnote mark after a word still goes."""

    def word(text, x0, x1, top, bottom, size):
        return {"text": text, "x0": x0, "x1": x1, "top": top, "bottom": bottom, "size": size}

    words = [
        word("(", 233.7, 241.3, 135.1, 152.3, 17.22),
        word("M", 241.3, 260.9, 135.1, 152.3, 17.22),
        word("2", 262.9, 269.6, 133.1, 145.0, 11.95),
        word("τ", 260.9, 267.2, 144.6, 156.6, 11.95),
        word(")", 270.1, 277.7, 135.1, 152.3, 17.22),
        word("Pebbles", 300.0, 360.0, 135.1, 152.3, 17.22),
        word("1", 360.0, 366.0, 133.1, 145.0, 11.95),
    ]
    assert [w["text"] for w in pdf_scripts.join_scripts(words)] == ["(M^2τ)", "Pebbles"]


def test_a_title_set_with_letter_spacing_keeps_its_words_whole(tmp_path):
    """A title set with 1.8 pt between its letters (small capitals with tracking: "REACT" read as "REAC T") keeps
    its words whole, and apart where it has a space (the layout backend: pdfplumber splits at every letter)."""

    def tracked(c):
        text = c.beginText(LEFT, HEIGHT - 70)
        text.setFont("Courier", 14)
        text.setCharSpace(1.8)
        text.textOut("REACT: PEBBLES SETTLE WHERE LAKES ARE QUIET")
        c.drawText(text)

    rec = _read(
        _drawn_paper(tmp_path / "tracked.pdf", [*column(LEFT, 110, body_lines(40), 10, "Times-Roman")], more=tracked)
    )
    assert rec["title"] == "REACT: PEBBLES SETTLE WHERE LAKES ARE QUIET"


def test_authors_in_the_models_title_block_set_smaller_are_not_the_title():
    """The layout model's title block holds the title (14.3 pt) and the authors' lines under it (12 pt, their
    marks raised): the title is the title's line."""
    lines = [
        _line("PaSa: Pebbles Settle Where Lakes Are Quiet", 71, "title", 3, 14.3),
        _line("Ada Quill^∗1 Bo Renner^∗1 Cy Moss^†1", 91, "title", 3, 12.0),
        _line("Di Lark^1 Ed Wren^2", 109, "title", 3, 12.0),
        _line("Lake Institute", 131, "text", 4, 12.0),
        *[_line("pebbles settle in quiet lakes when the water rests", 200 + 12 * k, "text", 5) for k in range(20)],
    ]
    assert [ln.text for ln in title_of(lines, lines, lines, 10.0)] == [lines[0].text]
    # a footnote's mark read as a line of its own between the title's two lines is no end of the title
    lines[1:1] = [_line("∗", 80, "title", 3, 9.0), _line("Under Ice", 86, "title", 3, 14.3)]
    assert [ln.text for ln in title_of(lines, lines, lines, 10.0)] == [lines[0].text, "∗", "Under Ice"]


def test_an_authors_line_going_on_in_the_next_line_is_no_subtitle(tmp_path):
    """Authors at 14 pt under a 17 pt title in the same roman, their list broken after a comma: the title alone."""
    page = [
        (LEFT, 70, "Times-Roman", 17, "Pebble counts in quiet lakes"),
        (LEFT, 94, "Times-Roman", 14, "Ada D Quill, Bo Renner, Cy Le Moss,"),
        (LEFT, 114, "Times-Roman", 14, "Di Lark, Ed Wren"),
        *column(LEFT, 150, body_lines(40, 202), 10, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "authors.pdf", [page]))["title"] == "Pebble counts in quiet lakes"


def test_a_title_with_an_accent_set_apart_from_its_letter_is_read_joined():
    """TeX's fonts set an umlaut as a glyph before its letter ("Sj¨ogren"): the metadata's "Sjögren" names the
    printed title over a banner larger than it, and the title reads "Sjögren"."""
    lines = [_line("Lake Letters", 40, size=26), _line("Pebbles of Lake Sj¨ogren in Winter", 100, size=16)]
    lines.append(_line("Ada Quill", 130))
    assert title_of(lines, lines, lines, 10.0, "Pebbles of Lake Sjögren in Winter") == lines[1:2]


def test_a_drawn_title_with_a_spacing_umlaut_reads_the_letter_accented(tmp_path):
    """The title drawn with "¨" before its "o" reads "ö", as the body does."""
    page = [
        (LEFT, 70, "Times-Bold", 17, "Pebbles of Lake Sj\u00a8ogren in Winter"),
        *column(LEFT, 110, body_lines(40, 202), 10, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "umlaut.pdf", [page]))["title"] == "Pebbles of Lake Sjögren in Winter"


def test_a_dash_standing_alone_at_a_line_end_joins_no_word():
    """ "communication -" over "a personal view": a dash with a space before it is no broken word."""
    lines = [_line("Semantic pebbles and their settling -", 100, size=23), _line("a personal view", 126, size=23)]
    assert Block(lines).text.replace("\x00", "") == "Semantic pebbles and their settling - a personal view"


def test_a_raised_footnote_mark_after_the_title_is_not_part_of_it(tmp_path):
    """A title ending with a raised "∗" (a footnote's mark, set small above the baseline) reads without it."""

    vera = Path(reportlab.__file__).parent / "fonts" / "Vera.ttf"
    pdfmetrics.registerFont(TTFont("Vera", str(vera)))

    def mark(c):
        c.setFont("Vera", 11)
        c.drawString(LEFT + stringWidth(TITLE, "Times-Bold", 16) + 1, HEIGHT - 66, "\u2217")

    rec = _read(_drawn_paper(tmp_path / "mark.pdf", body=body_lines(40), more=mark))
    assert rec["title"] == TITLE


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_open_archives_cover_page_is_not_the_papers_text(tmp_path, monkeypatch, backend):
    """An open archive's cover page (HAL's: the title, the authors, "To cite this version:", the citation, "HAL Id")
    before the paper: none of it is the paper's text, and the title is the paper's."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    title = "Counting Pebbles That Drift Under Quiet Lakes"
    cover = [
        (LEFT, 240, "Times-Bold", 17, title),
        (LEFT, 265, "Times-Roman", 14, "Ada D Quill, Bo Renner, Cy Le Moss"),
        (LEFT, 350, "Times-Bold", 14, "To cite this version:"),
        (LEFT, 375, "Times-Roman", 12, "Ada D Quill, Bo Renner, Cy Le Moss. Counting Pebbles. Lake Letters, 2031."),
        (LEFT, 500, "Times-Bold", 12, "HAL Id: hal-02931234"),
        (LEFT, 520, "Times-Roman", 10, "Submitted on 2 Apr 2031"),
    ]
    page = [
        (LEFT, 70, "Times-Bold", 16, title),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, body_lines(48, 100), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "hal.pdf", [cover, page, column(LEFT, 60, body_lines(48, 101), 10, "Times-Roman")]))
    assert rec["title"] == title
    assert "To cite this version" not in rec["text"] and "Cy Le Moss" not in rec["text"]


def test_a_titles_second_line_the_model_sets_in_a_title_block_of_its_own_is_the_titles():
    """The layout model reads a two-line title as two title blocks, one under the other: both lines are the
    title; the authors' block under them is not."""
    lines = [
        _line("LAKEVAL: Guidelines for Counting the Pebbles of", 70, "title", 1, 14.3),
        _line("Quiet Lakes in Winter", 87, "title", 2, 14.3),
        _line("Ada Quill Bo Renner", 110, "text", 3, 12.0),
        *[_line("pebbles settle in quiet lakes when the water rests", 200 + 12 * k, "text", 5) for k in range(20)],
    ]
    assert [ln.text for ln in title_of(lines, lines, lines, 10.0)] == [lines[0].text, lines[1].text]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_doi_line_spelled_doi_in_mixed_case_under_the_authors_is_found(tmp_path, monkeypatch, backend):
    """ "Doi:10.5555/..." alone on a line of the first page, below the author's name set as a heading: the DOI."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 70, "Times-Bold", 16, TITLE),
        (LEFT, 100, "Times-Bold", 10, "Ada Quill"),
        (LEFT, 114, "Times-Italic", 9, "Lake Institute, Imaginary University"),
        (LEFT, 140, "Times-Bold", 9, f"Doi:{DOI}"),
        (LEFT, 165, "Times-Bold", 10, "Abstract"),
        *column(LEFT, 185, body_lines(44, 203, 6), 10, "Times-Roman"),
    ]
    assert _read(draw(tmp_path / "doi.pdf", [page]))["metadata"]["doi"] == DOI


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_an_abstract_set_larger_than_the_body_is_one_paragraph(tmp_path, monkeypatch, backend):
    """Nature's abstract: unheaded, in 10 pt over a body of 8 pt, each line short enough to pass for a heading. The
    lines run on into each other: one paragraph, kept whole, not a string of headings."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    abstract = [
        "Pebbles resting on the floors of sheltered lakes drift gradually beneath the",
        "weight of winter ice and the pressure of springtime currents, although",
        "their trajectories have never been followed for longer than one season. Here",
        "we tagged several hundred pebbles across three northern lakes and recorded",
        "their positions every month throughout six consecutive years using sonar,",
        "discovering that most pebbles eventually settle where the water is deepest.",
    ]
    page = [
        (LEFT, 70, "Times-Bold", 18, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 100, "Times-Roman", 9, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, abstract, 10, "Times-Roman", 14),
        *column(LEFT, 230, body_lines(40, 31, 7), 8, "Times-Roman", 10),
        *column(RIGHT, 230, body_lines(40, 32, 7), 8, "Times-Roman", 10),
    ]
    page2 = [*column(LEFT, 60, body_lines(50, 33, 7), 8, "Times-Roman", 10)]
    rec = _read(draw(tmp_path / "abstract.pdf", [page, page2]))
    assert " ".join(abstract) in rec["text"].replace("\n", " ")
    assert not any(s["heading"] and "pebbles" in s["heading"].lower() for s in rec["sections"][1:])


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_the_running_foots_citation_line_in_the_front_matter_is_not_text(tmp_path, monkeypatch, backend):
    """New Phytologist prints its citation line ("New Phytologist (2016) 210: 196-207") at the foot of every page
    and once more on the first page, by the dates and keywords: there too it is not the paper's text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    cite = "Journal of Imagined Lakes (2016) 210: 196-207"
    lines = body_lines(200, 41, 9)
    page1 = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, lines[:8], 10, "Times-Roman"),
        (LEFT, 245, "Times-Roman", 8, cite),
        (LEFT, 255, "Times-Roman", 8, "doi: 10.1234/jil.5678"),
        (LEFT, 280, "Times-Roman", 8, "Key words: pebbles, lakes, ice"),
        *column(LEFT, 310, lines[8:40], 10, "Times-Roman"),
    ]
    pages = [page1] + [
        [*column(LEFT, 60, lines[40 * k : 40 * k + 40], 10, "Times-Roman"), (LEFT, 740, "Times-Roman", 8, cite)]
        for k in range(1, 5)
    ]
    rec = _read(draw(tmp_path / "cite.pdf", pages))
    assert "Imagined Lakes" not in rec["text"]
    assert all(ln in rec["text"] for ln in lines[:40])


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_reference_list_under_a_heading_with_a_full_stop_is_dropped(tmp_path, monkeypatch, backend):
    """ "References." (and "Acknowledgements.") in bold, as a journal of 2001 sets them: the entries under it, in
    author-year form without numbers, are not text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    entries = []  # two lines each, set far apart: each line a block of its own, as the model read the 2001 paper's
    for k in range(1, 9):
        entries += [
            (LEFT, 60 + 60 * k, "Times-Roman", 10, f"Writer{k}, A., 19{80 + k}, Pebbles and lakes of the northern"),
            (LEFT, 80 + 60 * k, "Times-Roman", 10, f"plains, part {k} (London: Quiet Press), pp. {k}1-{k}9."),
        ]
    page = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles Counted Twice in Quiet Lakes"),
        (LEFT, 100, "Times-Bold", 11, "1. Introduction"),
        *column(LEFT, 118, body_lines(44, 51, 11), 10, "Times-Roman"),
    ]
    page2 = [
        *column(LEFT, 60, body_lines(20, 52, 11), 10, "Times-Roman"),
        (LEFT, 330, "Times-Bold", 11, "Acknowledgements."),
        (LEFT, 346, "Times-Roman", 10, "We thank the lake wardens for their boats and their patience."),
    ]
    page3 = [(LEFT, 70, "Times-Bold", 11, "References."), *entries]
    rec = _read(draw(tmp_path / "refs.pdf", [page, page2, page3]))
    assert "Writer3" not in rec["text"] and rec["ingest"]["references_dropped"] >= 8


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_two_word_title_under_a_journals_banner_is_the_title(tmp_path, monkeypatch, backend):
    """ "Journal of Statistical Software" in 28 pt over "Tidy Data" in 17 pt: the metadata's short title, printed
    under the banner, is the title, though two words are too few to trust a metadata title unprinted."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 60, "Times-Italic", 28, "Journal of Imagined Lakes"),
        (LEFT, 85, "Times-Italic", 10, "August 2031, Volume 9, Issue 1."),
        (LEFT, 140, "Times-Bold", 17, "Pebble Counts"),
        (LEFT, 170, "Times-Bold", 12, "Ada Quill"),
        *column(LEFT, 210, body_lines(40, 61), 10, "Times-Roman"),
    ]
    assert _read(_drawn_paper(tmp_path / "short.pdf", page, meta_title="Pebble Counts"))["title"] == "Pebble Counts"


def test_white_text_stacked_under_the_title_is_not_read(tmp_path):
    """A PMC copy: the journal's name, ISSN and DOI drawn in white under the title's first line (invisible on the
    white page) are not words of the title. White words on a dark box ("OPEN ACCESS") are seen, and kept."""

    def more(c):
        c.setFillColorRGB(1, 1, 1)
        for text in ("JIL", "Journal of Imagined Lakes", "1234-5678", "jil31-07", "Original Article"):
            c.drawString(LEFT + 10, HEIGHT - 70, text)
        c.setFillColorRGB(0.1, 0.2, 0.5)
        c.rect(LEFT, HEIGHT - 40, 120, 16, fill=1, stroke=0)
        c.setFillColorRGB(1, 1, 1)
        c.setFont("Helvetica-Bold", 10)
        c.drawString(LEFT + 4, HEIGHT - 36, "OPEN ACCESS")

    path = _drawn_paper(tmp_path / "white.pdf", body=body_lines(40, 81), more=more)
    rec = _read(path)
    assert rec["title"] == TITLE
    assert "Imagined" not in rec["text"] and "1234" not in rec["text"]
    with pdf_mupdf._pymupdf().open(path) as doc:
        words = {w["text"] for w in pdf_mupdf.page_words(doc[0])[0]}
    assert {"OPEN", "ACCESS"} <= words and "Imagined" not in words


@pytest.mark.parametrize("title", ["P2Lake: Counting Pebbles in Quiet Waters", "Lakes in 2021 After COVID-19 Rules"])
def test_a_title_with_numbers_repeated_as_the_running_head_is_still_the_title(tmp_path, title):
    """ "h2oGPT: Democratizing ..." on page 1 and as the running head of the other pages: a head's copy in the front
    matter is dropped only when it is a citation line at the head's size, with its year, volume and pages."""
    lines = body_lines(160, 91, 9)
    pages = [
        [(LEFT, 70, "Times-Bold", 17, title), *column(LEFT, 110, lines[:40], 10, "Times-Roman")],
        *[
            [(LEFT, 40, "Times-Roman", 8, title), *column(LEFT, 70, lines[40 * k : 40 * k + 40], 10, "Times-Roman")]
            for k in range(1, 4)
        ],
    ]
    rec = _read(draw(tmp_path / "head.pdf", pages))
    assert rec["title"] == title


def test_slanted_words_whose_boxes_touch_across_a_space_stay_apart(tmp_path):
    """Italic words a space character apart whose glyph boxes touch (the space squeezed, as slanted letters' boxes
    lean over it): two words, in the title and in the text ("Ocimum sanctum", not "Ocimumsanctum")."""

    def squeezed(c):
        for y, font, size, squeeze, line in (
            (70, "Times-BoldItalic", 18, -4.3, "Aqueous Extracts of Ocimum sanctum Leaves"),  # 4.5 pt space
            (110, "Times-Italic", 10, -2.2, "leaves of Allium sativum and Ocimum sanctum were dried in shade"),
        ):
            text = c.beginText(LEFT, HEIGHT - y)
            text.setFont(font, size)
            text.setWordSpace(squeeze)
            text.textLine(line)
            c.drawText(text)

    items = column(LEFT, 124, body_lines(40, 79), 10, "Times-Roman")
    paper = _read(_drawn_paper(tmp_path / "slanted.pdf", items, more=squeezed))
    assert paper["title"] == "Aqueous Extracts of Ocimum sanctum Leaves"
    assert "leaves of Allium sativum and Ocimum sanctum were dried" in paper["text"]


def test_a_web_address_or_a_volume_the_model_calls_a_title_is_not_the_title():
    """The layout model calls the journal's web address and its volume, set above the title, title blocks: the
    title is the title block after them."""
    lines = _with_text(
        [
            _line("www.lakejournal.net", 112, "title", 11, 16.0),
            _line("Volume 13(3)", 145, "title", 12, 18.0),
            _line("Pebbles of various quiet lakes against", 197, "title", 1, 22.0),
            _line("the winter of many cold years", 224, "title", 1, 22.0),
            _line("Ada Quill, Bo Renner", 286, "text", 2, 12.0),
        ],
        380,
        11,
        box=6,
        size=9.0,
    )
    assert [ln.text for ln in title_of(lines, lines, lines, 9.0)] == [lines[2].text, lines[3].text]


def test_an_article_type_set_in_two_sizes_above_the_title_is_not_the_title():
    """ "Original" set at 30 pt over "Research" at 14 pt, one block, above a title at 24 pt that the model calls
    text: the title is the 24 pt lines."""
    lines = _with_text(
        [
            _line("Original", 36, "text", 2, 30.0),
            _line("Research", 48.5, "text", 2, 14.0),
            _line("Pebbles of various quiet lakes", 77, "text", 3, 24.0),
            _line("against the winter of many years", 102, "text", 3, 24.0),
            _line("Ada Quill, Bo Renner", 245, "section-header", 4, 12.0),
        ],
        357,
        12,
        box=7,
        size=9.0,
    )
    assert [ln.text for ln in title_of(lines, lines, lines, 9.0)] == [lines[2].text, lines[3].text]


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_bare_doi_opening_the_running_head_is_the_papers(tmp_path, monkeypatch, backend):
    """The DOI printed only at the head of every page, bare and followed by the short title
    ("10.5555/... Pebbles Settle Where Lakes Are Quiet"): the paper's DOI."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    head = (LEFT, 40, "Times-Roman", 8, f"{DOI} Pebbles in Quiet Lakes")
    first = [
        head,
        (LEFT, 80, "Times-Bold", 16, TITLE),
        (LEFT, 105, "Times-Roman", 10, "Ada Quill"),
        (LEFT, 130, "Times-Bold", 10, "Abstract"),
        *column(LEFT, 150, body_lines(40, 211), 10, "Times-Roman"),
    ]
    second = [head, *column(LEFT, 80, body_lines(50, 212), 10, "Times-Roman")]
    assert _read(draw(tmp_path / "head.pdf", [first, second]))["metadata"]["doi"] == DOI


def _bold(line):
    return Line(
        line.text, line.size, True, line.top, line.bottom, line.x0, line.page, 0, line.words, line.kind, line.box
    )


def test_the_authors_line_in_the_models_title_block_is_not_the_titles():
    """The layout model puts the authors' names, set in roman nearly as large as the bold title, in the title's
    block: the title is the bold lines."""
    lines = _with_text(
        [
            _bold(_line("Effect of quiet lakes and winter winds on pebbles", 103, "title", 3, 15.96)),
            _bold(_line("settling in experimentally induced calm", 121, "title", 3, 15.96)),
            _line("Ada Quill*, Bo Renner Moss and Cy Tarn Lake", 157, "title", 3, 15.0),
        ],
        300,
        12,
        box=5,
        size=9.0,
    )
    assert [ln.text for ln in title_of(lines, lines, lines, 9.0)] == [lines[0].text, lines[1].text]


def test_a_titles_lead_in_capitals_ending_with_a_colon_is_the_titles():
    """ "POINTWISE:" on a line of its own over the rest of the title, one bold title block: part of the title, not
    a section label."""
    lines = _with_text(
        [
            _bold(_line("POINTWISE:", 88, "title", 0, 15.96)),
            _bold(_line("Predicting Pebbles and Valuing Lakes in Real Time", 106, "title", 0, 15.96)),
            _bold(_line("with Winter Tracking Data", 124, "title", 0, 15.96)),
            _line("Ada Quill, Bo Renner, and Cy Moss", 156, "text", 1, 9.96),
        ],
        262,
        11,
        box=5,
        size=9.96,
    )
    assert [ln.text for ln in title_of(lines, lines, lines, 9.96)] == [ln.text for ln in lines[:3]]


def test_a_title_the_model_reads_as_one_picture_with_a_badge_is_the_title():
    """An artifact badge drawn over the title's corner: the model reads the title's two lines as a picture and
    finds no title block. The lines go back to the rules, which take them as the title, not an author's name."""
    lines = _with_text(
        [
            _bold(_line("A Program for Counting Pebbles", 77, "picture", 0, 17.93)),
            _bold(_line("in Quiet Winter Lakes", 97, "picture", 0, 17.93)),
            _line("Ada Quill", 138, "text", 1, 10.96),
            _line("Bo Renner", 138, "text", 2, 10.96),
            _line("Lake Institute, Imaginary University", 155, "text", 3, 8.97),
        ],
        246,
        10,
        box=4,
        size=9.0,
        n=30,
    )
    pdf._title_in_figure(lines, 9.0)
    first = [ln for ln in lines if ln.kind != "picture"]
    assert [ln.text for ln in title_of(first, first, first, 9.0)] == [lines[0].text, lines[1].text]
    chart = [_line("Pebbles per lake and per winter month", 300, "picture", 5, 14.0), *lines[2:]]
    pdf._title_in_figure(chart, 9.0)  # a chart's large label below the text's start stays the chart's
    assert chart[0].kind == "picture"


def _span(text, x0, base, size, color, top=None, bottom=None):
    """A span as MuPDF's rawdict gives it: its box (``top``/``bottom``, by default the glyphs' height), colour and
    characters with their baseline."""
    top = base - 0.8 * size if top is None else top
    bottom = base + 0.2 * size if bottom is None else bottom
    chars = [{"c": c, "origin": (x0 + 5 * k, base)} for k, c in enumerate(text)]
    return {"bbox": (x0, top, x0 + 5 * len(text), bottom), "size": size, "color": color, "chars": chars}


def test_white_headings_on_dark_boxes_under_text_with_tall_line_boxes_are_read():
    """White headings on a coloured box ("References") under a line of dark text whose font gives its span a box
    reaching far below it (Cambria's): not white text stacked over dark text, so read. White text drawn over the
    title's dark words is still left out."""
    dark = _span("the most pathways involved are calcium inhibitory actions.", 308, 540, 10, 0, top=530, bottom=586)
    heading = _span("References", 308, 573, 11, 0xFFFFFF)
    title = _span("Pebbles Settle Where Lakes Are Quiet", 50, 100, 16, 0)
    hidden = _span("Journal of Imaginary Lakes", 60, 98, 9, 0xFFFFFF)
    assert pdf_mupdf._white_on_text([dark, heading, title, hidden]) == {id(hidden)}


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_word_set_apart_after_its_ligature_is_joined_where_the_paper_spells_it_whole(tmp_path, monkeypatch, backend):
    """ "eff ect" in the text, a gap after the ligature read as a space, where the paper also prints "effect":
    joined; "staff in" and "cliff edge" stay apart."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    lines = body_lines(40, 215)
    lines[5] = "the synergistic eff ect of the cold was logged by the staff in the lake"
    lines[20] = "near the cliff edge the effect of the wind on the pebbles was small"
    text = _read(_drawn_paper(tmp_path / "ligature.pdf", body=lines))["text"]
    assert "the synergistic effect of the cold" in text
    assert "the staff in the lake" in text and "the cliff edge the effect" in text


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_the_doi_under_authors_set_nearly_as_large_as_the_title_is_found(tmp_path, monkeypatch, backend):
    """The authors' names set large under the title (BMC's 2006 template), the DOI in the front matter below
    them: the names are no section heading that ends the front matter, so the DOI is found."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    page = [
        (LEFT, 70, "Helvetica-Bold", 16, TITLE),
        (LEFT, 95, "Helvetica", 15, "Ada Quill*, Bo Renner Moss and Cy Tarn"),
        (LEFT, 125, "Times-Roman", 8, "Address: Lake Institute, Imaginary University, Pebble Road 7, Quietville"),
        (LEFT, 150, "Times-Roman", 8, f"Journal of Imaginary Lakes 2031, 6:3 doi:{DOI}"),
        (LEFT, 180, "Helvetica-Bold", 11, "Abstract"),
        *column(LEFT, 200, body_lines(44, 213), 10, "Times-Roman"),
    ]
    paper = _read(draw(tmp_path / "bmc.pdf", [page]))
    assert paper["metadata"]["doi"] == DOI
    assert paper["title"] == TITLE


@pytest.mark.parametrize("backend", ["auto", "pdfplumber"])
def test_a_research_portals_cover_sheet_with_its_own_title_is_not_the_papers(tmp_path, monkeypatch, backend):
    """A university research portal's cover sheet (Pure's: "General rights", "Copyright and moral rights for the
    publications made accessible in the public portal ...") names the paper by its record's longer title in large
    type: the title is the one the paper prints, and the sheet is not text."""
    monkeypatch.setattr(pdf, "BACKEND", backend)
    cover = [
        (LEFT, 60, "Times-Roman", 9, "Downloaded from the lake portal on: Aug 15, 2031"),
        (LEFT, 100, "Times-Bold", 18, "PQL - Counting Pebbles That Drift Under Quiet Lakes"),
        (LEFT, 125, "Times-Roman", 11, "Quill, Ada; Renner, Bo"),
        (LEFT, 420, "Times-Bold", 10, "General rights"),
        (
            LEFT,
            435,
            "Times-Roman",
            8,
            "Copyright and moral rights for the publications made accessible in the public ",
        ),
        (LEFT, 445, "Times-Roman", 8, "portal are retained by the authors and/or other copyright owners."),
    ]
    page = [
        (LEFT, 70, "Times-Bold", 16, "Counting Pebbles That Drift Under Quiet Lakes"),
        (LEFT, 95, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        *column(LEFT, 130, body_lines(48, 214), 10, "Times-Roman"),
    ]
    rec = _read(draw(tmp_path / "pure.pdf", [cover, page]))
    assert rec["title"] == "Counting Pebbles That Drift Under Quiet Lakes"
    assert "moral rights" not in rec["text"]


def test_a_space_drawn_over_the_glyph_before_it_splits_no_word(tmp_path):
    """A space character drawn inside the glyph before it (as some producers set one after a ligature), the word
    going on right after that glyph: one word ("inflammation", not "infl ammation"), wherever the paper has it."""

    def overlapped(c):
        for k, y in enumerate((110, 260)):
            c.setFont("Times-Roman", 10)
            head = "the chronic infl" if k == 0 else "and the infl"
            c.drawString(LEFT, HEIGHT - y, head)
            end = LEFT + stringWidth(head, "Times-Roman", 10)
            space = stringWidth(" ", "Times-Roman", 10)
            c.drawString(end - space, HEIGHT - y, " ammation of the lake pebbles was logged")

    lines = body_lines(40, 216)
    lines[0] = lines[12] = ""  # the rows the overlapped lines stand on
    text = _read(_drawn_paper(tmp_path / "overlap.pdf", body=lines, more=overlapped))["text"]
    assert "the chronic inflammation of the lake pebbles" in text and "infl ammation" not in text


def test_an_article_type_in_a_title_block_of_its_own_is_not_part_of_the_title():
    """The layout model calls "Short Communication" a title block of its own, at the title's size, over the
    title's block: the title is the second block alone."""
    lines = _with_text(
        [
            _bold(_line("Short Communication", 87, "title", 1, 14.0)),
            _bold(_line("Citrus Oils against the Larvae of Lake Midges", 106, "title", 2, 14.0)),
            _line("Ada Quill, Bo Renner and Cy Moss", 135, "text", 3, 12.0),
        ],
        250,
        12,
        box=5,
        size=10.0,
    )
    assert [ln.text for ln in title_of(lines, lines, lines, 10.0)] == [lines[1].text]


def test_a_section_header_above_the_first_paragraph_is_the_title_where_none_stands_out():
    """A title set hardly larger than the body (12 pt over 11 pt), which the layout model calls a section header,
    under the issue's line: where nothing stands out by size, that block is the title, not the issue's line; the
    "Abstract" header under it is no title."""
    first = _with_text(
        [
            _line("Vol : No. XXVII (2) October, November, December - 2031", 130, "text", 0, 9.0),
            _line("Comparative antimicrobial activities of lake", 263, "section-header", 1, 12.0),
            _line("and river pebbles", 277, "section-header", 1, 12.0),
            _line("Received : 04.06.2031", 317, "text", 2, 11.0),
            _line("Abstract", 421, "section-header", 3, 11.0),
        ],
        448,
        13,
        box=4,
        size=11.0,
    )
    assert [ln.text for ln in opening_block(first)] == [first[1].text, first[2].text]
    no_title = [first[0], *first[3:]]
    assert [ln.text for ln in opening_block(no_title)] == [first[0].text]
    # a numbered section's header, front matter's headings, the authors' names or a journal's name classed
    # section headers above the first paragraph are no title: the first line stays the guess
    for header in (
        "1. Introduction",
        "I. INTRODUCTION",
        "Keywords",
        "ARTICLE INFO",
        "a b s t r a c t",
        "Ada Quill and Bo Renner",
        "Journal of Lake Studies",
    ):
        lines = [first[0], _line(header, 263, "section-header", 1, 12.0), *first[5:]]
        assert [ln.text for ln in opening_block(lines)] == [first[0].text], header


def test_an_arxiv_identifier_or_a_file_name_in_the_metadata_is_no_title(tmp_path):
    """The Title metadata holds the arXiv stamp ("arXiv:math/9404236v1 [math.HO] 1 Apr 1994") or a layout
    program's file name ("oct - nov - dec 07 (06.03.2008).pmd"): neither is the title; the printed one is."""
    for meta in ("arXiv:2101.01234v1  [math.HO]  4 Jan 2031", "oct - nov - dec 31 (06.03.2031).pmd"):
        assert not plausible_title(meta)
    assert plausible_title("Counting Pebbles in Quiet Lakes")
    page = [
        (LEFT, 70, "Times-Roman", 10, "ON COUNTING PEBBLES IN QUIET LAKES"),
        (LEFT, 90, "Times-Roman", 8, "ADA QUILL"),
        *column(LEFT, 110, body_lines(40), 10, "Times-Roman"),
    ]
    for n, meta in enumerate(("arXiv:2101.01234v1  [math.HO]  4 Jan 2031", "lakes 31 (06.03.2031).pmd")):
        rec = _read(_drawn_paper(tmp_path / f"meta{n}.pdf", page, meta_title=meta))
        assert rec["title"] == "ON COUNTING PEBBLES IN QUIET LAKES"


def test_a_copyright_line_closing_the_abstracts_block_leaves_the_abstract_text():
    """The layout model puts "⃝c 2031 Lake Press B.V. All rights reserved." in the block of an abstract set smaller
    than the body (Elsevier's journals of the 2000s): the notice is a block of its own, furniture; the abstract's
    block is text."""
    abstract = [_line(t, 327 + 11 * k, "text", 7, 9.0) for k, t in enumerate(body_lines(4, 88, 12))]
    abstract[-1].text = abstract[-1].text.rstrip(".") + "."
    notice = _line("\u20dd c 2031 Lake Press B.V. All rights reserved.", 371, "text", 7, 9.0)
    blocks = line_blocks([*abstract, notice], 10.0)
    assert [b.lines for b in blocks] == [abstract, [notice]]
    assert furniture_block(blocks[0], blocks[0].text, 10.0) is None
    assert furniture_block(blocks[1], blocks[1].text, 10.0) == "notes"
    for text in ("(c) 2031 Lake Press.", "© Lake Press 2031.", "Copyright: © 2031 Quill et al."):
        notice = _line(text, 371, "text", 7, 9.0)
        assert [b.lines for b in line_blocks([*abstract, notice], 10.0)] == [abstract, [notice]], text
    # a caption's panels "(b)", "(c)" opening its lines are no notice: one block
    panels = [
        _line(t, 500 + 11 * k, "caption", 9, 9.0)
        for k, t in enumerate(
            ["Figure 3. (a) Pebbles on the shore of the lake.", "(b) The same after the thaw.", "(c) The lake in May."]
        )
    ]
    assert len(line_blocks(panels, 10.0)) == 1


def test_a_listings_caption_is_a_caption_and_a_sentence_about_it_is_not():
    """ "Listing 1. An obstruction-free queue ..." under a code listing (PPoPP) is a caption, kept out of the
    text as figures' are; "Listing 3 shows the code ..." opening a paragraph is text."""
    caption = Block([_line("Listing 1. A queue of pebbles kept in an endless array.", 500, "text", 9)])
    sentence = Block([_line("Listing 3 shows the code for settling a pebble. A settle first", 520, "text", 10)])
    assert is_caption(caption, 10.0, "Times")
    assert not is_caption(sentence, 10.0, "Times")


def test_a_titles_first_word_on_a_line_and_block_of_its_own_is_the_titles(tmp_path):
    """A scan's title set one phrase a line at one size and spacing, the model's blocks cutting it ("Efficient" /
    "String Matching:" "An Aid to" / "Bibliographic Search", CACM 1975): the first word is the title's, not a
    section label, as it stands at the title's line spacing."""
    lines = _with_text(
        [
            _line("Efficient", 99.5, "text", 3, 23.8),
            _line("String Matching:", 125.4, "text", 4, 23.8),
            _line("An Aid to", 151.4, "text", 4, 23.8),
            _line("Bibliographic Search", 177.3, "section-header", 5, 23.8),
            _line("Ada V. Quill and Bo J. Renner", 212.9, "text", 6, 11.7),
        ],
        270,
        11.5,
        box=7,
        size=8.8,
    )
    title = title_of(lines, lines, lines, 8.8)
    assert " ".join(ln.text for ln in title) == "Efficient String Matching: An Aid to Bibliographic Search"


def test_a_scans_title_lines_sized_a_little_apart_are_one_title():
    """A scan's OCR layer sizes the title's two centred lines 21.4 and 20.8 points (one model block): one title."""
    lines = _with_text(
        [
            _line("SIFT: Design and Analysis of a Fault-Tolerant", 52.5, "section-header", 2, 21.4),
            dataclasses.replace(_line("Computer for Lake Pebbles", 82.8, "section-header", 2, 20.8), x0=130),
            _line("ADA QUILL, BO RENNER, AND CY MOSS", 120.1, "text", 3, 11.6),
        ],
        190,
        11,
        box=4,
        size=9.0,
    )
    title = title_of(lines, lines, lines, 9.0)
    assert [ln.text for ln in title] == [lines[0].text, lines[1].text]


def test_a_repositorys_citable_link_cover_page_is_not_the_paper_and_its_doi_line_is_read(tmp_path):
    """A university repository's cover page ("Citation ...", "As Published ...", "Citable Link ...") before an
    IEEE paper, whose DOI the paper prints at its first page's foot as "Digital Object Identifier 10....": the
    cover is no part of the paper, the title is the paper's, and the DOI is read."""
    cover = [
        (LEFT, 70, "Times-Bold", 16, "Pebbles settle where lakes are quiet"),
        (LEFT, 110, "Times-Roman", 10, "Citation Quill, A. et al. Pebbles settle where lakes are quiet. 2031."),
        (LEFT, 125, "Times-Roman", 10, "Publisher Lake Press"),
        (LEFT, 140, "Times-Roman", 10, "Accessed Sat Jul 06 21:36:50 EDT 2031"),
        (LEFT, 155, "Times-Roman", 10, "Citable Link http://hdl.example.org/1721.1/52466"),
        (LEFT, 170, "Times-Roman", 10, "Terms of Use Article is made available in accordance with the policy"),
    ]
    paper = [
        (LEFT, 70, "Times-Roman", 20, "Pebbles Settle Where Lakes Are Quiet"),
        (LEFT, 100, "Times-Roman", 10, "Ada Quill and Bo Renner"),
        (LEFT, 130, "Times-Bold", 10, "I. INTRODUCTION"),
        *column(LEFT, 150, body_lines(40, 7), 10, "Times-Roman"),
        (LEFT, 720, "Times-Roman", 8, f"Digital Object Identifier {DOI}"),
    ]
    rec = _read(draw(tmp_path / "cover.pdf", [cover, paper]))
    assert rec["title"] == "Pebbles Settle Where Lakes Are Quiet"
    assert rec["metadata"]["doi"] == DOI
    assert "Citable Link" not in rec["text"] and "Accessed Sat" not in rec["text"]


def test_a_type3_fonts_tiny_size_is_read_from_its_glyphs(tmp_path):
    """dvips' Type 3 bitmap fonts report a size of 0.24 (their matrix): each such font's size is read from its
    tallest glyph's outline on the page instead, about the size it is set in."""
    path = _drawn_paper(tmp_path / "t3.pdf", body=["Pebbles (quietly) settle in the lakes of Jura"])
    with pdf_mupdf._pymupdf().open(path) as doc:
        page = doc[0]
        spans = [
            s
            for b in page.get_text("rawdict", flags=pdf_mupdf._FLAGS)["blocks"]
            for ln in b.get("lines", ())
            for s in ln["spans"]
        ]
        real = [s["size"] for s in spans]
        for s in spans:
            s["size"] = 0.24
        pdf_mupdf._type3_sizes(page, spans)
    assert [s["size"] for s in spans] == pytest.approx(real, rel=0.25)


def _type3_pdf(path: Path, text: str) -> Path:
    """One line of ``text`` in a Type 3 font whose encoding names each glyph by the character it draws ("/A",
    "/7"), as some dvips output does; each glyph a filled box."""
    codes = sorted({ord(c) for c in text if c != " "} | {32})
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
    ]
    content = b"BT /F1 12 Tf 20 100 Td <%s> Tj ET" % text.encode().hex().encode()
    objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    differences = " ".join(f"{c} /{chr(c)}" if c != 32 else "32 /space" for c in codes)
    widths = " ".join("600" if c in codes else "0" for c in range(codes[0], codes[-1] + 1))
    procs = " ".join(f"/{chr(c) if c != 32 else 'space'} {7 + k} 0 R" for k, c in enumerate(codes))
    objs.append(
        f"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 500 700] /FontMatrix [0.001 0 0 0.001 0 0] "
        f"/CharProcs 6 0 R /Encoding << /Type /Encoding /Differences [{differences}] >> "
        f"/FirstChar {codes[0]} /LastChar {codes[-1]} /Widths [{widths}] >>".encode()
    )
    objs.append(f"<< {procs} >>".encode())
    for c in codes:
        glyph = b"600 0 0 0 500 700 d1" + (b"" if c == 32 else b" 0 0 500 700 re f")
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(glyph), glyph))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (k, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def test_digits_a_type3_font_names_by_themselves_are_read(tmp_path):
    """A Type 3 font naming its glyphs by the character they draw ("/7"): MuPDF reads a digit's name as a code
    point (U+0007; "/9" a tab), so a paper's years, section numbers and equations lost their digits. They are
    the digits."""
    path = _type3_pdf(tmp_path / "t3.pdf", "Web 1998, 7.4 and 209")
    with pdf_mupdf._pymupdf().open(path) as doc:
        words, unmapped = pdf_mupdf.page_words(doc[0])
    assert [w["text"] for w in words] == ["Web", "1998,", "7.4", "and", "209"]
    assert unmapped == 0


def test_an_abstract_an_ocr_layer_sizes_line_by_line_is_kept():
    """A scan's text layer gives each line of the abstract its own size (8.1 to 9.4 pt): the lines fall into blocks
    of their own, each shorter than a paragraph, before the first heading. The model read them as one paragraph:
    it is the abstract, not front matter; the authors' names in capitals above it stay out."""
    tops = [191.4, 198.3, 210.1, 218.2, 225.7, 236.6, 240.8, 254.3, 263.3, 267.4, 276.3, 284.8, 300.4, 308.5]
    sizes = [8.9, 9.4, 8.6, 9.1, 8.2, 9.1, 8.8, 8.5, 8.1, 8.6, 8.2, 9.0, 8.1, 8.1]
    abstract = body_lines(len(sizes), 71, 9)
    first = [
        _line("Pebbles Settle Where Lakes Are Quiet", 52, "section-header", 1, size=21.4),
        _line("JOHN H. RIVERS, ANNA LAKE, SENIOR MEMBER, IEEE,", 120, "text", 2, size=11.6),
        _line("AND CHARLES B. STONE", 132, "text", 2, size=11.6),
        *(_line(t, top, "text", 3, size=s) for t, top, s in zip(abstract, tops, sizes)),
        _line("I. INTRODUCTION", 330, "section-header", 4, size=9.3),
        *(_line(t, 345 + 11 * k, "text", 5, size=9.8) for k, t in enumerate(body_lines(30, 73, 9))),
    ]
    rec = pdf._paper([first], {})
    text = "\n".join(s[1] for s in rec["sections"])
    assert all(" ".join(t.split()[1:-1]) in text for t in abstract)
    assert "RIVERS" not in text


def test_an_abstracts_last_sentence_before_a_notice_on_its_line_is_kept():
    """A journal prints the copyright notice on the abstract's last line, after its last sentence ("... techniques.
    © 2003 Wiley Periodicals, Inc. Random Struct."), set smaller: that line is a block of its own, a notice by its
    sign. The model's box holds it with the abstract: the sentence's end stays, the notice goes."""
    abstract = [
        "ABSTRACT: Pebbles on the beds of quiet lakes settle into layers sorted by size,",
        *body_lines(2, 79, 12),
        "which the cores record. In this note, we date",
    ]
    first = [
        _line("Pebbles Settle Where Lakes Are Quiet", 60, "title", 1, size=16),
        _line("Anna Rivers, Tom Lake", 90, "section-header", 2, size=11),
        *(_line(t, 120 + 11 * k, "text", 3, size=9) for k, t in enumerate(abstract)),
        _line("the layers by counting pebbles. © 2003 Lake Periodicals, Inc. Pebble Stud.", 164, "text", 3, size=8),
        _line("Lakes, 22: 60-65, 2002", 173, "text", 3, size=8),
        _line("1. INTRODUCTION", 200, "section-header", 4),
        *(_line(t, 215 + 12 * k, "text", 5) for k, t in enumerate(body_lines(20, 73, 9))),
    ]
    rec = pdf._paper([first], {})
    text = "\n\n".join(s[1] for s in rec["sections"])
    assert "In this note, we date the layers by counting pebbles." in text  # one paragraph
    assert "Lake Periodicals" not in text and "2002" not in text


def test_dates_or_a_journal_line_before_a_notice_in_the_abstracts_box_stay_out():
    """The sentence before a notice stays only if it is no furniture itself: "Received ...; accepted ...", a
    journal's citation line. An affiliation set a size smaller in the abstract's box is still front matter, and a
    long list of authors in it takes nothing from the abstract."""
    for line in (
        "Received 3 May 2002; accepted 9 June 2002. © 2002 Lake Science Ltd. All rights reserved.",
        "J. Lake Sci. 22 (2002) 60-65. © 2002 Lake Science Ltd. All rights reserved.",
    ):
        names = ", ".join(
            f"A. {n}son" for n in ("Rivers Lake Stone Brook Field Marsh Glen Dale Heath Moor " * 6).split()
        )
        first = [
            _line("Pebbles Settle Where Lakes Are Quiet", 60, "title", 1, size=16),
            *(_line(names[k : k + 90], 80 + 9 * n, "text", 3, size=9) for n, k in enumerate(range(0, len(names), 90))),
            _line("Department of Earth Sciences, University of Lakeside, Lakeside 90210", 230, "text", 3, size=8),
            *(_line(t, 245 + 11 * k, "text", 3, size=10) for k, t in enumerate(body_lines(6, 5, 10))),
            _line(line, 320, "text", 3, size=8),
            _line("1. INTRODUCTION", 340, "section-header", 4),
            *(_line(t, 355 + 12 * k, "text", 5) for k, t in enumerate(body_lines(20, 73, 9))),
        ]
        rec = pdf._paper([first], {})
        text = "\n\n".join(s[1] for s in rec["sections"])
        assert body_lines(6, 5, 10)[0] in text
        assert "2002" not in text and "Lakeside" not in text and "Riversson" not in text
