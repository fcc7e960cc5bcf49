"""The datatrove pipeline steps of the scale-out (``scale.py``): picklable callables that datatrove sends to its
worker processes and cluster nodes, where each builds its stage from the config and runs its rank."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.processes import Owner, die_with
from sciqag_dataset.core.runner import merge_shards, run_stage
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.llm.supervisor import Serving
from sciqag_dataset.orchestration import pipeline

log = logging.getLogger(__name__)


@dataclass
class StageBuilder:
    """Builds one stage inside a rank: picklable (datatrove sends it to worker processes and cluster nodes)."""

    name: str
    config: dict
    running: Serving | None = None  # the embedded server this machine's parent started

    def endpoints(self) -> pipeline.Endpoints:
        return pipeline.Endpoints(Config.from_dict(self.config), running=self.running)

    def __call__(self, endpoints: pipeline.Endpoints | None = None) -> Stage:
        cfg = Config.from_dict(self.config)
        return pipeline.build_stage(self.name, cfg, endpoints or pipeline.Endpoints(cfg, running=self.running))


# datatrove runs any callable ``step(data, rank, world_size)`` as a pipeline step: these need no datatrove
# import, so that a plain run never loads it.


@dataclass
class StageStep:
    """Rank i of n runs the stage over hash slice i (from 0) of its input records."""

    build: StageBuilder
    work: str
    threads: int = 1  # the rank's share of the cores: ranks running at once must not each take them all
    owner: Owner | None = None  # the command, when the rank runs on its machine: the rank ends with it

    def __call__(self, data=None, rank: int = 0, world_size: int = 1):
        die_with(self.owner)
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(self.threads)
        if "torch" in sys.modules:  # already imported: the variables come too late for it
            sys.modules["torch"].set_num_threads(self.threads)
        with self.build.endpoints() as endpoints:  # on leaving, what the rank spent goes to the ledger
            summary = run_stage(self.build(endpoints), self.work, shard=(rank, world_size), progress=False)
        log.info("%s rank %d/%d: %s", self.build.name, rank, world_size, summary.line())
        return data

    def __repr__(self) -> str:
        return f"SciQAG stage: {self.build.name}"


@dataclass
class MergeStep:
    """One rank folds the stage's shard files into its output, as if it had run unsharded."""

    output: str
    work: str
    shards: int
    owner: Owner | None = None

    def __call__(self, data=None, rank: int = 0, world_size: int = 1):
        die_with(self.owner)
        merge_shards(self.work, self.output, n=self.shards)
        return data

    def __repr__(self) -> str:
        return f"SciQAG merge: {self.output}"


@dataclass
class IngestStep:
    """Rank i of n parses its slice of the input files; with ``parsed_by``, the one merge rank stores them."""

    config: dict
    parsed_by: int | None = None
    cwd: str | None = None  # where the run was started: relative input paths are read from there
    owner: Owner | None = None

    def __call__(self, data=None, rank: int = 0, world_size: int = 1):
        die_with(self.owner)
        if self.cwd and os.path.isdir(self.cwd):
            os.chdir(self.cwd)
        cfg = Config.from_dict(self.config)
        summary = (
            pipeline.ingest(cfg, parsed_by=self.parsed_by)
            if self.parsed_by
            else pipeline.ingest(cfg, shard=(rank, world_size))
        )
        log.info("ingest rank %d/%d: %s", rank, world_size, summary.line())
        return data

    def __repr__(self) -> str:
        return "SciQAG ingest" + (" merge" if self.parsed_by else "")
