"""Keywords stage with the real pke TopicRank and a real spaCy pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sciqag_dataset.builders import keywords as kw
from sciqag_dataset.core.jsonl import iter_latest, read_jsonl
from sciqag_dataset.core.runner import run_stage


def run_keywords(work, **options):
    return run_stage(kw.stage(**options), work)


def plain(rec: dict) -> dict:
    """A record without the runner's bookkeeping (its fingerprint and input hash)."""
    return {k: v for k, v in rec.items() if k not in ("fingerprint", "input_hash")}


# Original text written for this test: lithium iron phosphate is the clear main topic.
LFP_TEXT = """\
Lithium iron phosphate cathodes for long-life batteries

Lithium iron phosphate is an olivine cathode material valued for its thermal stability and low cost.
The olivine lattice of lithium iron phosphate holds oxygen in strong phosphate groups, so the cathode
releases little oxygen when a cell overheats. Its weakness is a low electronic conductivity, which
limits the rate capability of lithium iron phosphate electrodes at high current density.

We coated lithium iron phosphate particles with a thin carbon layer by pyrolysis of sucrose at 700 C.
The carbon coating raised the electronic conductivity by four orders of magnitude. Smaller particles
shortened the diffusion path of lithium ions through the olivine lattice, and the rate capability of the
coated lithium iron phosphate improved accordingly. X-ray diffraction showed a single olivine phase with
no impurity peaks after the carbon coating.

Galvanostatic cycling between 2.5 V and 4.2 V gave a discharge capacity of 158 mAh/g at low rate.
The coated lithium iron phosphate retained 96 percent of its discharge capacity after 500 cycles.
The flat voltage plateau near 3.4 V reflects the two-phase reaction between lithium iron phosphate and
iron phosphate. Impedance spectra showed a lower charge transfer resistance for the coated cathode.
The thermal stability of the charged cathode remained high, with no exothermic peak below 250 C.

Lithium iron phosphate therefore combines thermal stability, cycle life and moderate energy density.
Carbon coating and particle size control remain the two main levers for its rate capability.
"""


@pytest.fixture(scope="module")
def nlp():
    return kw.load_nlp()


@pytest.fixture(scope="module")
def lfp_keywords(nlp):
    return kw.extract_keywords(LFP_TEXT, nlp=nlp)


def test_topicrank_finds_the_main_terms(lfp_keywords):
    assert 5 <= len(lfp_keywords) <= 20
    assert len(set(lfp_keywords)) == len(lfp_keywords)
    # TopicRank names a topic by its first occurrence, here the title's "... cathodes"
    assert lfp_keywords[0].startswith("lithium iron phosphate")
    top = set(lfp_keywords[:10])
    assert {"thermal stability", "rate capability"} <= top or "olivine lattice" in top, lfp_keywords
    assert all(k == k.lower() and k.strip() == k for k in lfp_keywords)


def test_n_limits_and_hyphens_kept(nlp):
    assert kw.extract_keywords(LFP_TEXT, n=3, nlp=nlp) == kw.extract_keywords(LFP_TEXT, nlp=nlp)[:3]
    hyphen = "The spin-orbit coupling in the thin film controls the spin-orbit coupling strength."
    assert any("spin-orbit" in k for k in kw.extract_keywords(hyphen, nlp=nlp))


def test_empty_and_capped_text(nlp):
    assert kw.extract_keywords("", nlp=nlp) == []
    assert kw.extract_keywords("  \n\t ", nlp=nlp) == []
    assert kw.extract_keywords(None, nlp=nlp) == []
    # the cap drops everything after the first paragraph, so its topics are all that remain
    first = "\n\n".join(LFP_TEXT.split("\n\n")[:2])
    assert kw.extract_keywords(LFP_TEXT, nlp=nlp, max_chars=len(first)) == kw.extract_keywords(first, nlp=nlp)
    assert kw._cap("alpha beta gamma", 8) == "alpha"  # a cut inside a word drops that word
    assert kw._cap("alpha beta gamma", 10) == "alpha beta"
    with pytest.raises(TypeError):
        kw.extract_keywords(["not", "text"], nlp=nlp)


def test_deterministic_across_calls_and_processes(nlp, lfp_keywords):
    assert kw.extract_keywords(LFP_TEXT, nlp=nlp) == lfp_keywords
    # (pool worker processes are covered by test_run_keywords_stage)
    # a fresh interpreter with a different string-hash seed: set ordering must not leak into ranks
    code = (
        "import json,sys; from sciqag_dataset.builders.keywords import extract_keywords as f; "
        "print(json.dumps(f(sys.stdin.read())))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], input=LFP_TEXT, capture_output=True, text=True, env=env, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == lfp_keywords


def test_missing_pipeline_is_a_clear_error():
    with pytest.raises(RuntimeError, match="pip install"):
        kw.load_nlp("en_core_web_no_such_pipeline")


# --- run_keywords ---------------------------------------------------------------------------------


def _paper(pid: str, text, keywords=None) -> dict:
    # the paper columns of sciqag_dataset.core.schema, as ingest writes them
    return {
        "id": pid,
        "title": pid,
        "text": text,
        "sections": [],
        "source_format": "txt",
        "source_path": f"{pid}.txt",
        "content_hash": pid,
        "existing_qa": [],
        "metadata": {
            "doi": None,
            "journal": None,
            "category": None,
            "license": None,
            "authors": [],
            "year": None,
            "url": None,
        },
        **({"keywords": keywords} if keywords is not None else {}),
    }


def _write(path, records) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def test_run_keywords_stage(tmp_path, lfp_keywords):
    paragraphs = LFP_TEXT.split("\n\n")
    released = ["olivine cathode", "carbon coating"]
    papers = [
        _paper("lfp", LFP_TEXT),
        _paper("p2", paragraphs[1]),
        _paper("p3", paragraphs[2]),
        _paper("released", LFP_TEXT, keywords=released),
        _paper("malformed", paragraphs[1], keywords="carbon coating, pyrolysis"),  # recomputed
        _paper("empty", ""),
        _paper("bad", 12345),  # not text: a failed record, the others go on
    ]
    _write(tmp_path / "papers.jsonl", papers)

    summary = run_keywords(tmp_path, workers=2)
    out = tmp_path / "keywords.jsonl"
    lines = list(read_jsonl(out))
    assert sorted(r["id"] for r in lines) == sorted(p["id"] for p in papers)  # one line per paper
    got = {r["id"]: r for r in lines}
    # computed in a worker process, identical to the parent's result
    assert plain(got["lfp"]) == {"id": "lfp", "keywords": lfp_keywords, "status": "ok"}
    assert got["released"]["keywords"] == released  # passed through, not recomputed
    assert plain(got["empty"]) == {"id": "empty", "keywords": [], "status": "ok"}
    assert got["bad"]["status"] == "failed" and "TypeError" in got["bad"]["error"]
    assert all(1 <= len(got[i]["keywords"]) <= 20 for i in ("p2", "p3"))
    assert got["malformed"]["keywords"] == got["p2"]["keywords"]
    assert summary.counts["ok"] == 6 and summary.failed == 1

    # resume: finished ids are skipped, only the failed one is retried (and fails again)
    again = run_keywords(tmp_path, workers=2)
    assert again.counts["skipped"] == 6 and again.failed == 1
    assert len(list(read_jsonl(out))) == len(papers)  # the retry's line replaced the failure's (compacted)

    # reuse_existing=False recomputes what a source already carried (single process path)
    (tmp_path / "keywords.jsonl").unlink()
    _write(tmp_path / "papers.jsonl", [_paper("released", LFP_TEXT, keywords=released)])
    run_keywords(tmp_path, workers=1, reuse_existing=False, n=5)
    assert {r["id"]: r for r in iter_latest(out)}["released"]["keywords"] == lfp_keywords[:5]


def test_run_keywords_clear_setup_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="ingest"):
        run_keywords(tmp_path)
    _write(tmp_path / "papers.jsonl", [_paper("p", LFP_TEXT)])
    # resolved in the parent: one clear error, not a broken process pool
    with pytest.raises(RuntimeError, match="pip install"):
        run_keywords(tmp_path, workers=2, pipeline="en_core_web_no_such_pipeline")
    assert not (tmp_path / "keywords.jsonl").exists() or not (tmp_path / "keywords.jsonl").read_text()
