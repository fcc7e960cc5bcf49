"""Ingest stage: every format from original fixtures, bad input, duplicates, resume."""

from __future__ import annotations

import hashlib
import json
import shutil
import types
from pathlib import Path

import pytest

from sciqag_dataset.builders import ingest
from sciqag_dataset.builders.ingest import (
    detect_format,
    iter_papers,
    normalize_doi,
    normalize_text,
    paper_id,
    read_file,
    run_ingest,
)
from sciqag_dataset.core import schema

FIX = Path(__file__).parents[1] / "fixtures" / "ingest"


def one(path) -> dict:
    records = read_file(path)
    assert len(records) == 1, records
    assert "error" not in records[0], records[0]
    return records[0]


def headings(rec) -> list[str]:
    return [s["heading"] for s in rec["sections"]]


def report(work: Path) -> dict:
    return json.loads((work / "ingest_report.json").read_text(encoding="utf-8"))


def stored(work: Path) -> list[dict]:
    return [json.loads(line) for line in (work / "papers.jsonl").read_text(encoding="utf-8").splitlines()]


def make_pdf(path: Path, pages: list[list[str]], title: str | None = None) -> Path:
    """A minimal valid PDF written by hand: one Helvetica text line per string, xref offsets computed."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    page_ids = [4 + 2 * i for i in range(len(pages))]
    objs = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] /Count {len(pages)} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for pid, lines in zip(page_ids, pages):
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"] + [op for ln in lines for op in (f"({esc(ln)}) Tj", "T*")]
        stream = "\n".join(ops + ["ET"]).encode("latin-1")
        objs[pid] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {pid + 1} 0 R >>"
        ).encode()
        objs[pid + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    info = 4 + 2 * len(pages)
    objs[info] = f"<< /Title ({esc(title)}) >>".encode() if title else b"<< >>"
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for num in sorted(objs):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objs[num] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (info + 1)
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, info + 1))
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (info + 1, info, xref)
    path.write_bytes(bytes(out))
    return path


# --- helpers -------------------------------------------------------------------------------------


def test_normalize_text_collapses_spaces_and_keeps_paragraphs():
    raw = "First  line\twith   gaps\nwrapped here.\r\n\r\n\n  Second para-\ngraph\u00a0end.  \n"
    assert normalize_text(raw) == "First line with gaps wrapped here.\n\nSecond para-graph end."


@pytest.mark.parametrize(
    "value, expected",
    [
        ("10.1000/XYZ123", "10.1000/XYZ123"),
        ("https://doi.org/10.1000/xyz123", "10.1000/xyz123"),
        ("doi: 10.1000/xyz123.", "10.1000/xyz123"),
        ("10.1016-j.ab.2008.07.041.json", "10.1016/j.ab.2008.07.041"),  # the SciQAG release's file-name form
        ("not a doi", None),
        ("", None),
    ],
)
def test_normalize_doi(value, expected):
    assert normalize_doi(value) == expected


def test_ids_are_url_safe_slugs_or_hashes():
    assert paper_id("10.1000/XYZ123", "ab" * 32) == "doi-10.1000-xyz123"
    assert paper_id("10.1002/(SICI)1097-4636", "ab" * 32) == "doi-10.1002-sici-1097-4636"
    assert paper_id(None, "0123456789abcdef" * 4) == "sha-0123456789abcdef"


# --- formats -------------------------------------------------------------------------------------


def test_plain_text():
    rec = one(FIX / "zeolite_adsorption.txt")
    assert rec["title"] == "Humidity-Tolerant CO2 Capture on an Amine-Grafted Chabazite Zeolite"
    assert rec["source_format"] == "txt" and rec["source_path"] == str(FIX / "zeolite_adsorption.txt")
    assert rec["id"] == "doi-10.5555-jiss.2031.017"
    meta = rec["metadata"]
    assert meta["doi"] == "10.5555/jiss.2031.017" and meta["year"] == 2031
    assert meta["journal"] == "Journal of Illustrative Sorption Science"
    assert meta["authors"] == ["Rosalind Achterberg", "Tunde Okonkwo-Bell", "Mei-Ling Saravanan"]
    assert rec["keywords"] == ["chabazite", "amine grafting", "CO2 capture", "humidity"]
    assert headings(rec) == ["Abstract", "Introduction", "Results", "Conclusion"]
    text = rec["text"]
    assert text.startswith("Zeolites adsorb carbon dioxide strongly, but water vapour competes for the same cation")
    assert "  " not in text and "Affiliation" not in text and "Westbrook" not in text
    assert text.count("\n\n") == 3  # four paragraphs, hard wraps undone, headings kept out of the text
    assert rec["content_hash"] == hashlib.sha256(text.encode()).hexdigest()
    assert rec["existing_qa"] == []
    assert schema.conform(rec, schema.features_for("papers")) == rec


def test_markdown():
    rec = one(FIX / "perovskite_notes.md")
    assert rec["title"] == "Strain Relaxation in Epitaxial SrRuO3 Films on Scandate Substrates"
    assert rec["source_format"] == "md"
    assert rec["metadata"]["doi"] == "10.5555/JIMS.2031.042"  # as written; the id is lower-cased
    assert rec["id"] == "doi-10.5555-jims.2031.042"
    assert rec["metadata"]["license"] == "CC-BY-4.0"
    assert rec["metadata"]["authors"] == ["Ivo Brandtner", "Saoirse Ní Bhriain"]
    # the "# ..." line inside the code fence is not a heading
    assert headings(rec) == ["Abstract", "Methods", "Diffraction", "Results"]
    text = rec["text"]
    assert "**" not in text and "](" not in text and "`" not in text and "Authors:" not in text
    assert "as shown in our earlier note." in text


def test_markdown_front_matter():
    rec = one(FIX / "front_matter.md")
    assert rec["title"] == "Ion Transport in a Hypothetical Borate Glass"
    assert rec["id"] == "doi-10.5555-jims.2031.050"
    assert rec["metadata"]["authors"] == ["Kaveh Rostami", "Lena Oduya"] and rec["metadata"]["year"] == 2031
    assert rec["keywords"] == ["borate glass", "ionic conductivity"]
    assert headings(rec) == ["Abstract", "Introduction", "Results"]


def test_generic_json_paper():
    rec = one(FIX / "generic_paper.json")
    assert rec["title"] == "Photothermal Desalination with Carbonised Mushroom Caps"
    assert rec["id"] == "doi-10.5555-jiss.2031.101" and rec["source_format"] == "json"
    meta = rec["metadata"]
    assert meta["authors"] == ["Odalys Ferreira-Mbeki", "Henrik Vasquez"]
    assert meta["year"] == 2031 and meta["license"] == "CC-BY-4.0"
    assert meta["url"] == "https://example.org/papers/jiss.2031.101"
    assert rec["keywords"] == ["solar evaporation", "porous carbon", "desalination"]
    assert headings(rec) == ["Abstract", ""]
    assert rec["text"].split("\n\n") == [
        "Carbonised fungal caps float on brine and absorb 96 % of sunlight.",
        "Under one sun the evaporation rate reached 1.6 kg/m2/h.",
        "Salt did not accumulate on the surface over 10 h of operation.",
    ]
    # the pair without an answer is dropped with a warning, the good one kept
    assert rec["existing_qa"] == [
        {"question": "What evaporation rate was reached under one sun?", "answer": "1.6 kg/m2/h.", "origin": "source"}
    ]


def test_json_list_and_hash_ids():
    first, second = read_file(FIX / "paper_list.json")
    assert first["id"] == "doi-10.5555-jiss.2031.102"
    assert headings(first) == ["Introduction", "Results"]
    assert first["sections"][1]["text"] == (
        "Bridging stalled on lattices with a 40 micrometre pitch.\n\nDefrosting took 30 % less energy."
    )
    assert second["metadata"]["doi"] is None
    assert second["id"] == "sha-" + hashlib.sha256(second["text"].encode()).hexdigest()[:16]
    assert second["sections"] == []


def test_json_lines_in_a_json_file():
    path = FIX / "lines_named.json"
    assert detect_format(path) == "json"
    records = read_file(path)
    assert [r["title"] for r in records] == [
        "Line One Paper on Granular Heat Storage",
        "Line Two Paper on Molten Salt Corrosion",
    ]
    assert records[0]["id"] == "doi-10.5555-jiss.2031.201" and records[1]["id"].startswith("sha-")


def test_sciqag_released_json():
    records = read_file(FIX / "sciqag_release.json")
    assert [r["id"] for r in records] == ["doi-10.5555-jiss.2031.301", "doi-10.5555-jiss.2031.302"]
    rec = records[0]
    assert rec["source_format"] == "sciqag-json"
    assert rec["metadata"]["doi"] == "10.5555/jiss.2031.301"
    assert rec["metadata"]["category"] == "Chemistry, Physical"  # the release's "journal" is the WoS category
    assert rec["keywords"] == ["layered double hydroxide", "anion exchange", "memory effect"]
    assert rec["existing_qa"] == [
        {
            "question": "How long did the anion exchange take at 25 °C?",
            "answer": "About 20 minutes.",
            "origin": "released",
        },
        {
            "question": "What is the memory effect in layered double hydroxides?",
            "answer": "A calcined mixed oxide rebuilding the layered structure when placed in solution.",
            "origin": "released",
        },
    ]
    assert rec["text"].count("\n\n") == 1  # one paragraph per line in the release
    assert len(records[1]["existing_qa"]) == 1


def test_jats_xml():
    rec = one(FIX / "jats_article.xml")
    assert rec["source_format"] == "jats"
    assert rec["title"] == (
        "Zinc Dendrite Suppression by a Glycine-Rich Electrolyte Additive in Aqueous Zn/MnO2 Cells"
    )
    assert rec["id"] == "doi-10.5555-jie.2031.007"
    meta = rec["metadata"]
    assert meta["authors"] == ["Britt Halvorsen", "Daniel K. Mwangi"]  # the editor is not an author
    assert meta["journal"] == "Journal of Illustrative Electrochemistry" and meta["year"] == 2031
    assert meta["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert rec["keywords"] == ["zinc anode", "electrolyte additive", "glycine"]
    assert headings(rec) == ["Abstract", "Introduction", "Results", "Full cells"]
    text = rec["text"]
    assert "Zinc metal offers 820 mAh/g and is safe in water, yet uneven plating limits cycle life." in text
    assert "(Fig. 1)" in text  # figure references stay, citation markers go
    for absent in ("Graphical abstract", "Figure caption", "cited work", "[1]"):
        assert absent not in text


def test_elsevier_xml():
    path = FIX / "elsevier_article.xml"
    assert detect_format(path) == "elsevier"
    rec = one(path)
    assert rec["source_format"] == "elsevier"
    assert rec["title"] == "Copper Single-Atom Catalysts Reduce Nitrate to Ammonia at Low Overpotential"
    assert rec["id"] == "doi-10.5555-j.ijc.2031.05.011"
    meta = rec["metadata"]
    assert meta["authors"] == ["Amaru Quispe", "Signe Lindahl"]
    assert meta["journal"] == "Illustrative Journal of Catalysis" and meta["year"] == 2031
    assert meta["license"] == "http://creativecommons.org/licenses/by/4.0/"
    assert meta["url"] == "https://example.org/science/article/pii/S0000000000000001"
    assert rec["keywords"] == ["single-atom catalyst", "ammonia synthesis"]
    assert headings(rec) == ["Abstract", "Introduction", "Results and discussion", "Stability"]
    text = rec["text"]
    assert "farming regions. Turning it" in text and "(Fig. 1)" in text
    assert "Graphical abstract" not in text and "reference title" not in text


def test_html():
    rec = one(FIX / "article_page.html")
    assert rec["source_format"] == "html"
    assert rec["title"] == "Broadband Sound Absorption by Coiled-Space Acoustic Metamaterials"
    assert rec["id"] == "doi-10.5555-jia.2031.066"
    meta = rec["metadata"]
    assert meta["authors"] == ["Yusuf Demirci", "Ana Lúcia Prates"] and meta["year"] == 2031
    assert meta["journal"] == "Journal of Illustrative Acoustics"
    assert meta["url"] == "https://example.org/jia/2031/066"
    assert meta["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert rec["keywords"] == ["metamaterial", "sound absorption"]
    assert headings(rec) == ["Abstract", "Design", "Fabrication"]
    text = rec["text"]
    assert "Channel width: 3 mm" in text
    for absent in (
        "tracking",
        "console",
        "font-family",
        "Menu text",
        "Journals",
        "Copyright",
        "caption",
        "Table cell",
    ):
        assert absent not in text


def test_pdf(tmp_path):
    pdf = make_pdf(
        tmp_path / "solder.pdf",
        [
            [
                "Thermal Cycling of Solder Joints in Satellite Electronics",
                "DOI: 10.5555/jie.2031.099",
                "Tin-silver joints cracked after 1,500 cycles between -55 and",
                "125 degrees Celsius.",
            ],
            ["Underfill doubled the number of cycles to first failure."],
        ],
        title="Thermal Cycling of Solder Joints",
    )
    rec = one(pdf)
    assert rec["source_format"] == "pdf"
    assert rec["title"] == "Thermal Cycling of Solder Joints"  # from the document information
    assert rec["id"] == "doi-10.5555-jie.2031.099"  # DOI printed on the first page
    assert rec["text"].endswith("125 degrees Celsius.\n\nUnderfill doubled the number of cycles to first failure.")

    untitled = one(make_pdf(tmp_path / "untitled", [["Creep of Lead-Free Solder", "Creep rates rose tenfold."]]))
    assert untitled["source_format"] == "pdf"  # found by its %PDF header, no extension needed
    assert untitled["title"] == "Creep of Lead-Free Solder" and untitled["id"].startswith("sha-")


def test_format_sniffing_without_a_useful_extension(tmp_path, caplog):
    shutil.copy(FIX / "jats_article.xml", tmp_path / "jats_no_extension")
    shutil.copy(FIX / "elsevier_article.xml", tmp_path / "elsevier.nxml")
    shutil.copy(FIX / "perovskite_notes.md", tmp_path / "notes")
    shutil.copy(FIX / "lines_named.json", tmp_path / "lines.data")
    (tmp_path / "10.5555-abc.123").write_text(  # named by DOI: the "extension" means nothing
        "Capillary Rise in Paper Strips\n\nWater climbed 45 mm in ten minutes through the cellulose fibres.\n"
    )
    assert detect_format(tmp_path / "jats_no_extension") == "jats"
    assert detect_format(tmp_path / "elsevier.nxml") == "elsevier"
    assert detect_format(tmp_path / "notes") == "md"
    assert detect_format(tmp_path / "lines.data") == "json"
    assert detect_format(tmp_path / "10.5555-abc.123") == "txt"
    assert one(tmp_path / "jats_no_extension")["id"] == "doi-10.5555-jie.2031.007"
    assert one(tmp_path / "notes")["title"].startswith("Strain Relaxation")
    assert len(read_file(tmp_path / "lines.data")) == 2
    assert one(tmp_path / "10.5555-abc.123")["title"] == "Capillary Rise in Paper Strips"
    assert "read as plain text" in caplog.text


def test_big_json_list_is_streamed_across_chunks(tmp_path):
    # items larger than the 1 MiB read chunk force the decoder to grow its buffer mid-item
    para = "Grain boundaries scatter phonons in nanostructured bismuth telluride. " * 9000  # ~640 kB
    items = [{"title": f"Big {i}", "text": f"{i} {para}"} for i in range(4)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    stream = iter_papers(path)
    assert isinstance(stream, types.GeneratorType)
    assert [r["title"] for r in stream] == ["Big 0", "Big 1", "Big 2", "Big 3"]


def test_utf8_bom_and_wrapper_object(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + b'{"title": "BOM Paper", "text": "Text after a byte order mark."}\n'
        + b'{"title": "Second", "text": "Another paper on the second line."}\n'
    )
    assert [r["title"] for r in read_file(path)] == ["BOM Paper", "Second"]
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"papers": [{"title": "Wrapped", "abstract": "Inside a wrapper."}]}))
    assert one(wrapped)["title"] == "Wrapped"


# --- bad input -----------------------------------------------------------------------------------


def test_bad_inputs_are_reported_per_file_and_never_stop_the_batch(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a_empty.txt").write_bytes(b"")
    (src / "b_binary.txt").write_bytes(bytes(range(256)) * 8)
    (src / "c_mostly_binary").write_bytes(bytes(range(128, 256)) * 20)
    (src / "d_latin1.txt").write_bytes(
        "Caf\xe9 Chemistry\n\nThe caf\xe9 sample melted at 42 \xb0C in air.\n".encode("latin-1")
    )
    (src / "e_broken.jsonl").write_text(
        '{"title": "Kept One", "text": "First kept paper."}\n{"title": "Torn", "text": \n'
        '{"title": "Kept Two", "text": "Second kept paper."}\n',
        encoding="utf-8",
    )
    (src / "f_numbers.dat").write_text("1,2,3\n4,5,6\n7,8,9\n")
    (src / "g_no_text.json").write_text('{"title": "Only a Title", "doi": "10.5555/empty.1"}')
    (src / "h_truncated.json").write_text('[{"title": "Before the Cut", "text": "Complete item."}, {"title": "Cut')
    (src / "i_fake.pdf").write_text("this is not a pdf")
    (src / "j_damaged.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage\n%%EOF\n")
    (src / "k_other.xml").write_text("<?xml version='1.0'?><catalogue><item>not a paper</item></catalogue>")
    (src / "l_list.json").write_text(
        '[{"title": "Good Item", "text": "A fine item."}, "just a string", {"title": "No Text Item"}]'
    )
    (src / "z_good.txt").write_text("Good Paper\n\nA perfectly readable paragraph about ceramics.\n")
    missing = tmp_path / "missing.txt"
    work = tmp_path / "work"

    summary = run_ingest([src, missing], work)

    rep = report(work)
    errors: dict[str, list[str]] = {}
    for f in rep["failures"]:
        errors.setdefault(Path(f["path"]).name, []).append(f["error"])
    assert errors["a_empty.txt"] == ["empty file"]
    assert errors["b_binary.txt"][0].startswith("binary file")
    assert errors["c_mostly_binary"][0].startswith("binary file")
    assert errors["e_broken.jsonl"][0].startswith("line 2: invalid JSON")
    assert next(f for f in rep["failures"] if f["path"].endswith("e_broken.jsonl"))["line"] == 2
    assert errors["f_numbers.dat"][0].startswith("unrecognised format: unknown extension '.dat'")
    assert errors["g_no_text.json"][0].startswith("no text (expected 'text'")
    assert "invalid JSON" in errors["h_truncated.json"][0]
    assert errors["i_fake.pdf"] == ["not a PDF: no %PDF- header"]
    assert errors["j_damaged.pdf"][0].startswith(("invalid PDF", "PDF has no extractable text"))
    assert errors["k_other.xml"][0].startswith("unrecognised XML: root element <catalogue>")
    assert errors["l_list.json"][0] == "item 2: expected a paper object, got str"
    assert errors["l_list.json"][1].startswith("item 3: no text")
    assert errors["missing.txt"] == ["no such file or directory"]
    # paths are the user's: the folder as given joined with the file name
    assert {f["path"] for f in rep["failures"]} >= {str(src / "a_empty.txt"), str(missing)}

    titles = sorted(r["title"] for r in stored(work))
    # the Latin-1 byte is replaced, and a warning says so
    assert titles == ["Before the Cut", "Caf\ufffd Chemistry", "Good Item", "Good Paper", "Kept One", "Kept Two"]
    assert any("not valid UTF-8" in w["warning"] and w["path"].endswith("d_latin1.txt") for w in rep["warnings"])
    assert summary.counts["ok"] == 6 and summary.counts["failed"] == len(rep["failures"]) == 13
    assert rep["counts"] == dict(summary.counts) and rep["complete"] is True


def test_failures_from_iter_papers_have_no_id(tmp_path):
    (tmp_path / "empty.md").write_text("   \n")
    (tmp_path / "ok.md").write_text("# Fine\n\nSome text about glass.\n")
    items = list(iter_papers(tmp_path))
    assert items[0] == {"path": str(tmp_path / "empty.md"), "error": "empty file"}
    assert items[1]["title"] == "Fine" and "error" not in items[1]


# --- run_ingest: duplicates, resume, stability ---------------------------------------------------


@pytest.fixture
def dup_inputs(tmp_path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    body = "\n\nIdentical body text about sintered alumina reaching 99 % density at 1,550 °C.\n"
    (src / "a.txt").write_text("Alumina Sintering" + body)
    (src / "b_copy.txt").write_text("Alumina Sintering, Another Title" + body)  # same text -> same content
    (src / "c.md").write_text("# First With This DOI\n\nDOI: 10.5555/dup.1\n\nOne version of the text.\n")
    (src / "d.md").write_text("# Second With This DOI\n\nDOI: 10.5555/dup.1\n\nA revised version of it.\n")
    (src / "e.json").write_text(
        json.dumps(
            [  # the same id twice inside one file
                {"doi": "10.5555/dup.2", "title": "Twin A", "text": "First twin text."},
                {"doi": "10.5555/dup.2", "title": "Twin B", "text": "Second twin text."},
            ]
        )
    )
    return src


def test_duplicates_skip(dup_inputs, tmp_path):
    work = tmp_path / "work"
    summary = run_ingest(dup_inputs, work)
    assert dict(summary.counts) == {"ok": 3, "failed": 0, "skipped": 0, "duplicate": 3}
    assert [Path(r["source_path"]).name for r in stored(work)] == ["a.txt", "c.md", "e.json"]
    dups = report(work)["duplicates"]
    same_text_id = stored(work)[0]["id"]
    assert dups == [
        {
            "id": same_text_id,
            "kept": str(dup_inputs / "a.txt"),
            "duplicate": str(dup_inputs / "b_copy.txt"),
            "reason": "same content",
        },
        {
            "id": "doi-10.5555-dup.1",
            "kept": str(dup_inputs / "c.md"),
            "duplicate": str(dup_inputs / "d.md"),
            "reason": "same id",
        },
        {
            "id": "doi-10.5555-dup.2",
            "kept": str(dup_inputs / "e.json"),
            "duplicate": str(dup_inputs / "e.json"),
            "reason": "same id",
        },
    ]
    again = run_ingest(dup_inputs, work)  # a rerun reports the same duplicates and stores nothing
    assert dict(again.counts) == {"ok": 0, "failed": 0, "skipped": 3, "duplicate": 3}
    assert report(work)["duplicates"] == dups


def test_duplicates_keep_then_resume(dup_inputs, tmp_path):
    work = tmp_path / "work"
    summary = run_ingest(dup_inputs, work, on_duplicate="keep")
    assert summary.counts["ok"] == 3 and summary.counts["duplicate"] == 3
    ids = [r["id"] for r in stored(work)]
    base = ids[0]
    assert ids == [
        base,
        f"{base}-dup2",
        "doi-10.5555-dup.1",
        "doi-10.5555-dup.1-dup2",
        "doi-10.5555-dup.2",
        "doi-10.5555-dup.2-dup2",
    ]
    assert [d["stored_as"] for d in report(work)["duplicates"]] == [
        f"{base}-dup2",
        "doi-10.5555-dup.1-dup2",
        "doi-10.5555-dup.2-dup2",
    ]
    before = (work / "papers.jsonl").read_bytes()
    again = run_ingest(dup_inputs, work, on_duplicate="keep")
    assert dict(again.counts) == {"ok": 0, "failed": 0, "skipped": 6, "duplicate": 0}
    assert report(work)["warnings"] == []
    assert (work / "papers.jsonl").read_bytes() == before


def test_duplicates_error(dup_inputs, tmp_path):
    work = tmp_path / "work"
    with pytest.raises(ValueError, match=r"3 duplicate paper\(s\)[\s\S]*b_copy\.txt[\s\S]*doi-10\.5555-dup\.1"):
        run_ingest(dup_inputs, work, on_duplicate="error")
    assert len(stored(work)) == 3  # the originals are stored, the duplicates are not
    assert len(report(work)["duplicates"]) == 3
    with pytest.raises(ValueError, match="on_duplicate"):
        run_ingest(dup_inputs, work, on_duplicate="overwrite")


def test_resume_skips_everything_and_ids_are_stable(tmp_path):
    src = tmp_path / "in"
    shutil.copytree(FIX, src)
    (src / "README.md").write_text("# About these fixtures\n\nNot a paper.\n")
    (src / ".hidden.txt").write_text("Hidden\n\nA hidden file is not read.\n")
    work = tmp_path / "work"
    first = run_ingest(src, work)
    assert first.counts["failed"] == 1 and first.counts["duplicate"] == 0  # broken.jsonl line 2
    records = stored(work)
    assert len(records) == first.counts["ok"] == 17
    assert len({r["id"] for r in records}) == len(records)
    assert not any(r["title"] in ("About these fixtures", "Hidden") for r in records)
    assert any("README.md" in w["path"] and "not a paper" in w["warning"] for w in report(work)["warnings"])
    # every record fits the published `papers` config
    import datasets

    ds = datasets.Dataset.from_list(records, features=schema.features_for("papers"))
    assert ds.num_rows == 17

    before = (work / "papers.jsonl").read_bytes()
    second = run_ingest(src, work)
    assert dict(second.counts) == {"ok": 0, "failed": 1, "skipped": 17, "duplicate": 0}
    assert (work / "papers.jsonl").read_bytes() == before

    other = tmp_path / "work2"
    run_ingest(src, other)
    assert [r["id"] for r in stored(other)] == [r["id"] for r in records]


def test_a_changed_file_is_stored_again_and_its_old_papers_drop_out(tmp_path):
    """A rerun after an edit redoes that paper downstream: the new version replaces the stored one (same
    DOI id), and a paper whose id changed with its text (no DOI) leaves a `removed` line behind."""
    src = tmp_path / "paper.md"
    src.write_text("# Versioned\n\nDOI: 10.5555/ver.1\n\nFirst wording.\n")
    plain = tmp_path / "plain.txt"
    plain.write_text("No DOI Here\n\nA first version of a paper without a DOI.\n")
    work = tmp_path / "work"
    run_ingest([src, plain], work)
    old_plain_id = next(r["id"] for r in stored(work) if r["title"] == "No DOI Here")
    src.write_text("# Versioned\n\nDOI: 10.5555/ver.1\n\nSecond wording.\n")
    plain.write_text("No DOI Here\n\nA second version of a paper without a DOI.\n")
    summary = run_ingest([src, plain], work)
    assert (summary.counts["updated"], summary.counts["ok"], summary.counts["removed"]) == (1, 1, 1)
    assert "changed since it was stored; stored again" in report(work)["warnings"][0]["warning"]
    latest = {r["id"]: r for r in stored(work)}  # the latest line per id wins
    assert latest["doi-10.5555-ver.1"]["text"] == "Second wording."
    assert latest[old_plain_id]["status"] == "removed"
    assert sum(1 for r in latest.values() if r.get("text", "").startswith("A second version")) == 1
    again = run_ingest([src, plain], work)  # and a rerun without edits changes nothing
    assert again.counts["skipped"] == 2 and "updated" not in again.counts and "removed" not in again.counts


def test_work_dir_inside_the_input_folder_is_not_ingested(tmp_path):
    (tmp_path / "p.txt").write_text("Title Here\n\nBody text about a magnetic alloy.\n")
    run_ingest(tmp_path, tmp_path / "work")
    second = run_ingest(tmp_path, tmp_path / "work")
    assert dict(second.counts) == {"ok": 0, "failed": 0, "skipped": 1, "duplicate": 0}


def test_torn_last_line_from_a_killed_run_is_repaired(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("Paper A\n\nText of paper A about graphene oxide.\n")
    (tmp_path / "in" / "b.txt").write_text("Paper B\n\nText of paper B about boron nitride.\n")
    work = tmp_path / "work"
    run_ingest(tmp_path / "in", work)
    lines = (work / "papers.jsonl").read_bytes().splitlines(keepends=True)
    (work / "papers.jsonl").write_bytes(lines[0] + lines[1][:40])  # killed mid-write of paper B
    summary = run_ingest(tmp_path / "in", work)
    assert dict(summary.counts) == {"ok": 1, "failed": 0, "skipped": 1, "duplicate": 0}
    assert [r["title"] for r in stored(work)] == ["Paper A", "Paper B"]


def test_json_abstract_is_part_of_the_text(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"title": "T", "abstract": "Short abstract.", "text": "Main body.\nSecond paragraph."}))
    rec = one(path)
    assert rec["text"] == "Short abstract.\n\nMain body.\n\nSecond paragraph."
    assert headings(rec) == ["Abstract"]


def test_a_json_file_of_non_papers_fails_once_not_per_record(tmp_path):
    path = tmp_path / "qa_only.json"
    path.write_text(json.dumps([{"Q": f"Question {i}?", "A": "Answer."} for i in range(500)]))
    failures = read_file(path)
    assert len(failures) == ingest.MAX_LEADING_FAILURES + 1
    assert failures[0]["error"].startswith("item 1: no text") and "found keys: A, Q" in failures[0]["error"]
    assert failures[-1]["error"].startswith("stopped reading")


def test_superscripts_keep_exponents_readable(tmp_path):
    """10<sup>19</sup> must not become 1019, or numeric validation breaks."""
    html_path = tmp_path / "exp.html"
    html_path.write_text(
        "<html><body><article><h1>Carrier density in doped titania</h1><p>The carrier "
        "density was 2.4 &times; 10<sup>19</sup> cm<sup>&minus;3</sup> at 300 K in the "
        "Ti<sup>3+</sup> rich films grown for this comparison.</p></article></body></html>"
    )
    assert "2.4 × 10^19 cm^−3" in read_file(html_path)[0]["text"]
    xml_path = tmp_path / "exp.xml"
    xml_path.write_text(
        "<article><front><article-meta><title-group><article-title>Doped titania"
        "</article-title></title-group></article-meta></front><body><sec><title>Results"
        "</title><p>The density reached 2.4 × 10<sup>19</sup> cm<sup>−3</sup> after "
        "annealing at 450 °C for two hours in flowing argon.</p></sec></body></article>"
    )
    assert "2.4 × 10^19 cm^−3" in read_file(xml_path)[0]["text"]
