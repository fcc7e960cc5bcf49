"""Elsevier full-text XML components (builders/ingest/elsevier_components.py): every ``ce:table``, ``ce:figure``
and displayed ``ce:formula``, and the ``ce:cross-ref``s that mention them.

tests/fixtures/components/elsevier_paper.xml is written for these tests (no paper's text is copied)."""

from __future__ import annotations

import random
import re

import datasets
from lxml import etree
from test_components import FIX, components_by_id, mentioned, no_marks

from sciqag_dataset.builders.ingest import elsevier_components, read_file
from sciqag_dataset.core import schema

ELS = FIX / "components" / "elsevier_paper.xml"
CE = "{http://www.elsevier.com/xml/common/dtd}"


def test_every_table_figure_and_displayed_formula_is_a_component():
    [rec] = read_file(ELS)
    source = etree.parse(str(ELS)).getroot()
    shown = [el.get("id") for el in source.iter(f"{CE}table", f"{CE}figure", f"{CE}formula")]
    assert sorted(c["id"] for c in rec["components"]) == sorted(shown) == ["fd1", "fig1", "fig2", "tbl1"]
    assert [(c["id"], c["kind"], c["label"]) for c in rec["components"]] == [
        ("fd1", "equation", "Eq. (1)"),
        ("fig1", "figure", "Fig. 1"),
        ("fig2", "figure", "Fig. 2"),
        ("tbl1", "table", "Table 1"),
    ]
    no_marks(rec)
    assert schema.conform(rec, schema.features_for("papers")) == rec
    assert datasets.Dataset.from_list([rec], features=schema.features_for("papers")).num_rows == 1


def test_elsevier_mentions_slice_to_the_cross_references():
    [rec] = read_file(ELS)
    found = components_by_id(rec)
    assert mentioned(rec, found["tbl1"]) == ["Table 1"]
    assert mentioned(rec, found["fd1"]) == ["Eq. (1)"]
    assert mentioned(rec, found["fig1"]) == mentioned(rec, found["fig2"]) == ["Figs. 1 and 2"]  # one cross-refs
    source = etree.parse(str(ELS)).getroot()
    for comp in rec["components"]:
        refs = [x for x in source.iter(f"{CE}cross-ref", f"{CE}cross-refs") if comp["id"] in x.get("refid").split()]
        assert len(comp["mentions"]) == len(refs), comp["id"]


def test_a_cals_table_is_cells_with_its_spans_header_rows_and_footnote():
    [rec] = read_file(ELS)
    t = components_by_id(rec)["tbl1"]
    assert t["caption"] == "Hydrogen uptake of the films at 150 °C."
    assert t["header_rows"] == 2  # "Cap (nm)" spans both header rows, "Uptake" two columns
    assert t["cells"] == [
        ["Cap (nm)", "Uptake", "Uptake"],
        ["Cap (nm)", "wt%", "min"],
        ["5", "6.1^a", "10"],
        ["20", "5.8", "25"],
    ]
    table, note = t["content"].split("\n\n")
    assert table.splitlines()[0] == "| Cap (nm) | Uptake wt% | Uptake min |"
    assert note == "^aAfter the first cycle."
    # a figure's caption loses its citation as the prose does
    assert components_by_id(rec)["fig2"]["caption"] == "The same film after 20 cycles."


def test_the_equation_is_its_mathml_and_stands_where_it_is_displayed():
    [rec] = read_file(ELS)
    found = components_by_id(rec)
    eq = found["fd1"]
    assert eq["content_format"] == "mathml" and eq["content"].startswith('<mml:math xmlns:mml="')
    assert eq["context_before"] == "The absorbed fraction follows a first-order rate law,"
    assert eq["context_after"].startswith("where the rate constant k grows")
    # a table anchored inside the paragraph that mentions it stands after that paragraph
    assert found["tbl1"]["context_before"].startswith("The uptake of each film is listed in Table 1.")
    assert found["tbl1"]["context_before"].endswith("not the later ones.")
    assert found["tbl1"]["context_after"].startswith("The absorbed fraction")


def test_a_float_cited_only_outside_the_prose_stands_at_its_anchor(tmp_path):
    """A figure the text never mentions, cited only in a table's footnote and a graphical abstract, stands where
    its anchor is; one cited in the prose stands after the paragraph that mentions it."""
    source = ELS.read_text()
    source = source.replace(
        "Thicker caps slowed the first cycle but not the later ones.",
        'Thicker caps slowed the first cycle but not the later ones.<ce:float-anchor refid="fig3"/>',
    )
    source = source.replace(
        "After the first cycle.</ce:note-para>",
        'After the first cycle, see <ce:cross-ref refid="fig3">Fig. 3</ce:cross-ref>.</ce:note-para>',
    )
    source = source.replace(
        "<ce:table id=",
        '<ce:figure id="fig3"><ce:label>Fig. 3</ce:label><ce:caption><ce:simple-para>The cell.</ce:simple-para>'
        "</ce:caption></ce:figure><ce:table id=",
    )
    path = tmp_path / "anchored.xml"
    path.write_text(source)
    [rec] = read_file(path)
    fig3 = components_by_id(rec)["fig3"]
    assert fig3["mentions"] == []
    assert fig3["context_before"].endswith("Thicker caps slowed the first cycle but not the later ones.")
    assert fig3["context_after"].startswith("The absorbed fraction follows a first-order rate law,")


def test_the_elsevier_prose_is_unchanged_by_its_components(tmp_path):
    [rec] = read_file(ELS)
    stripped = tmp_path / "no_floats.xml"
    stripped.write_text(re.sub(r"<ce:floats>.*?</ce:floats>", "", ELS.read_text(), flags=re.S))
    [plain] = read_file(stripped)
    assert plain["text"] == rec["text"] and plain["sections"] == rec["sections"]
    assert plain["components"] == [c for c in rec["components"] if c["kind"] == "equation"]
    assert "Cross-section" not in rec["text"] and "5.8" not in rec["text"]
    assert "$$x = 1 - e^{- k t}$$" in rec["text"]  # the equation stays in the prose too


_PIECES = [
    "Plain words. ",
    '<ce:cross-ref refid="bib1">[1]</ce:cross-ref>',
    '<ce:cross-refs refid="bib1 bib2">[1,2]</ce:cross-refs>',
    " (",
    ") ",
    '<ce:cross-ref refid="tbl1">Table 1</ce:cross-ref>',
    '<ce:cross-refs refid="fig1 tbl1">Fig. 1 and Table 1</ce:cross-refs>',
    '<ce:float-anchor refid="tbl1"/>',
    '<ce:float-anchor refid="fig9"/>',
    '<ce:display><ce:formula id="e1"><mml:math><mml:mi>x</mml:mi></mml:math></ce:formula></ce:display>',
    "<mml:math><mml:mi>y</mml:mi></mml:math>",
    "[",
    "]",
]
_FLOATS = (
    '<ce:floats><ce:table id="tbl1"><ce:label>Table 1</ce:label><cals:tgroup><cals:tbody><cals:row><cals:entry>a'
    '</cals:entry></cals:row></cals:tbody></cals:tgroup></ce:table><ce:figure id="fig1"><ce:label>Fig. 1</ce:label>'
    '</ce:figure><ce:figure id="fig9"><ce:label>Fig. 9</ce:label></ce:figure></ce:floats>'
)


def test_the_prose_is_the_same_with_and_without_the_marks_whatever_stands_beside_them(tmp_path, monkeypatch):
    rng = random.Random(11)
    path = tmp_path / "random.xml"
    head = ELS.read_text().split("<ja:body>")[0]
    for _ in range(100):
        paras = "".join(
            "<ce:para>" + "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12))) + "</ce:para>"
            for _ in range(rng.randint(1, 4))
        )
        path.write_text(
            f"{head}<ja:body><ce:sections><ce:section><ce:section-title>S</ce:section-title><ce:para>Start.</ce:para>"
            f"{paras}</ce:section></ce:sections></ja:body><ja:tail><ce:bibliography><ce:bib-reference id='bib1'/>"
            f"<ce:bib-reference id='bib2'/></ce:bibliography></ja:tail>{_FLOATS}</ja:article></xocs:serial-item>"
            "</xocs:doc></originalText></full-text-retrieval-response>"
        )
        [marked] = read_file(path)
        with monkeypatch.context() as m:
            m.setattr(elsevier_components, "mention_marks", lambda indices: ("", ""))
            m.setattr(elsevier_components, "place_marks", lambda index: ("", ""))
            [plain] = read_file(path)
        assert not any(c["mentions"] for c in plain["components"])
        assert marked["text"] == plain["text"] and not marked["ingest"]["warnings"]
        for comp in marked["components"]:
            assert all(marked["text"][x["start"] : x["end"]].strip() for x in comp["mentions"])
