"""The bench tools that compare two versions of the project."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """import subprocess, sys
from sciqag_dataset.builders.ingest import pdf_title
print(pdf_title.__file__)
child = "from sciqag_dataset.builders.ingest import pdf_title; print(pdf_title.__file__)"
subprocess.run([sys.executable, "-c", child], check=True)
"""


@pytest.mark.skipif(
    not any(name.startswith("__editable__") and "sciqag" in name for name in sys.modules),
    reason="the project is not an editable install",
)
def test_a_script_at_another_checkout_imports_it_in_child_processes_too(tmp_path):
    other = tmp_path / "other"
    for folder in ("sciqag_dataset", "builders"):
        shutil.copytree(ROOT / folder, other / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (other / "where.py").write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "at_checkout.py"), str(other), "where.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [str(other / "builders" / "ingest" / "pdf_title.py")] * 2
