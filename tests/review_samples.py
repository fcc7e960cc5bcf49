"""A small evaluated work directory for the review tests: four papers written for these tests, five QA pairs
each, RACAR and its labels from a scripted judge (FAKE: exact scores no server here writes) and real coverage evidence
(all-MiniLM-L6-v2), merged by the real evaluate stage."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ScriptedJudge, write_jsonl

from sciqag_dataset.config.config_file import EvaluateConfig
from sciqag_dataset.core.folders import claim
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.llm import LLMClient

PAPERS = {
    "zeolite": (
        "Water uptake of a zeolite membrane",
        "We measured how much water a thin zeolite membrane takes up between 20 and 80 degrees Celsius. "
        "The membrane was grown on an alumina support by secondary growth for 12 hours. "
        "At room temperature the membrane adsorbed 0.21 grams of water per gram of zeolite. "
        "The uptake fell by half when the temperature rose to 80 degrees Celsius. "
        "Cracks appeared after ten adsorption cycles when the membrane was thinner than 2 micrometres. "
        "Thicker membranes survived fifty cycles without cracks. "
        "We conclude that a thickness above 2 micrometres is needed for humid operation.",
    ),
    "catalyst": (
        "Nickel catalysts for dry reforming",
        "Nickel particles on ceria were tested for dry reforming of methane at 700 degrees Celsius. "
        "Particles smaller than 5 nanometres resisted coking for 100 hours on stream. "
        "Larger particles lost 40 percent of their activity within 20 hours because carbon filaments grew. "
        "Adding 1 percent of ruthenium lowered the onset temperature of the reaction by 50 degrees. "
        "The ceria support released oxygen that burned carbon deposits away. "
        "Hydrogen to carbon monoxide ratios stayed close to one during the whole test.",
    ),
    "battery": (
        "Silicon anodes with a polymer binder",
        "Silicon anodes swell by about 300 percent when they take up lithium. "
        "We bound silicon particles with a self-healing polymer that reforms hydrogen bonds. "
        "Cells kept 80 percent of their capacity after 500 cycles at a rate of C/2. "
        "A conventional binder kept only 35 percent after the same number of cycles. "
        "Electron microscopy showed that the new binder held cracked particles together. "
        "The first-cycle efficiency was 86 percent, similar to the conventional binder.",
    ),
    "optics": (
        "A tunable metasurface lens",
        "A metasurface lens made of titanium dioxide pillars focused visible light at 532 nanometres. "
        "Stretching the elastomer substrate by 10 percent moved the focus by 1.5 millimetres. "
        "The focusing efficiency stayed above 60 percent over the whole tuning range. "
        "Pillars were 600 nanometres tall and arranged on a square lattice. "
        "Aberrations grew when the substrate was stretched beyond 15 percent.",
    ),
}

QA = {
    "zeolite": [
        ("How much water does the zeolite membrane adsorb at room temperature?", "0.21 grams of water per gram."),
        ("What happens to water uptake at 80 degrees Celsius?", "The uptake falls by half at 80 degrees Celsius."),
        ("Why did thin membranes crack?", "Membranes thinner than 2 micrometres cracked after ten cycles."),
        ("How was the membrane grown?", "By secondary growth on an alumina support for 12 hours."),
        ("What does Figure 2 show?", "It shows the membrane."),
    ],
    "catalyst": [
        ("Which nickel particles resist coking?", "Particles smaller than 5 nanometres resisted coking for 100 h."),
        ("Why do large nickel particles deactivate?", "Carbon filaments grow and they lose 40 percent activity."),
        ("What does ruthenium do?", "It lowers the onset temperature of dry reforming by 50 degrees."),
        ("What role does ceria play?", "Ceria releases oxygen that burns carbon deposits away."),
        ("What is the H2/CO ratio in this study?", "It is about two."),
    ],
    "battery": [
        ("How much do silicon anodes swell?", "About 300 percent when lithiated."),
        ("What capacity did cells with the new binder keep?", "80 percent after 500 cycles at C/2."),
        ("How does the conventional binder compare?", "It kept only 35 percent after 500 cycles."),
        ("What did electron microscopy show?", "The binder held cracked silicon particles together."),
        ("What is the paper's main figure about?", "Cycling."),
    ],
    "optics": [
        ("What is the metasurface lens made of?", "Titanium dioxide pillars 600 nanometres tall."),
        ("How far does the focus move when stretched by 10 percent?", "By 1.5 millimetres."),
        ("What focusing efficiency does the lens keep?", "Above 60 percent over the tuning range."),
        ("When do aberrations grow?", "When the substrate is stretched beyond 15 percent."),
        ("What wavelength was used in Table 1?", "Red light."),
    ],
}

# the judge's score of pair k (0-4) of every paper, per dimension: means 3.0, 2.6, 1.8, 2.8, 1.2
SCORES = {
    "relevance": [3, 3, 2, 3, 1],
    "agnosticism": [3, 2, 2, 3, 1],
    "completeness": [3, 3, 2, 2, 1],
    "accuracy": [3, 2, 1, 3, 2],
    "reasonableness": [3, 3, 2, 3, 1],
}


# the labels of pair k (0-4) of every paper, given in the completeness call beside its scores
TYPES = ["factual", "explanatory", "causal", "comparative", "factual"]
DIFFICULTY = [1, 2, 3, 2, 1]


def judge_replies() -> dict[str, list[str]]:
    replies = {}
    for d, scores in SCORES.items():
        items = [{"score": s, "reasons": f"{d} looks like {s}"} for s in scores]
        if d == "completeness":
            items = [{**it, "reasoning_type": t, "difficulty": k} for it, t, k in zip(items, TYPES, DIFFICULTY)]
        replies[d] = [json.dumps(items)]
    return replies


def evaluated_work(
    tmp_path: Path, qa: dict | None = None, papers: dict | None = None, components: dict | None = None
) -> Path:
    """WORK with papers, generated pairs and evaluated.jsonl (RACAR + coverage), as `sciqag evaluate` leaves it.
    ``qa`` maps a paper to its (question, answer) pairs, or (question, answer, grounding); ``papers`` to its
    (title, text), ``components`` to its components."""
    work = claim(tmp_path / "work", "work", option="work_dir")  # as `sciqag` makes it: later commands adopt it
    write_jsonl(
        work / "papers.jsonl",
        [
            {
                "id": pid,
                "title": title,
                "text": text,
                "metadata": {"doi": f"10.5555/{pid}"},
                **({"components": (components or {})[pid]} if pid in (components or {}) else {}),
            }
            for pid, (title, text) in (papers or PAPERS).items()
            if pid in (qa or QA)
        ],
    )
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": pid,
                "status": "ok",
                "model": "test-generator",
                "qa": [
                    {"question": q, "answer": a, "origin": "generator", **({"grounding": g[0]} if g else {})}
                    for q, a, *g in pairs
                ],
            }
            for pid, pairs in (qa or QA).items()
        ],
    )
    with ScriptedJudge(judge_replies()) as judge:
        run_evaluate(
            work,
            EvaluateConfig(metrics=["racar", "coverage"]),
            judges=[LLMClient(judge.base_url, "scripted-judge", max_retries=0)],
        )
    return work


# Two papers whose pairs were asked from a table, an equation and a figure as well as the text: the zeolite
# paper's text mentions its table and equation; the figure a pair names is not among the paper's components.
GROUNDED_TEXT = PAPERS["zeolite"][1] + (
    " Table 1 lists the uptake at each temperature we measured. The uptake follows Eq. (1) over the whole range."
)


def grounded_components() -> list[dict]:
    text = GROUNDED_TEXT
    at = text.index("Table 1")
    eq = text.index("Eq. (1)")
    return [
        {
            "id": "T1",
            "kind": "table",
            "label": "Table 1",
            "caption": "Water uptake of the membrane at four temperatures.",
            "content": "| T (°C) | uptake (g/g) |\n|---|---|\n| 20 | 0.21 |\n| 80 | 0.105 |",
            "content_format": "markdown",
            "cells": [["T (°C)", "uptake (g/g)"], ["20", "0.21"], ["80", "0.105"]],
            "header_rows": 1,
            "context_before": "",
            "context_after": "",
            "mentions": [{"start": at, "end": at + len("Table 1")}],
        },
        {
            "id": "E1",
            "kind": "equation",
            "label": "Eq. (1)",
            "caption": "",
            "content": r"q(T) = q_0 \exp\left(-\frac{E_a}{R T}\right)",
            "content_format": "latex",
            "cells": [],
            "header_rows": 0,
            "context_before": "",
            "context_after": "",
            "mentions": [{"start": eq, "end": eq + len("Eq. (1)")}],
        },
    ]


def grounded_work(tmp_path: Path) -> Path:
    table = {"kind": "table", "component_id": "T1"}
    zeolite = [
        ("How much water does the zeolite take up at 20 °C?", "0.21 g of water per gram of zeolite.", table),
        (
            "How does uptake depend on temperature?",
            "It falls exponentially with 1/T.",
            {"kind": "equation", "component_id": "E1"},
        ),
        (
            "What does the membrane look like under a microscope?",
            "Dense grains.",
            {"kind": "figure", "component_id": "F9"},
        ),
        *QA["zeolite"][3:4],
        (*QA["zeolite"][4], {"kind": "prose", "component_id": None}),
    ]
    return evaluated_work(
        tmp_path,
        qa={"zeolite": zeolite, "catalyst": QA["catalyst"]},
        papers={"zeolite": (PAPERS["zeolite"][0], GROUNDED_TEXT), "catalyst": PAPERS["catalyst"]},
        components={"zeolite": grounded_components()},
    )
