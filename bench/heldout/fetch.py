"""Rebuild a held-out set's papers/ folder from its sources.json (the papers' files are not committed: their text is
not ours).

    python bench/heldout/fetch.py                      # git clone each repository (blobless) and take each file
    python bench/heldout/fetch.py --mirror DIR         # read from local bare mirrors: DIR/<owner>+<name>/repo
    python bench/heldout/fetch.py --out OTHER_DIR      # write somewhere else (default: bench/heldout/papers)
    python bench/heldout/fetch.py --set bench/heldout2 # another set: its sources.json, into its papers/
    python bench/heldout/fetch.py --sources bench/components_sources.json --out bench/components_papers

``--set DIR`` (default: this script's folder, set 1) names the set: the sources are read from DIR/sources.json
and the files written to DIR/papers, unless ``--sources`` or ``--out`` say otherwise.

Every file is read with ``git show COMMIT:PATH`` at the commit sources.json names and its sha256 is checked;
a mismatch or a missing file is reported and the script exits non-zero.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _git_dir(repo: str, mirror: Path | None, tmp: Path) -> Path:
    if mirror is not None:
        for cand in (mirror / repo.replace("/", "+") / "repo", mirror / repo.replace("/", "+"), mirror / repo):
            if (cand / ".git").is_dir():  # a mirror checked out with a work tree
                return cand / ".git"
            if cand.exists():
                return cand
        raise FileNotFoundError(f"no mirror of {repo} under {mirror}")
    dest = tmp / repo.replace("/", "+")
    if not dest.exists():
        url = f"https://github.com/{repo}.git"
        subprocess.run(["git", "clone", "--bare", "--filter=blob:none", "--quiet", url, str(dest)], check=True)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path, help="folder of bare mirrors named owner+name (each with a repo/ git dir)")
    ap.add_argument("--set", type=Path, default=HERE, help="the set's folder (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="default: SET/papers")
    ap.add_argument("--sources", type=Path, help="default: SET/sources.json")
    args = ap.parse_args()
    args.out = args.out or args.set / "papers"
    args.sources = args.sources or args.set / "sources.json"
    sources = json.loads(args.sources.read_text(encoding="utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, src in sorted(sources.items()):
            target = args.out / name
            if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == src["sha256"]:
                continue
            try:
                git_dir = _git_dir(src["repository"], args.mirror, Path(tmp))
                data = subprocess.run(
                    ["git", "--git-dir", str(git_dir), "show", f"{src['commit']}:{src['path']}"],
                    capture_output=True,
                    check=True,
                ).stdout
            except (subprocess.CalledProcessError, FileNotFoundError) as exc:
                bad.append(f"{name}: not fetched ({exc})")
                continue
            digest = hashlib.sha256(data).hexdigest()
            if digest != src["sha256"]:
                bad.append(f"{name}: sha256 {digest} != {src['sha256']}")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)  # a multi-file LaTeX source keeps its folders
            target.write_bytes(data)
    print(f"{args.out}: {len(sources) - len(bad)} of {len(sources)} files present and checked")
    for line in bad:
        print("  " + line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
