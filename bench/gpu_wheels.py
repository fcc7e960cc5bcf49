"""Download the wheels `bench/gpu.sh` installs on a GPU machine that reaches no package index.

    python bench/gpu_wheels.py DIR [--have FILE] [--python-version 3.12]
    SCIQAG_WHEELS=DIR bash bench/gpu.sh RESULTS      # then, on the GPU machine, with DIR copied there

What the bench imports (this project with its train and serve extras: TRL, PEFT, datasets, DeepSpeed, openai,
transformers and its server, matplotlib), and what those need, at the versions installed here (the versions
this project is tested with), as wheels for the target's Python on x86-64 Linux. Never torch, its CUDA
libraries, numpy, pyarrow or pandas: the machine's own builds are used. ``--have`` names what the target
already has (``pip list --format=freeze`` there, or one name a line): those are left out, unless a requirement
refuses the version given there, and except the training stack itself (transformers, TRL, PEFT, accelerate,
datasets, huggingface_hub, DeepSpeed, openai) wherever its version differs from this one's or is not given.
With the wheels go SmolLM2's config and tokenizer (``DIR/smollm2``, not its weights). DeepSpeed is published as
source only: its wheel is built here, without compiled ops (they are built at run time where needed; the
bench's settings need none).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from sciqag_dataset.llm.models import default_model_dir

#: What the bench imports; ``[serving]``: `transformers serve`, the server used when vLLM is not installed.
ROOTS = {
    "sciqag-hf": ("train", "serve"),
    "trl": (),
    "peft": (),
    "accelerate": (),
    "datasets": (),
    "deepspeed": (),
    "openai": (),
    "transformers": ("serving",),
}
#: Kept at this project's versions even where the target has its own.
STACK = {"transformers", "trl", "peft", "accelerate", "datasets", "huggingface-hub", "deepspeed", "openai"}
#: Built for the machine (CUDA), or what its compiled packages were built against: never carried.
MACHINE = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|cuda-.*|numpy|pyarrow|pandas)$")
PLATFORMS = ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_27_x86_64"]
PLATFORMS += ["manylinux_2_24_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux1_x86_64"]


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(roots: dict[str, tuple[str, ...]]) -> tuple[dict[str, str], dict[str, list[SpecifierSet]]]:
    """Every distribution ``roots`` need (their extras included): name -> the version installed here, and
    name -> what the packages that need it ask of its version."""
    found: dict[str, str] = {}
    asked: dict[str, list[SpecifierSet]] = {}
    stack = [(name, extras) for name, extras in roots.items()]
    while stack:
        name, extras = stack.pop()
        name = norm(name)
        if name in found or MACHINE.match(name):
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            raise SystemExit(f"{name} is not installed here: install '.[train,serve]' first") from None
        found[name] = dist.version
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras or ("",)):
                asked.setdefault(norm(req.name), []).append(req.specifier)
                stack.append((req.name, tuple(req.extras)))
    found.pop("sciqag-hf", None)  # bench/gpu.sh installs the checkout itself
    return found, asked


def read_have(path: Path | None) -> dict[str, str | None]:
    """Names (with versions where given) from ``pip list --format=freeze`` output or a list of names."""
    if path is None:
        return {}
    have: dict[str, str | None] = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            have[norm(name)] = version.strip() or None
    return have


def wanted(needed: dict[str, str], asked: dict[str, list[SpecifierSet]], have: dict[str, str | None]) -> dict:
    """What to carry: what the target lacks; what it has at a version some requirement refuses; the training
    stack wherever its version differs from this one's or is not known. A version not given is taken to fit."""

    def fits(name: str, version: str | None) -> bool:
        if name in STACK:
            return version == needed[name]
        return version is None or all(spec.contains(version, prereleases=True) for spec in asked.get(name, []))

    return {name: version for name, version in needed.items() if name not in have or not fits(name, have[name])}


def download(name: str, version: str, out: Path, python: str) -> None:
    if name == "deepspeed":  # source only on PyPI: a wheel built here, its ops left to run time
        cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out)]
        subprocess.run([*cmd, f"{name}=={version}"], check=True, env={**os.environ, "DS_BUILD_OPS": "0"})
        return
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(out)]
    cmd += ["--python-version", python, "--implementation", "cp"]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    subprocess.run([*cmd, f"{name}=={version}"], check=True)


def save_smollm2_shape(out: Path) -> None:
    """SmolLM2-135M-Instruct's config and tokenizer, without its weights: `bench/gpu.py` trains random weights
    in its shape where the weights are out of reach (the cost per token is the same)."""
    source = default_model_dir()
    out.mkdir(parents=True, exist_ok=True)
    for f in source.iterdir():
        if f.is_file() and f.suffix in (".json", ".jinja", ".txt") and not f.name.endswith(".index.json"):
            shutil.copyfile(f, out / f.name)
    print(f"SmolLM2's config and tokenizer in {out}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path, help="folder for the wheels")
    p.add_argument("--have", type=Path, help="what the target has: `pip list --format=freeze` there, or names")
    p.add_argument("--python-version", default="3.12", help="the target's Python (default 3.12)")
    p.add_argument(
        "--smollm2",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also save SmolLM2's config and tokenizer in OUT/smollm2 (a few MB; its weights stay here)",
    )
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    needed, asked = closure(ROOTS)
    todo = wanted(needed, asked, read_have(args.have))
    for name, version in sorted(todo.items()):
        print(f"{name}=={version}", flush=True)
        download(name, version, args.out, args.python_version)
    if args.smollm2:
        save_smollm2_shape(args.out / "smollm2")
    size = sum(f.stat().st_size for f in args.out.glob("*.whl"))
    print(f"{len(todo)} distributions, {size / 2**20:.1f} MiB of wheels in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
