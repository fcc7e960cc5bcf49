"""PDF defect classes of real papers, each as a reduction of the layout that carries it (tests/pdf_pages.py; the
words are written for these tests): the title repeated as a smaller running head, a front page's licence and
citation blocks (the DOI printed only there), a venue footer split by the column gutter, a bold run-in
"Abstract—" paragraph, a reference list without a heading, a caption told by its font rather than its
punctuation (also right under a figure of text lines), IEEE's small-caps headings at the body size, an ISSN
price line or item identifier on the front page, ligature glyphs without a Unicode map, and a journal's section
label above a short article's title; and what those rules must not take for one of them: a year range before a
bracket (not an ISSN), authors in capitals (not a numbered heading), a TeX title's first line (not a label,
whatever its font's style name)."""

from __future__ import annotations

import re

from pdf_pages import HEIGHT, LEFT, RIGHT, body_lines, column, draw
from pdf_samples import DOI, hand_pdf, make_paper_pdf
from reportlab.pdfbase.pdfmetrics import stringWidth

from sciqag_dataset.builders.ingest import pdf, read_file
from sciqag_dataset.builders.ingest.pdf_blocks import is_heading
from sciqag_dataset.builders.ingest.pdf_furniture import furniture_block
from sciqag_dataset.builders.ingest.pdf_line import Block, Line
from sciqag_dataset.builders.ingest.pdf_title import _title


def _read(path):
    [rec] = read_file(path)
    assert "text" in rec, rec
    return rec


def test_a_title_repeated_as_a_smaller_running_head_is_still_the_title(tmp_path):
    # an ACM journal: the title in large type on page 1, and its first words again (small, with the page number)
    # atop odd pages: the same letters, not the same line
    title = ("Placing Hot Files Across the Parallel Disks of", "Streaming Servers")
    page1 = [
        (LEFT, 90, "Times-Roman", 17, title[0]),
        (LEFT, 112, "Times-Roman", 17, title[1]),
        (LEFT, 140, "Times-Roman", 10, "ADA QUILL and BO RENNER"),
        *column(LEFT, 170, body_lines(40), 10, "Times-Roman"),
    ]
    later = [
        [
            (LEFT, 40, "Times-Roman", 8, f"{n} \u00b7 Quill and Renner"),
            *column(LEFT, 80, body_lines(40, n), 10, "Times-Roman"),
        ]
        if n % 2 == 0
        else [
            (LEFT, 40, "Times-Roman", 8, f"Placing Hot Files Across the Parallel Disks \u00b7 {n}"),
            *column(LEFT, 80, body_lines(40, n), 10, "Times-Roman"),
        ]
        for n in (2, 3, 4)
    ]
    rec = _read(draw(tmp_path / "acm_journal.pdf", [page1, *later]))
    assert rec["title"] == " ".join(title)
    assert "Quill and Renner" not in rec["text"]  # the even pages' head is still furniture


def _acm_front(doi: str) -> list[tuple]:
    """Page 1 of an ACM conference paper: the abstract in the left column, then the "ACM Reference Format"
    citation (the only place besides the licence block that prints the DOI) and the permission notice, set
    small; the introduction starts at the top of the right column."""
    cite = [
        "ACM Reference Format:",
        "Ada Quill and Bo Renner. 2031. Tracing Slow Relaxations in Layered",
        "Magnets. In Proceedings of the Meeting on Slow Things (MST '31),",
        "May 2031, Lyon, France. ACM, New York, NY, USA, 9 pages.",
        f"https://doi.org/{doi}",
    ]
    notice = [
        "Permission to make digital or hard copies of all or part of this work for personal or",
        "classroom use is granted without fee provided that copies are not made or distributed",
        "for profit or commercial advantage and that copies bear this notice and the full citation",
        "on the first page. Copyrights for components of this work owned by others must be honored.",
        "MST '31, May 2031, Lyon, France",
        "\u00a9 2031 Copyright held by the owner/author(s). Publication rights licensed to ACM.",
        "ACM ISBN 978-1-5555-0042-7/31/05...$15.00",
        f"https://doi.org/{doi}",
    ]
    return [
        (LEFT, 80, "Times-Bold", 16, "Tracing Slow Relaxations in Layered Magnets"),
        (LEFT, 104, "Times-Roman", 11, "Ada Quill, Bo Renner"),
        (LEFT, 140, "Times-Bold", 10, "ABSTRACT"),
        *column(LEFT, 156, body_lines(14, 1, 7), 9, "Times-Roman", 11),
        *column(LEFT, 330, cite, 7.5, "Times-Roman", 9.5),
        *column(LEFT, 390, notice, 6.5, "Times-Roman", 8),
        (RIGHT, 140, "Times-Bold", 10, "1 INTRODUCTION"),
        *column(RIGHT, 156, body_lines(50, 2, 7), 9, "Times-Roman", 11),
    ]


def test_the_doi_of_a_citation_line_and_the_front_page_licence_block(tmp_path):
    doi = "10.5555/3580000.3580042"
    page2 = [*column(LEFT, 60, body_lines(60, 3, 7), 9, "Times-Roman", 11)]
    page2 += [*column(RIGHT, 60, body_lines(60, 4, 7), 9, "Times-Roman", 11)]
    rec = _read(draw(tmp_path / "acm.pdf", [_acm_front(doi), page2]))
    assert rec["metadata"]["doi"] == doi
    for furniture in ("Permission to make", "ISBN", "Copyright held", "ACM Reference Format", "$15.00"):
        assert furniture not in rec["text"]
    assert rec["sections"][0]["heading"].lower() == "abstract"  # kept, and whole
    assert rec["sections"][0]["text"] == " ".join(body_lines(14, 1, 7))


def test_a_venue_footer_on_the_first_page_split_by_the_gutter_is_not_text(tmp_path):
    # ACL's first page: the proceedings line set small at the foot, broken across both columns' space
    page1 = [
        (LEFT, 80, "Times-Bold", 15, "Tracing Slow Relaxations in Layered Magnets"),
        (LEFT, 104, "Times-Roman", 11, "Ada Quill"),
        *column(LEFT, 140, body_lines(44, 5, 7), 10, "Times-Roman", 12.5),
        *column(RIGHT, 140, body_lines(44, 6, 7), 10, "Times-Roman", 12.5),
        (LEFT, 715, "Times-Italic", 8, "Proceedings of the Ninth Workshop on Slow"),
        (RIGHT, 715, "Times-Italic", 8, "Magnets and Glasses, pages 11\u201319,"),
        (LEFT, 724, "Times-Roman", 8, "Lyon, France, May 2031. \u00a9 2031 Society for Slow Things"),
    ]
    page2 = [*column(LEFT, 60, body_lines(50, 7, 7), 10, "Times-Roman", 12.5)]
    rec = _read(draw(tmp_path / "acl.pdf", [page1, page2]))
    for furniture in ("Proceedings of", "pages 11", "Society for Slow Things", "Lyon, France"):
        assert furniture not in rec["text"]


def test_a_bold_run_in_abstract_is_the_abstract(tmp_path):
    # IEEE: "Abstract—" in bold italic run into the abstract, which is all set in bold, a size below the body
    lead = "Abstract\u2014"
    x = LEFT + stringWidth(lead, "Times-BoldItalic", 9)
    abstract = [
        "We trace slow relaxations in layered magnets",
        "with a sweep that cools every sample at the",
        "same rate, and we find that the contacts do",
        "not drift while the carriers freeze out on a",
        "scale of hours rather than of minutes.",
    ]
    page1 = [
        (LEFT, 40, "Times-Roman", 8, "12 JOURNAL OF SLOW MAGNETS, VOL. 3, NO. 2, MAY 2031"),
        (LEFT, 80, "Times-Roman", 22, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Roman", 11, "Ada Quill and Bo Renner, Member, IEEE"),
        (LEFT, 150, "Times-BoldItalic", 9, lead),
        (x, 150, "Times-Bold", 9, abstract[0]),
        *column(LEFT, 160.5, abstract[1:], 9, "Times-Bold", 10.5),
        (LEFT, 230, "Times-Roman", 10, "I. INTRODUCTION"),
        *column(LEFT, 250, body_lines(38, 8, 7), 10, "Times-Roman", 12),
        *column(RIGHT, 150, body_lines(44, 9, 7), 10, "Times-Roman", 12),
    ]
    page2 = [
        (LEFT, 40, "Times-Roman", 8, "QUILL AND RENNER: SLOW RELAXATIONS 13"),
        *column(LEFT, 60, body_lines(50, 10, 7), 10, "Times-Roman", 12),
    ]
    rec = _read(draw(tmp_path / "ieee.pdf", [page1, page2]))
    [abstract] = [s["text"] for s in rec["sections"] if s["heading"] == "Abstract"]
    assert rec["ingest"]["has_abstract"]
    assert abstract.startswith("We trace slow relaxations in layered magnets with a sweep that cools every sample")
    assert "rather than of minutes." in abstract


def _entries(numbered: bool) -> list[str]:
    if numbered:
        return [
            "[1] A. Quill and B. Renner, \u201cSlow relaxation in layered magnets,\u201d J. Slow",
            "Phys., vol. 3, no. 2, pp. 11\u201319, 2029.",
            "[2] C. Writer, \u201cContacts that do not drift,\u201d in Proc. Meeting on Slow Things,",
            "2030, pp. 101\u2013108.",
            "[3] D. Other and E. Third, \u201cFreezing out carriers,\u201d Phys. Slow Lett., vol. 12,",
            "pp. 1\u20139, 2028.",
            "[4] F. Fourth, Cooling Stages, 2nd ed. Lyon: Slow Press, 2027.",
        ]
    return [
        "Other, D., and Third, E. 2028. Freezing out carriers. Phys. Slow Lett.",
        "12:1\u20139.",
        "Quill, A., and Renner, B. 2029. Slow relaxation in layered magnets. J.",
        "Slow Phys. 3(2):11\u201319.",
        "Writer, C. 2030. Contacts that do not drift. In Proceedings of the",
        "Meeting on Slow Things, 101\u2013108.",
        "Fourth, F. 2027. Cooling Stages. Lyon: Slow Press.",
    ]


def test_a_reference_list_without_a_heading_is_found_by_its_entries(tmp_path):
    for numbered in (True, False):
        page1 = [
            (LEFT, 80, "Times-Bold", 16, "Slow Relaxations in Layered Magnets"),
            (LEFT, 110, "Times-Bold", 11, "1 Introduction"),
            *column(LEFT, 130, body_lines(40, 11, 7), 10, "Times-Roman", 12.5),
        ]
        page2 = [
            (LEFT, 60, "Times-Bold", 11, "2 Conclusion"),
            *column(
                LEFT, 80, body_lines(20, 12, 7) + ["so the stage is now left to cool overnight."], 10, "Times-Roman"
            ),
            *column(LEFT, 360, _entries(numbered), 8, "Times-Roman", 9.5),
        ]
        rec = _read(draw(tmp_path / f"refs{numbered}.pdf", [page1, page2]))
        assert rec["text"].endswith("so the stage is now left to cool overnight."), numbered
        assert "Slow Press" not in rec["text"] and "Writer" not in rec["text"], numbered
        assert rec["ingest"]["references_dropped"] >= 4, numbered


def test_a_caption_is_told_by_its_label_and_a_font_unlike_the_body(tmp_path):
    # "Fig. 2" and a smaller sans font; its words alone read like a sentence ("... and ...")
    page1 = [
        (LEFT, 80, "Times-Bold", 16, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Bold", 11, "1 Introduction"),
        *column(LEFT, 130, body_lines(20, 13, 7), 10, "Times-Roman", 12.5),
        (LEFT, 400, "Helvetica", 8, "Fig. 2 Resistance and Hall signal of the three films on cooling"),
        *column(LEFT, 430, body_lines(20, 14, 7), 10, "Times-Roman", 12.5),
    ]
    page2 = [
        *column(
            LEFT,
            60,
            ["Figure 2 shows the same trend for the thicker films."] + body_lines(30, 15, 7),
            10,
            "Times-Roman",
        )
    ]
    rec = _read(draw(tmp_path / "caption.pdf", [page1, page2]))
    assert "Hall signal" not in rec["text"]
    assert "Figure 2 shows the same trend for the thicker films." in rec["text"]  # the body's own font: text
    assert HEIGHT > 0


def test_the_layout_pass_reads_the_same_paper_from_pdfium_characters(tmp_path, monkeypatch):
    # the faster character source (measured in bench/ingest.py, not the default): the same title, DOI, sections
    path = make_paper_pdf(tmp_path / "paper.pdf")
    monkeypatch.setattr(pdf, "BACKEND", "pdfplumber")
    [plumber] = read_file(path)
    monkeypatch.setattr(pdf, "BACKEND", "pdfium")
    [pdfium] = read_file(path)
    assert pdfium["ingest"]["extractor"] == "pdf/pdfium" and pdfium["metadata"]["doi"] == DOI
    assert pdfium["title"] == plumber["title"]
    assert [s["heading"] for s in pdfium["sections"]] == [s["heading"] for s in plumber["sections"]]
    assert "Writer" not in pdfium["text"] and "Page 1 of" not in pdfium["text"]


def test_a_title_mark_set_in_the_space_between_two_words_does_not_join_them(tmp_path):
    # a "Note" with an affiliation mark raised in the space after a title word: the mark goes, the space stays
    before, mark, after = "Slow Relaxations", "a", "in Layered Magnets"
    x = LEFT + stringWidth(before, "Times-Bold", 18) + 0.5
    page1 = [
        (LEFT, 90, "Times-Bold", 18, before),
        (x, 84, "Times-Bold", 10, mark),
        (x + stringWidth(mark, "Times-Bold", 10) + 0.5, 90, "Times-Bold", 18, after),
        (LEFT, 120, "Times-Roman", 10, "Ada Quill"),
        *column(LEFT, 150, body_lines(40, 16, 7), 10, "Times-Roman", 12.5),
    ]
    rec = _read(draw(tmp_path / "note.pdf", [page1]))
    assert rec["title"] == "Slow Relaxations in Layered Magnets"


def _small_caps(x: float, y: float, label: str, size: float = 10) -> list[tuple]:
    """A heading in small caps as IEEE sets it: each word's first letter at the body size, the rest in capitals
    a size smaller, on one baseline ("I. INTRODUCTION")."""
    out = []
    for word in label.split():
        head, tail = (word, "") if word.endswith(".") else (word[0], word[1:])
        out.append((x, y, "Times-Roman", size, head))
        x += stringWidth(head, "Times-Roman", size)
        if tail:
            out.append((x, y, "Times-Roman", 0.8 * size, tail))
            x += stringWidth(tail, "Times-Roman", 0.8 * size)
        x += stringWidth(" ", "Times-Roman", size)
    return out


def test_numbered_small_caps_headings_at_the_body_size_are_headings(tmp_path):
    # IEEE: "I. INTRODUCTION", "II. RELATED WORK" centred in the column, neither larger nor bold than the body
    page1 = [
        (LEFT, 80, "Times-Roman", 22, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Roman", 11, "Ada Quill and Bo Renner"),
        *_small_caps(LEFT + 80, 150, "I. INTRODUCTION"),
        *column(LEFT, 170, body_lines(20, 17, 7), 10, "Times-Roman", 12),
        *_small_caps(LEFT + 70, 440, "II. RELATED WORK"),
        *column(LEFT, 460, body_lines(20, 18, 7), 10, "Times-Roman", 12),
    ]
    page2 = [
        *_small_caps(LEFT + 80, 60, "III. COOLING STAGES"),
        *column(LEFT, 80, body_lines(30, 19, 7), 10, "Times-Roman", 12),
    ]
    rec = _read(draw(tmp_path / "ieee_heads.pdf", [page1, page2]))
    heads = [s["heading"] for s in rec["sections"]]
    assert heads[-3:] == ["INTRODUCTION", "RELATED WORK", "COOLING STAGES"], heads
    assert "RELATED WORK" not in " ".join(s["text"] for s in rec["sections"])


def test_an_issn_price_line_or_item_identifier_on_the_front_page_is_not_text(tmp_path):
    # the journal's ISSN with a price ("0000-0000/$ - see front matter", "1111-2222/31$10.00") or inside a
    # publisher item identifier ("S 1111-2222(31)00042-7") at the foot of page 1's first column, set small, with
    # the copyright sign in a font without a Unicode map (nothing but the ISSN tells what the line is)
    page1 = [
        (LEFT, 80, "Times-Roman", 20, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Roman", 11, "Ada Quill and Bo Renner"),
        (LEFT, 140, "Times-Bold", 10, "1 Introduction"),
        *column(LEFT, 160, body_lines(40, 20, 7), 10, "Times-Roman", 12.5),
        *column(RIGHT, 140, body_lines(48, 21, 7), 10, "Times-Roman", 12.5),
        (LEFT, 680, "Times-Roman", 7.5, "Manuscript received May 2, 2031; revised June 9, 2031. The authors are"),
        (LEFT, 689, "Times-Roman", 7.5, "with the Slow Magnets Laboratory, Lyon, France."),
        (LEFT, 698, "Times-Roman", 7.5, "Publisher Item Identifier S 1111-2222(31)00042-7."),
        (LEFT, 722, "Times-Roman", 7.5, "0000-0000/$ - see front matter 2031 Slow Press"),
        (LEFT, 731, "Times-Roman", 7.5, "doi:10.5555/j.slow.2031.01.002"),
    ]
    page2 = [*column(LEFT, 60, body_lines(50, 22, 7), 10, "Times-Roman", 12.5)]
    rec = _read(draw(tmp_path / "issn.pdf", [page1, page2]))
    for furniture in ("see front matter", "0000-0000", "Item Identifier", "Manuscript received"):
        assert furniture not in rec["text"], furniture
    assert rec["metadata"]["doi"] == "10.5555/j.slow.2031.01.002"
    assert " ".join(body_lines(40, 20, 7)[:3]) in rec["text"]


def test_a_caption_set_right_under_a_figure_of_text_lines_is_not_text(tmp_path):
    # a listing drawn as the figure, in the body's font and spacing, and its caption right under it: the label
    # in bold, the rest in the body's font, so the caption line alone is neither bold nor of another size
    listing = ["<stage cooled='slow'>", "  <sweep rate='1 K/min'/>", "  <leads fresh='yes'/>", "</stage>"]
    label = "Figure 1."
    page1 = [
        (LEFT, 80, "Times-Bold", 16, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Bold", 11, "1 Introduction"),
        *column(LEFT, 130, body_lines(20, 23, 7), 10, "Times-Roman", 12),
        *column(LEFT + 20, 390, listing, 10, "Times-Roman", 12),
        (LEFT, 390 + 12 * len(listing), "Times-Bold", 10, label),
        (
            LEFT + stringWidth(label + " ", "Times-Bold", 10),
            390 + 12 * len(listing),
            "Times-Roman",
            10,
            "Log of a sweep",
        ),
        *column(LEFT, 460, body_lines(20, 24, 7), 10, "Times-Roman", 12),
    ]
    page2 = [
        *column(LEFT, 60, ["As Figure 1. shows, the stage log is kept."] + body_lines(30, 25, 7), 10, "Times-Roman")
    ]
    rec = _read(draw(tmp_path / "listing.pdf", [page1, page2]))
    assert "Log of a sweep" not in rec["text"]
    assert "As Figure 1. shows, the stage log is kept." in rec["text"]  # the body's own font: text


def _unmapped_ligatures(path):
    """A page whose fonts have no Unicode map for their ligature glyphs (code 2 "fi", code 3 "fl", an encoding
    that names them with names no glyph list knows), alike in the title's bold and the body's roman of one family;
    the abstract, in an italic font that sets no ligatures, spells a few of the words out. Text extractors print
    the glyphs as "(cid:2)", or nothing."""
    title = b"Simpli\002ed Sweeps of Layered Magnets"
    abstract = [b"We report how the films were defined and why each sweep", b"is made by a slow stage."]
    body = [
        b"The \002lms were de\002ned by a mask in the \002rst run and the stage",
        b"cooled so slowly that the sweep was made a single ramp and then",
        b"the contacts stayed \003at while the \002lms were cooled and the",
        b"resistance was logged. We de\002ned each run by its rate and the",
        b"\002rst of them set the scale for all the others that followed.",
    ] * 4
    rows = [(b"/F2 18", title), (b"/F3 10", b"")] + [(b"/F3 10", ln) for ln in abstract] + [(b"/F3 10", b"")]
    rows += [(b"/F1 10", ln) for ln in body]
    content = b"BT 72 720 Td " + b" ".join(b"%s Tf (%s) Tj 0 -14 Td" % row for row in rows) + b" ET"
    encoding = b"/Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [2 /g2 3 /g3] >>"
    fonts = [
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman " + encoding + b" >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Bold " + encoding + b" >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Italic /Encoding /WinAnsiEncoding >>",
    ]
    return hand_pdf(path, content, fonts)


def test_a_ligature_glyph_without_a_unicode_map_is_named_by_the_papers_own_words(tmp_path, monkeypatch):
    path = _unmapped_ligatures(tmp_path / "cid_ligatures.pdf")
    for backend in ("pdfplumber", "pdfium"):
        monkeypatch.setattr(pdf, "BACKEND", backend)
        rec = _read(path)
        # the title's glyph is its family's: named by the body's words, though the title's word is spelt nowhere
        assert rec["title"] == "Simplified Sweeps of Layered Magnets", backend
        text = rec["text"]
        # the body's glyph is "fi" by the words the abstract spells; then "first", spelt nowhere, is read too
        assert "The films were defined by a mask in the first run" in text, backend
        assert "contacts stayed at while" in text, backend  # "flat": no word of the paper names the glyph
        assert not re.search("[\ue000-\uf8ff\U000f0000-\U0010ffff]", text), backend  # no mark is left


def test_a_section_label_above_a_short_articles_title_is_not_the_title(tmp_path):
    # a "Notes" or "Communication" article: the journal's section label on page 1 above the real title, set
    # larger than it (a banner) or at its size right above it, in capitals or in a font of its own
    title = ("Slow Relaxations in Layered", "Magnets at Low Temperature")
    rest = [(LEFT, 150, "Times-Roman", 11, "Ada Quill and Bo Renner"), *column(LEFT, 180, body_lines(40, 27, 7))]
    banner = [(LEFT, 60, "Helvetica-Bold", 22, "NOTES"), (LEFT, 100, "Times-Bold", 16, title[0])]
    above = [(LEFT, 80, "Helvetica-Bold", 16, "Communication"), (LEFT, 100, "Times-Bold", 16, title[0])]
    for name, page1 in (("banner", banner), ("above", above)):
        page1 = [*page1, (LEFT, 120, "Times-Bold", 16, title[1]), *rest]
        rec = _read(draw(tmp_path / f"{name}.pdf", [page1]))
        assert rec["title"] == " ".join(title), name
    # a title's own short first line, in the title's font, stays in it
    page1 = [
        (LEFT, 100, "Times-Bold", 16, "Magnets:"),
        (LEFT, 120, "Times-Bold", 16, "Slow Relaxations in Layers"),
        *rest,
    ]
    assert _read(draw(tmp_path / "short.pdf", [page1]))["title"] == "Magnets: Slow Relaxations in Layers"
    page1 = [
        (LEFT, 100, "Times-Italic", 16, "Bacillus subtilis"),
        (LEFT, 120, "Times-Bold", 16, "Spores Survive Slow Cooling"),
        *rest,
    ]
    assert _read(draw(tmp_path / "species.pdf", [page1]))["title"] == "Bacillus subtilis Spores Survive Slow Cooling"


def test_a_year_range_before_a_bracket_is_not_an_issn_and_an_unspaced_item_identifier_is():
    # the ISSN's shape alone is a year range too ("1990–2010 (cm)"): a note of the body set small with one is
    # text; the item identifier printed without its space ("S1111-2222(31)...") is still the front page's
    def small(text):
        return Block([Line(text, 7.5, False, 600, 608, LEFT, 1, 1)])

    for note in (
        "Annual snowfall in 1990–2010 (cm) was read from the three gauges.",
        "Samples logged 2001-2005 (n = 48) came from the oldest batch.",
    ):
        assert furniture_block(small(note), note, 10) is None, note
    pii = "Publisher Item Identifier S1111-2222(31)00042-7."
    assert furniture_block(small(pii), pii, 10) == "notes"


def test_authors_in_capitals_at_the_body_size_are_not_a_numbered_heading(tmp_path):
    # "A. QUILL, B. RENNER AND C. MOSS" opens with what reads as a letter numbering ("A. Setup"), in capitals like
    # IEEE's small-caps headings; only a number or a Roman numeral makes a heading of capitals at the body size
    page1 = [
        (LEFT, 80, "Times-Roman", 22, "Slow Relaxations in Layered Magnets"),
        (LEFT, 110, "Times-Roman", 10, "A. QUILL, B. RENNER AND C. MOSS"),
        *column(LEFT, 140, body_lines(6, 16, 7), 10, "Times-Roman", 12),
        *_small_caps(LEFT + 80, 230, "I. INTRODUCTION"),
        *column(LEFT, 250, body_lines(20, 17, 7), 10, "Times-Roman", 12),
        *_small_caps(LEFT + 70, 520, "II. MATERIALS AND METHODS"),  # " AND " alone is no author line
        *column(LEFT, 540, body_lines(12, 18, 7), 10, "Times-Roman", 12),
    ]
    rec = _read(draw(tmp_path / "authors.pdf", [page1]))
    heads = [s["heading"] for s in rec["sections"]]
    assert not any("QUILL" in h for h in heads), heads
    assert heads[-2:] == ["INTRODUCTION", "MATERIALS AND METHODS"], heads
    line = Line("C. ELEGANS", 10, False, 100, 110, LEFT, 1, 1, [{"text": "C.", "fontname": "Times-Roman"}])
    assert not is_heading(line, 10)


def test_a_tex_titles_short_first_line_stays_when_the_next_opens_in_italic():
    # Computer Modern names its styles in the font's name (CMBX12 bold, CMTI12 italic): one family, so the
    # title's first line "Reduction of" is the title's, not a section label in a font of its own
    def line(text, top, fonts):
        words = [{"text": w, "fontname": f"ABCDEF+{f}"} for w, f in zip(text.split(), fonts)]
        return Line(text, 17.2, False, top, top + 17, LEFT, 1, 0, words)

    first = [
        line("Reduction of", 100, ["CMBX12", "CMBX12"]),
        line("Escherichia Growth in Slow Cooling", 122, ["CMTI12", "CMBX12", "CMBX12", "CMBX12", "CMBX12"]),
        *(line(t, 170 + 12 * k, ["CMR10"] * 7) for k, t in enumerate(body_lines(20, 23, 7))),
    ]
    for ln in first[2:]:
        ln.size = 10
    assert [ln.text for ln in _title(first, 10)] == ["Reduction of", "Escherichia Growth in Slow Cooling"]
