"""Pairs asked about a paper's tables, equations and figures: the config's mix, one request per component, the
prompt that shows it, the grounding each pair records, numeric validation against the table, the card's counts.

The paper is the JATS fixture read by the real reader. The teacher is a fake (``helpers.ScriptedChat``), since
the checks need exact replies; the generate run further down asks a real `transformers serve`."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from helpers import ScriptedChat, read_jsonl, write_jsonl

from sciqag_dataset.builders import generate, seed
from sciqag_dataset.builders.ingest import read_file
from sciqag_dataset.cli import build_parser
from sciqag_dataset.cli.flags import resolve_config
from sciqag_dataset.config.config_file import Config, EvaluateConfig, GenerateConfig, SeedConfig
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.evaluation import numeric
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.llm import LLMClient, ResponseCache
from sciqag_dataset.qa.components import COMPONENT_PROMPT, component_prompt

JATS = Path(__file__).resolve().parents[1] / "fixtures" / "components" / "jats_paper.xml"
MIX = {"table": 2, "equation": 1, "figure": 1}
PROSE_REPLY = (
    "Q1: What thermal conductivity do folded boron nitride aerogels reach in air?\n"
    "A1: They conduct heat at 21 mW/(m K) in air, less than still air itself.\n"
    "Q2: Why do aerogels insulate well?\n"
    "A2: Their pores are smaller than the mean free path of air molecules."
)
# what a teacher writes about each table: the cooling times and the conductivity of BN-10 are in no sentence of
# the paper's text, only in its tables
TABLE_REPLIES = {
    "Table 1": (
        "Q1: How long did freeze casting of boron nitride aerogel BN-1 take at a cooling rate of 1 K/min?\n"
        "A1: Cooling at 1 K/min took 12 h.\n"
        "Q2: How long did freeze casting take at the fastest cooling rate of 10 K/min?\n"
        "A2: At 10 K/min the cooling took 1.5 h, against 3 h at 5 K/min."
    ),
    "Table 2": (
        "Q1: What thermal conductivity did the boron nitride aerogel cooled at 10 K/min reach?\n"
        "A1: It reached 27 mW/(m K), above the 21 mW/(m K) of the aerogel cooled at 1 K/min.\n"
        "Q2: Which cooling rate gave the least conductive boron nitride aerogel?\n"
        "A2: The slowest, 1 K/min, at 21 mW/(m K)."
    ),
}
FIGURE_REPLY = (
    "Q1: Up to what density did folded boron nitride aerogels stay below 25 mW/(m K)?\n"
    "A1: Up to a density of 30 mg/cm^3."
)


def teacher_reply(body: dict) -> str:
    """The fake teacher: pairs from the prose for the paper's prompt; for a component's prompt, pairs about
    the component it shows (named by its label); about an equation, a reply with no pair in it."""
    prompt = body["messages"][-1]["content"]
    if not prompt.startswith("Below is"):
        return PROSE_REPLY
    if "Below is an equation" in prompt:
        return "I am sorry, I cannot write questions about this."
    if "Below is the caption of a figure" in prompt:
        return FIGURE_REPLY
    return next(reply for label, reply in TABLE_REPLIES.items() if f"\n\n{label}: " in prompt)


def make_work(tmp_path: Path) -> tuple[Path, dict]:
    [paper] = read_file(JATS)
    paper["metadata"]["license"] = "cc-by-4.0"
    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [paper])
    write_jsonl(work / "keywords.jsonl", [{"id": paper["id"], "keywords": ["boron nitride"], "status": "ok"}])
    return work, paper


def client_for(fake: ScriptedChat, work: Path) -> LLMClient:
    return LLMClient(fake.base_url, "teacher", params={"max_tokens": 400}, cache=ResponseCache(work / "cache.sqlite"))


def test_a_component_mix_gives_table_grounded_pairs_whose_numbers_numeric_validation_finds_in_the_table(tmp_path):
    work, paper = make_work(tmp_path)
    cfg = SeedConfig(n_pairs=2, components=MIX, component_pairs=2)
    with ScriptedChat(teacher_reply) as fake:
        summary = run_stage(seed.stage(client_for(fake, work), cfg), work)
    # one request for the prose, one per component picked: both tables, an equation and the figure
    assert summary.failed == 0 and len(fake.requests) == 1 + 4
    [rec] = read_jsonl(work / "seed.jsonl")
    assert rec["components_asked"] == ["T1", "T2", "E1", "F1"]
    grounded = [(p["grounding"]["kind"], p["grounding"]["component_id"]) for p in rec["qa"]]
    assert grounded == [("prose", None)] * 2 + [("table", "T1")] * 2 + [("table", "T2")] * 2 + [("figure", "F1")]
    # the equation's reply had no pair: its reason is kept, and the paper's other pairs with it
    assert rec["status"] == "short" and "Eq. (1) (E1): no question/answer markers found" in rec["error"]

    # the table's prompt shows it, its caption and the text around it, and asks for questions that stand alone
    [table_prompt] = [
        r["messages"][-1]["content"] for r in fake.requests if "Table 1:" in r["messages"][-1]["content"]
    ]
    t1 = next(c for c in paper["components"] if c["id"] == "T1")
    assert t1["content"] in table_prompt and "Freeze casting conditions." in table_prompt
    assert t1["context_before"].split()[-1] in table_prompt and t1["context_after"].split()[0] in table_prompt
    assert "never refer to the table, its label (Table 1)" in table_prompt
    assert table_prompt.startswith(COMPONENT_PROMPT.split("{")[0] + "a table from a scientific paper")

    # numeric validation finds every number of the table-grounded answers, though the text has some of them not
    run_evaluate(work, EvaluateConfig(metrics=["numeric"]))
    [checked] = read_jsonl(work / "numeric.jsonl")
    tables = [m for p, m in zip(rec["qa"], checked["pair_metrics"]) if p["grounding"]["kind"] == "table"]
    assert [m["numeric_ratio"] for m in tables] == [1.0, 1.0, 1.0, 1.0]
    text_numbers = set(numeric.extract_numbers(f"{paper['title']}\n{paper['text']}"))
    only_in_tables = {n for m in tables for n in m["numbers"]} - text_numbers
    assert {"12", "1.5", "3", "27"} <= only_in_tables

    # published: each pair carries its grounding (an evaluated row too, with its numeric ratio), and the card
    # counts the pairs of each kind
    out = write_folder(work, tmp_path / "pub", Config(work_dir=str(work)))
    rows = [r for split in datasets.load_dataset(str(out), "seed").values() for r in split]
    assert [p["grounding"] for p in rows[0]["qa"]][2] == {"kind": "table", "component_id": "T1"}
    # the training example's input is the prose: its target holds the prose pairs only
    assert "A2: Their pores" in rows[0]["output"] and "Q3:" not in rows[0]["output"]
    evaluated = [r for split in datasets.load_dataset(str(out), "evaluated").values() for r in split]
    assert [(r["grounding"]["kind"], r["numeric_ratio"]) for r in evaluated if r["grounding"]["kind"] == "table"] == [
        ("table", 1.0)
    ] * 4
    card = (out / "README.md").read_text()
    assert "## What the pairs were asked from" in card and "| config | prose | table | equation | figure |\n" in card
    assert "| `seed` | 2 | 4 | 0 | 1 |" in card and "| `evaluated` | 2 | 4 | 0 | 1 |" in card
    assert (
        "2 pairs requested per paper from its prose, and\n  2 about each of up to 2 tables, 1 equation, 1 figure"
        in card
    )


def test_without_a_mix_nothing_but_the_prose_is_asked_and_the_records_fingerprints_stay(tmp_path):
    work, _ = make_work(tmp_path)
    with ScriptedChat(teacher_reply) as fake:
        stage = seed.stage(client_for(fake, work), SeedConfig(n_pairs=2))
        inputs = list(stage.inputs(work))
        run_stage(stage, work)
    assert len(fake.requests) == 1 and "components" not in inputs[0]
    assert "components" not in stage.params["settings"] and "component_pairs" not in stage.params["settings"]
    [rec] = read_jsonl(work / "seed.jsonl")
    assert rec["status"] == "ok" and "components_asked" not in rec
    assert [p["grounding"] for p in rec["qa"]] == [{"kind": "prose", "component_id": None}] * 2


def test_a_long_table_and_the_text_around_it_are_cut_to_fit_the_request():
    rows = "\n".join(f"| sample {i} | {i / 10:.1f} |" for i in range(2000))
    long = {
        "id": "T9",
        "kind": "table",
        "label": "Table 9",
        "caption": "Conductivity of every sample.",
        "content": f"| Sample | κ |\n| --- | --- |\n{rows}",
        "context_before": "The samples were dried. " * 400,
        "context_after": "Each was measured twice. " * 400,
    }
    instruction = len(component_prompt({**long, "content": "", "context_before": "", "context_after": ""}, 2))
    prompt = component_prompt(long, 2, max_chars=3000)
    assert len(prompt) <= instruction + 3000 and "| sample 0 | 0.0 |" in prompt and "[... cut ...]" in prompt
    assert "The samples were dried." in prompt and "Each was measured twice." in prompt  # whole sentences
    assert rows in component_prompt(long, 2)  # no budget: the whole table


def test_the_mix_is_a_yaml_key_and_a_flag_and_a_wrong_one_is_refused(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seed:\n  components: {table: 2}\ngenerate:\n  components: {figure: 1, equation: 3}\n")
    cfg = Config.load(config).validate()
    assert cfg.seed.components == {"table": 2} and cfg.generate.components == {"figure": 1, "equation": 3}
    args = build_parser().parse_args(
        ["seed", str(tmp_path / "w"), "--components", "table=2, equation=1,figure=1", "--component-pairs", "3"]
    )
    cfg = resolve_config(args)
    assert cfg.seed.components == MIX and cfg.seed.component_pairs == 3
    for flag, words in (("tabel=2", "unknown component kind 'tabel'"), ("table=-1", "at least 0")):
        with pytest.raises(UserError, match=words):
            resolve_config(build_parser().parse_args(["seed", str(tmp_path / "w"), "--components", flag]))
    with pytest.raises(SystemExit):  # not KEY=VALUE: argparse's one-line error
        build_parser().parse_args(["seed", str(tmp_path / "w"), "--components", "table"])


def test_generate_asks_a_real_server_about_the_components_as_well(tiny_server, tmp_path):
    work, _ = make_work(tmp_path)
    client = LLMClient(
        tiny_server.base_url, tiny_server.model, params={"max_tokens": 8}, cache=ResponseCache(work / "c.sqlite")
    )
    cfg = GenerateConfig(context_tokens=2048, chars_per_token=1.0, components={"table": 1, "figure": 1})
    summary = run_stage(generate.stage(client, cfg), work)
    [rec] = read_jsonl(work / "generated.jsonl")
    # the prose and two components, each a request the server answered (the tiny random model writes no pairs)
    assert summary.failed == 0 and client.usage.requests == 3 and rec["components_asked"] == ["T1", "F1"]
    assert rec["status"] == "unparsed" and "Table 1 (T1):" in rec["error"] and "Figure 1 (F1):" in rec["error"]
    manifest = json.loads((work / "generated_manifest.json").read_text())
    assert manifest["settings"]["components"] == {"table": 1, "figure": 1}
