"""Publisher HTML through trafilatura and the scholarly rules: div and span paragraphs, navigation, reference
lists with their link text, caption titles, the abstract, ±, subscripts, citation superscripts, and pages that
are not articles. The page (tests/fixtures/ingest/publisher_page.html) is written for these tests in the shape
publisher pages have."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciqag_dataset.builders.ingest import read_file

FIX = Path(__file__).parents[1] / "fixtures" / "ingest"


@pytest.fixture(scope="module")
def page() -> dict:
    [rec] = read_file(FIX / "publisher_page.html")
    return rec


def test_the_article_is_read_whole_and_nothing_else(page):
    assert page["title"] == "Nickel Phosphide Nanosheets Split Water at Low Overpotential"
    assert page["metadata"]["doi"] == "10.5555/jic.2031.777"
    assert [s["heading"] for s in page["sections"]] == [
        "Abstract",
        "Introduction",
        "Results and Discussion",
        "Conclusions",
    ]
    sections = {s["heading"]: s["text"] for s in page["sections"]}
    # a first paragraph in a bare span and div paragraphs (class NLM_p, Para) are body text
    assert sections["Introduction"].startswith("Hydrogen from water needs cheap cathodes")
    assert "ratio of nickel to phosphorus" in sections["Introduction"]
    assert "46 mV per decade" in sections["Results and Discussion"] and "no nickel was found" in page["text"]
    # the abstract is the abstract, not the whole body
    assert sections["Abstract"].startswith("Nanosheets of Ni12P5 drive") and "Tafel" not in sections["Abstract"]
    text = page["text"]
    for gone in (
        "Jump to main content",
        "Top of Page",
        "Article tools",
        "Download PDF",
        "Crossref",
        "PubMed",
        "A. Writer",
        "Polarisation curves",
        "sulfuric acid",
        "Privacy",
        "Log in",
        "Catalyst",
    ):
        assert gone not in text, gone  # navigation, references, captions, tables, footer
    assert "98 ± 4 mV" in text and "4 ± 1 nm" in text  # ± kept
    assert "Ni12P5" in text and "Ni2P reference" in text and "cm^−2" in text  # formulas whole, exponents marked
    assert "can pay." in text and "^21" not in text and "23" not in sections["Introduction"]  # citations gone
    q = page["ingest"]
    assert q["extractor"] == "html/trafilatura" and q["has_abstract"] and q["references_dropped"] == 4


def test_a_page_that_is_not_an_article_is_refused(tmp_path):
    results = "".join(
        f'<li><a href="/doi/10.5555/x.{k}">Result {k}: a study of films</a> <span>2031</span></li>' for k in range(30)
    )
    (tmp_path / "search.html").write_text(
        f"<html><head><title>Search results</title></head><body><nav><a href='/'>"
        f"Home</a></nav><h1>Search results for perovskite</h1><ul>{results}</ul>"
        "</body></html>",
        encoding="utf-8",
    )
    [item] = read_file(tmp_path / "search.html")
    assert item["error"].startswith("not an article page")


def test_charsets_line_breaks_and_pages_wrapped_in_a_form(tmp_path):
    body = (
        "<h1>Heat of Fusion</h1><p>The melt reached 25 \u00b0C with \u00b1 2 K error<br>over runs of one "
        "hour, in all of the runs we made for this short note on a salt.</p>"
    )
    (tmp_path / "latin.html").write_bytes(
        (
            '<html><head><meta charset="iso-8859-1"><meta name="citation_title" '
            f'content="Heat of Fusion"></head><body><article>{body}</article>'
            "</body></html>"
        ).encode("latin-1")
    )
    (tmp_path / "aspnet.html").write_text(
        '<html><head><meta name="citation_title" content="Heat of Fusion">'
        f'</head><body><form id="aspnetForm"><article>{body}</article></form>'
        "</body></html>",
        encoding="utf-8",
    )
    for name in ("latin.html", "aspnet.html"):
        [rec] = read_file(tmp_path / name)
        assert "25 °C with ± 2 K error over runs" in rec["text"], name


def test_a_journal_page_in_the_shapes_real_ones_have():
    """Folded jump menus in every section, citation links "(1)" that call a script, a structured abstract known
    only by its heading, a menu with headings outside <nav>, and the journal's notes (citation, dates, copyright)."""
    [rec] = read_file(FIX / "journal_page.html")
    assert [s["heading"] for s in rec["sections"]] == ["Abstract", "Introduction", "Results", "Conclusions"]
    sections = {s["heading"]: s["text"] for s in rec["sections"]}
    assert sections["Abstract"] == (
        "Background: Thin layered double hydroxide crystals exchange nitrate within minutes, faster than the thick "
        "crystals used as sorbents so far. Results: The basal spacing fell from 0.89 nm to 0.76 nm during exchange, "
        "which finished in twelve minutes at room temperature."
    )
    assert sections["Introduction"].startswith("Layered double hydroxides take up anions")
    assert "The results paragraph 6 adds a sentence of its own." in sections["Results"]
    assert sections["Conclusions"].endswith("The conclusions paragraph 1 adds a sentence of its own.")
    for gone in (
        "Submit your Manuscript",
        "peer review",
        "Citation:",
        "Received",
        "Copyright",
        "CC BY",
        "(2)",
        "Jump to",
        "AbstractIntroduction",
        "A. Writer",
        "Privacy",
        "Ada Quill",
        "S1 Movie",
        "swelling",
    ):
        assert gone not in rec["text"], gone
    assert rec["ingest"]["references_dropped"] == 2


def test_paragraphs_in_bare_spans_and_a_reference_heading_in_a_wrapper(tmp_path):
    """As one publisher sets its articles: each paragraph a bare <span> after its <h2>, the article's notes as
    short lines before the first heading, and "References" wrapped in a <span> of its own, the list after it."""
    para = "The {} of the salt was measured three times at room temperature and the runs agreed within error. "
    body = "".join(
        f'<h2 id="s{k}"><span class="a_heading">{head}</span></h2>\n<span>{para.format(word) * 2}'
        f'<a href="#cit1"><sup><span class="sup_ref">1</span></sup></a></span>\n'
        for k, (head, word) in enumerate(
            [("Introduction", "solubility"), ("Results", "density"), ("Conclusions", "viscosity")]
        )
    )
    page = (
        f'<html><head><meta name="citation_title" content="Salt Properties"></head><body><div id="wrapper">'
        f"<p>DOI: 10.5555/salt.1 (Paper) J. Imag. Chem., 2031</p><p>Ada Quill and Bo Renner</p>"
        f"<p>Received 21st May 2031, Accepted 2nd June 2031</p>{body}"
        f'<span id="refs"><h2><span class="a_heading">References</span></h2></span>'
        f'<ol><li><span id="cit1">A. Writer, J. Imag. Chem., 2029, 3, 30.</span></li></ol></div></body></html>'
    )
    (tmp_path / "rsc.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "rsc.html")
    assert [s["heading"] for s in rec["sections"]] == ["Introduction", "Results", "Conclusions"]
    assert all(
        s["text"] == (para.format(w) * 2).strip()
        for s, w in zip(rec["sections"], ["solubility", "density", "viscosity"])
    )
    assert rec["ingest"]["references_dropped"] == 1 and "Writer" not in rec["text"] and "Received" not in rec["text"]


def test_a_page_declaring_no_charset_math_shown_twice_notices_and_footnote_furniture(tmp_path):
    """No charset declared, but an "encoding=" in a script (an inline SVG): the page is UTF-8, not Latin-1. Math
    printed as text with a hidden MathML copy beside it; the site's notices and outline inside the article's
    container; the copyright and present-address footnotes."""
    formula = (
        "<span class='formulatext'>0.1\u2272z</span><span class='mathContainer hidden'><math><mn>0.1</mn>"
        "<mo>\u2272</mo><mi>z</mi></math></span>"
    )
    para = (
        f"Samples from Qu\u00e9bec were heated to {formula} and the runs agreed within the error of the "
        "balance in every one of the eleven trials made. "
    )
    page = (
        '<!DOCTYPE html><html><head><script>var logo = \'<?xml version="1.0" encoding="UTF-8"?><svg/>\';'
        '</script><meta name="citation_title" content="Heating Samples"/></head><body><div id="body">'
        '<div class="ua_btn">Screen reader users, click here to load entire article. This page uses JavaScript '
        "to progressively load the article content as a user scrolls.</div>"
        f'<div class="abstract"><h2>Abstract</h2><p>{para}</p></div>'
        '<div id="outline"><h2>Article outline</h2><ul><li><a href="#s1">1. Introduction to the heating of '
        "the samples from the north</a></li></ul></div>"
        f'<h2 id="s1">1. Introduction</h2><p>{para * 2}</p><h2>2. Results</h2><p>{para}</p>'
        '<ul class="fn"><li class="fn"><p>\u2020 Present address: Institute of Imaginary Heat, Somewhere.</p></li>'
        '<li class="fn">\u00a9 2031 The Authors. Journal compilation \u00a9 2031 Imaginary Society</li></ul>'
        "</div></body></html>"
    )
    (tmp_path / "page.html").write_bytes(page.encode("utf-8"))
    [rec] = read_file(tmp_path / "page.html")
    assert [s["heading"] for s in rec["sections"]] == ["Abstract", "Introduction", "Results"]
    once = (
        "Samples from Qu\u00e9bec were heated to 0.1\u2272z and the runs agreed within the error of the balance "
        "in every one of the eleven trials made."
    )
    assert rec["sections"][0]["text"] == rec["sections"][2]["text"] == once
    for gone in ("Screen reader", "JavaScript", "outline", "Present address", "\u00a9", "Imaginary Society"):
        assert gone not in rec["text"], gone


def test_headings_trafilatura_drops_are_laid_back_over_its_paragraphs(tmp_path):
    """A flat page (headings and paragraphs side by side in one <div>, as an older publisher template sets
    them): trafilatura keeps the paragraphs and drops every heading. The page's headings are laid back by where
    each paragraph stands, also a paragraph whose text reads differently there (a line break inside it)."""
    para = "The {} of the salt was measured three times at room temperature and the runs agreed within error. "
    parts = [
        '<div class="left_head">Journal of Imaginary Chemistry</div><h1>Salt Properties</h1>'
        '<p class="header_text">Ada Quill and Bo Renner, Institute of Imaginary Salts</p>'
    ]
    for head, word in (
        ("Abstract", "gist"),
        ("Introduction", "solubility"),
        ("Results", "density"),
        ("Conclusions", "viscosity"),
    ):
        parts.append(
            f'<h2 id="s-{word}"><span class="a_heading">{head}</span></h2><p>{para.format(word) * 3}</p>'
            f'<p class="otherpara">{para.format(word + " change") * 2}<br/>{para.format(word) * 2}</p>'
        )
    page = (
        '<html><head><meta name="citation_title" content="Salt Properties"></head><body><div id="wrapper">'
        + "".join(parts)
        + "</div></body></html>"
    )
    (tmp_path / "flat.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "flat.html")
    assert [s["heading"] for s in rec["sections"]] == ["Abstract", "Introduction", "Results", "Conclusions"]
    words = len((para.format("x") * 5 + para.format("x change") * 2).split())
    # every paragraph, once; the abstract is its own heading's text, not the whole flat page after it
    assert [len(s["text"].split()) for s in rec["sections"]] == [words] * 4


def test_what_real_articles_hold_that_looks_like_chrome_is_kept(tmp_path):
    """A wrapper whose class names a sidebar, a section called "Metrics", links to figures and equations, a
    short opening paragraph of a letter, an Abstract heading followed by lower headings on a flat page, and a
    charset lxml does not know by Python's name."""
    para = "The {} of the film was measured at room temperature and the runs agreed within the error bars. "
    page = (
        '<html><head><meta charset="euc-jp"><meta name="citation_title" content="Film Metrics"></head><body>'
        '<div class="layout has-sidebar"><h2>Abstract</h2><p>' + para.format("gist") * 2 + "</p>"
        "<p>We report a short letter on film metrics, read here in \u6771\u4eac.</p>"
        "<h3>Results</h3><p>" + para.format("density") * 3 + 'See Eq. <a class="xref-disp-formula" '
        'href="#e3">(3)</a> and Fig. <a class="xref-fig" href="#f2">2</a>.</p>'
        "<h3>Metrics</h3><p>" + para.format("roughness") * 3 + "</p></div></body></html>"
    )
    (tmp_path / "letter.html").write_bytes(page.encode("euc-jp"))
    [rec] = read_file(tmp_path / "letter.html")
    assert [s["heading"] for s in rec["sections"]] == ["Abstract", "Results", "Metrics"]
    sections = {s["heading"]: s["text"] for s in rec["sections"]}
    assert sections["Abstract"].endswith("read here in \u6771\u4eac.") and "density" not in sections["Abstract"]
    assert "See Eq. (3) and Fig. 2." in sections["Results"]
