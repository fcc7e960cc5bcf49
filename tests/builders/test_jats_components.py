"""JATS components (builders/ingest/jats_components.py): every ``table-wrap``, ``fig`` and ``disp-formula``, and
the ``xref``s that mention them.

tests/fixtures/components/ holds papers written for these tests (no paper's text is copied)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import datasets
from lxml import etree
from test_components import FIX, components_by_id, mentioned, no_marks

from sciqag_dataset.builders.ingest import jats_components, read_file
from sciqag_dataset.core import schema

JATS = FIX / "components" / "jats_paper.xml"


def test_every_table_figure_and_display_formula_of_a_jats_paper_is_a_component():
    [rec] = read_file(JATS)
    source = etree.parse(str(JATS)).getroot()
    expected = [el.get("id") for el in source.iter("table-wrap", "fig", "disp-formula")]
    assert [c["id"] for c in rec["components"]] == expected == ["E1", "E2", "T1", "F1", "T2"]
    assert [c["kind"] for c in rec["components"]] == ["equation", "equation", "table", "figure", "table"]
    assert [c["label"] for c in rec["components"]] == ["Eq. (1)", "Eq. (2)", "Table 1", "Figure 1", "Table 2"]
    no_marks(rec)
    # the record fits the published schema, components and all
    assert schema.conform(rec, schema.features_for("papers")) == rec
    assert datasets.Dataset.from_list([rec], features=schema.features_for("papers")).num_rows == 1


def test_jats_mentions_slice_to_the_text_that_refers_to_each_component():
    [rec] = read_file(JATS)
    found = components_by_id(rec)
    assert mentioned(rec, found["T1"]) == ["Table 1", "Tables 1 and 2"]
    assert mentioned(rec, found["T2"]) == ["Table 2", "Tables 1 and 2"]  # one xref naming both tables
    assert mentioned(rec, found["F1"]) == ["Fig. 1", "Figure 1"]  # "Figure <xref>1</xref>": the word too
    assert mentioned(rec, found["E1"]) == ["Eq. (1)"]
    assert mentioned(rec, found["E2"]) == ["Eq. (2)"]
    # as many mentions as the source has cross-references to each (none to a citation)
    source = etree.parse(str(JATS)).getroot()
    for comp in rec["components"]:
        xrefs = [x for x in source.iter("xref") if comp["id"] in (x.get("rid") or "").split()]
        assert len(comp["mentions"]) == len(xrefs), comp["id"]


def test_a_jats_table_is_cells_with_its_header_rows_and_markdown():
    [rec] = read_file(JATS)
    t1 = components_by_id(rec)["T1"]
    assert t1["caption"] == "Freeze casting conditions. Three cooling rates were used."
    assert t1["header_rows"] == 2  # <thead>'s two rows; "Sample" spans both, "Cooling" two columns
    assert t1["cells"] == [
        ["Sample", "Cooling", "Cooling"],
        ["Sample", "Rate (K/min)", "Time (h)"],
        ["BN-1", "1", "12"],
        ["BN-5", "5", "3"],
        ["BN-10", "10^a", "1.5"],
    ]
    assert t1["content_format"] == "markdown"
    table, note = t1["content"].split("\n\n")
    assert table.splitlines()[:2] == ["| Sample | Cooling Rate (K/min) | Cooling Time (h) |", "| --- | --- | --- |"]
    assert note == "^aThe fastest rate the stage reached."  # the table's footnote goes with it
    t2 = components_by_id(rec)["T2"]  # no <thead>, no <th>: no header row is claimed
    assert t2["header_rows"] == 0 and t2["cells"][0] == ["Sample", "κ (mW/(m K))"]


def test_jats_equations_are_latex_or_mathml_and_figures_their_caption():
    [rec] = read_file(JATS)
    found = components_by_id(rec)
    assert found["E1"]["content"] == "\\kappa = \\kappa_s + \\kappa_g"
    assert found["E1"]["content_format"] == "latex"
    e2 = found["E2"]  # no tex-math: its MathML as markup, only the namespace it uses declared
    assert e2["content_format"] == "mathml"
    assert e2["content"].startswith('<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:msub>')
    assert "xlink" not in e2["content"]
    f1 = found["F1"]
    assert f1["caption"] == "Conductivity against density. Open symbols are unfolded sheets."
    assert f1["content"] == "" and f1["content_format"] is None and f1["cells"] == []


def test_context_is_the_paragraph_before_and_after_where_a_component_stands():
    [rec] = read_file(JATS)
    found = components_by_id(rec)
    e1 = found["E1"]  # between two paragraphs
    assert e1["context_before"] == "The total conductivity is the sum of a solid and a gaseous part, as in Eq. (1):"
    assert e1["context_after"] == "Folding the sheets should lower the solid part without changing the gaseous part."
    e2 = found["E2"]  # inside a paragraph: the text on either side of it
    assert e2["context_before"].endswith("and the gaseous part follows")
    assert e2["context_after"] == "where Kn is the Knudsen number."
    t1 = found["T1"]
    assert t1["context_before"].startswith("Sheets were folded") and t1["context_after"].startswith("Conductivity")
    # a table in <floats-group> stands nowhere in the text: after the paragraph of its first mention
    t2 = found["T2"]
    assert t2["context_before"] == "The slowest cooling gave the lowest conductivity (Table 2; Fig. 1)."
    assert t2["context_after"].startswith("Folded sheets stayed below")


def test_the_jats_prose_is_unchanged_by_its_components(tmp_path):
    """Tables and figures stay out of the prose: its text is that of the same paper without them."""
    [rec] = read_file(JATS)
    stripped = tmp_path / "no_floats.xml"
    stripped.write_text(re.sub(r"<table-wrap .*?</table-wrap>|<fig .*?</fig>", "", JATS.read_text(), flags=re.S))
    [plain] = read_file(stripped)
    assert plain["text"] == rec["text"] and plain["sections"] == rec["sections"]
    assert "Freeze casting conditions" not in rec["text"] and "BN-5" not in rec["text"]
    assert "$$\\kappa = \\kappa_s + \\kappa_g$$" in rec["text"]  # equations stay in the prose too


def test_the_shipped_jats_samples():
    path = Path(__file__).parents[2] / "examples" / "papers" / "photocatalytic_tio2.xml"
    [sample] = read_file(path)
    source = etree.parse(str(path)).getroot()
    assert len(sample["components"]) == len(list(source.iter("table-wrap", "fig", "disp-formula"))) == 2
    fig, table = sample["components"]
    assert (fig["id"], fig["label"], mentioned(sample, fig)) == ("F2", "Figure 2", ["Figure 2"])
    assert fig["context_after"].startswith("The Mott–Schottky plots had positive slopes")
    assert (table["id"], table["label"], table["mentions"], table["header_rows"]) == ("T1", "Table 1", [], 1)
    assert table["cells"][0] == ["Nitridation (°C)", "N content (at%)", "H2 rate (mmol g^−1 h^−1)"]
    assert table["cells"][2] == ["450", "1.8", "1.26"]
    # the demo's prose leaves its table and figure out: the hash of its text is that of the text without them
    assert sample["content_hash"] == "6ba0e099d84a0834466f457eedf94808463f434555b1dfc96027f89b79ace0fd"
    [article] = read_file(FIX / "ingest" / "jats_article.xml")
    [fig] = article["components"]
    assert (fig["id"], fig["kind"], fig["label"]) == ("f1", "figure", "Fig. 1")
    assert fig["caption"] == "Figure caption text that is not body text."
    assert mentioned(article, fig) == ["Fig. 1"]
    assert fig["context_before"] == "Plating morphology changed from needles to flat platelets (Fig. 1)."
    assert fig["context_after"] == "Zn/MnO2 full cells kept 88 % of their capacity after 500 cycles."


GROUPED = """<?xml version="1.0" encoding="UTF-8"?>
<article><front><article-meta><title-group><article-title>Grouped panels</article-title></title-group>
</article-meta></front><body><sec><title>Results</title>
<p>Both panels (<xref ref-type="fig" rid="G1">Fig. 1</xref>) agree, and Fig. <xref ref-type="fig" rid="F1b">1b</xref>
shows the second alone.</p>
<fig-group id="G1"><fig id="F1a"><label>1a</label></fig><fig id="F1b"><label>1b</label></fig></fig-group>
<p>A formula list follows.</p>
</sec></body></article>
"""


def test_a_reference_to_a_figure_group_mentions_each_figure_in_it(tmp_path):
    (tmp_path / "grouped.xml").write_text(GROUPED)
    [rec] = read_file(tmp_path / "grouped.xml")
    a, b = rec["components"]
    assert (a["label"], b["label"]) == ("Figure 1a", "Figure 1b")  # the style's word before a bare number
    assert mentioned(rec, a) == ["Fig. 1"] and mentioned(rec, b) == ["Fig. 1", "Fig. 1b"]
    assert a["context_before"].startswith("Both panels") and a["context_after"] == "A formula list follows."


_PIECES = [
    "word ",
    "Some text, ",
    "(",
    ")",
    "[",
    "; ",
    ". ",
    "thermo-\n",
    "electric ",
    "<sup>2</sup>",
    '<xref ref-type="bibr" rid="r1">1</xref>',
    '<xref ref-type="bibr" rid="r2">[2]</xref>',
    '<xref ref-type="fig" rid="F1">Fig. 1</xref>',
    'Table <xref ref-type="table" rid="T1">1</xref>',
    'Eq. (<xref ref-type="disp-formula" rid="E1">1</xref>)',
    '<table-wrap id="T1"><label>Table 1</label><table><tr><td>a</td><td>b</td></tr></table></table-wrap>',
    '<fig id="F1"><label>Figure 1</label><caption><p>cap</p></caption></fig>',
    '<disp-formula id="E1"><tex-math>x=1</tex-math></disp-formula>',
    "<inline-formula><tex-math>y</tex-math></inline-formula>",
]


def test_the_prose_is_the_same_with_and_without_the_marks_whatever_stands_beside_them(tmp_path, monkeypatch):
    """Random paragraphs of citations, brackets, references, floats and formulas side by side: the text read with
    components is the text read with no marks at all, and every mention is text."""
    rng = random.Random(7)
    path = tmp_path / "random.xml"
    for _ in range(120):
        paras = "".join(
            "<p>" + "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12))) + "</p>"
            for _ in range(rng.randint(1, 4))
        )
        path.write_text(
            "<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
            f"</article-meta></front><body><sec><title>S</title><p>Start.</p>{paras}</sec></body>"
            '<back><ref-list><ref id="r1"/><ref id="r2"/></ref-list></back></article>'
        )
        [marked] = read_file(path)
        with monkeypatch.context() as m:
            m.setattr(jats_components, "mention_marks", lambda indices: ("", ""))
            m.setattr(jats_components, "place_marks", lambda index: ("", ""))
            [plain] = read_file(path)
        assert not any(c["mentions"] for c in plain["components"])  # no marks were made
        assert marked["text"] == plain["text"] and not marked["ingest"]["warnings"]
        for comp in marked["components"]:
            assert all(marked["text"][x["start"] : x["end"]].strip() for x in comp["mentions"])
