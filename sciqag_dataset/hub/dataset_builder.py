"""The `datasets` builder: a work directory -> typed, split configs.

``datasets`` >= 4 no longer runs loading scripts, so this builder is used by
instantiating it directly (``download_and_prepare()`` / ``as_dataset()``);
`publish` turns its output into the parquet folder that ``load_dataset`` and
the Hub read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import datasets

from sciqag_dataset import __version__
from sciqag_dataset.cards import CITATION
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.jsonl import JsonlIndex, read_jsonl
from sciqag_dataset.core.pair_ids import RowIds, pair_ids
from sciqag_dataset.core.records import stage_records, usable
from sciqag_dataset.core.schema import EVALUATED_BASE, REVIEW_COLUMNS, conform, evaluated_features, features_for
from sciqag_dataset.core.wiring import (
    CONFIG_FILES,
    EVALUATED,
    EVALUATION_SUMMARY,
    FILTER_SUMMARY,
    FILTERED,
    PAPERS,
    REVIEWS,
)
from sciqag_dataset.qa.components import kind_of
from sciqag_dataset.qa.format import to_instruction
from sciqag_dataset.qa.prompts import PROMPT_STYLES
from sciqag_dataset.qa.rules import refers_to_source
from sciqag_dataset.review.store import apply_decision, decisions, read_reviews

SPLITS = ("train", "validation", "test")
STAGE_FILES = CONFIG_FILES


def evaluated_file(work: Path) -> str:
    """The `evaluated` config publishes the filtered pairs when `sciqag filter` has run, else all pairs."""
    return FILTERED if (work / FILTERED).exists() else EVALUATED


def evaluated_columns(work: Path | None) -> datasets.Features:
    """The `evaluated` rows' columns as the run's merge wrote them (its summary records them, a plugin metric's
    included), else those of the metrics registered in this process; then what reviewers decided."""
    summary = Path(work) / EVALUATION_SUMMARY if work else None
    if summary is not None and summary.exists():
        features = json.loads(summary.read_text(encoding="utf-8")).get("features")
        if features:
            recorded = datasets.Features.from_dict(features)
            return datasets.Features({**EVALUATED_BASE, **recorded, **REVIEW_COLUMNS})
    return datasets.Features({**evaluated_features(), **REVIEW_COLUMNS})


#: why a row of the evaluated file is not published (besides its split)
PARTIAL, DROPPED_BY_REVIEWERS, EDITED_TO_SOURCE = "partial", "dropped by reviewers", "edited to cite its source"


def evaluated_rows(work: Path, allow_partial: bool = False) -> Iterator[tuple[int, dict, str | None]]:
    """Every row of the `evaluated` config's file with its pair id and people's decision applied: (line number,
    row, why it is left out or None). A row whose (edited) question refers to its source is left out when the
    filter's rules drop those, so a reviewer's edit is judged as the filter judges questions."""
    papers = JsonlIndex(work / STAGE_FILES["papers"])
    decided = decisions(read_reviews(work / REVIEWS))  # only the reviewed pairs: small
    source_rule = False
    if evaluated_file(work) == FILTERED and (work / FILTER_SUMMARY).exists():
        rules = json.loads((work / FILTER_SUMMARY).read_text(encoding="utf-8")).get("rules") or {}
        source_rule = bool(rules.get("drop_source_references") or rules.get("authors_test_set"))
    ids = RowIds()
    for n, row in enumerate(read_jsonl(work / evaluated_file(work))):
        row["pair_id"] = ids(row)  # counted on every row, so repeats number as merge numbers them
        if not allow_partial and partial(papers.get(row["paper_id"])):
            yield n, row, PARTIAL
            continue
        reviewed = apply_decision(row, decided.get(row["pair_id"]))
        if reviewed is None:
            yield n, row, DROPPED_BY_REVIEWERS
        elif source_rule and refers_to_source(reviewed.get("question") or ""):
            yield n, reviewed, EDITED_TO_SOURCE
        else:
            yield n, reviewed, None


def split_of(paper_id: str, train: float = 0.8, validation: float = 0.1) -> str:
    """Deterministic paper-level split from a hash of the id.

    A paper keeps its split when the corpus grows, so a benchmark's test papers
    never leak into a later training set.
    """
    u = int(hashlib.sha256(paper_id.encode()).hexdigest()[:12], 16) / 16**12
    return "train" if u < train else "validation" if u < train + validation else "test"


@dataclass
class SciQAGConfig(datasets.BuilderConfig):
    train: float = 0.8
    validation: float = 0.1
    allow_partial: bool = False  # papers read only in part (ingest's `partial`) are left out unless True


def partial(paper: dict | None) -> bool:
    return bool(((paper or {}).get("ingest") or {}).get("partial"))


class SciQAG(datasets.GeneratorBasedBuilder):
    """SciQAG closed-book science QA built from a SciQAG-HF work directory (``data_dir``)."""

    VERSION = datasets.Version(__version__)
    BUILDER_CONFIG_CLASS = SciQAGConfig
    BUILDER_CONFIGS = [
        SciQAGConfig(name="papers", description="Ingested papers with their TopicRank keywords."),
        SciQAGConfig(name="seed", description="Teacher QA pairs in the instruction schema, ready for TRL."),
        SciQAGConfig(name="generated", description="QA pairs written by the fine-tuned generator."),
        SciQAGConfig(
            name="evaluated",
            description="One row per QA pair with RACAR scores, question "
            "diversity, answer coverage with evidence and numeric checks.",
        ),
    ]
    DEFAULT_CONFIG_NAME = "seed"

    def _info(self) -> datasets.DatasetInfo:
        features = (
            evaluated_columns(self.config.data_dir)
            if self.config.name == "evaluated"
            else features_for(self.config.name)
        )
        return datasets.DatasetInfo(
            description=self.config.description,
            features=features,
            citation=CITATION,
            license="cc-by-4.0",
            homepage="https://arxiv.org/abs/2405.09939",
        )

    def _split_generators(self, dl_manager):
        if not self.config.data_dir:
            raise UserError("pass data_dir=<work directory>")
        work = Path(self.config.data_dir)
        needed = evaluated_file(work) if self.config.name == "evaluated" else STAGE_FILES[self.config.name]
        if not (work / needed).exists():
            raise MissingInput(f"{work / needed} not found: run the `{self.config.name}` stage first")
        return [datasets.SplitGenerator(name=s, gen_kwargs={"work": work, "split": s}) for s in SPLITS]

    def _records(self, work: Path) -> Iterator[dict]:
        name = self.config.name
        keep = (lambda rec: True) if self.config.allow_partial else (lambda rec: not partial(rec))
        if name == "papers":
            yield from filter(keep, stage_records(work, PAPERS))
            return
        for rec in stage_records(work, f"{name}.jsonl"):
            if not usable(rec) or not keep(rec):
                continue
            ids = pair_ids(rec["id"], [p.get("question") or "" for p in rec.get("qa") or []])
            rec["qa"] = [{**p, "pair_id": i} for p, i in zip(rec.get("qa") or [], ids)]
            if name == "seed":
                # the style it was asked in, if a generator can be trained on it (not the embedded profile's)
                style = rec.get("prompt_style") if rec.get("prompt_style") in PROMPT_STYLES else "paper"
                # the example's input is the paper's prose: its target holds the pairs asked from that prose, not
                # those asked about a table or figure the input leaves out (no such pair: no example)
                prose = [p for p in rec["qa"] if kind_of(p) in (None, "prose")]
                if prose:
                    rec.update(to_instruction({**rec, "qa": prose}, style=style, n=len(prose)))
            yield rec

    def _generate_examples(self, work: Path, split: str):
        features = self.info.features
        if self.config.name == "evaluated":  # one row per QA pair; the split follows its paper
            for n, row, left_out in evaluated_rows(work, self.config.allow_partial):
                if left_out is None and split_of(row["paper_id"], self.config.train, self.config.validation) == split:
                    yield f"{row['paper_id']}-{n}", conform(row, features)
            return
        for rec in self._records(work):
            if split_of(rec["id"], self.config.train, self.config.validation) == split:
                yield rec["id"], conform(rec, features)
