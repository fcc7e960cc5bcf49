"""The stage of examples/custom_stage.py as a stage of `sciqag run` (docs/ARCHITECTURE.md): one registration.

Name this module in the config's ``plugins:`` (``--plugins MODULE``); `sciqag run` then runs question_lengths
after the stages whose files it reads (seed and generate; it comes after evaluate, before publish), resumes it
like the others, and runs it on datatrove ranks with ``--executor``. It is one of the default ``stages:``; a
config that lists its stages names it there.

    plugins: [sciqag_dataset.examples.custom_pipeline_stage]
"""

from __future__ import annotations

from sciqag_dataset.core.wiring import GENERATED, PAPERS, SEED, Wire
from sciqag_dataset.examples.custom_stage import question_lengths
from sciqag_dataset.orchestration.pipeline import register_stage

register_stage(
    Wire("question_lengths", "question_lengths.jsonl", upstream=(PAPERS, SEED, GENERATED), endpoint=None),
    build=lambda cfg, endpoints: question_lengths(max_words=40),
)
