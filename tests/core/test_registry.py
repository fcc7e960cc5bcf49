"""The one registry type and the one "did you mean": metrics, readers, engines and transports are looked up alike."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import sciqag_dataset.evaluation  # noqa: F401  (registers the built-in metrics)
from sciqag_dataset.builders.ingest import registry as readers
from sciqag_dataset.core import metrics
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.registry import Registry, did_you_mean, nearest
from sciqag_dataset.llm.embedded import ENGINES
from sciqag_dataset.llm.transports import TRANSPORTS


@dataclass(frozen=True)
class Thing:
    name: str
    size: int = 0


def test_a_registry_keeps_order_refuses_a_taken_name_and_names_the_nearest_on_a_typo():
    things = Registry[Thing]("thing")
    things.register(Thing("bolt"))
    things.register(Thing("nut"))
    assert things.names() == ("bolt", "nut") and [t.name for t in things] == ["bolt", "nut"] and "nut" in things
    with pytest.raises(ValueError, match="a thing named 'nut' is already registered"):
        things.register(Thing("nut", 1))
    with pytest.raises(UserError, match=r"^unknown thing 'bolts': choose from bolt, nut; did you mean bolt\?$"):
        things.get("bolts")
    assert (
        things.find("washer") is None
        and str(things.unknown("washer")) == "unknown thing 'washer': choose from bolt, nut"
    )
    same = Registry[Thing]("thing", same=lambda old, new: old.size == new.size)
    same.register(Thing("nut"))
    assert same.register(Thing("nut")) == Thing("nut")  # registering the same one again is harmless


def test_every_lookup_by_name_is_one_registry_with_one_suggestion():
    assert isinstance(metrics._REGISTRY, Registry) and isinstance(ENGINES, Registry)
    assert isinstance(TRANSPORTS, Registry) and isinstance(readers._READERS, Registry)
    with pytest.raises(UserError, match="unknown metric 'numric': .*; did you mean numeric"):
        metrics.get_metric("numric")
    with pytest.raises(UserError, match="unknown engine 'llama.cp': .*; did you mean llama.cpp"):
        ENGINES.get("llama.cp")
    assert TRANSPORTS.names() == ("openai", "hf")
    assert nearest("--modle", ["--model", "--port"]) == "--model" and nearest("xyz", ["--model"]) is None
    assert did_you_mean("modle", ["model"], "seed.") == " (did you mean seed.model?)" and did_you_mean("x", []) == ""
