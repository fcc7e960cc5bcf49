"""A wheel built from the repo works outside it: templates, sample papers, configs are package data."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
from importlib import resources
import sciqag_dataset, sciqag_dataset.cli as cli
from sciqag_dataset.config.config_file import Config
assert sciqag_dataset.__file__.startswith("{site}"), sciqag_dataset.__file__  # the wheel, not the repo
files = lambda pkg, sub="": [p.name for p in resources.files(pkg).joinpath(sub).iterdir()]
assert {{"dataset_card.md", "model_card.md"}} <= set(files("sciqag_dataset.cards"))
assert {{"zero2.json", "zero3.json", "zero3_offload.json"}} <= set(files("sciqag_dataset.trainers", "deepspeed"))
assert len([n for n in files("sciqag_dataset.examples", "papers") if n != "README.md"]) == 5
with resources.as_file(resources.files("sciqag_dataset.examples").joinpath("sciqag.yaml")) as p:
    assert Config.load(p) == Config()
cli.build_parser().parse_args(["run", "--help"])
"""


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks, copied to ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def test_wheel_carries_its_data_and_works_outside_the_repo(tmp_path):
    started = time.time()
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(_tracked_copy(tmp_path / "src")),  # setuptools builds in the source tree: a copy, not the repo
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
    assert not (ROOT / "build").exists() or (ROOT / "build").stat().st_mtime < started  # nothing built in the repo


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


def test_the_previous_releases_import_paths_still_work_with_a_warning():
    """Plugins written against the flat layout keep importing, told where each module went."""
    code = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    from sciqag_dataset.stage import Stage
    from sciqag_dataset.metrics import register
    from sciqag_dataset.config import Config
    from sciqag_dataset import records
import sciqag_dataset.core.stage, sciqag_dataset.core.metrics, sciqag_dataset.core.records
from sciqag_dataset.config.config_file import Config as Now
assert Stage is sciqag_dataset.core.stage.Stage and register is sciqag_dataset.core.metrics.register
assert Config is Now and records is sciqag_dataset.core.records
said = [str(w.message) for w in seen if w.category is DeprecationWarning]
assert any("sciqag_dataset.stage is now sciqag_dataset.core.stage" in s for s in said), said
assert any("sciqag_dataset.config.config_file" in s for s in said), said
assert any("sciqag_dataset.records is now sciqag_dataset.core.records" in s for s in said), said
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_config_naming_a_built_in_metrics_option_loads_in_a_fresh_process(tmp_path):
    """The built-in metrics register their options as they are imported: `Config.load` imports them first."""
    (tmp_path / "c.yaml").write_text("evaluate:\n  coverage_definition: sentence\nfilter:\n  min_racar: 2.5\n")
    code = f"""
from sciqag_dataset.config.config_file import Config
cfg = Config.load({str(tmp_path / "c.yaml")!r})
assert cfg.evaluate.coverage_definition == "sentence" and cfg.filter.min_racar == 2.5
cfg.filter.thresholds = {{"min_racar": 2.0}}
assert cfg.filter.values()["min_racar"] == 2.5  # the rule's own key wins over `thresholds:`
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_config_with_a_plugins_options_travels_to_a_fresh_process(tmp_path):
    """Ranks of a scaled run rebuild the config from ``to_dict`` in processes of their own: the plugins it names
    are imported first, so their options are keys it may hold."""
    code = """
import json, sys
from sciqag_dataset.config.config_file import Config
cfg = Config.from_dict(json.loads(sys.stdin.read()))
assert cfg.filter.max_question_words == 25 and cfg.evaluate.question_word_min_length == 2
"""
    made = """
import json
from sciqag_dataset.config.config_file import Config
cfg = Config(plugins=["sciqag_dataset.examples.custom_metric"]).validate()
cfg.filter.max_question_words, cfg.evaluate.question_word_min_length = 25, 2
print(json.dumps(cfg.to_dict()))
"""
    data = subprocess.run([sys.executable, "-c", made], capture_output=True, text=True, timeout=120)
    assert data.returncode == 0, data.stderr[-3000:]
    proc = subprocess.run([sys.executable, "-c", code], input=data.stdout, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_checkouts_own_folder_finds_the_subpackages_beside_it():
    """`python -m sciqag_dataset...` in a checkout's root imports the package from the checkout, also where it is
    installed but not editable: its subpackages (``builders/``, ``trainers/`` beside it) must be found there."""
    code = "import sciqag_dataset.builders.generate, sciqag_dataset.trainers.config as c; print(c.__file__)"
    # -S: no .pth file runs, so no editable-install finder: the checkout's folder alone, the packages beside
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(ROOT / "trainers" / "config.py")
