"""The bound on the paced reply's requests (the embedded profile asks a discarded line again), against the code
that sends them: every way its attempts can be kept or discarded, tried; with a paper's components asked about
too, each one request."""

from __future__ import annotations

import asyncio
import itertools
import re

import pytest

from sciqag_dataset.builders.qagen import most_paced_requests, most_requests, paced_pairs, request_qa
from sciqag_dataset.config.config_file import SeedConfig
from sciqag_dataset.llm import LLMResponse
from sciqag_dataset.qa import small_model

PIECES = [
    "Zinc oxide nanorods were grown on glass at 90 C for six hours in an aqueous bath.",
    "The nanorods absorbed ultraviolet light below 380 nm and their band gap was 3.3 eV.",
    "Annealing the zinc oxide films at 400 C doubled their photoluminescence intensity.",
]


class Scripted:
    """Replies to paced lines as ``keep`` says, attempt after attempt: a new question each time, then an answer
    from the passage (kept) or an empty one (discarded after both requests, the costliest discard). No model can
    be steered through every such sequence; the code under test is the real ``paced_pairs``."""

    params: dict = {}
    name = "scripted"

    def __init__(self, keep: tuple[bool, ...]):
        self.keep, self.sent, self.asked = list(keep), 0, 0

    async def chat(self, messages: list[dict], **_) -> LLMResponse:
        """A component's request: answered once, whatever its reply."""
        self.sent += 1
        return LLMResponse(text="Q1: Which oxide was grown?\nA1: Zinc oxide.", finish_reason="stop")

    async def complete(self, text: str, **_) -> LLMResponse:
        self.sent += 1
        if re.search(r"Q\d+:$", text):  # a question line
            self.asked += 1
            return LLMResponse(
                text=f" Where were zinc oxide nanorods studied in trial {self.asked}?", finish_reason="stop"
            )
        passage = text.rsplit("Passage:\n", 1)[-1].split("<|im_end|>", 1)[0]
        kept = self.keep.pop(0) if self.keep else True
        return LLMResponse(text=f" {passage.split('.')[0]}." if kept else "", finish_reason="stop")


@pytest.mark.parametrize("n_pairs,n_pieces", [(4, 2), (6, 2), (2, 3), (3, 1)])
def test_the_most_paced_requests_is_what_the_worst_sequence_of_discards_sends(n_pairs, n_pieces):
    pieces = PIECES[:n_pieces]
    attempts = n_pairs + (small_model.RETRIES_PER_CHUNK + 1) * n_pieces  # more than any sequence uses
    sent = []
    for keep in itertools.product((True, False), repeat=attempts):
        client = Scripted(keep)
        asyncio.run(paced_pairs(client, pieces, ["zinc oxide"], n_pairs))
        sent.append(client.sent)
    assert max(sent) == most_paced_requests(n_pairs, n_pieces)
    assert min(sent) == 2 * n_pairs  # every attempt kept: a question and an answer a pair


TABLE = {
    "id": "T1",
    "kind": "table",
    "label": "Table 1",
    "caption": "Growth of the nanorods.",
    "content": "| T (C) | t (h) |\n| --- | --- |\n| 90 | 6 |",
    "mentions": [],
}
FIGURE = {"id": "F1", "kind": "figure", "label": "Figure 1", "caption": "Absorption of the nanorods.", "content": ""}


def test_the_most_requests_of_a_paper_count_each_component_asked_once():
    paper = {"id": "zno", "text": " ".join(PIECES[:2]), "keywords": ["zinc oxide"], "components": [TABLE, FIGURE]}
    cfg = SeedConfig(prompt_style="small", chunk_words=16, n_pairs=2, components={"table": 1, "figure": 1})
    most = most_requests(paper, {"prompt_style": "small"}, cfg)
    attempts = cfg.n_pairs + (small_model.RETRIES_PER_CHUNK + 1) * 2
    sent = []
    for keep in itertools.product((True, False), repeat=attempts):
        client = Scripted(keep)
        record = asyncio.run(request_qa(paper, client, cfg, origin="teacher"))
        sent.append(client.sent)
    assert record["components_asked"] == ["T1", "F1"]
    assert max(sent) == most == most_paced_requests(2, 2) + 2
