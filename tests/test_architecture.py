"""The shape of the code, checked: the import contract (import-linter), no project import hidden inside a
function, no module over 400 lines, and every core module under the contract."""

from __future__ import annotations

import ast
import configparser
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_jsonl

from sciqag_dataset.examples.custom_stage import question_lengths
from sciqag_dataset.runner import run_stage

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("sciqag_dataset", "builders", "evaluation", "trainers", "cards", "examples")


def package_dirs() -> dict[str, Path]:
    """sciqag_dataset.* package -> its folder, from setup.cfg's package_dir (the installed layout)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    pairs = [line.split("=") for line in cfg["options"]["package_dir"].strip().splitlines()]
    return {name.strip(): ROOT / folder.strip() for name, folder in pairs}


def sources() -> list[Path]:
    return [
        p for folder in ("sciqag_dataset", "builders", "evaluation", "trainers") for p in (ROOT / folder).rglob("*.py")
    ]


def test_the_import_contract_holds(tmp_path):
    """import-linter walks a package's folder, and ours is spread over several (package_dir): lay it out as
    the wheel installs it, then lint."""
    # next to this interpreter, so a venv that is not activated still finds its own copy
    lint = Path(sys.executable).parent / "lint-imports"
    if not lint.exists():
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
    site = tmp_path / "site"
    for package, folder in sorted(package_dirs().items(), key=lambda kv: kv[0].count(".")):
        target = site / package.replace(".", "/")
        shutil.copytree(
            folder,
            target,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.md", "*.yaml", "papers"),
        )
    proc = subprocess.run(
        [str(lint), "--config", str(ROOT / ".importlinter")],
        cwd=site,
        env={"PYTHONPATH": str(site), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken" in proc.stdout


def test_every_core_module_is_under_the_contract():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / ".importlinter")
    listed = set(cfg["importlinter:contract:core"]["source_modules"].split())
    core = {f"sciqag_dataset.{p.stem}" for p in (ROOT / "sciqag_dataset").glob("*.py") if p.stem != "__init__"}
    core |= {f"sciqag_dataset.{p.name}" for p in (ROOT / "sciqag_dataset").iterdir() if (p / "__init__.py").exists()}
    layered = set(cfg["importlinter:contract:layers"]["layers"].replace("|", " ").split())  # above the core
    assert core - layered == listed


def test_no_project_import_inside_a_function():
    """Imports inside functions hide cycles and layering questions; heavy third-party ones stay allowed."""
    hidden = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    name = "." if inner.level else inner.module or ""
                elif isinstance(inner, ast.Import):
                    name = inner.names[0].name
                else:
                    continue
                if name == "." or name.split(".")[0] in PROJECT:
                    hidden.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert not hidden, hidden


def test_no_module_over_400_lines():
    big = {str(p.relative_to(ROOT)): n for p in sources() if (n := p.read_text().count("\n")) > 400}
    assert not big, big


def test_the_documented_example_stage_runs_and_matches_the_doc(tmp_path):
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    code = (ROOT / "examples" / "custom_stage.py").read_text()
    body = code[code.index("from sciqag_dataset import records") :].strip()
    assert body in doc  # the page shows exactly the tested code
    write_jsonl(tmp_path / "papers.jsonl", [{"id": "p1", "title": "T", "text": "Body."}])
    write_jsonl(
        tmp_path / "seed.jsonl",
        [
            {
                "id": "p1",
                "status": "ok",
                "qa": [
                    {"question": "Why?", "answer": "Because."},
                    {"question": " ".join(["word"] * 50), "answer": "Yes."},
                ],
            }
        ],
    )
    summary = run_stage(question_lengths(max_words=40), tmp_path)
    rec = json.loads((tmp_path / "question_lengths.jsonl").read_text().splitlines()[-1])
    assert summary.counts["ok"] == 1 and rec["words"] == [1, 50] and rec["too_long"] == [1]
    assert run_stage(question_lengths(max_words=40), tmp_path).counts["skipped"] == 1
