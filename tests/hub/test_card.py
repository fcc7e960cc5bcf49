"""The dataset card says what the run did: built from the stages' manifests, the filter's record and the
splits this publish really has, never from defaults. Real stages against a real `transformers serve`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import read_jsonl, write_jsonl
from test_seed_publish import client_for, make_work, paper, run_seed, seeded_work

from sciqag_dataset.builders import generate
from sciqag_dataset.builders.ingest import read_file
from sciqag_dataset.config.config_file import Config, EvaluateConfig, GenerateConfig, SeedConfig
from sciqag_dataset.config.generator_info import write_generator_info
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.evaluation.evaluate import run_evaluate
from sciqag_dataset.evaluation.filter import filter_pairs
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.llm import LLMClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "papers"


def test_card_names_each_model_with_the_settings_its_stage_used(says_server, tmp_path):
    work = make_work(tmp_path, n=4)
    run_seed(work, client_for(says_server, work, max_tokens=40), SeedConfig(n_pairs=3, context_tokens=2048))
    run_stage(
        generate.stage(client_for(says_server, work, max_tokens=40), GenerateConfig(n_pairs=4, context_tokens=2048)),
        work,
    )
    cfg = Config(work_dir=str(work))  # the config says 10 pairs; the stages were asked for 3 and 4
    card = (write_folder(work, tmp_path / "pub", cfg) / "README.md").read_text()
    made = card[card.index("## How it was made") :]
    teacher = made[made.index("**Teacher**") : made.index("**Generator**")]
    generator = made[made.index("**Generator**") : made.index("Built with")]
    assert f"`{says_server.model}`" in teacher and "3 pairs requested per paper" in teacher
    assert f"`{says_server.model}`" in generator and "4 pairs requested per paper" in generator
    assert "not fine-tuned" in generator and "10 pairs" not in made
    assert "Requests: 4," in teacher and "Requests: 4," in generator

    # only the `evaluated` config: the card names the model whose pairs it holds
    run_evaluate(work, EvaluateConfig(metrics=["numeric"]))
    cfg.publish.configs = ["evaluated"]
    card = (write_folder(work, tmp_path / "pub", cfg) / "README.md").read_text()
    made = card[card.index("## How it was made") :]
    assert "**Generator** (the `generated` config)" in made and "**Teacher**" not in made


def test_the_generate_stage_records_whether_its_model_was_fine_tuned(tmp_path):
    model = tmp_path / "my-generator"
    model.mkdir()
    write_generator_info(
        model,
        {"prompt_style": "alpaca", "n_pairs": 8, "base_model": "base/135M", "method": "lora", "dataset": "me/seed"},
    )
    client = LLMClient("http://127.0.0.1:9/v1", str(model))  # never called: the stage is only built
    about = generate.stage(client, GenerateConfig()).describe()
    assert about["fine_tuned"] == {"base_model": "base/135M", "method": "lora", "dataset": "me/seed"}
    assert about["settings"]["prompt_style"] == "alpaca"
    about = generate.stage(LLMClient("http://127.0.0.1:9/v1", str(tmp_path)), GenerateConfig()).describe()
    assert about["fine_tuned"] is None  # a folder without sciqag_generator.json: not fine-tuned by us
    # a Hub-shaped name with the prompting configured: not looked up, so the card does not claim either way
    about = generate.stage(LLMClient("http://127.0.0.1:9/v1", "org/served"), GenerateConfig(prompt_style="paper"))
    assert "fine_tuned" not in about.describe()


def test_card_names_the_base_of_a_fine_tuned_generator(tmp_path):
    work = seeded_work(tmp_path, n=3)
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": "paper-00",
                "status": "ok",
                "model": "me/gen",
                "qa": [{"question": "Why?", "answer": "So.", "origin": "generator"}],
            }
        ],
    )
    # the fields as `generate.stage` records them from the model's sciqag_generator.json
    (work / "generated_manifest.json").write_text(
        json.dumps(
            {
                "model": "me/gen",
                "settings": {"n_pairs": 10, "prompt_style": "alpaca"},
                "params": {"temperature": 0.6},
                "fine_tuned": {
                    "base_model": "HuggingFaceTB/SmolLM2-135M-Instruct",
                    "method": "lora",
                    "dataset": "me/seed",
                },
            }
        )
    )
    card = (write_folder(work, tmp_path / "pub", Config(work_dir=str(work))) / "README.md").read_text()
    assert "**Teacher** (the `seed` config): not recorded" in card  # no seed_manifest.json here
    assert "`me/gen`, fine-tuned with\n  `sciqag train` (lora) from `HuggingFaceTB/SmolLM2-135M-Instruct`" in card
    assert "prompt style\n  `alpaca`" in card
    # a manifest written before the stage recorded it: the card claims neither
    (work / "generated_manifest.json").write_text(json.dumps({"model": "me/gen", "settings": {"n_pairs": 10}}))
    card = (write_folder(work, tmp_path / "pub", Config(work_dir=str(work))) / "README.md").read_text()
    assert "`me/gen`;" in card and "fine-tuned with" not in card and "used as it is" not in card


def test_card_describes_the_splits_it_has(tmp_path):
    work = make_work(tmp_path, n=1)
    write_jsonl(
        work / "seed.jsonl",
        [
            {
                "id": "paper-00",
                "status": "ok",
                "model": "t",
                "prompt_style": "paper",
                "qa": [{"question": "Why anneal?", "answer": "Grain growth.", "origin": "teacher"}],
            }
        ],
    )
    card = (write_folder(work, tmp_path / "pub", Config(work_dir=str(work))) / "README.md").read_text()
    counts = card[card.index("## Configurations") : card.index("## Fields")]
    present = [line.split("|")[2].strip() for line in counts.splitlines() if line.startswith("| `seed`")]
    assert len(present) == 1
    missing = [s for s in ("train", "validation", "test") if s not in present]
    assert f"`seed` has no {' and no '.join(missing)} split: none of its 1 paper hashed into them" in counts
    assert ("needs a test split" in counts) == ("test" in missing)

    # a corpus whose papers fill every split gets no such note
    work = make_work(tmp_path / "big", n=0)
    write_jsonl(work / "papers.jsonl", [paper(i) for i in range(60)])
    write_jsonl(
        work / "seed.jsonl",
        [
            {
                "id": f"paper-{i:02d}",
                "status": "ok",
                "model": "t",
                "prompt_style": "paper",
                "qa": [{"question": "Q?", "answer": "A.", "origin": "teacher"}],
            }
            for i in range(60)
        ],
    )
    card = (write_folder(work, tmp_path / "pub2", Config(work_dir=str(work))) / "README.md").read_text()
    assert "split: none of its" not in card


def test_card_states_the_filter_rules_in_words(tmp_path):
    work = seeded_work(tmp_path, n=4)
    run_evaluate(work, EvaluateConfig(metrics=["numeric"]))
    summary = filter_pairs(work, min_numeric_ratio=0.5, drop_source_references=True)
    card = (write_folder(work, tmp_path / "pub", Config(work_dir=str(work))) / "README.md").read_text()
    assert f"{summary['kept']} of {summary['pairs']}" in card
    assert "- at least 50% of an answer's numbers found in its paper" in card
    assert "- no reference to the source paper in the question" in card
    assert "'min_racar'" not in card and "{" not in card[card.index("`sciqag filter` kept") : card.index("## How")]


def test_a_released_format_paper_gets_the_title_its_text_opens_with(tmp_path):
    [sample] = read_file(EXAMPLES / "released_format_sample.json")
    assert sample["title"].startswith("Gallium–Tantalum Co-Doping Stabilises Dense Cubic")
    assert sample["text"].startswith(sample["title"])  # the text is kept whole
    # a text that opens with a sentence, a heading or a single line has no title to take
    for txt in (
        "Layered hydroxides swap anions in water.\nCalcination rebuilt them.",
        "1. Introduction to the field\nBody text.",
        "Abstract of the whole work\nBody text.",
        "A Title On One Line Only",
    ):
        path = tmp_path / "r.json"
        path.write_text(json.dumps([{"doi": "10.5555/x.1", "txt": txt, "Q&A": []}]))
        assert read_file(path)[0]["title"] == ""


def test_every_plot_in_the_card_has_its_caption(tmp_path):
    work = seeded_work(tmp_path, n=4)
    papers = read_jsonl(work / "papers.jsonl")
    for p in papers:
        p["title"] = f"Ga_x films *doped* [{p['id']}]"  # Markdown's own characters in a title
    write_jsonl(work / "papers.jsonl", papers)
    run_evaluate(work, EvaluateConfig(metrics=["coverage", "numeric", "diversity"]))
    captions = json.loads((work / "plots" / "captions.json").read_text())
    out = write_folder(work, tmp_path / "pub", Config(work_dir=str(work)))
    card = (out / "README.md").read_text()
    shown = sorted(p.relative_to(out).as_posix() for p in (out / "plots").glob("*.png"))
    assert shown and sorted(captions) == shown
    assert any("*doped*" in c for c in captions.values())  # a caption names its paper
    for path in shown:
        escaped = re.sub(r"([\\`*_\[\]<>])", r"\\\1", captions[path])
        assert captions[path] and f"![{escaped.partition(':')[0]}]({path})\n*{escaped}*" in card
    assert "*doped*" not in card and "\\*doped\\*" in card
