"""A wheel built from the repo works outside it: templates, sample papers, configs are package data."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
from importlib import resources
import sciqag_dataset, sciqag_dataset.cli as cli
from sciqag_dataset.config import Config
assert sciqag_dataset.__file__.startswith("{site}"), sciqag_dataset.__file__  # the wheel, not the repo
files = lambda pkg, sub="": [p.name for p in resources.files(pkg).joinpath(sub).iterdir()]
assert {{"dataset_card.md", "model_card.md"}} <= set(files("sciqag_dataset.cards"))
assert {{"zero2.json", "zero3.json", "zero3_offload.json"}} <= set(files("sciqag_dataset.trainers", "deepspeed"))
assert len([n for n in files("sciqag_dataset.examples", "papers") if n != "README.md"]) == 5
with resources.as_file(resources.files("sciqag_dataset.examples").joinpath("sciqag.yaml")) as p:
    assert Config.load(p) == Config()
cli.build_parser().parse_args(["run", "--help"])
"""


def test_wheel_carries_its_data_and_works_outside_the_repo(tmp_path):
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(ROOT),
            "-w",
            str(tmp_path / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("sciqag_hf-*.whl"))
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    run = subprocess.run(
        [sys.executable, "-c", CHECK.format(site=tmp_path / "site")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    # `--help` exits through SystemExit(0) after printing the usage
    assert run.returncode == 0 and "usage: sciqag run" in run.stdout, run.stderr[-2000:]


def test_ci_installs_and_tests_exactly_as_readme_says():
    """CI runs README's two commands byte for byte, and nothing of its own (an extra step of CI, such as `pip
    install --upgrade pip`, could hide an install step that README's command lacks)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Run the tests", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    printed = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == block
    code = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if re.search(r"\bpip\b|\bpython3? -m venv\b", line)]
