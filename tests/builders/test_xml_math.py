"""XML equations kept in place as LaTeX with the sentences around them, spaces between numbers and units, and
appendices: JATS (tex-math, MathML) and Elsevier (MathML in ce:display, ce:hsp). Sources written for these
tests."""

from __future__ import annotations

from sciqag_dataset.builders.ingest import read_file

JATS = """<?xml version="1.0" encoding="UTF-8"?>
<article xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:xlink="http://www.w3.org/1999/xlink">
<front><article-meta>
<article-id pub-id-type="doi">10.5555/jats.math.1</article-id>
<title-group><article-title>Lattice Thermal Conductivity of Doped Skutterudites</article-title></title-group>
<abstract><p>Filling the cages lowers the lattice conductivity by half.</p></abstract>
</article-meta></front>
<body><sec><title>Model</title>
<p>The conductivity follows <inline-formula><alternatives><tex-math id="t1"><![CDATA[\\documentclass[12pt]{minimal}
\\usepackage{amsmath}\\begin{document}$\\kappa_L = \\frac{1}{3} C v \\ell$\\end{document}]]></tex-math>
<mml:math><mml:mi>κ</mml:mi></mml:math></alternatives></inline-formula> at low temperature.</p>
<disp-formula id="e1"><label>(1)</label><mml:math display="block"><mml:mrow><mml:msub><mml:mi>τ</mml:mi>
<mml:mi>U</mml:mi></mml:msub><mml:mo>=</mml:mo><mml:mfrac><mml:mn>1</mml:mn><mml:mrow><mml:mi>A</mml:mi>
<mml:msup><mml:mi>ω</mml:mi><mml:mn>2</mml:mn></mml:msup></mml:mrow></mml:mfrac></mml:mrow></mml:math></disp-formula>
<p>where A sets the Umklapp rate, fitted as 2.1&#x2009;ps at 300&#x2009;K.</p>
</sec></body>
<back><app-group><app><title>Derivation of the scattering rate</title>
<p>Starting from the Callaway model, the rate adds over processes.</p></app></app-group>
<ref-list><ref id="r1"><mixed-citation>A. Nother, 2020.</mixed-citation></ref></ref-list></back>
</article>
"""

ELSEVIER = """<?xml version="1.0" encoding="UTF-8"?>
<full-text-retrieval-response xmlns="http://www.elsevier.com/xml/svapi/article/dtd"
    xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:ce="http://www.elsevier.com/xml/common/dtd" xmlns:mml="http://www.w3.org/1998/Math/MathML"
    xmlns:ja="http://www.elsevier.com/xml/ja/dtd">
<coredata><prism:doi>10.5555/els.math.2</prism:doi><dc:title>Charge Carriers in Thin Oxide Films</dc:title></coredata>
<originalText><ja:article><ja:body><ce:sections>
<ce:section><ce:section-title>Theory</ce:section-title>
<ce:para>Films were 0.5<ce:hsp sp="0.25"/>nm and 12<ce:hsp sp="0.25"/>nm thick, respectively.
<ce:display><ce:formula id="fd1">
<ce:label>(2)</ce:label>
<mml:math altimg="si1.svg"><mml:msub><mml:mi>E</mml:mi><mml:mi>c</mml:mi></mml:msub><mml:mo>=</mml:mo>
<mml:mfrac><mml:msup><mml:mi>ℏ</mml:mi><mml:mn>2</mml:mn></mml:msup><mml:mrow><mml:mn>2</mml:mn><mml:mi>m</mml:mi></mml:mrow>
</mml:mfrac></mml:math></ce:formula></ce:display>where E<ce:inf>c</ce:inf> is the confinement energy.</ce:para>
<ce:para>A figure follows.<ce:display>
<ce:figure id="f1"><ce:caption><ce:simple-para>Bands of the film.</ce:simple-para>
</ce:caption></ce:figure></ce:display></ce:para>
</ce:section></ce:sections></ja:body>
<ja:tail><ce:appendices><ce:section><ce:section-title>Fitting the spectra</ce:section-title>
<ce:para>Each spectrum was fitted with two Gaussians.</ce:para></ce:section></ce:appendices></ja:tail>
</ja:article></originalText>
</full-text-retrieval-response>
"""


def test_jats_equations_are_latex_in_place_and_appendices_are_kept(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text(JATS, encoding="utf-8")
    [rec] = read_file(path)
    text = rec["text"]
    assert "follows $\\kappa_L = \\frac{1}{3} C v \\ell$ at low temperature." in text  # tex-math preferred
    assert "\n\n$$τ_{U} = \\frac{1}{A ω^{2}}$$\n\n" in text  # MathML written out, its own paragraph
    assert "2.1 ps at 300 K" in text
    assert [s["heading"] for s in rec["sections"]][-1] == "Appendix: Derivation of the scattering rate"
    assert "Callaway" in text and "Nother" not in text


def test_elsevier_equations_keep_the_sentence_boundary_and_numbers_keep_their_units(tmp_path):
    path = tmp_path / "b.xml"
    path.write_text(ELSEVIER, encoding="utf-8")
    [rec] = read_file(path)
    text = rec["text"]
    assert "0.5 nm and 12 nm thick" in text
    assert "respectively. $$E_{c} = \\frac{ℏ^{2}}{2 m}$$ where E" in text
    assert "Bands of the film" not in text  # figures in a display still go
    assert rec["sections"][-1]["heading"] == "Appendix: Fitting the spectra"
