"""Lint and format, as CI runs them: `ruff check .` and `ruff format --check .` from the repository root, with
the settings in pyproject.toml (line length 119; rules E F W I UP B)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ruff() -> list[str]:
    """The ruff next to this interpreter (a venv that is not activated still finds its own), else on PATH, else
    `python -m ruff`; skipped, saying so, where none is installed."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.exists():
        return [str(beside)]
    if shutil.which("ruff"):
        return [shutil.which("ruff")]
    if subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True).returncode == 0:
        return [sys.executable, "-m", "ruff"]
    pytest.skip("ruff is not installed (it comes with the dev extra: pip install -e '.[dev]')")


def test_ruff_check_finds_nothing():
    proc = subprocess.run([*ruff(), "check", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_ruff_format_changes_nothing():
    proc = subprocess.run([*ruff(), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
