"""One CLI style: the work dir first and positional in every stage, a config's work_dir
honoured, the judge flags wherever a judge runs, a summary line per command, help that names what a flag
takes, no flag where it does nothing, and "1 paper", not "1 papers". Old spellings still work, with a note."""

from __future__ import annotations

import argparse
import dataclasses
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_jsonl

from sciqag_dataset.builders.ingest import Reader, readers, register, unregister
from sciqag_dataset.cli import build_parser, main, parse, report
from sciqag_dataset.cli.flags import resolve_config
from sciqag_dataset.config.config_file import METRICS
from sciqag_dataset.core import metrics
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.folders import WORK_LAYOUT, claim
from sciqag_dataset.core.runner import Summary, parse_shard
from sciqag_dataset.evaluation.benchmark.leaderboard import markdown
from sciqag_dataset.llm.embedded import ENGINES
from sciqag_dataset.trainers.config import TrainArgs

ROOT = Path(__file__).resolve().parents[2]
PAPER = "A cathode study\n\n" + "The layered oxide kept 91 % of its capacity after 500 cycles at 0.5 C. " * 12


def sciqag(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def help_of(name: str) -> str:
    return commands()[name].format_help()


def flags_of(name: str, prefix: str = "--") -> set[str]:
    return {
        s
        for a in commands()[name]._actions
        if a.help != argparse.SUPPRESS
        for s in a.option_strings
        if s.startswith(prefix)
    }


# ---------------------------------------------------------------- ingest WORK PAPERS...


def test_ingest_takes_the_work_dir_first_like_every_stage(tmp_path):
    (tmp_path / "paper.txt").write_text(PAPER)
    proc = sciqag("ingest", tmp_path / "work", tmp_path / "paper.txt")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "work" / "papers.jsonl").exists() and "deprecated" not in proc.stderr
    usage = help_of("ingest")
    assert "[WORK] [PAPERS ...]" in usage and "-o" not in flags_of("ingest")  # -o is an output folder elsewhere


def test_the_old_ingest_spelling_still_works_with_a_note(tmp_path):
    (tmp_path / "paper.txt").write_text(PAPER)
    (tmp_path / "more.txt").write_text(PAPER.replace("oxide", "anode"))
    proc = sciqag("ingest", tmp_path / "paper.txt", tmp_path / "more.txt", "-o", tmp_path / "work")
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "work" / "papers.jsonl").read_text().splitlines()) == 2  # both positionals are papers
    assert "-o WORK is deprecated" in proc.stderr and "sciqag ingest WORK PAPERS" in proc.stderr
    args = build_parser().parse_args(["ingest", "p.txt", "--work", "w"])
    assert args.old_work == "w" and args.deprecated == [
        "--work WORK is deprecated: write `sciqag ingest WORK PAPERS...`, the work directory first, as every "
        "stage takes it"
    ]


def test_ingest_without_papers_is_a_one_line_error(tmp_path):
    proc = sciqag("ingest", tmp_path / "work")
    assert proc.returncode == 2 and "name the PAPERS to ingest" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "work").exists()


# ---------------------------------------------------------------- WORK from --config


def test_a_stage_takes_its_work_dir_from_the_config_as_run_does(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"work_dir: {tmp_path / 'from-config'}\nkeywords:\n  n: 7\n")
    for name in ("ingest", "keywords", "seed", "generate", "evaluate", "filter", "publish"):
        args = build_parser().parse_args([name, "--config", str(cfg)])
        assert resolve_config(args).work_dir == str(tmp_path / "from-config"), name
    args = build_parser().parse_args(["keywords", str(tmp_path / "given"), "--config", str(cfg)])
    assert resolve_config(args).work_dir == str(tmp_path / "given")  # WORK given wins, as a flag over YAML
    assert resolve_config(build_parser().parse_args(["run", str(cfg)])).work_dir == str(tmp_path / "from-config")
    # through the real CLI: the config's work dir is the one looked at
    proc = sciqag("keywords", "--config", cfg)
    assert proc.returncode == 2 and f"{tmp_path / 'from-config' / 'papers.jsonl'} not found" in proc.stderr


def test_a_stage_without_work_or_config_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="name the work directory"):
        resolve_config(build_parser().parse_args(["keywords"]))
    proc = sciqag("keywords", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------- run's judge flags


def test_run_has_the_judge_flags_of_evaluate():
    judge = flags_of("evaluate", "--judge-")
    assert {"--judge-endpoint", "--judge-model", "--judge-api-key-env"} <= judge
    assert flags_of("run", "--judge-") == judge
    args = build_parser().parse_args(
        [
            "run",
            "--judge-endpoint",
            "http://a:1/v1",
            "--judge-endpoint",
            "http://b:1/v1",
            "--judge-model",
            "j",
            "--judge-concurrency",
            "3",
        ]
    )
    cfg = resolve_config(args)  # a committee of two, as `sciqag evaluate` makes it
    assert (cfg.judge.url, cfg.judge.model, cfg.judge.concurrency) == ("http://a:1/v1", "j", 3)
    assert [(j.url, j.model) for j in cfg.evaluate.judges] == [("http://b:1/v1", "j")]


# ---------------------------------------------------------------- flags and the options they set


def test_flags_store_plain_names_and_each_command_says_which_option_they_set(tmp_path):
    for parser in all_parsers(build_parser()):
        assert not [a.dest for a in parser._actions if "." in a.dest], parser.prog
        table = parser.get_default("config_keys") or {}
        dests = {a.dest for a in parser._actions}
        assert set(table) <= dests, parser.prog  # every entry is a flag of the command
    args = build_parser().parse_args(["seed", str(tmp_path), "--concurrency", "3", "--n-pairs", "4"])
    assert (args.concurrency, args.config_keys["concurrency"]) == (3, "teacher.concurrency")
    cfg = resolve_config(args)
    assert (cfg.teacher.concurrency, cfg.seed.n_pairs) == (3, 4)
    assert {"teacher.concurrency", "seed.n_pairs"} <= set(cfg.set_options)


def test_filter_has_a_flag_per_registered_rule_and_evaluate_lists_the_metrics():
    rules = {"--" + name.replace("_", "-") for name in metrics.rules()}
    assert "--min-racar" in rules and rules <= flags_of("filter")
    evaluate = commands()["evaluate"]
    assert all(m.name in evaluate.description and m.help in evaluate.epilog for m in metrics.registered())
    backend = next(a for a in evaluate._actions if "--embedded-backend" in a.option_strings)
    assert all(name in backend.help for name in ENGINES.names())


# ---------------------------------------------------------------- help text


def test_every_command_has_a_one_line_summary():
    top = build_parser().format_help()
    for name, parser in commands().items():
        assert parser.description and "\n" not in parser.description, name
        assert re.search(rf"^\s+{re.escape(name)}\s+\S", top, re.M), name  # listed with its summary
        if name != "train":  # its own --help is TRL's parser's (with the trainer's description)
            assert parser.description in " ".join(parser.format_help().split()), name


def test_evaluate_metrics_help_names_every_metric():
    action = next(a for a in commands()["evaluate"]._actions if "--metrics" in a.option_strings)
    assert all(m in action.help for m in METRICS) and ", ".join(METRICS) in action.help


def test_ingest_help_names_every_registered_format(capsys):
    reader = register(Reader("sqh", lambda source: iter(()), extensions=(".sqh",), label="SQH", about="a test format"))
    try:
        with pytest.raises(SystemExit):
            main(["ingest", "--help"])
    finally:
        unregister(reader)
    out = capsys.readouterr().out
    names = {r.name for r in [*readers(), reader]}
    assert "latex" in names and "sqh" in names
    summary = " ".join(out.split()).split(" into WORK/papers.jsonl")[0]
    for name in names:
        assert re.search(rf"\b{name}\b", summary), name  # in the one-line summary
        assert re.search(rf"^{name}\s", out, re.M), name  # and a row of the format table
    assert "a test format" in out
    for r in readers():  # what a reader does for the user, not the modules it is made of
        assert not re.search(r"\w\.py\b", r.about), r.name


def test_help_texts_leave_measured_figures_to_the_docs():
    figure = re.compile(r"\d(\.\d+)?\s?[x×]\s|~\s?\d+\s?(s|min)\b|tokens/s|on \d+ cores")
    for p in all_parsers(build_parser()):
        for text in [p.description or ""] + [a.help for a in p._actions if a.help != argparse.SUPPRESS]:
            assert not figure.search(text or ""), (p.prog, text)  # docs/MEASUREMENTS.md holds them


def test_shard_help_says_where_i_starts():
    action = next(a for a in commands()["generate"]._actions if "--shard" in a.option_strings)
    assert "from 0" in action.help
    assert parse_shard("0/4") == (0, 4) and parse_shard("3/4") == (3, 4)  # what the help promises
    with pytest.raises(UserError):
        parse_shard("4/4")


def test_embedded_profile_only_where_it_changes_something():
    for name in ("seed", "generate", "run"):  # the commands that ask the embedded model for QA pairs
        assert "--embedded-profile" in flags_of(name), name
    for name in ("evaluate", "benchmark"):
        assert "--embedded-profile" not in flags_of(name) and "--embedded-backend" in flags_of(name), name
        assert "embedded-profile" not in help_of(name)
        args = build_parser().parse_args([name, "x", "--no-embedded-profile"])  # still accepted, with a note
        assert "--no-embedded-profile does nothing" in args.deprecated[0]


# ---------------------------------------------------------------- "1 paper", not "1 papers"


def test_plural():
    assert [plural(n, "paper") for n in (0, 1, 2)] == ["0 papers", "1 paper", "2 papers"]
    assert plural(1, "batch", "batches") == "1 batch" and plural(2, "batch", "batches") == "2 batches"


def test_summaries_say_one_paper_and_one_pair(tmp_path, capsys):
    work = claim(str(tmp_path / "work"), "work", option="work_dir", adopt=WORK_LAYOUT)
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "T", "text": "The gap is 3.2 eV. " * 30}])
    write_jsonl(
        work / "seed.jsonl",
        [{"id": "p0", "status": "ok", "qa": [{"question": "What is the gap?", "answer": "It is 3.2 eV."}]}],
    )
    assert main(["evaluate", str(work), "--metrics", "numeric", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Evaluated 1 QA pair of 1 paper (seed)" in out and "of their 1 number occur" in out
    assert main(["filter", str(work), "--min-numeric-ratio", "1"]) == 0
    assert "filter: 1 pair -> 1 kept" in capsys.readouterr().out

    buf = io.StringIO()
    report.run_summary(work, {}, None, None, out=buf)
    assert "seed      1 paper: 1 ok; 1 QA pair, 0 papers with 5 or more" in buf.getvalue()

    failed = Summary("seed")
    failed.counts["failed"] = 1
    assert report.summary_line(failed) == 1
    assert "  1 paper failed;" in capsys.readouterr().err

    board = {"questions": {"data": "d.json", "questions": 1}, "models": [], "ranked_by": None}
    assert markdown(board).startswith("Closed-book answers to 1 question of `d.json`")


# ---------------------------------------------------------------- README


def readme_commands() -> list[list[str]]:
    """Every `sciqag ...` line of README's shell blocks, as argv (its `[...]` optional parts left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        ln.strip() for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, re.S) for ln in block.splitlines()
    ]
    found = []
    for line in lines:
        if not line.startswith("sciqag ") or line.startswith("sciqag train"):
            continue  # `sciqag train` is TRL's parser (tests/trainers/test_train.py)
        line = re.sub(r"\s\[[^\]]*\]", "", line.split(" #")[0])
        found.append(shlex.split(line)[1:])
    return found


def test_readme_commands_parse_as_written():
    found = readme_commands()
    assert ["ingest", "work", "papers/", "more.pdf"] in found
    for argv in found:
        args = build_parser().parse_args(argv)  # exits 2 on a flag or an argument the CLI does not take
        assert not getattr(args, "deprecated", None), argv  # README shows the current spellings
    ingest = build_parser().parse_args(["ingest", "work", "papers/", "more.pdf"])
    assert ingest.work == "work" and ingest.inputs == ["papers/", "more.pdf"]


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*[a-z0-9]")
BARE_FLAGS_OF_OTHER_TOOLS = {"--no-deps", "--apply_chat_template"}  # pip's and lm_eval's, named alone in README


def all_parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from all_parsers(sub)


def sciqag_flags(text: str) -> list[str]:
    """The flags of the `sciqag` command lines in ``text`` (`sciqag train` takes TRL's flags: left out)."""
    lines = re.sub(r"\\\n\s*", " ", text).splitlines()  # continuation lines joined
    words = [re.sub(r"^(\w+=\S*\s+)+", "", ln.strip()).split() for ln in lines]
    return [f for w in words if w[:1] == ["sciqag"] and w[1:2] != ["train"] for f in FLAG.findall(" ".join(w))]


def test_every_flag_named_in_readme_help_and_docstrings_exists():
    parsers = list(all_parsers(build_parser()))
    known = {flag for p in parsers for flag in p._option_string_actions}
    train = {f"--{n}" for f in dataclasses.fields(TrainArgs) for n in (f.name, f.name.replace("_", "-"))}
    named: dict[str, str] = {}
    for p in parsers:
        texts = [p.description or "", p.epilog or ""] + [a.help for a in p._actions if a.help != argparse.SUPPRESS]
        named.update((f, f"help of {p.prog}") for t in texts for f in FLAG.findall(t or ""))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```[a-z]*\n(.*?)```", readme, re.S):
        named.update((f, "a README code block") for f in sciqag_flags(block))
    for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", readme, flags=re.S)):
        found = sciqag_flags(span) if span.startswith("sciqag ") else FLAG.findall(span) if span[:2] == "--" else []
        named.update((f, "README") for f in found if f not in train and f not in BARE_FLAGS_OF_OTHER_TOOLS)
    modules = [p for folder in ("sciqag_dataset", "builders", "evaluation") for p in (ROOT / folder).rglob("*.py")]
    for path in modules:  # the package's docstrings, but for `sciqag train`'s own (TRL's flags)
        for span in re.findall(r"``(--[^`]+|sciqag [^`]+)``", path.read_text(encoding="utf-8")):
            line = span if span.startswith("sciqag ") or path.name == "train.py" else f"sciqag {span}"
            named.update((f, str(path.relative_to(ROOT))) for f in sciqag_flags(line))
    assert "--plugins" in named and "--min-racar" in named
    unknown = {f: where for f, where in named.items() if f not in known}
    assert not unknown, unknown


def test_readme_format_table_has_short_rows_each_linking_its_formats_section():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("\n| format | reader | quality |")[1].split("\n\n")[0]
    rows = [ln for ln in table.splitlines()[2:] if ln.startswith("|")]
    formats = (ROOT / "docs" / "FORMATS.md").read_text(encoding="utf-8")
    slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^## (.+)$", formats, re.M)}
    assert len(rows) == 8  # a row per format; PDF one per backend
    for row in rows:
        assert len(row.split()) <= 60, row[:60]  # a row a reader can scan; the detail is in docs/FORMATS.md
        [section] = re.findall(r"\(docs/FORMATS\.md#([a-z0-9-]+)\)", row)
        assert section in slugs, section


def test_ingest_takes_papers_before_and_after_options(tmp_path):
    for argv in (
        ["ingest", "w", "a.pdf", "--on-duplicate", "skip", "b.pdf"],
        ["ingest", "w", "--on-duplicate", "skip", "a.pdf", "b.pdf"],
        ["ingest", "--on-duplicate", "skip", "w", "a.pdf", "b.pdf"],
    ):
        args = parse(argv)
        assert (args.work, args.inputs) == ("w", ["a.pdf", "b.pdf"]), argv
    with pytest.raises(SystemExit):
        parse(["ingest", "w", "a.pdf", "--on-duplicat", "skip"])  # a misspelt flag is still refused
    (tmp_path / "paper.txt").write_text(PAPER)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"work_dir: {tmp_path / 'work'}\n")
    proc = sciqag("ingest", "--config", cfg, tmp_path / "paper.txt")  # the paper would be taken for WORK
    assert proc.returncode == 2 and "is a file" in proc.stderr and not (tmp_path / "work").exists(), proc.stderr


def test_a_config_without_work_dir_is_not_taken_for_one(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("keywords:\n  n: 7\n")
    with pytest.raises(UserError, match="sets no work_dir"):
        resolve_config(build_parser().parse_args(["keywords", "--config", str(cfg)]))
