"""`sciqag export`: the pairs of a published folder or a work directory in the formats trainers read.

Real parts: a folder written by `sciqag publish` (read back with `load_dataset`), the CLI, `datasets`' JSON loader
for every exported file, TRL's conversational checks and a real chat template for openai-chat, and ragas'
own loader where ragas is installed. LLaMA-Factory is too heavy to install here: its `dataset_info.json` entry is
checked against the data file as its documented loader reads it (columns and tags).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.pair_ids import pair_ids
from sciqag_dataset.core.spans import find_span
from sciqag_dataset.evaluation.filter import filter_pairs
from sciqag_dataset.hub.dataset_builder import split_of
from sciqag_dataset.hub.publish import write_folder

# Our own sample papers and pairs (written for these tests): each answer's evidence is one sentence of its paper.
PAPERS = {
    f"paper-{i}": (
        f"{topic} films",
        f"We grew {topic} films on sapphire at {500 + 20 * i} C.\nThe films  were {10 + i} nm thick. "
        f"Their band gap was {2 + i / 10:.1f} eV after annealing. Grains grew with time.",
    )
    for i, topic in enumerate(["zinc oxide", "tin oxide", "gallium nitride", "perovskite", "titania", "ceria"])
}
SYSTEM = "Answer the materials science question from memory."


def pairs_of(pid: str) -> list[tuple[str, str, str]]:
    """(question, answer, evidence sentence as the sentence splitter joins it) of one paper."""
    n = int(pid.split("-")[1])
    return [
        (
            f"How thick were the films of study {n}?",
            f"They were {10 + n} nm thick.",
            f"The films were {10 + n} nm thick.",
        ),
        (
            f"What band gap did the films of study {n} have?",
            f"About {2 + n / 10:.1f} eV.",
            f"Their band gap was {2 + n / 10:.1f} eV after annealing.",
        ),
    ]


def evaluated_work(root: Path) -> Path:
    """WORK with papers, seed pairs and evaluated.jsonl whose quotes are located in the papers' text."""
    work = root / "work"
    write_jsonl(
        work / "papers.jsonl",
        [
            {"id": pid, "title": t, "text": text, "metadata": {"doi": f"10.5555/{pid}"}}
            for pid, (t, text) in PAPERS.items()
        ],
    )
    seed, evaluated = [], []
    for pid, (title, text) in PAPERS.items():
        pairs = pairs_of(pid)
        seed.append(
            {"id": pid, "status": "ok", "qa": [{"question": q, "answer": a, "origin": "teacher"} for q, a, _ in pairs]}
        )
        for k, ((q, a, sentence), i) in enumerate(zip(pairs, pair_ids(pid, [q for q, _, _ in pairs]))):
            start, end = find_span(text, sentence)
            quote = {"start": start, "end": end, "text": text[start:end], "score": 0.9}
            evaluated.append(
                {
                    "pair_id": i,
                    "paper_id": pid,
                    "title": title,
                    "question": q,
                    "answer": a,
                    "origin": "teacher",
                    "quotes": [quote],
                    "context": [sentence],
                    "grounded": 1.0 if k == 0 else 0.2,
                }
            )
    write_jsonl(work / "seed.jsonl", seed)
    write_jsonl(work / "evaluated.jsonl", evaluated)
    return work


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, Path]:
    """(the work directory, the folder `sciqag publish` wrote from it: `seed` and `evaluated`)."""
    root = tmp_path_factory.mktemp("export")
    work = evaluated_work(root)
    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed", "evaluated"]
    return work, write_folder(work, root / "pub", cfg)


def expected(work: Path, config: str = "evaluated") -> list[tuple]:
    """(pair_id, paper_id, question, answer) of every pair the config holds, read from the work directory."""
    rows = read_jsonl(work / ("filtered.jsonl" if (work / "filtered.jsonl").exists() else "evaluated.jsonl"))
    if config == "evaluated":
        return sorted((r["pair_id"], r["paper_id"], r["question"], r["answer"]) for r in rows)
    out = []
    for rec in read_jsonl(work / "seed.jsonl"):
        ids = pair_ids(rec["id"], [p["question"] for p in rec["qa"]])
        out += [(i, rec["id"], p["question"], p["answer"]) for p, i in zip(rec["qa"], ids)]
    return sorted(out)


def export(source, out, fmt, *extra) -> int:
    return main(["export", str(source), "--format", fmt, "-o", str(out), *extra])


def loaded(out: Path, pattern: str = "*.jsonl") -> dict[str, datasets.Dataset]:
    """Each exported split file as `datasets` reads a JSON Lines file."""
    files = {p.stem: str(p) for p in sorted(out.glob(pattern))}
    assert files, f"nothing exported in {out}"
    return dict(datasets.load_dataset("json", data_files=files, cache_dir=str(out.parent / "hf-cache")))


def check_evidence(rows, key=lambda r: r["evidence"]):
    for row in rows:
        text = PAPERS[row["paper_id"]][1]
        assert [text[q["start"] : q["end"]] for q in key(row)] == [q["text"] for q in key(row)] != []


def read_openai_chat(out: Path) -> list[tuple]:
    got = []
    for split, ds in loaded(out).items():
        for row in ds:
            assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
            assert row["messages"][0]["content"] == SYSTEM and row["metadata"]["split"] == split
            meta = row["metadata"]
            got.append(
                (meta["pair_id"], meta["paper_id"], row["messages"][1]["content"], row["messages"][2]["content"])
            )
        check_evidence(ds["metadata"])
    return got


def read_sharegpt(out: Path) -> list[tuple]:
    got = []
    for ds in loaded(out).values():
        for row in ds:
            turns = row["conversations"]
            assert [t["from"] for t in turns] == ["human", "gpt"] and row["system"] == SYSTEM
            got.append((row["pair_id"], row["paper_id"], turns[0]["value"], turns[1]["value"]))
        check_evidence(ds)
    return got


def read_alpaca(out: Path) -> list[tuple]:
    got = []
    for ds in loaded(out).values():
        assert {"instruction", "input", "output", "system", "pair_id", "paper_id"} <= set(ds.column_names)
        for row in ds:
            assert row["input"] == "" and row["system"] == SYSTEM
            got.append((row["pair_id"], row["paper_id"], row["instruction"], row["output"]))
        check_evidence(ds)
    return got


def read_llama_factory(out: Path) -> list[tuple]:
    """What LLaMA-Factory's ShareGPT converter reads, by its documented `dataset_info.json` keys."""
    info = json.loads((out / "dataset_info.json").read_text(encoding="utf-8"))
    assert sorted(info) == sorted(f"sciqag_{p.stem}" for p in out.glob("*.jsonl"))
    got = []
    for entry in info.values():
        assert entry["formatting"] == "sharegpt"
        ds = datasets.load_dataset("json", data_files=str(out / entry["file_name"]), split="train")
        columns, tags = entry["columns"], entry["tags"]
        assert set(columns.values()) <= set(ds.column_names)
        for row in ds:
            turns = row[columns["messages"]]
            roles = [t[tags["role_tag"]] for t in turns]
            assert roles == [tags["user_tag"], tags["assistant_tag"]] and row[columns["system"]] == SYSTEM
            got.append((row["pair_id"], row["paper_id"], *(t[tags["content_tag"]] for t in turns)))
    return got


def read_ragas(out: Path) -> list[tuple]:
    """ragas 0.2+'s single-turn sample fields (ragas itself is read in its own test below, where installed)."""
    got = []
    for ds in loaded(out).values():
        assert {"user_input", "reference", "reference_contexts"} <= set(ds.column_names)
        for row in ds:
            assert row["reference_contexts"] == [q["text"] for q in row["evidence"]]
            ids = [f"{row['paper_id']}:{q['start']}-{q['end']}" for q in row["evidence"]]
            assert row["reference_context_ids"] == ids
            got.append((row["pair_id"], row["paper_id"], row["user_input"], row["reference"]))
        check_evidence(ds)
    return got


READERS = {
    "openai-chat": read_openai_chat,
    "sharegpt": read_sharegpt,
    "alpaca": read_alpaca,
    "llama-factory": read_llama_factory,
    "ragas": read_ragas,
}


@pytest.mark.parametrize("fmt", list(READERS))
def test_every_format_reads_back_the_same_pairs_with_their_ids(published, tmp_path, fmt):
    work, pub = published
    out = tmp_path / "out"
    system = [] if fmt == "ragas" else ["--system", SYSTEM]
    assert export(pub, out, fmt, *system) == 0
    got = READERS[fmt](out)
    assert sorted(got) == expected(work) and len(got) == 12
    # one file per split, as the published folder splits the papers
    published_splits = datasets.load_dataset(str(pub), "evaluated", cache_dir=str(tmp_path / "c"))
    assert sorted(p.stem for p in out.glob("*.jsonl")) == sorted(published_splits)


def test_a_work_directory_exports_the_rows_publish_builds_and_the_filtered_pairs(published, tmp_path):
    work, pub = published
    work = Path(shutil.copytree(work, tmp_path / "work"))
    assert export(work, tmp_path / "from-work", "alpaca", "--system", SYSTEM) == 0
    assert export(pub, tmp_path / "from-pub", "alpaca", "--system", SYSTEM) == 0
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl"):
        from_work, from_pub = tmp_path / "from-work" / name, tmp_path / "from-pub" / name
        assert from_work.exists() == from_pub.exists()
        if from_work.exists():
            assert read_jsonl(from_work) == read_jsonl(from_pub)
    # a filter ran: the filtered pairs are the ones exported (the first pair of each paper is grounded)
    kept = filter_pairs(work, allow_missing=True, min_grounding=0.5)["kept"]  # no summary: hand-written rows
    assert kept == 6
    assert export(work, tmp_path / "filtered", "sharegpt", "--split", "train") == 0
    rows = read_jsonl(tmp_path / "filtered" / "train.jsonl")
    got = sorted((r["pair_id"], r["paper_id"], *(t["value"] for t in r["conversations"])) for r in rows)
    assert got == [e for e in expected(work) if split_of(e[1]) == "train"] != []
    assert len(expected(work)) == 6 and all("system" not in r for r in rows)
    assert sorted(p.name for p in (tmp_path / "filtered").iterdir()) == [".sciqag.json", "train.jsonl"]


def test_a_work_directory_exports_the_splits_of_its_last_publish(published, tmp_path):
    """Shares given to `sciqag publish` are the ones an export of the work directory splits by: a paper of the
    published test split never lands in an exported training file."""
    work = Path(shutil.copytree(published[0], tmp_path / "work"))
    shares = ["--train", "0.2", "--validation", "0.2", "--configs", "seed,evaluated"]
    assert main(["publish", str(work), "-o", str(tmp_path / "pub"), *shares]) == 0
    assert export(work, tmp_path / "from-work", "alpaca") == 0
    assert export(tmp_path / "pub", tmp_path / "from-pub", "alpaca") == 0
    names = sorted(p.name for p in (tmp_path / "from-pub").glob("*.jsonl"))
    assert names == sorted(p.name for p in (tmp_path / "from-work").glob("*.jsonl"))
    for name in names:
        assert read_jsonl(tmp_path / "from-work" / name) == read_jsonl(tmp_path / "from-pub" / name)


def test_an_export_replaces_the_files_of_the_export_before_it_and_nothing_else(published, tmp_path):
    work, pub = published
    out = tmp_path / "out"
    assert export(pub, out, "llama-factory") == 0
    (out / "notes.txt").write_text("mine")  # a file of the user's, put there since
    assert export(pub, out, "alpaca", "--split", "train") == 0
    assert sorted(p.name for p in out.iterdir()) == [".sciqag.json", "notes.txt", "train.jsonl"]
    assert "instruction" in read_jsonl(out / "train.jsonl")[0]


def test_the_seed_config_is_exported_when_asked_with_empty_evidence(published, tmp_path):
    work, pub = published
    assert export(pub, tmp_path / "out", "ragas", "--data-config", "seed") == 0
    got = [
        (r["pair_id"], r["paper_id"], r["user_input"], r["reference"])
        for p in (tmp_path / "out").glob("*.jsonl")
        for r in read_jsonl(p)
    ]
    assert sorted(got) == expected(work, "seed")
    assert all(r["reference_contexts"] == [] for p in (tmp_path / "out").glob("*.jsonl") for r in read_jsonl(p))


def test_openai_chat_rows_apply_a_chat_template(published, tiny_model_dir, tmp_path):
    from transformers import AutoTokenizer
    from trl.data_utils import apply_chat_template, is_conversational

    _, pub = published
    assert export(pub, tmp_path / "out", "openai-chat", "--system", SYSTEM) == 0
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    for ds in loaded(tmp_path / "out").values():
        for row in ds:
            assert is_conversational(row)
            text = apply_chat_template({"messages": row["messages"]}, tok)["text"]
            assert (
                text.index(SYSTEM)
                < text.index(row["messages"][1]["content"])
                < text.index(row["messages"][2]["content"])
            )


def test_ragas_reads_the_testset(published, tmp_path):
    ragas = pytest.importorskip(
        "ragas", reason="ragas is not installed (its dependency instructor needs openai<2; this project pins openai 3)"
    )
    work, pub = published
    assert export(pub, tmp_path / "out", "ragas") == 0
    got = []
    for path in sorted((tmp_path / "out").glob("*.jsonl")):
        for sample in ragas.EvaluationDataset.from_jsonl(str(path)).samples:
            assert sample.reference_contexts and sample.reference_context_ids
            got.append((sample.user_input, sample.reference))
    assert sorted(got) == sorted((q, a) for _, _, q, a in expected(work))


def test_an_output_folder_of_the_users_is_refused(published, tmp_path, capsys):
    _, pub = published
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "train.jsonl").write_text("my own data\n")
    assert export(pub, mine, "alpaca") == 2
    err = capsys.readouterr().err
    assert "not empty and was not created by sciqag" in err and len(err.strip().splitlines()) == 1
    assert (mine / "train.jsonl").read_text() == "my own data\n" and sorted(p.name for p in mine.iterdir()) == [
        "train.jsonl"
    ]
    # an earlier export of ours is written again
    assert export(pub, tmp_path / "ours", "alpaca") == 0
    assert export(pub, tmp_path / "ours", "sharegpt") == 0


def test_a_bad_format_is_a_one_line_error(published, tmp_path, capsys):
    _, pub = published
    assert export(pub, tmp_path / "out", "jsonl-chat") == 2
    err = capsys.readouterr().err
    assert "--format 'jsonl-chat': choose one of openai-chat, sharegpt, alpaca, llama-factory, ragas" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    assert export(tmp_path / "nowhere", tmp_path / "out", "alpaca") == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_evidence_of_a_work_directory_evaluated_with_coverage_slices_its_papers(evaluated_review_work, tmp_path):
    from review_samples import PAPERS as REVIEWED
    from review_samples import QA

    assert export(evaluated_review_work, tmp_path / "out", "ragas") == 0
    rows = [r for p in sorted((tmp_path / "out").glob("*.jsonl")) for r in read_jsonl(p)]
    assert sorted((r["user_input"], r["reference"]) for r in rows) == sorted(p for pairs in QA.values() for p in pairs)
    assert all(r["reference_contexts"] for r in rows)
    for row in rows:
        text = REVIEWED[row["paper_id"]][1]
        assert [text[q["start"] : q["end"]] for q in row["evidence"]] == row["reference_contexts"]
