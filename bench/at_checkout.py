"""Run a bench script on another checkout of the project (a git worktree at another commit), to score two
versions side by side with one virtual environment:

    git worktree add /tmp/before <commit>
    ln -s "$PWD/bench/heldout5/papers" /tmp/before/bench/heldout5/papers   # the papers are not in git
    python bench/at_checkout.py /tmp/before bench/ingest_quality.py bench/heldout5/papers \
        --manifest bench/heldout5/manifest.json        # paths from the other checkout's root

An editable install maps ``sciqag_dataset.*`` to the checkout it was installed from, ahead of ``PYTHONPATH``, and
the PDF reader's PyMuPDF worker is a process of its own. So the mapping is redirected in every Python process the
run starts: by a ``sitecustomize`` module on ``PYTHONPATH`` that rewrites the editable finder's ``MAPPING``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SITE = """import os, sys
root, home = os.environ["SCIQAG_CHECKOUT"], os.environ["SCIQAG_HOME"]
for name, mod in list(sys.modules.items()):
    if name.startswith("__editable__") and "sciqag" in name and hasattr(mod, "MAPPING"):
        for key, path in mod.MAPPING.items():
            if path.startswith(home):
                mod.MAPPING[key] = root + path[len(home):]
"""


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, args = Path(sys.argv[1]).resolve(), sys.argv[2:]
    if not (root / "builders").is_dir():
        print(f"{root} is not a checkout of this project (no builders/)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as site:
        Path(site, "sitecustomize.py").write_text(SITE)
        env = dict(os.environ, SCIQAG_CHECKOUT=str(root), SCIQAG_HOME=str(HERE))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
        return subprocess.call([sys.executable, *args], env=env, cwd=root)


if __name__ == "__main__":
    sys.exit(main())
