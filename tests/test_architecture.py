"""The shape of the code, checked: the import contract (import-linter), every module in a layer folder, no import
cycle, no project import hidden inside a function; modules over 400 lines are named in a warning."""

from __future__ import annotations

import ast
import configparser
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from helpers import write_jsonl

from sciqag_dataset.core import wiring
from sciqag_dataset.core.runner import run_stage
from sciqag_dataset.examples.custom_stage import question_lengths

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
    assert "Contracts: 3 kept, 0 broken" in proc.stdout


def test_every_module_sits_in_a_layer_folder():
    """The package's root holds no module: each lives in a folder the import contract names as a layer."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / ".importlinter")
    layered = set(cfg["importlinter:contract:layers"]["layers"].replace("|", " ").split())
    assert sorted(p.name for p in (ROOT / "sciqag_dataset").glob("*.py")) == ["__init__.py"]
    folders = {f"sciqag_dataset.{p.name}" for p in (ROOT / "sciqag_dataset").iterdir() if (p / "__init__.py").exists()}
    installed = {name for name in package_dirs() if name.count(".") == 1} - {"sciqag_dataset.examples"}
    assert folders | installed == layered


def _module_names() -> dict[str, Path]:
    """Every project module by its installed name (a package by its ``__init__``)."""
    out = {}
    for package, folder in package_dirs().items():
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports, those under ``if TYPE_CHECKING`` included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:  # `from pkg import module` imports the module, not the package
                found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
    return {m for m in found if m in modules and m != name}


def test_no_import_cycle_not_even_for_type_checking():
    modules = _module_names()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for name in graph:
        if name not in index:
            visit(name)
    assert not cycles, cycles


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


def test_long_modules_are_named():
    """A module over 400 lines is worth a look (does it hold two concepts?), not a failure: files split where
    their concepts do."""
    big = {str(p.relative_to(ROOT)): n for p in sources() if (n := p.read_text().count("\n")) > 400}
    if big:
        warnings.warn(f"modules over 400 lines: {big}", UserWarning, stacklevel=1)


def test_the_documented_example_stage_runs_and_matches_the_doc(tmp_path):
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    code = (ROOT / "examples" / "custom_stage.py").read_text()
    body = code[code.index("from sciqag_dataset.core import records") :].strip()
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


def test_the_built_in_run_order_and_a_taken_stage_name_or_file_is_refused():
    assert wiring.BUILT_IN_STAGES == ("ingest", "keywords", "seed", "generate", "evaluate", "publish")
    with pytest.raises(ValueError, match="already declared"):
        wiring.register(wiring.Wire("seed", wiring.SEED, (wiring.PAPERS,), None))
    with pytest.raises(ValueError, match="written by stage 'generate'"):
        wiring.register(wiring.Wire("mine", wiring.GENERATED, (wiring.PAPERS,), None))
    with pytest.raises(ValueError, match="identifier"):
        wiring.register(wiring.Wire("my stage", "mine.jsonl", (wiring.PAPERS,), None))
    assert "mine" not in wiring.WIRING and "my stage" not in wiring.WIRING


# `sciqag run` twice in one process with the example plugin, then the default stages with it loaded
RUN_WITH_THE_PLUGIN = """import sys
from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
statuses = [main(["run", sys.argv[1]]) for _ in range(2)]
print("default stages:", Config(plugins=["sciqag_dataset.examples.custom_pipeline_stage"]).validate().stages)
sys.exit(max(statuses))
"""


def test_the_documented_pipeline_stage_runs_in_sciqag_run_after_what_it_reads_and_resumes(tmp_path):
    """examples/custom_pipeline_stage.py through `sciqag run` on the embedded default: a paper with released QA
    pairs, so that seed asks no model. Listed first, the plugin's stage runs after seed, and a rerun skips it."""
    code = (ROOT / "examples" / "custom_pipeline_stage.py").read_text()
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert code[code.index("from sciqag_dataset.core.wiring import") :].strip() in doc  # the page shows the code
    papers = tmp_path / "papers"
    papers.mkdir()
    shutil.copy(ROOT / "examples" / "papers" / "released_format_sample.json", papers)
    config = tmp_path / "run.yaml"
    config.write_text(
        json.dumps(
            {
                "work_dir": str(tmp_path / "work"),
                "inputs": [str(papers)],
                "plugins": ["sciqag_dataset.examples.custom_pipeline_stage"],
                "stages": ["question_lengths", "ingest", "seed"],
            }
        )
    )
    proc = subprocess.run(
        [sys.executable, "-c", RUN_WITH_THE_PLUGIN, str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Starting the embedded" not in proc.stderr  # the released pairs: no model was asked
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("seed", "question_lengths"))]
    assert [line.split()[0].rstrip(":") for line in lines] == ["seed", "question_lengths"] * 2, proc.stdout
    assert "1 ok" in lines[1] and "1 skipped" in lines[3], lines
    rec = json.loads((tmp_path / "work" / "question_lengths.jsonl").read_text().splitlines()[-1])
    assert rec["status"] == "ok" and len(rec["words"]) == 10
    stages = proc.stdout.split("default stages:")[1].strip()
    assert stages == str(["ingest", "keywords", "seed", "generate", "evaluate", "question_lengths", "publish"])
