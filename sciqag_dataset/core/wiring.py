"""The wiring of a work directory, declared once: what each stage writes, what it reads, which endpoint it asks.

Every other module takes the file names and the stage → endpoint mapping from here (the runner, the join,
the `datasets` builder, publish, the scaled runner, the CLI's checks), so a stage renamed or added is one
row. The evaluation metrics each write ``<metric>.jsonl`` as well (``sciqag_dataset.core.metrics``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wire:
    stage: str
    output: str  # the file it writes in the work directory
    upstream: tuple[str, ...]  # the record files it reads, in pipeline order
    endpoint: str | None  # the config's endpoint section it asks ("judge": also `evaluate.judges`), None: none


PAPERS, KEYWORDS, SEED, GENERATED = "papers.jsonl", "keywords.jsonl", "seed.jsonl", "generated.jsonl"
EVALUATED, FILTERED = "evaluated.jsonl", "filtered.jsonl"
INGEST_REPORT, EVALUATION_SUMMARY, FILTER_SUMMARY = (
    "ingest_report.json",
    "evaluation_summary.json",
    "filter_summary.json",
)
#: people's reviews (`sciqag review`, appended) and their agreement with the judge (`sciqag agreement`)
REVIEWS, AGREEMENT = "reviews.jsonl", "agreement.json"

WIRING: dict[str, Wire] = {
    w.stage: w
    for w in (
        Wire("ingest", PAPERS, (), None),
        Wire("keywords", KEYWORDS, (PAPERS,), None),
        Wire("seed", SEED, (PAPERS, KEYWORDS), "teacher"),
        Wire("generate", GENERATED, (PAPERS, KEYWORDS), "generator"),
        # the metrics read the generated pairs, else the seed pairs; the judge only if a chosen metric needs it
        Wire("evaluate", EVALUATED, (PAPERS, KEYWORDS, SEED, GENERATED), "judge"),
        Wire("filter", FILTERED, (EVALUATED,), None),
    )
}

#: the per-paper record files in pipeline order: a scaled stage's key hashes those before its own output
RECORD_FILES = (PAPERS, KEYWORDS, SEED, GENERATED)
#: the QA sources by config name
QA_FILES = {"seed": SEED, "generated": GENERATED}
#: the file each published config is built from (`evaluated`: the filtered pairs when `sciqag filter` ran)
CONFIG_FILES = {"papers": PAPERS, "seed": SEED, "generated": GENERATED, "evaluated": EVALUATED}


def endpoint_of(stage: str) -> str | None:
    """The endpoint section a stage asks (None for a stage that asks no model)."""
    wire = WIRING.get(stage)
    return wire.endpoint if wire else None
