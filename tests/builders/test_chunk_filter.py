"""The chunk filter (``builders/chunk_filter.py``): which chunks of a paper are asked about. The paper is our own
text about a made-up study; the teacher is a FAKE chat endpoint (``helpers.ScriptedChat``), since no model here
can be steered to a given verdict or to an unparseable reply."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from helpers import ScriptedChat, read_jsonl, write_jsonl

from sciqag_dataset.builders import chunk_filter, seed
from sciqag_dataset.builders.qagen import most_paced_requests, most_requests
from sciqag_dataset.config.config_file import SeedConfig
from sciqag_dataset.core.records import section_starts
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.qa import small_model

FRONT = (
    "Cobalt-doped bismuth vanadate photoanodes for water oxidation. Lena Okafor, Tomas Lindqvist and Mei Arai. "
    "Department of Chemistry, Northfield University, Northfield. Institute of Solar Fuels, Lakeside. "
    "Corresponding author: l.okafor@northfield.example.edu"
)
METHODS = (
    "Bismuth vanadate films were spin-coated on fluorine-doped tin oxide glass from a nitrate precursor and "
    "annealed in air at 450 C for two hours. Cobalt was added as cobalt nitrate at 0, 1, 2 and 4 atomic percent. "
    "Photocurrents were measured in 0.5 M potassium phosphate buffer at pH 7 under simulated sunlight, and the "
    "films were examined by X-ray diffraction and Raman spectroscopy before and after the tests."
)
RESULTS = (
    "The film with 2 percent cobalt gave the highest photocurrent, 2.1 mA per square centimetre at 1.23 V "
    "against the reversible hydrogen electrode, nearly three times that of the undoped film. The onset "
    "potential moved 180 mV to lower bias, because cobalt sites near the surface catalyse the transfer of holes "
    "to water and fewer holes recombine there. At 4 percent cobalt the photocurrent fell again, since a "
    "secondary cobalt vanadate phase formed at grain boundaries and trapped charge carriers. The doped film kept "
    "92 percent of its photocurrent after ten hours of operation, while the undoped film kept 61 percent."
)
CAPTIONS = (
    "Figure 1. X-ray diffraction patterns of the films with 0, 1, 2 and 4 percent cobalt. "
    "Figure 2. Photocurrent density against applied potential under simulated sunlight. "
    "Figure 3: Raman spectra of the films before and after ten hours of operation. "
    "Table 1. Onset potentials and photocurrents of all films at 1.23 V."
)
DECLARATIONS = (
    "Acknowledgements. This work was supported by the Northfield Energy Fund under grant no. NEF-2291. "
    "We thank the staff of the Lakeside microscopy centre for their help. The authors declare no conflicts of "
    "interest. Author contributions: L.O. made the films, T.L. ran the measurements and M.A. wrote the text."
)
REFERENCES = (
    "[1] A. Kudo, K. Omori and H. Kato, J. Am. Chem. Soc., 1999, 121, 11459. "
    "[2] K. Sivula and R. van de Krol, Nat. Rev. Mater., 2016, 1, 15010. "
    "[3] T. W. Kim and K.-S. Choi, Science, 2014, 343, 990. "
    "[4] F. F. Abdi, L. Han, A. H. M. Smets, M. Zeman, B. Dam and R. van de Krol, Nat. Commun., 2013, 4, 2195. "
    "[5] D. K. Zhong, S. Choi and D. R. Gamelin, J. Am. Chem. Soc., 2011, 133, 18370."
)
TABLE = "Co 0 1 2 4 J 0.7 1.4 2.1 1.6 Eon 0.62 0.51 0.44 0.47 V 1.23 1.23 1.23 1.23 t 10 10 10 10 h 61 80 92 88 % x"
CITED = (
    "Doped vanadates [1-3] were studied [4], [5] and reviewed by Sivula et al. [2] and Kim et al. (2014), as in "
    "[6], [7], [8] and by Abdi et al. [4]."
)
SECTIONS = [FRONT, METHODS, RESULTS, CAPTIONS, DECLARATIONS, REFERENCES]


def paper(sections=SECTIONS) -> dict:
    text = "\n\n".join(sections)
    return {
        "id": "bivo4",
        "title": "Cobalt-doped bismuth vanadate photoanodes",
        "text": text,
        "sections": [{"heading": f"s{i}", "text": s} for i, s in enumerate(sections)],
    }


@pytest.mark.parametrize(
    "text,reason",
    [
        (REFERENCES, "references"),
        (CAPTIONS, "caption"),
        (DECLARATIONS, "declaration"),
        (FRONT, "front matter"),
        (TABLE, "formula or table"),
        (CITED, "citations"),
        ("Cobalt raised the photocurrent of the films.", "too short"),
        (RESULTS, "useful"),
        (METHODS, "useful"),
    ],
)
def test_the_signals_name_why_a_chunk_is_not_worth_asking_about(text, reason):
    assert chunk_filter.signals(text).reason == reason
    assert chunk_filter.signals(text).useful == (reason == "useful")


def test_a_results_paragraph_that_names_a_figure_and_ends_sentences_in_units_is_kept():
    # "Figure 2 shows" is no caption, "at 823 K. The" no author's initial
    text = (
        "Figure 2 shows the thermal conductivity of all films. It fell from 2.0 W per metre kelvin at 300 K. The "
        "drop was largest at 823 K. The doped film conducted heat 30 percent less than the undoped one, because "
        "the cobalt sites scatter phonons in the lattice."
    )
    assert chunk_filter.signals(text).useful


@pytest.mark.parametrize(
    "opening",
    [
        "Notes on sample preparation\n\n",  # a heading that starts like a declaration's
        "Funding-free synthesis route. ",
        "Samples were measured at the Department of Chemistry, University of Lakeside, and at the Institute of "
        "Pebbles, where ",  # institutions named by a methods paragraph
    ],
)
def test_a_methods_paragraph_that_names_institutions_or_opens_like_a_declaration_is_kept(opening):
    text = opening + (
        "the films were annealed at 823 K for two hours in flowing argon and then cooled slowly, after which the "
        "diffraction patterns showed anatase and rutile in every sample."
    )
    assert chunk_filter.signals(text).useful


def test_the_chunks_of_a_paper_lose_their_references_and_captions_but_keep_the_results():
    p = paper()
    pieces, _ = small_model.split(p["text"], 120, section_starts(p["text"], p["sections"]))
    kept, report = asyncio.run(chunk_filter.judge(pieces, "signals"))
    assert [pieces[i] for i in kept] == [METHODS, RESULTS]
    assert report == {
        "mode": "signals",
        "chunks": 6,
        "kept": 2,
        "dropped": {"caption": 1, "declaration": 1, "front matter": 1, "references": 1},
    }


def test_a_paper_judged_all_useless_is_asked_about_whole():
    kept, report = asyncio.run(chunk_filter.judge([REFERENCES, CAPTIONS], "signals"))
    assert kept == [0, 1] and report["all_dropped"] and report["kept"] == 2


def verdicts(prompt: str) -> str:
    """The fake teacher's verdicts: the chunk on cobalt's catalysis is a bare concept introduction, the batch
    holding the methods gets a reply no parser can read."""
    if "spin-coated" in prompt:
        return "I would rather not say which of these passages matter."
    passages = re.findall(r"Passage (\d+):\n(.*)", prompt)
    return "\n".join(
        f"{n}: not useful: concept introduction" if text.startswith("A catalyst") else f"{n}: useful"
        for n, text in passages
    )


CONCEPT = (
    "A catalyst is a substance that speeds up a chemical reaction without being consumed by it. Catalysts lower "
    "the activation energy of a reaction and give it another path, and they are used widely in industry and in "
    "living cells, where enzymes play this role."
)


def test_the_llm_check_asks_in_batches_and_an_unparseable_reply_keeps_its_chunks():
    chunks = [FRONT, RESULTS, CONCEPT, REFERENCES, METHODS, CAPTIONS]
    with ScriptedChat(lambda body: verdicts(body["messages"][-1]["content"])) as fake:
        client = LLMClient(fake.base_url, "fake-teacher", params={"max_tokens": 64}, backoff=0.05)
        ask = chunk_filter.asker(client, SeedConfig(chunk_filter="llm"))
        kept, report = asyncio.run(chunk_filter.judge(chunks, "llm", ask, batch=2))
        asked = [body["messages"][-1]["content"] for body in fake.requests]
    # the signals drop the front matter, the references and the captions: the model judges the other three, two
    # a request; it drops the concept's introduction, and its unparseable reply on the methods keeps them
    assert [chunks[i] for i in kept] == [RESULTS, METHODS]
    assert len(asked) == 2 and all(chunk_filter.CHECK_MARK in a for a in asked)
    assert not any("Northfield University" in a or "Nat. Rev. Mater." in a for a in asked)
    assert report == {
        "mode": "llm",
        "chunks": 6,
        "kept": 2,
        "dropped": {"caption": 1, "front matter": 1, "model: concept introduction": 1, "references": 1},
        "checks": 2,
        "unjudged": 1,
    }


def test_a_verdict_reply_is_read_line_by_line_and_a_passage_it_skips_is_kept():
    reply = "Here you go:\n1: useful\n2. Not useful - references list\n**3**: not useful: it is a riddle\n"
    got = chunk_filter.parse_verdicts(reply, 4)
    assert [v and v.reason for v in got] == ["useful", "model: references", "model: other", None]
    assert chunk_filter.parse_verdicts(
        chunk_filter.made_up_reply(chunk_filter.check_messages(["a", "b"])[0]["content"]), 2
    ) == [
        chunk_filter.USEFUL,
        chunk_filter.USEFUL,
    ]


def pairs(prompt: str) -> str:
    """The fake teacher's QA pairs: as many as the prompt asks for, each naming the passage's first words."""
    n = int(re.search(r"formulate (\d+) ", prompt)[1])
    about = " ".join(prompt.split("paper.", 1)[-1].split()[:6])
    return "\n".join(
        f"Q{i}: What does the passage on {about} say in point {i}?\nA{i}: It says so." for i in range(1, n + 1)
    )


def seed_run(tmp_path, name: str, **options):
    work = tmp_path / name
    p = paper()
    write_jsonl(work / "papers.jsonl", [{**p, "source_format": "txt"}])
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": ["bismuth vanadate"], "status": "ok"}])
    with ScriptedChat(lambda body: pairs(body["messages"][-1]["content"])) as fake:
        client = LLMClient(fake.base_url, "fake-teacher", params={"max_tokens": 256}, backoff=0.05)
        cfg = SeedConfig(n_pairs=6, use_existing_qa=False, **options)
        summary = run_stage(seed.stage(client, cfg), work, progress=False)
        asked = [body["messages"][-1]["content"] for body in fake.requests]
    (record,) = read_jsonl(work / "seed.jsonl")
    return summary, record, asked, json.loads((work / "seed_manifest.json").read_text())


def test_a_seed_run_with_the_signals_asks_about_fewer_chunks_and_its_record_counts_them(tmp_path):
    _, unfiltered, asked_all, manifest_all = seed_run(tmp_path, "off", chunk_words=120)
    summary, record, asked, manifest = seed_run(tmp_path, "signals", chunk_words=120, chunk_filter="signals")
    assert len(asked_all) == 6 and "chunk_filter" not in unfiltered  # a chunk a request, nothing recorded
    assert "chunk_filter" not in manifest_all and "chunk_filter" not in manifest_all["settings"]
    assert len(asked) == 2 and any(METHODS[:40] in a for a in asked) and any(RESULTS[:40] in a for a in asked)
    assert not any("Nat. Rev. Mater." in a or "Figure 3:" in a for a in asked)
    dropped = {"caption": 1, "declaration": 1, "front matter": 1, "references": 1}
    assert record["chunk_filter"] == {"mode": "signals", "chunks": 6, "kept": 2, "dropped": dropped, "asked": 2}
    assert record["status"] == "ok" and len(record["qa"]) == 6 and summary.counts["ok"] == 1
    assert any(w.startswith("chunk filter: 4 of 6 chunks dropped (caption 1") for w in record["warnings"])
    # the run's totals are in its manifest
    assert manifest["chunk_filter"] == {"mode": "signals", "papers": 1, "chunks": 6, "kept": 2, "dropped": dropped}
    assert manifest["settings"]["chunk_filter"] == "signals"


def test_the_one_request_prompt_is_sent_the_paper_without_the_paragraphs_dropped(tmp_path):
    _, record, asked, _ = seed_run(tmp_path, "whole", chunk_filter="signals")
    (prompt,) = asked
    assert METHODS in prompt and RESULTS in prompt
    assert "Nat. Rev. Mater." not in prompt and "Figure 3:" not in prompt and "grant no." not in prompt
    assert record["chunk_filter"]["dropped"] == {"caption": 1, "declaration": 1, "front matter": 1, "references": 1}
    assert record["seen_words"] == len(METHODS.split()) + len(RESULTS.split())


def test_the_most_paced_requests_of_a_filtered_paper_count_its_chunks_left_and_the_checks():
    cfg = SeedConfig(prompt_style="small", chunk_words=120, n_pairs=6, chunk_filter="llm")
    record = {"prompt_style": "small", "chunk_filter": {"asked": 2, "checks": 1}}
    assert most_requests(paper(), record, cfg) == most_paced_requests(6, 2) + 1
