"""HTML defect classes of publisher pages, as reductions written for these tests: a caption in a publisher's own
figure markup (no <figure>, no figure-like class), a reference list under a container no rule names, an
abstract marked only by a lead-paragraph class, the brackets left around a removed citation link and the
article's history without a colon; and what those rules must leave alone: brackets that are text
("(-)-epicatechin", "Re [-]") and a sentence opening with "Accepted" and a number."""

from __future__ import annotations

from pathlib import Path

import lxml.html
from pdf_pages import body_lines

from sciqag_dataset.builders.ingest import html, html_clean, html_restore, read_file
from sciqag_dataset.builders.ingest.html import read_html

_PARA = "The {} of the films was logged while the stage cooled, and the runs agreed within their error. "


def _page(tmp_path, middle: str, lead: str = "", tail: str = "") -> dict:
    body = "".join(
        f"<h2>{head}</h2><p>{_PARA.format(word) * 3}</p>\n"
        for head, word in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )
    body = body.replace("<h2>Results</h2>", f"<h2>Results</h2>{middle}")
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets">'
        '<meta name="citation_doi" content="10.5555/slow.2031.7"></head><body><main><article>'
        f"<h1>Slow Relaxations in Layered Magnets</h1>{lead}{body}{tail}</article></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "text" in rec, rec
    return rec


def test_a_caption_in_a_publishers_own_figure_markup_is_not_text(tmp_path):
    middle = (
        '<div class="graphic-block"><div class="media"><img src="f2.png" alt=""></div>'
        '<div class="legend"><p><b>Figure 2.</b> Resistance and Hall signal of the three films on cooling, '
        "each trace offset for clarity and smoothed over ten points.</p></div></div>"
        '<div class="exhibit"><table><tr><td>1</td><td>3.30</td></tr></table>'
        "<p>Table 1 | Gaps of the three films after the anneal, with the error of each fit.</p></div>"
    )
    rec = _page(tmp_path, middle)
    assert "Hall signal" not in rec["text"] and "after the anneal" not in rec["text"]
    assert (_PARA.format("density") * 3).strip() in rec["text"]


def test_a_reference_list_under_a_container_no_rule_names_is_found_by_its_entries(tmp_path):
    entries = [
        "Quill, A. and Renner, B. (2029) Slow relaxation in layered magnets. J. Slow Phys. 3, 11-19.",
        "Writer, C. (2030) Contacts that do not drift. Proc. Meeting on Slow Things, 101-108.",
        "Other, D., Third, E. and Fourth, F. (2028) Freezing out carriers. Phys. Slow Lett. 12, 1-9.",
        "Fifth, G. (2027) Cooling Stages. Slow Press, Lyon.",
    ]
    tail = '<div class="c-article-literature"><h2>Literature</h2><ul class="plain">' + "".join(
        f"<li>{e}</li>" for e in entries
    )
    tail += "</ul></div>"
    rec = _page(tmp_path, "", tail=tail)
    assert "Slow Press" not in rec["text"] and "Writer" not in rec["text"]
    assert rec["ingest"]["references_dropped"] == 4
    assert rec["text"].endswith((_PARA.format("gap") * 3).strip())


def test_a_list_in_the_body_is_not_a_reference_list(tmp_path):
    items = "".join(f"<li>Sample {k} was cooled at {k} K per minute in 2031.</li>" for k in range(1, 5))
    rec = _page(tmp_path, f"<ul>{items}</ul>")
    assert "Sample 3 was cooled" in rec["text"] and rec["ingest"]["references_dropped"] == 0


def test_an_abstract_marked_only_by_a_lead_paragraph_class(tmp_path):
    lead = (
        '<p class="article-lead">We trace slow relaxations in layered magnets over hours of cooling, and find '
        "that the contacts hold still while the carriers freeze out on a scale of hours rather than minutes.</p>"
    )
    rec = _page(tmp_path, "", lead=lead)
    assert rec["sections"][0]["heading"] == "Abstract" and rec["ingest"]["has_abstract"]
    assert rec["sections"][0]["text"].startswith("We trace slow relaxations")


def test_the_brackets_around_a_removed_citation_link_go_with_it(tmp_path):
    # the link is the number only, the brackets are the paragraph's own text
    middle = (
        '<p>Rainfall came from the station nearby [<a href="#B3">3</a>] and the logger '
        '[<a class="xref-bibr" href="#ref-4">4</a>, <a class="xref-bibr" href="#ref-5">5</a>], as before '
        '(<a href="#B6">6</a>). The series (<a href="https://example.org/rain">rain</a>) is kept [sic].</p>'
    )
    tail = '<ol class="references">' + "".join(
        f'<li id="{k}">Writer, A. (2029) Rain gauges. J. Slow Phys. 3, 11-19.</li>'
        for k in ("B3", "ref-4", "ref-5", "B6")
    )
    rec = _page(tmp_path, middle, tail=tail + "</ol>")
    assert (
        "Rainfall came from the station nearby and the logger, as before. The series (rain) is kept [sic]."
        in (rec["text"])
    )


def test_the_articles_dates_without_a_colon_are_not_text(tmp_path):
    # "Received February 22, 2031." as a history list under the last section
    tail = (
        '<ul class="history"><li><span>Received </span>February 22, 2031.</li>'
        "<li><span>Accepted </span>12 May 2031.</li><li>Published online 3 June 2031</li></ul>"
    )
    rec = _page(tmp_path, "<p>Received wisdom held that the films would drift; they did not.</p>", tail=tail)
    assert "2031" not in rec["text"]
    assert "Received wisdom held that the films would drift; they did not." in rec["text"]
    assert rec["text"].endswith((_PARA.format("gap") * 3).strip())


def test_brackets_a_word_goes_on_from_or_holding_a_hyphen_are_text(tmp_path):
    # in a paragraph that held a citation link: an isomer's sign "(-)-epicatechin" and a unit "[-]" stay, the
    # brackets the links leave ("station []", "logger [, ]") go
    middle = (
        '<p>The (-)-epicatechin content fell as the leaves dried [<a href="#B3">3</a>], and the Reynolds number '
        'Re [-] and the logger [<a href="#B3">3</a>, <a href="#B3">3</a>] agreed.</p>'
    )
    tail = '<ol class="references"><li id="B3">Writer, A. (2029) Leaf drying. J. Slow Phys. 3, 11-19.</li></ol>'
    rec = _page(tmp_path, middle, tail=tail)
    kept = "The (-)-epicatechin content fell as the leaves dried, and the Reynolds number Re [-] and the logger agreed"
    assert kept in rec["text"]


def test_a_sentence_opening_with_accepted_and_a_date_without_a_month_is_text(tmp_path):
    sentence = "Accepted practice 12, 2016 showed that the films drift less when cooled slowly."
    tail = '<ul class="history"><li>Received February 22, 2031.</li><li>Accepted 12 May 2031</li></ul>'
    rec = _page(tmp_path, f"<p>{sentence}</p>", tail=tail)
    assert sentence in rec["text"]
    assert "2031" not in rec["text"]


def test_markup_in_citation_title_is_not_kept_as_text(tmp_path):
    page = (
        '<html><head><meta name="citation_title" content="Growth of &lt;i&gt;Quercus robur&lt;/i&gt; Seedlings">'
        "</head><body><main><article><h1>Growth of <i>Quercus robur</i> Seedlings</h1>"
        f"<h2>Introduction</h2><p>{_PARA.format('height') * 4}</p></article></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == "Growth of Quercus robur Seedlings"


def test_a_doi_shown_as_a_link_or_a_doi_line_without_a_meta_tag_is_read(tmp_path):
    body = f"<h2>Introduction</h2><p>{_PARA.format('height') * 4}</p>"
    for shown in (
        '<p><a href="https://doi.org/10.5555/oak.2031.4">https://doi.org/10.5555/oak.2031.4</a></p>',
        "<p>DOI: 10.5555/oak.2031.4</p>",
    ):
        page = f"<html><head><title>Oak Seedlings</title></head><body><article><h1>Oak Seedlings</h1>{shown}{body}"
        (tmp_path / "page.html").write_text(page + "</article></body></html>", encoding="utf-8")
        [rec] = read_file(tmp_path / "page.html")
        assert rec["metadata"]["doi"] == "10.5555/oak.2031.4", shown


def test_a_meta_identifier_that_is_not_a_doi_gives_way_to_the_doi_the_page_shows(tmp_path):
    page = (
        '<html><head><meta name="dc.identifier" content="4471203"><title>Oak Seedlings</title></head><body>'
        '<article><h1>Oak Seedlings</h1><a href="https://doi.org/10.5555/oak.2031.4">10.5555/oak.2031.4</a>'
        f"<h2>Introduction</h2><p>{_PARA.format('height') * 4}</p></article></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["metadata"]["doi"] == "10.5555/oak.2031.4"


def test_a_wiki_page_is_read_with_a_warning_that_it_is_not_an_article():
    page = (
        '<html><head><meta name="generator" content="MediaWiki 1.45"><title>Oak - Wiki</title></head><body>'
        f"<main><h1>Oak</h1><h2>Growth</h2><p>{_PARA.format('height') * 5}</p>"
        f"<p>{_PARA.format('girth') * 5}</p></main></body></html>"
    )
    warnings = []
    read_html(page, warnings.append)
    assert any("not a scholarly article" in w for w in warnings), warnings


def test_a_formula_the_metadata_spaces_is_titled_as_the_heading_sets_it(tmp_path):
    """RSC's pages: ``citation_title`` says "TiO 2" where the heading sets TiO<sub>2</sub>, and the heading carries
    a footnote mark; the title is the heading's, without the mark. A heading with other words is not taken."""
    rec = _page(tmp_path, "")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    page = page.replace('content="Slow Relaxations in Layered Magnets"', 'content="Slow Relaxations in TiO 2 Films"')
    (tmp_path / "page.html").write_text(
        page.replace(
            "<h1>Slow Relaxations in Layered Magnets</h1>", "<h1>Slow Relaxations in TiO<sub>2</sub> Films†</h1>"
        ),
        encoding="utf-8",
    )
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == "Slow Relaxations in TiO2 Films"
    (tmp_path / "page.html").write_text(page.replace("Layered Magnets</h1>", "Layered Films</h1>"), encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == "Slow Relaxations in TiO 2 Films"


def test_a_doi_link_in_the_reference_list_is_not_the_pages_doi(tmp_path):
    """No DOI meta tag and none shown for the page: a cited work's doi.org link in the reference list (as
    ScienceDirect prints each entry's) is not the page's DOI."""
    refs = "".join(
        f"<li><p>A. Quill, Pebbles {k}, J. Lakes, {k} (2030), pp. 1–9 "
        f'<a href="http://dx.doi.org/10.5555/cited.{k}">http://dx.doi.org/10.5555/cited.{k}</a></p></li>'
        for k in range(1, 4)
    )
    page = (
        '<html><head><meta name="dc.title" content="Oak Seedlings"></head><body><article><h1>Oak Seedlings</h1>'
        f"<h2>Introduction</h2><p>{_PARA.format('height') * 4}</p>"
        f'<h2>References</h2><ol class="references">{refs}</ol></article></body></html>'
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["metadata"]["doi"] is None


def test_highlights_marked_as_an_abstract_give_way_to_the_abstract(tmp_path):
    """ScienceDirect marks its highlights and its abstract with one class ("abstract"): the abstract is the one
    that is not the highlights."""
    lead = (
        '<div class="abstract svAbstract abstractHighlights"><h2>Highlights</h2><ul><li>A model of the films is '
        "coupled to a model of the stage.</li><li>The carriers freeze out over hours.</li></ul></div>"
        '<div class="abstract svAbstract"><h2>Abstract</h2><p>We trace slow relaxations in layered magnets over '
        "hours of cooling, and find that the contacts hold still while the carriers freeze out.</p></div>"
    )
    rec = _page(tmp_path, "", lead=lead)
    assert rec["sections"][0]["heading"] == "Abstract"
    assert rec["sections"][0]["text"].startswith("We trace slow relaxations")


def test_a_first_paragraph_in_a_section_without_navigation_is_the_abstract(tmp_path):
    """nature.com's letters: the summary paragraph in a "first-paragraph" element, inside a section whose class
    says it has no navigation ("first-no-nav"), after the site's own headings: it is the abstract, not chrome."""
    page = (
        '<html><head><meta name="dc.title" content="Slow Relaxations in Layered Magnets"></head><body>'
        '<div class="events"><h3>Science events</h3><p>A conference on lakes.</p></div><article>'
        "<h1>Slow Relaxations in Layered Magnets</h1>"
        '<section><div class="section first no-nav first-no-nav"><div class="first-paragraph"><p>We trace slow '
        "relaxations in layered magnets over hours of cooling, and find that the contacts hold still while the "
        "carriers freeze out on a scale of hours rather than minutes.</p></div></div></section>"
        f"<h2>Main</h2><p>{_PARA.format('resistance') * 4}</p></article></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["sections"][0]["heading"] == "Abstract" and rec["ingest"]["has_abstract"]
    assert rec["sections"][0]["text"].startswith("We trace slow relaxations")


def test_a_body_wrapper_holding_years_and_initials_is_not_a_reference_list(tmp_path):
    """Springer's full text: a wrapper of three blocks (the header, the actions, the whole body), the body citing
    "A. Quill (2030)": a reference list's entries are short, and the body is read."""
    body = "".join(
        f"<h2>{h}</h2><p>{_PARA.format(w) * 8} As A. Quill found in 2030, the runs agreed.</p>"
        for h, w in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets"></head><body>'
        '<article><div class="FulltextWrapper"><div class="ArticleHeader"><h1>Slow Relaxations in Layered Magnets'
        "</h1><p>J. Lakes, November 2030, Volume 41, pp 6908–6916. A. Quill, B. Renner</p></div>"
        f'<div class="actions"></div><div class="body">{body}</div></div></article></body></html>'
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "The density of the films was logged" in rec["text"] and rec["ingest"]["references_dropped"] == 0


def test_a_full_article_beside_a_list_of_most_read_articles_is_read_without_citation_metadata(tmp_path):
    """A journal's page with no ``citation_*``/``dc.*`` metadata and no <article>: the article's sections beside
    a sidebar of thirty "most read" links, whose words are over a third of the page's. The article is read."""
    sections = "".join(
        f"<h2>{head}</h2><p>{_PARA.format(word) * 4}</p><p>{_PARA.format(word + 's') * 4}</p>"
        for head, word in (
            ("Introduction", "resistance"),
            ("Methods", "anneal"),
            ("Results", "density"),
            ("Discussion", "gap"),
        )
    )
    most_read = "".join(
        f'<li><a href="/article/{k}">Most read article number {k} about slow magnets and cold stages</a></li>'
        for k in range(30)
    )
    page = (
        "<html><head><title>Slow Relaxations in Layered Magnets | Journal of Slow Physics</title></head><body>"
        f'<div class="art"><h1>Slow Relaxations in Layered Magnets</h1>{sections}</div>'
        f'<div class="sidebar"><h3>Most read</h3><ul>{most_read}</ul></div></body></html>'
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "text" in rec, rec
    assert (_PARA.format("density") * 4).strip() in rec["text"] and "Most read" not in rec["text"]


def test_hidden_citation_pop_ups_do_not_make_a_results_section_a_reference_list(tmp_path):
    """Each citation in the results followed by its reference entry in a pop-up hidden until hovered (by
    ``style="display:none"``, the ``hidden`` attribute or class): the section's paragraphs hold entries only
    where they are hidden, so the section is text, and the entries are not."""
    for hidden in ('class="ref-popup" style="display:none"', 'class="ref-popup" hidden', 'class="ref-popup hidden"'):

        def cite(k, hidden=hidden):
            return (
                f'<a class="cite" href="#r{k}">{k}</a><span {hidden}>Writer, A. B. and Other, '
                f"C. Slow relaxation number {k} in layered magnets. J. Slow Phys. {k}, 1-9 (20{k:02d}).</span>"
            )

        results = "".join(
            f"<p>The density of film {k} was logged while the stage cooled {cite(k)}, and the runs agreed "
            f"within their error {cite(k + 10)}.</p>"
            for k in range(1, 7)
        )
        rec = _page(tmp_path, f"<section>{results}</section>")
        assert "The density of film 4 was logged while the stage cooled" in rec["text"]
        assert "Writer" not in rec["text"] and rec["ingest"]["references_dropped"] == 0


def test_paragraphs_the_extractor_left_out_beside_kept_ones_are_restored():
    """A long article's later page fragments, left out by the text extractor (a ScienceDirect page of 2006): its
    paragraphs beside kept ones come back; a paragraph of chrome outside the article, left out, stays out, and so
    do left-out paragraphs too few to matter."""
    paras = [line + "." for line in body_lines(12, 191, 30)]
    frags = "".join(
        f'<div class="page_fragment" id="frag_{f}"><h3>Part {f}</h3>'
        + "".join(f"<p>{paras[f * 3 + j]}</p>" for j in range(3))
        + "</div>"
        for f in range(4)
    )
    chrome = "Sign in to read the whole of this article and others like it. " * 3
    tree = lxml.html.fromstring(f"<html><body><div id='main'>{frags}</div><p>{chrome}</p></body></html>")
    kept = [["Part 0", "\n\n".join(paras[:3])], ["Part 1", "\n\n".join(paras[3:6])]]
    assert html_restore.dropped_paragraphs(tree, kept) == paras[6:]
    assert html_restore.dropped_paragraphs(tree, [*kept, ["Part 2", "\n\n".join(paras[6:11])]]) == []


def test_related_articles_and_comments_in_the_article_are_not_restored(tmp_path):
    """Boxes of related articles and readers' comments inside the article element, which the extractor leaves
    out, stay out: they stand near the article's paragraphs but in boxes of another kind."""
    body = "".join(
        f"<section><h2>{h}</h2><p>{_PARA.format(w) * 3}</p><p>{_PARA.format(w + 's') * 3}</p></section>"
        for h, w in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )
    related = "Related article: the density of quiet pebbles in frozen lakes rises through the winter, a finding "
    comment = "Comment by reader42 on 3 May 2031: the runs did not agree within their error on my own films, "
    more = "could the authors share the raw logs of the stage so that we can compare the cooling curves directly?"
    boxes = (
        f'<section class="related"><p>{related + more}</p><p>{"Also " + related + more}</p></section>'
        f'<section class="comments"><p>{comment + more}</p><p>{comment.replace("42", "7") + more}</p></section>'
    )
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets">'
        '<meta name="citation_doi" content="10.5555/slow.2031.7"></head><body><main><article>'
        f"<h1>Slow Relaxations in Layered Magnets</h1>{body}{boxes}</article></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "The gaps of the films" in rec["text"]
    assert "Related article" not in rec["text"] and "reader42" not in rec["text"]


def test_an_introduction_without_a_heading_after_the_abstract_is_kept(tmp_path):
    """The abstract in its own element under an "Abstract" heading set outside it, then the introduction's
    paragraphs with no heading of their own (an OUP page): the abstract is the Abstract section, and the
    introduction is text."""
    abstract = _PARA.format("abstract") * 2
    intro = _PARA.format("introduction") * 3
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets">'
        '<meta name="citation_doi" content="10.5555/slow.2031.7"></head><body><main><article>'
        "<h1>Slow Relaxations in Layered Magnets</h1>"
        f'<h2 class="abstract-title">Abstract</h2><section class="abstract"><p>{abstract}</p></section>'
        f"<p>{intro}</p><p>{_PARA.format('motivation') * 3}</p>"
        f"<h2>Methods</h2><p>{_PARA.format('method') * 3}</p></article></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["sections"][0]["heading"] == "Abstract"
    assert rec["sections"][0]["text"] == abstract.strip()
    assert intro.strip() in rec["text"] and "The motivation of the films" in rec["text"]
    assert rec["text"].count(abstract.strip()) == 1


def test_an_abstract_the_metadata_gives_cut_short_is_not_read_twice(tmp_path):
    """The metadata's abstract is cut short ("..."), the page's in full under its heading: the abstract is read
    once."""
    abstract = _PARA.format("abstract") * 2
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets">'
        '<meta name="citation_doi" content="10.5555/slow.2031.7">'
        f'<meta name="citation_abstract" content="{abstract[:120]}…"></head><body><main><article>'
        f"<h1>Slow Relaxations in Layered Magnets</h1><h5>Abstract</h5><p>{abstract}</p>"
        f"<h2>Introduction</h2><p>{_PARA.format('introduction') * 3}</p>"
        f"<h2>Methods</h2><p>{_PARA.format('method') * 3}</p></article></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["text"].count("The abstract of the films") == 1
    assert "The introduction of the films" in rec["text"]


def _acs_like(tmp_path) -> tuple[dict, list[str]]:
    """An ACS-style article page, written for this test: a synopsis above the abstract, the article in a layout
    cell whose class ends in "-table", paragraphs as ``div``s, each section opening with a jump menu to the page's
    sections, and a last section of one paragraph."""
    menu = (
        '<ul class="anchors"><li><a href="JavaScript:void(0);">Top of Page</a><a href="#abs">Abstract</a>'
        + "".join(f'<a href="#s{k}">{h}</a>' for k, h in enumerate(("Introduction", "Results", "Conclusions")))
        + "</li></ul>"
    )
    paras = [line + "." for line in body_lines(14, 401, 28)]
    sections = "".join(
        f'<div class="NLM_sec" id="s{k}">{menu}<h2>{h}</h2><hr/>'
        + "".join(f'<div class="NLM_p">{p}</div>' for p in chunk)
        + "</div>"
        for k, (h, chunk) in enumerate(
            (("Introduction", paras[:6]), ("Results", paras[6:13]), ("Conclusions", paras[13:]))
        )
    )
    page = (
        '<html><head><meta name="dc.Title" content="Slow Relaxations in Layered Magnets"></head><body><main>'
        "<article><h1>Slow Relaxations in Layered Magnets</h1>"
        '<div class="hlFld-Abstract synopsis"><h2>Synopsis</h2><p>Layered magnets relax slowly, as a picture of '
        "the table of contents shows at a glance.</p></div>"
        '<div class="article_content-table"><div class="hlFld-Abstract"><h2 id="abs">Abstract</h2>'
        '<p class="articleBody_abstractText">The films of layered magnets relax slowly when the stage cools, and '
        "the relaxation times we logged agree within their error across every run.</p></div>"
        f'<div class="hlFld-Fulltext">{sections}</div></div></article></main></body></html>'
    )
    (tmp_path / "acs.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "acs.html")
    assert "text" in rec, rec
    return rec, paras


def test_an_acs_page_keeps_its_abstract_its_article_cell_and_its_last_section(tmp_path):
    """The abstract is the abstract, not the synopsis; every section's paragraphs are read, the last one's too;
    the jump menus are not text."""
    rec, paras = _acs_like(tmp_path)
    assert rec["sections"][0]["text"].startswith("The films of layered magnets relax slowly")
    assert all(p[:60] in rec["text"] for p in paras)
    assert "Top of Page" not in rec["text"]


def test_a_last_section_of_one_div_paragraph_the_extractor_left_out_is_restored():
    """Paragraphs set as ``div``s, the last section one short paragraph that the extractor left out (a tenth of
    the words or less): it comes back, as it is a section beside the kept ones; a box of another kind does not."""
    paras = [line + "." for line in body_lines(13, 402, 30)]
    secs = "".join(
        f'<div class="sec"><h2>{h}</h2>' + "".join(f'<div class="para">{p}</div>' for p in chunk) + "</div>"
        for h, chunk in (("Introduction", paras[:6]), ("Results", paras[6:12]), ("Conclusions", paras[12:]))
    )
    promo = "Sign up for the newsletter of the lake society today. " * 3
    box = f'<div class="promo"><div class="para">{promo}</div></div>'
    tree = lxml.html.fromstring(f"<html><body><div id='main'>{secs}{box}</div></body></html>")
    kept = [["Introduction", "\n\n".join(paras[:6])], ["Results", "\n\n".join(paras[6:12])]]
    assert html_restore.dropped_paragraphs(tree, kept) == paras[12:]


def test_a_jump_menu_to_the_pages_sections_is_removed_and_a_list_of_links_with_text_is_not():
    links = '<a href="javascript:void(0);">Top of Page</a><a href="#abs">Abstract</a><a href="#s1">Results</a>'
    menu = f"<ul><li>{links}</li></ul>"
    items = '<ul><li><a href="#r1">Quill 2031</a> measured the pebbles of three quiet lakes in winter.</li></ul>'
    tree = lxml.html.fromstring(f"<html><body><div>{menu}<p>The pebbles settle.</p>{items}</div></body></html>")
    html_clean.remove_non_paper(tree)
    text = tree.text_content()
    assert "Top of Page" not in text and "Results" not in text
    assert "measured the pebbles of three quiet lakes" in text


def test_back_matter_or_a_section_before_the_kept_ones_is_not_restored():
    """Short sections the extractor left out that are not the paper's last section: the acknowledgements after
    the kept sections, and a section before them, stay out."""
    paras = [line + "." for line in body_lines(24, 403, 30)]
    chunks = (
        ("Preface", paras[:1]),
        ("Introduction", paras[1:12]),
        ("Results", paras[12:23]),
        ("Acknowledgments", paras[23:]),
    )
    secs = "".join(
        f'<div class="sec"><h2>{h}</h2>' + "".join(f'<div class="para">{p}</div>' for p in chunk) + "</div>"
        for h, chunk in chunks
    )
    tree = lxml.html.fromstring(f"<html><body><div id='main'>{secs}</div></body></html>")
    kept = [["Introduction", "\n\n".join(paras[1:12])], ["Results", "\n\n".join(paras[12:23])]]
    assert html_restore.dropped_paragraphs(tree, kept) == []


def test_subsections_of_a_sibling_body_element_the_extractor_left_out_are_restored():
    """Each section its own body element, the later ones with their paragraphs in subsection ``div``s under their
    headings (F1000): the subsections' paragraphs the extractor left out come back; a box of related articles in
    the body element, without a heading, and a comments box beside it do not."""
    paras = [line + "." for line in body_lines(12, 517, 30)]
    intro = '<div class="article-body"><h2>Introduction</h2>' + "".join(f"<p>{p}</p>" for p in paras[:3]) + "</div>"
    methods = (
        '<div class="article-body"><h2>Methods</h2>'
        + "".join(f'<div class="section"><h3>Step {k}</h3><p>{paras[3 + k]}</p></div>' for k in range(6))
        + "</div>"
    )
    comment = "Comment by reader42 on 3 May 2031: the runs did not agree within their error on my own films. " * 2
    comments = f'<div class="comments"><div class="one-comment"><p>{comment}</p></div></div>'
    related = f'<div class="related-box"><p>Related articles: {comment}</p></div>'  # no heading of its own
    methods = methods.replace("</div></div>", f"</div>{related}</div>", 1)
    tree = lxml.html.fromstring(f"<html><body><div id='ctx'>{intro}{methods}{comments}</div></body></html>")
    kept = [["Introduction", "\n\n".join(paras[:3])]]
    assert html_restore.dropped_paragraphs(tree, kept) == paras[3:9]


def test_a_layout_table_holding_the_article_is_read(tmp_path):
    """An older site lays its page out in nested tables (MIT Press's journal pages): the table that holds the
    article's sections is no table of data, and its paragraphs are the text; a data table inside it still goes."""
    sections = "".join(
        f"<h2>{head}</h2><p>{_PARA.format(word) * 3}</p><p>{_PARA.format(word + 's') * 3}</p>"
        for head, word in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )
    data = "<table><tr><td>Film</td><td>Gap</td></tr><tr><td>A</td><td>3.30</td></tr></table>"
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets">'
        '<meta name="citation_doi" content="10.5555/slow.2031.7">'
        f"<script>{'var menu = loadMenu(this, that, and, the, other); ' * 300}</script></head><body>"
        '<table id="main-layout"><tr><td class="menu"><a href="/">Home</a></td><td><table><tr><td>'
        f"<h1>Slow Relaxations in Layered Magnets</h1>{sections}{data}</td></tr></table></td></tr></table>"
        "</body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "text" in rec, rec
    assert (_PARA.format("density") * 3).strip() in rec["text"] and "The gaps of the films" in rec["text"]
    assert "3.30" not in rec["text"]


def test_a_caption_after_a_label_alone_in_a_figure_box_is_not_text(tmp_path):
    """A figure box with the image on one side and, on the other, the label alone in one paragraph ("Fig. 1.")
    and the caption's words in the next (Cambridge Journals Online): neither is text; the next paragraph of the
    body is."""
    middle = (
        '<div class="img-box"><div class="left"><img src="f1.png" alt="Fig. 1."></div><div class="right">'
        '<p class="title">Fig. 1. </p><p>Positions of the three contacts on each film and of the heater.</p>'
        '<p><a href="f1.png">Larger version</a></p></div></div>'
    )
    rec = _page(tmp_path, middle)
    assert "Positions of the three contacts" not in rec["text"]
    assert (_PARA.format("density") * 3).strip() in rec["text"]
    # the label in a section of the body, under an image: the paragraph after it is the body's
    inline = '<p><img src="f1.png" alt=""></p><p>Figure 1</p>'
    rec = _page(tmp_path, inline)
    assert (_PARA.format("density") * 3).strip() in rec["text"]


def test_a_title_meta_tag_names_the_page_whose_title_element_adds_the_site(tmp_path):
    """No citation_title and an empty <h1>, a ``<meta name="title">`` and a <title> with the journal and site
    around the article's title: the meta tag's title is the title."""
    title = "Slow Relaxations in Layered Magnets"
    body = "".join(f"<h2>{h}</h2><p>{_PARA.format(w) * 3}</p>" for h, w in (("Introduction", "gap"), ("Results", "x")))
    page = (
        f'<html><head><title>Slow Letters - Fulltext - {title} - Slow Journals Online</title><meta name="title" '
        f'content="{title}"><meta name="dc.identifier" content="doi:10.5555/slow.2031.7"></head><body><h1></h1>'
        f"<article>{body}</article></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == title
    # a site's own title tag ("Slow Journals | Home") gives way to the page's heading
    seo = page.replace(f'content="{title}"', 'content="Slow Journals | Home"').replace(
        "<h1></h1>", f"<h1>{title}</h1>"
    )
    (tmp_path / "page.html").write_text(seo, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == title


def test_an_empty_heading_gives_way_to_the_first_heading_with_text(tmp_path):
    """An empty ``<h1>`` (a logo's) before the article's heading, no citation_title, a <title> with the site's
    name after the title (SpringerLink's older pages): the first heading with text is the title."""
    title = "Slow Relaxations in Layered Magnets"
    body = "".join(f"<h2>{h}</h2><p>{_PARA.format(w) * 3}</p>" for h, w in (("Introduction", "gap"), ("Results", "x")))
    page = (
        f'<html><head><title>{title} - Slow Press</title><meta name="dc.identifier" content="doi:10.5555/slow.2031.7">'
        f'</head><body><h1><a href="/"><img src="logo.png" alt=""></a></h1><article><h1>{title}</h1>{body}</article>'
        "</body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == title


def test_a_paragraph_opening_with_a_figures_mention_beside_its_image_is_text(tmp_path):
    """ "Figure 3d shows a similar effect ..." opening a paragraph of a section that also holds the figure's image
    (Oxford Academic): a sentence about the figure, not its caption."""
    middle = (
        '<div class="fig"><img src="f3.png" alt=""></div><p><a href="#f3">Figure 3<em>d</em></a> shows a similar '
        "rise of the density in the thinner films, which the second anneal brought back down to the first.</p>"
    )
    rec = _page(tmp_path, middle)
    assert "shows a similar rise of the density" in rec["text"]


def _sections(heading: str = "h2") -> str:
    """Three sections of the body, each in a <section> under its heading."""
    return "".join(
        f"<section><{heading}>{head}</{heading}><p>{_PARA.format(word) * 3}</p></section>\n"
        for head, word in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )


def _rash_page(tmp_path, title: str, doi_line: str) -> dict:
    """A page in RASH (an HTML format for papers): the title only in <title>, each section headed by an <h1>
    (the first "Abstract"), the reference list and the notes marked by their DPUB-ARIA roles alone."""
    sections = _sections("h1")
    page = (
        f"<html><head><title>{title}</title>"
        '<meta name="dc.creator" content="Anna Quill"></head><body>'
        f'<section role="doc-abstract"><h1>Abstract</h1><p>{_PARA.format("anneal") * 2}</p></section>{sections}'
        '<section role="doc-bibliography" id="SectionReferences"><h1>References</h1><ul>'
        '<li role="doc-biblioentry"><p>Quill, A. (2029). Slow relaxation in layered magnets. J. Slow Phys. 3: '
        f"11-19. {doi_line}</p></li></ul></section>"
        '<section role="doc-endnotes"><section role="doc-endnote" id="ftn1"><p>The stage is described at '
        "http://example.org/stage.</p></section></section></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "text" in rec, rec
    return rec


def test_a_rash_page_gives_its_title_element_its_version_of_records_doi_and_not_its_notes(tmp_path):
    """The title is the <title> element's, less the note after " -- " naming the version of record, whose DOI is
    the paper's; a reference entry's "DOI: ..." is the cited work's. The notes and the references are not text."""
    rec = _rash_page(
        tmp_path,
        "Slow Relaxations in Layered Magnets -- Preprint of http://dx.doi.org/10.5555/slow.2031.7",
        "DOI: 10.5555/quill.2029.3",
    )
    assert rec["title"] == "Slow Relaxations in Layered Magnets"
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"
    assert "example.org" not in rec["text"] and "Slow Phys" not in rec["text"]
    assert (_PARA.format("density") * 3).strip() in rec["text"]


def test_a_doi_shown_only_in_a_reference_list_marked_by_its_role_is_not_the_papers(tmp_path):
    """No DOI in the head; one in a reference entry, as a link and as text: the paper has none. A subtitle after
    " -- " that names no address stays in the title."""
    rec = _rash_page(
        tmp_path,
        "Slow Relaxations -- Layered Magnets Cooled",
        'DOI: 10.5555/quill.2029.3 <a href="https://doi.org/10.5555/quill.2029.3">https://doi.org/10.5555/quill.2029.3</a>',
    )
    assert rec["title"] == "Slow Relaxations -- Layered Magnets Cooled"
    assert rec["metadata"]["doi"] is None


def test_a_pages_class_naming_a_category_of_references_hides_no_doi(tmp_path):
    """A blog's <body> carries its category ("category-references"): the DOI the page prints is still found."""
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets"></head>'
        '<body class="post category-references"><article><h1>Slow Relaxations in Layered Magnets</h1>'
        f"<p>DOI: 10.5555/slow.2031.7</p><h2>Introduction</h2><p>{_PARA.format('gap') * 4}</p></article></body></html>"
    )
    rec = read_html(page, print)
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"


def test_a_papers_own_header_keeps_its_abstract_and_loses_its_print_footer(tmp_path):
    """A page made from Markdown for papers (ScholarMarkdown): the site-less <header> holds the title (broken by a
    <br>), the authors, their affiliations and the abstract; a print-only first-page footer holds the venue and the
    copyright. The abstract is the paper's; the affiliations and the footer are not text; the title reads the line
    break as a space."""
    sections = _sections()
    page = (
        "<html><head><title>Slow Relaxations in Layered Magnets</title>"
        '<meta name="citation_title" content="Slow Relaxations in&lt;br&gt;Layered Magnets"></head><body>'
        "<header><h1>Slow Relaxations in<br/>Layered Magnets</h1>"
        '<ul id="authors"><li>Anna Quill</li></ul><ul id="affiliations"><li>Institute of Slow Matter, Lyon</li></ul>'
        f'<section id="abstract"><div><h2>Abstract</h2><p>{_PARA.format("anneal") * 2}</p></div>'
        '<p><span class="printonly firstpagefooter">Workshop on Slow Things 2031, Lyon. anna.quill@example.org'
        "</span></p></section></header><main>"
        f"{sections}</main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["title"] == "Slow Relaxations in Layered Magnets"
    assert rec["sections"][0]["heading"] == "Abstract" and "anneal of the films" in rec["sections"][0]["text"]
    assert "Institute of Slow Matter" not in rec["text"] and "Workshop on Slow Things" not in rec["text"]
    assert (_PARA.format("density") * 3).strip() in rec["text"]


def test_a_teaser_in_a_sites_header_gives_way_to_the_articles_abstract(tmp_path):
    """The site's <header> shows a teaser marked "abstract"; the article's own abstract is in <main>: that one."""
    page = (
        '<html><head><meta name="citation_title" content="Slow Relaxations in Layered Magnets"></head><body>'
        '<header><div class="abstract-preview">We anneal films and find that they relax slowly in layered magnets'
        " ...</div></header>"
        "<main><h1>Slow Relaxations in Layered Magnets</h1>"
        f'<section class="abstract"><h2>Abstract</h2><p>{_PARA.format("anneal") * 2}</p></section>'
        f"<h2>Introduction</h2><p>{_PARA.format('gap') * 4}</p></main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["sections"][0]["heading"] == "Abstract" and "anneal of the films" in rec["sections"][0]["text"]
    assert "find that they relax" not in rec["text"]


_LATEXML = Path(__file__).parents[1] / "fixtures" / "latexml" / "paper.html"


def test_a_latexml_page_keeps_every_section_and_drops_its_notes_and_citation_marks():
    """A paper made into a web page by LaTeXML (arXiv's HTML; ``fixtures/latexml/paper.html``, made by
    ``latexmlc --format=html5`` from ``paper.tex``): a paragraph whose cross-references to a figure and a table are
    links is read (the extractor takes a paragraph with two short links for a list of links); a footnote set
    inside its paragraph, or inside the title (``\\thanks``), is not text; "basin <cite>[1]</cite>." reads
    "basin."."""
    [rec] = read_file(_LATEXML)
    assert rec["title"] == "Pebbles Settle Where Lakes Are Quiet: Sorting by Size in Glacial Basins"
    assert [s["heading"] for s in rec["sections"]] == [
        "Abstract", "Introduction", "Cores", "Layer model", "Results", "Discussion", "Acknowledgments"
    ]  # fmt: skip
    assert "Figure 1 shows the layers of the longest core, and Table 1 lists the counts." in rec["text"]
    assert "photographs are kept" not in rec["text"]
    assert "the weather over the basin. Where" in rec["text"]
    assert "Archives of weather" not in rec["text"]  # the reference list


def test_a_menu_of_links_in_a_paragraph_keeps_its_links():
    """A paragraph that is mostly links (a site's menu) is not prose: its links stay links, for the extractor to
    judge."""
    tree = lxml.html.fromstring(
        '<html><body><p><a href="/a">Home</a> <a href="/b">Journals</a> <a href="/c">Books</a> '
        '<a href="/d">About us</a> and <a href="/e">Contact</a></p>'
        '<p>We see in Figure <a href="#f1">1</a> and Table <a href="#t1">1</a> that the calm years left thicker '
        "layers in every basin we cored.</p></body></html>"
    )
    html._unwrap_prose_links(tree)
    first, second = tree.findall(".//p")
    assert len(first.findall("a")) == 5 and second.findall("a") == []


def _pandoc_page(tmp_path, front: str, body: str, refs: str) -> dict:
    """A paper made into a page by pandoc and a template of its authors' (no citation_ metadata)."""
    page = (
        "<html><head><title>Slow Relaxations in Layered Magnets</title></head><body>"
        f"<header>{front}</header><main class='container'>{body}{refs}</main></body></html>"
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert "text" in rec, rec
    return rec


_REFS = (
    '<div id="refs"><div id="ref-quill2029"><p>1. <strong>Slow relaxation in layered magnets</strong><br>'
    "Anna Quill, Bo Renner<br><em>J. Slow Phys.</em> (2029)<br>"
    'DOI: <a href="https://doi.org/10.5555/quill.2029">10.5555/quill.2029</a></p></div></div>'
)


def test_a_reference_list_pandoc_names_refs_is_not_text_with_or_without_its_heading(tmp_path):
    """pandoc's reference list is ``<div id="refs">``, under an ``<h2 id="references">`` (Manubot) or under no
    heading (R's distill, older pandoc): its entries are no text, and the DOI of an entry is not the page's;
    the heading's id names no list of its own."""
    for heading in ('<h2 id="references">References</h2>', ""):
        rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", _sections(), heading + _REFS)
        assert "Anna Quill" not in rec["text"] and "Slow relaxation in layered" not in rec["text"]
        assert rec["metadata"]["doi"] is None
        assert (_PARA.format("gap") * 3).strip() in rec["text"]


def test_a_doi_a_sentence_gives_for_the_papers_data_or_code_is_not_the_papers(tmp_path):
    """ "The data is available at: https://doi.org/10...", "All code and data ... (DOI: 10....)": the DOI of a
    data set or a code archive, not of the paper; a DOI line in the front matter stays the paper's."""
    availability = (
        '<h2>Data availability</h2><p>The data is available at: <a href="https://doi.org/10.5281/zenodo.1">'
        "https://doi.org/10.5281/zenodo.1</a></p><p>All code and data to reproduce this article is archived at "
        'the Open Science Framework (DOI: <a href="https://doi.org/10.17605/OSF.IO/X1">10.17605/OSF.IO/X1</a>).</p>'
    )
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", _sections() + availability, "")
    assert rec["metadata"]["doi"] is None
    plain = availability.replace("<a", "<span").replace("</a>", "</span>")
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", _sections() + plain, "")
    assert rec["metadata"]["doi"] is None
    front = "<h1>Slow Relaxations in Layered Magnets</h1><p>DOI: 10.5555/slow.2031.7</p>"
    rec = _pandoc_page(tmp_path, front, _sections() + availability, "")
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"


def test_a_page_whose_h1s_are_its_sections_is_titled_by_its_title_element(tmp_path):
    """pandoc sets a paper's sections as <h1>s, the title in a <div> of the template: the first <h1> is a
    section ("A primer on slow relaxation", or "References" where the sections are <h2>s), the <title> element
    the title."""
    title = '<div class="header--title">Slow Relaxations in Layered Magnets</div>'
    named = _sections("h1").replace("Introduction", "A primer on slow relaxation")
    rec = _pandoc_page(tmp_path, title, named.replace("Results", "What the films showed"), "")
    assert rec["title"] == "Slow Relaxations in Layered Magnets"
    rec = _pandoc_page(tmp_path, title, _sections(), '<h1 id="references">References</h1>' + _REFS)
    assert rec["title"] == "Slow Relaxations in Layered Magnets"
    assert "Introduction" in [s["heading"] for s in rec["sections"]]


def test_an_abstract_set_as_bare_text_or_as_a_summary_is_read_without_its_version_links(tmp_path):
    """A template's abstract: the bare text of a ``<section class="abstract">`` beside a box of links to the
    paper's PDF and preprint, or a ``<summary>`` (of no ``<details>``) in the page's header."""
    abstract = _PARA.format("anneal") * 2
    links = '<div class="artifacts"><a href="draft.pdf">draft</a> <a href="preprint.pdf">preprint</a></div>'
    body = f'<section class="abstract">{abstract}{links}</section><article>{_sections()}</article>'
    rec = _pandoc_page(tmp_path, "", body, "")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    front = f"<h1>Slow Relaxations in Layered Magnets</h1><div class='creator'>Anna Quill</div><summary>{abstract}"
    rec = _pandoc_page(tmp_path, front + "</summary>", f"<article>{_sections()}</article>", "")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    assert "Anna Quill" not in rec["text"]


def test_a_sphinx_pages_heading_permalinks_are_no_text_and_pandocs_author_tags_name_the_authors(tmp_path):
    """Sphinx (and Jupyter Book) end each heading with a permalink "¶": not the abstract's label or text. pandoc's
    standalone pages name their authors and date in ``author`` and ``dcterms.date`` meta tags."""
    abstract = _PARA.format("anneal") * 2
    page = (
        '<html><head><meta name="author" content="Anna Quill"><meta name="author" content="Bo Renner">'
        '<meta name="dcterms.date" content="2031-03-04"><title>Slow Relaxations in Layered Magnets</title></head>'
        '<body><div class="body" role="main"><section id="slow"><h1>Slow Relaxations in Layered Magnets'
        '<a class="headerlink" href="#slow">¶</a></h1><section id="abstract"><h2>Abstract<a class="headerlink" '
        f'href="#abstract">¶</a></h2><p>{abstract}</p></section>{_sections()}</section></div></body></html>'
    )
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "page.html")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    assert "¶" not in rec["text"] and rec["title"] == "Slow Relaxations in Layered Magnets"
    assert rec["metadata"]["authors"] == ["Anna Quill", "Bo Renner"] and rec["metadata"]["year"] == 2031


def test_doi_parts_and_software_dois_in_prose_are_not_the_papers(tmp_path):
    """eLife numbers its abstract's and figures' DOIs after the paper's ("10.7554/eLife.45107.001", ".002"): none
    is the paper's; nor a DOI a sentence gives for the paper's software or for the data after another address
    ("... published at https://github.com/..., DOI: 10.5281/...", "hyperparameters are at https://doi.org/...")."""
    parts = "".join(
        f'<p><a href="https://doi.org/10.5555/slow.2031.{n:03d}">https://doi.org/10.5555/slow.2031.{n:03d}</a></p>'
        for n in (1, 2)
    )
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", parts + _sections(), "")
    assert rec["metadata"]["doi"] is None
    software = (
        '<p>The software made for this article has been published at <a href="https://github.com/x/y">'
        'https://github.com/x/y</a>, DOI: <a href="https://doi.org/10.5281/zenodo.9">10.5281/zenodo.9</a>.</p>'
        "<p>The models fit on all data types are on Figshare: coefficients are available at "
        '<a href="https://doi.org/10.6084/m9.figshare.1">https://doi.org/10.6084/m9.figshare.1</a> and '
        'hyperparameters are at <a href="https://doi.org/10.6084/m9.figshare.2">'
        "https://doi.org/10.6084/m9.figshare.2</a>.</p><p>The toolkit can be cited by its digital object "
        'identifier, <a href="https://doi.org/10.5281/zenodo.7">10.5281/zenodo.7</a>, as is done here.</p>'
    )
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", _sections() + software, "")
    assert rec["metadata"]["doi"] is None


def test_a_keywords_line_and_an_older_pandoc_title_blocks_author_headings_are_not_text(tmp_path):
    """An older pandoc template sets the title block as headings (``<h2 class="author">``), then "Keywords: ..."
    and the abstract under an ``<h1>``: the authors head no section, the keywords are metadata, the abstract is
    the abstract."""
    front = (
        '<div id="header"><h1 class="title">Slow Relaxations in Layered Magnets</h1>'
        '<h2 class="author">Anna Quill (Lake Institute)</h2><h2 class="author">Bo Renner (Example University)</h2>'
        "</div>"
    )
    abstract = _PARA.format("anneal") * 2
    body = (
        "<p><strong>Keywords:</strong> layered magnets, slow relaxation, anneal</p><h1>Abstract</h1>"
        f"<p>{abstract}</p>{_sections('h1')}"
    )
    rec = _pandoc_page(tmp_path, "", front + body, "")  # the title block a <div>, not the page's <header>
    assert "slow relaxation, anneal" not in rec["text"] and "Anna Quill" not in rec["text"]
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    assert not any("Quill" in s["heading"] for s in rec["sections"])


def test_r_markdown_sections_the_extractor_left_out_beside_kept_subsections_are_restored(tmp_path):
    """R Markdown (pandoc) nests "section level1" divs, headed by <h1>, holding "section level2" ones: the
    paragraphs of whole sections the extractor left out, beside sections whose subsections it kept, are the
    paper's (a section's depth is no other kind of box)."""
    words = "resistance density gap anneal stage film contact carrier field probe".split()

    def section(level: int, name: str, word: str, n: int = 3) -> str:
        text = "".join(f"<p>We report in {name.lower()} {k} that {_PARA.format(word) * 2}</p>" for k in range(n))
        return f'<div class="section level{level}" id="{name.lower()}"><h{level}>{name}</h{level}>{text}</div>'

    body = section(1, "Background", words[0]) + "".join(
        f'<div class="section level1" id="{top.lower()}"><h1>{top}</h1>'
        + "".join(section(2, f"{top} part {k}", words[(3 * i + k) % 10], 2) for k in range(3))
        + "</div>"
        for i, top in enumerate(("Methods", "Results", "Discussion"))
    )
    page = (
        "<html><head><title>Slow Relaxations in Layered Magnets</title></head><body>"
        '<div class="container-fluid main-container"><div class="fluid-row" id="header"><h1 class="title">'
        f"Slow Relaxations in Layered Magnets</h1></div>{body}</div></body></html>"
    )
    tree = lxml.html.fromstring(page)
    kept = [
        ["Discussion part 0", f"We report in discussion part 0 {k} that {_PARA.format(words[6]) * 2}"] for k in (0, 1)
    ]
    lost = html_restore.dropped_paragraphs(tree, kept)
    assert sum("in background" in p for p in lost) == 3 and sum("in methods part" in p for p in lost) == 6


def test_the_rules_for_generators_pages_leave_a_papers_own_doi_title_and_refusals_alone(tmp_path):
    """What the rules for generators' pages must not touch: a DOI line under a title naming materials, a "Cite
    as" line naming a journal called Data, a DOI in "About this article" after the references, a Cell DOI beside
    another of its month; a title that is the first of several <h1>s under a <title> naming a site; a list of
    search results (its links are no prose to unwrap)."""
    head = "<h1>Two-dimensional materials at high pressure</h1><p>Anna Quill, Bo Renner</p>"
    rec = _pandoc_page(tmp_path, head + "<p>DOI: 10.5555/slow.2031.7</p>", _sections(), "")
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"
    cite = '<p>Cite as: Quill A. Scientific Data 8, 12, published online at <a href="https://doi.org/10.5555/d.8">'
    rec = _pandoc_page(tmp_path, head + cite + "https://doi.org/10.5555/d.8</a></p>", _sections(), "")
    assert rec["metadata"]["doi"] == "10.5555/d.8"
    after = "<h2>About this article</h2><p>Cite this article: Quill A. (2031). DOI: 10.5555/slow.2031.7</p>"
    rec = _pandoc_page(
        tmp_path, head, _sections() + "<h2>References</h2><ol><li>Writer, C. (2030).</li></ol>" + after, ""
    )
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"
    cell = "".join(
        f'<p><a href="https://doi.org/10.1016/j.cell.2031.05.0{n}">https://doi.org/10.1016/j.cell.2031.05.0{n}</a></p>'
        for n in (32, 40)
    )
    rec = _pandoc_page(tmp_path, head + cell, _sections(), "")
    assert rec["metadata"]["doi"] == "10.1016/j.cell.2031.05.032"
    page = (
        "<html><head><title>Lake Institute Blog | 6 min read</title></head><body><article>"
        f"<h1>Slow Relaxations in Layered Magnets</h1>{_sections()}</article><aside><h1>Comments</h1>"
        "<p>No comments yet.</p></aside><aside><h1>Related</h1><p>Other posts.</p></aside></body></html>"
    )
    (tmp_path / "blog.html").write_text(page, encoding="utf-8")
    [rec] = read_file(tmp_path / "blog.html")
    assert rec["title"] == "Slow Relaxations in Layered Magnets"
    snippet = "We trace slow relaxations in layered magnets over hours of cooling and find that contacts hold still."
    items = "".join(
        f"<div class='result'><a href='/doi/10.5555/x.{k}'>Slow relaxation paper number {k} in layered magnets</a> "
        f"{snippet if k % 2 else 'In films.'} <a href='/doi/pdf/10.5555/x.{k}'>PDF</a></div>"
        for k in range(12)
    )
    (tmp_path / "search.html").write_text(
        f"<html><head><title>Search results</title></head><body><h1>Search: magnets</h1>{items}</body></html>"
    )
    [rec] = read_file(tmp_path / "search.html")
    assert "not an article page" in rec.get("error", "")


def test_an_abstracts_boxes_and_headings_decide_what_it_holds(tmp_path):
    """An abstract's paragraph, not the loose keywords and download link beside it; a real "Abstract" heading
    before a stray <summary>; an <h1> "Abstract" up to the next section in a <div>, not the whole body."""
    abstract = _PARA.format("anneal") * 2
    box = (
        f'<div class="abstract"><h2>Abstract</h2><p>{abstract}</p><span class="kwd">Keywords: layered magnets, '
        'slow relaxation, anneal, Hall</span> <a href="#">Download the full text of this article as a PDF file for'
        " free today</a></div>"
    )
    rec = _pandoc_page(tmp_path, "", box + _sections(), "")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    summary = "<summary>Key points: carriers freeze out over hours and the contacts hold still in the cold.</summary>"
    rec = _pandoc_page(tmp_path, "", f"{summary}<h2>Abstract</h2><p>{abstract}</p>{_sections()}", "")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    sections = "".join(
        f'<div class="section"><h1>{head}</h1><p>{_PARA.format(word) * 3}</p></div>'
        for head, word in (("Introduction", "resistance"), ("Results", "density"), ("Conclusions", "gap"))
    )
    rec = _pandoc_page(tmp_path, "", f"<div><h1>Abstract</h1><p>{abstract}</p>{sections}</div>", "")
    assert rec["sections"][0] == {"heading": "Abstract", "text": abstract.strip()}
    assert all((_PARA.format(word) * 3).strip() in rec["text"] for word in ("resistance", "density", "gap"))


def test_a_doi_in_prose_is_another_works_unless_its_sentence_names_the_paper(tmp_path):
    """A DOI in a paragraph of prose (results of an analysis "available at https://doi.org/...", after the
    references in a supplement) is another work's; "This study is published in ... at https://doi.org/..." is
    the paper's own."""
    other = (
        "<p>In a previous version of this paper we ran the analysis for one gene set only. GO analysis results for "
        'the genes are available at <a href="https://doi.org/10.6084/m9.figshare.5"><code>https://doi.org/10.6084/'
        "m9.figshare.5</code></a>, and the other results beside them.</p>"
    )
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", _sections() + other, "")
    assert rec["metadata"]["doi"] is None
    note = (
        "<p><strong>Now Published</strong><br>This study is published in <em>Slow Physics</em> at "
        '<a href="https://doi.org/10.5555/slow.2031.7">https://doi.org/10.5555/slow.2031.7</a>, which is the '
        "preferred location for citations, although this version is kept up to date.</p>"
    )
    rec = _pandoc_page(tmp_path, "<h1>Slow Relaxations in Layered Magnets</h1>", note + _sections() + other, "")
    assert rec["metadata"]["doi"] == "10.5555/slow.2031.7"
