"""HTML components (builders/ingest/html_components.py): the article's tables and figures, read before the text
is extracted; mentions found in the text by their labels ("Table 1", "Fig. 1").

Every page here is written for these tests (no paper's text is copied)."""

from __future__ import annotations

import lxml.html
from test_components import FIX, components_by_id, mentioned, no_marks

from sciqag_dataset.builders.ingest import read_file
from sciqag_dataset.core import schema

HTML = FIX / "components" / "html_paper.html"


def test_every_table_and_figure_of_the_article_is_a_component_and_the_sites_are_not():
    [rec] = read_file(HTML)
    page = lxml.html.parse(str(HTML)).getroot()
    article = next(page.iter("article"))
    in_article = [el for el in article.iter("table", "figure") if el.tag == "figure" or el.getparent().tag != "figure"]
    assert len(rec["components"]) == len(in_article) == 3  # the header's layout table is not one
    assert [(c["id"], c["kind"], c["label"]) for c in rec["components"]] == [
        ("tbl1", "table", "Table 1"),
        ("fig1", "figure", "Figure 1"),
        ("tbl2", "table", "Table 2"),  # a <table> in a <figure>: a table with the figure's caption
    ]
    no_marks(rec)
    assert schema.conform(rec, schema.features_for("papers")) == rec


def test_html_tables_captions_mentions_and_context():
    [rec] = read_file(HTML)
    found = components_by_id(rec)
    t1 = found["tbl1"]
    assert t1["caption"] == "Wall layers of the two cells."  # the label is its own field
    assert t1["header_rows"] == 2 and t1["cells"][:2] == [
        ["Layer", "Thickness (mm)", "Thickness (mm)"],
        ["Layer", "Salt cell", "Gypsum cell"],
    ]
    assert t1["content"].splitlines()[0] == "| Layer | Thickness (mm) Salt cell | Thickness (mm) Gypsum cell |"
    assert found["tbl2"]["cells"][1:] == [["June", "2.9"], ["July", "3.8"], ["August", "3.5"]]
    assert found["fig1"]["caption"] == "Room temperature of the two cells over a week in July."
    assert mentioned(rec, t1) == ["Table 1", "Table 1"]
    assert mentioned(rec, found["fig1"]) == ["Fig. 1", "Figure 1"]
    assert mentioned(rec, found["tbl2"]) == ["Table 2"]
    assert t1["context_before"].endswith("as Table 1 lists.")
    assert t1["context_after"].startswith("Air temperatures were logged")
    assert found["fig1"]["context_before"].startswith("The salt cell stayed cooler")
    # the text is the prose alone
    assert "Wall layers" not in rec["text"] and "Gypsum cell" not in rec["text"] and "August | 3.5" not in rec["text"]


def test_the_shipped_html_samples():
    [publisher] = read_file(FIX / "ingest" / "publisher_page.html")
    fig, table = publisher["components"]
    assert (fig["kind"], fig["label"]) == ("figure", "Figure 1")
    assert fig["caption"] == "Polarisation curves of the nanosheets. Curves recorded in 0.5 M sulfuric acid."
    assert fig["context_before"].startswith("Transition metal phosphides") and fig["mentions"] == []
    assert table["cells"] == [["Catalyst", "Overpotential"], ["Ni12P5", "98"]] and table["header_rows"] == 0
    [article] = read_file(FIX / "ingest" / "article_page.html")
    # its figure has a caption; its table of one cell is layout, not data
    assert [(c["kind"], c["caption"]) for c in article["components"]] == [("figure", "Figure caption not wanted.")]


EQUATIONS = FIX / "components" / "html_equations.html"


def test_displayed_equations_given_as_mathml_or_tex_are_components_and_images_are_not():
    [rec] = read_file(EQUATIONS)
    page = lxml.html.parse(str(EQUATIONS)).getroot()
    article = next(page.iter("article"))
    wrappers = [el for el in article.iter("span") if "disp-formula" in (el.get("class") or "").split()]
    wrappers += [el for el in article.iter("div") if el.get("class") == "c-article-equation"]
    wrappers += [el for el in article.iter("script") if "mode=display" in (el.get("type") or "")]
    # (the MathJax script's typeset copy, a <math display="block"> beside it, is not counted: the script is it)
    with_source = [w for w in wrappers if next(w.iter("img"), None) is None]  # not the one given as an image
    rows = [el for el in article.iter("tr") if "ltx_equation" in (el.get("class") or "").split()]
    # the navigation's formula is not the paper's; MathJax's typeset copy beside its script is not another one
    assert len(rec["components"]) == len(with_source) + len(rows) == 6
    assert [(c["id"], c["label"], c["content_format"]) for c in rec["components"]] == [
        ("eqn-1", "Eq. (1)", "mathml"),  # MathML in a publisher's wrapper, its number in a label element
        ("Equ2", "Eq. (2)", "latex"),  # TeX between $$ in Springer-style markup
        ("equation-1", "Eq. (3)", "latex"),  # a MathJax display script, its number a \tag
        ("S1.E5", "Eq. (5)", "latex"),  # each row of a LaTeXML group of equations, its cells' formulas joined
        ("S1.E6", "Eq. (6)", "latex"),
        ("equation-2", "Eq. (7)", "latex"),
    ]
    assert components_by_id(rec)["S1.E5"]["content"] == r"J_f = -D \partial_x M"
    found = components_by_id(rec)
    assert found["eqn-1"]["content"].startswith('<math xmlns="http://www.w3.org/1998/Math/MathML"')
    assert found["Equ2"]["content"] == r"k = \frac{\pi^2 D}{4 L^2}"
    assert [mentioned(rec, c) for c in rec["components"]] == [
        ["Eq. (1)"],
        ["Equation 2"],
        ["Eq. (3)"],
        ["Eq. (5)"],
        ["Eq. (6)"],
        ["Eq. (7)"],
    ]
    assert found["equation-1"]["context_before"].startswith("The diffusivity itself depends on temperature")
    no_marks(rec)
    assert schema.conform(rec, schema.features_for("papers")) == rec


WRAPPED = FIX / "components" / "html_wrapped.html"


def test_a_label_set_in_the_publishers_wrapper_outside_the_table_or_figure_is_its_label():
    [rec] = read_file(WRAPPED)
    table, figure, bare, _ = rec["components"]
    # a Springer-style div.Table: the caption element stands beside the table's own scroll box
    assert (table["kind"], table["label"]) == ("table", "Table 1")
    assert table["caption"] == "Build-up of the four test roofs."
    assert mentioned(rec, table) == ["Table 1"]
    # an eLife-style header above the <figure>: "Figure 2" alone, the caption in the figcaption
    assert (figure["kind"], figure["label"]) == ("figure", "Figure 2")
    assert figure["caption"].startswith("Run-off of the four roofs") and mentioned(rec, figure) == ["Figure 2"]
    # a bare table in a section: a paragraph's "Table 3" is prose, not its caption
    assert (bare["kind"], bare["label"], bare["caption"]) == ("table", "", "")
    no_marks(rec)


def test_an_equation_set_as_a_table_of_its_formula_and_number_is_an_equation():
    [rec] = read_file(WRAPPED)
    equation = rec["components"][-1]
    assert (equation["id"], equation["kind"], equation["label"]) == ("eqn1", "equation", "Eq. (1)")
    assert (equation["content"], equation["content_format"]) == ("R = 1 − Q/P", "text")
    assert mentioned(rec, equation) == ["eqn (1)"]
    no_marks(rec)
