"""The wiring of a work directory, declared once: what each stage writes, what it reads, which endpoint it asks.

Every other module takes the file names, the stage → endpoint mapping and the stages of `sciqag run` in their
order from here (the runner, the join, the `datasets` builder, publish, the config's `stages:`, the pipeline,
the scaled runner, the CLI's checks), so a stage renamed or added is one row; a plugin adds its row with
``orchestration.pipeline.register_stage``. How each stage is built and run is declared beside its name in
``orchestration/pipeline.py`` (``STEPS``). The evaluation metrics each write ``<metric>.jsonl`` as well
(``sciqag_dataset.core.metrics``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Wire:
    stage: str
    output: str | None  # the file it writes in the work directory (None: publish, which writes its own folder)
    upstream: tuple[str, ...]  # the record files it reads, in pipeline order
    endpoint: str | None  # the config's endpoint section it asks ("judge": also `evaluate.judges`), None: none
    in_run: bool = True  # a step of `sciqag run` (False: a command of its own, e.g. `sciqag filter`)


PAPERS, KEYWORDS, SEED, GENERATED = "papers.jsonl", "keywords.jsonl", "seed.jsonl", "generated.jsonl"
EVALUATED, FILTERED = "evaluated.jsonl", "filtered.jsonl"
INGEST_REPORT, EVALUATION_SUMMARY, FILTER_SUMMARY = (
    "ingest_report.json",
    "evaluation_summary.json",
    "filter_summary.json",
)
#: people's reviews (`sciqag review`, appended) and their agreement with the judge (`sciqag agreement`)
REVIEWS, AGREEMENT = "reviews.jsonl", "agreement.json"
#: the plan of the run that went on to run (`sciqag run --record-plan`): the card compares it with what was sent
PLAN = "plan.json"

WIRING: dict[str, Wire] = {
    w.stage: w
    for w in (
        Wire("ingest", PAPERS, (), None),
        Wire("keywords", KEYWORDS, (PAPERS,), None),
        Wire("seed", SEED, (PAPERS, KEYWORDS), "teacher"),
        Wire("generate", GENERATED, (PAPERS, KEYWORDS), "generator"),
        # the metrics read the generated pairs, else the seed pairs; the judge only if a chosen metric needs it
        Wire("evaluate", EVALUATED, (PAPERS, KEYWORDS, SEED, GENERATED), "judge"),
        Wire("filter", FILTERED, (EVALUATED,), None, in_run=False),
        Wire("publish", None, (PAPERS, SEED, GENERATED, EVALUATED, FILTERED), None),
    )
}

#: the per-paper record files in pipeline order: a scaled stage's key hashes those before its own output
RECORD_FILES = (PAPERS, KEYWORDS, SEED, GENERATED)
#: the QA sources by config name
QA_FILES = {"seed": SEED, "generated": GENERATED}
#: the file each published config is built from (`evaluated`: the filtered pairs when `sciqag filter` ran)
CONFIG_FILES = {"papers": PAPERS, "seed": SEED, "generated": GENERATED, "evaluated": EVALUATED}


def register(wire: Wire) -> Wire:
    """Add a stage's row (registering the same row twice is harmless); a taken name or output file is an error."""
    if not wire.stage.isidentifier():
        raise ValueError(f"a stage needs a name that is an identifier, not {wire.stage!r}")
    old = WIRING.get(wire.stage)
    if old is not None and old != wire:
        raise ValueError(f"a stage named {wire.stage!r} is already declared: {old}")
    writer = next((w.stage for w in WIRING.values() if w.output and w.output == wire.output), wire.stage)
    if writer != wire.stage:
        raise ValueError(f"stage {wire.stage!r}: {wire.output} is written by stage {writer!r}")
    WIRING[wire.stage] = wire
    return wire


def run_order() -> list[str]:
    """The stages of `sciqag run` in the order it runs them: each after every stage whose file it reads, stages
    of one depth in the order they were declared (a stage reads only files of stages declared before it)."""
    depth: dict[str, int] = {}
    writer: dict[str, str] = {}  # file -> the stage of `sciqag run` that writes it
    for w in WIRING.values():
        if w.in_run:
            depth[w.stage] = 1 + max((depth[writer[f]] for f in w.upstream if f in writer), default=-1)
            if w.output:
                writer[w.output] = w.stage
    return sorted(depth, key=depth.__getitem__)


class _RunStages(Sequence):
    """``run_order()`` as it is when read: the config's ``stages:`` choices are declared before a plugin
    registers its stage."""

    def __getitem__(self, i):
        return run_order()[i]

    def __len__(self) -> int:
        return len(run_order())

    def __iter__(self) -> Iterator[str]:
        return iter(run_order())

    def __contains__(self, name) -> bool:
        return name in run_order()

    def __repr__(self) -> str:
        return repr(tuple(run_order()))


#: the stages of `sciqag run` in run order, those registered by plugins included
RUN_STAGES: Sequence[str] = _RunStages()
#: the stages of `sciqag run` this package declares: the config's `stages:` unless the user chose
BUILT_IN_STAGES = tuple(run_order())


def endpoint_of(stage: str) -> str | None:
    """The endpoint section a stage asks (None for a stage that asks no model)."""
    wire = WIRING.get(stage)
    return wire.endpoint if wire else None
