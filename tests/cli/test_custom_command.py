"""A command of one's own (examples/custom_command.py) registered as a package registers it, through an entry
point of the `sciqag.commands` group, and run through the real `sciqag` entry."""

from __future__ import annotations

import pytest
from helpers import write_jsonl

import sciqag_dataset.cli as cli
from sciqag_dataset.cli import build_parser, main, subcommands

ENTRY = "sciqag_dataset.examples.custom_command"


def install(site, entries: str) -> None:
    """A distribution as pip leaves it in site-packages: its metadata and its entry points, no code."""
    info = site / "sciqag_stats-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sciqag-stats\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[sciqag.commands]\n{entries}\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path for installed distributions; the CLI looks at the entry points afresh."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    cli.plugin_commands.cache_clear()
    yield folder
    cli.plugin_commands.cache_clear()


def test_an_installed_command_runs_through_sciqag(tmp_path, site, capsys):
    install(site, f"stats = {ENTRY}")
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl",
        [{"id": "p1", "title": "A cathode study", "text": "Body."}, {"id": "p2", "title": "Anodes", "text": "B."}],
    )
    write_jsonl(
        work / "generated.jsonl",
        [
            {
                "id": "p1",
                "status": "ok",
                "qa": [{"question": "Q1?", "answer": "A."}, {"question": "Q2?", "answer": "B."}],
            },
            {"id": "p2", "status": "failed", "qa": []},
        ],
    )
    assert main(["stats", str(work)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["2", "p1", "A", "cathode", "study"] and out[2].split() == ["0", "p2", "Anodes"]
    assert out[-1] == "2 pairs (generated) over 2 papers; 1 paper without usable pairs"
    assert "stats" in build_parser().format_help()  # listed in `sciqag --help` with its summary

    assert main(["stats", str(tmp_path / "nowhere")]) == 2  # its user errors are the CLI's: one line, exit 2
    assert "sciqag stats: error: " in capsys.readouterr().err


def test_a_broken_or_clashing_command_is_left_out_and_the_others_run(tmp_path, site, capsys):
    install(site, "broken = no_such_module_of_anyone\nclash = sciqag_dataset.cli.seed")
    names = subcommands(build_parser())
    err = capsys.readouterr().err
    assert "the command broken (no_such_module_of_anyone) cannot be loaded, left out" in err
    assert "sciqag_dataset.cli.seed is left out" in err and "broken" not in names
    assert names["seed"].description == "teacher QA pairs per paper -> WORK/seed.jsonl"  # the built-in one
    assert main(["keywords", str(tmp_path / "w")]) == 2  # every other command as before
