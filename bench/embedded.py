"""Benchmark the embedded default: its engines side by side, then README's `sciqag run` on the samples.

    python bench/embedded.py                                  # every engine, then the whole run
    python bench/embedded.py --engines llama.cpp,transformers-float32 --no-run
    python bench/embedded.py --prompt paper                   # the paper's prompt instead of the profile
    python bench/embedded.py --engines llama.cpp,llama.cpp-extra-buffers,llama.cpp,llama.cpp-extra-buffers --no-run

Part 1, one run, same machine: the shipped sample papers are ingested and keyworded once; then each
engine (llama.cpp on the Q4_1 GGUF, with plain weight buffers as the embedded server runs it, and with
ggml's extra buffers as llama.cpp's default; `transformers serve` in float32 and in bfloat16) is started with all
cores, warmed up with one request, and asked for every sample paper's pairs the way the seed stage asks
the embedded model (the profile: 6 pairs from two ~300-word chunks, written one line at a time,
temperature 0.6 / top_p 0.9, no cache). Printed per engine: seconds per paper, tokens/s (completion
tokens over request time, prefill included), requests per paper, parsed pairs per paper, papers with
>= 5 parsed pairs. The CPU's bf16 flags are printed with them: on CPUs without avx512_bf16/amx_bf16,
bfloat16 is slow, and on this 135M model it also degrades the text.

Part 2: `sciqag run` (README command 1's job, the embedded default, no config) in a fresh work dir and a
child process, after the model is prepared once (reported apart): wall time per stage from its summary,
the engine it chose, and seed papers with >= 5 pairs. Targets on an idle 2-core machine: the whole run
<= 180 s, >= 4 of the sample papers with >= 5 parsed pairs in the seed config.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would interleave with the table

from sciqag_dataset.builders.qagen import request_qa  # noqa: E402
from sciqag_dataset.config.config_file import Config  # noqa: E402
from sciqag_dataset.core.records import with_keywords  # noqa: E402
from sciqag_dataset.llm import (  # noqa: E402
    LLMClient,  # noqa: E402
    embedded,
    models,
    transformers_engine,
)
from sciqag_dataset.orchestration import pipeline  # noqa: E402

SETUPS = {
    "llama.cpp": ("llama.cpp", "auto"),
    "transformers-float32": ("transformers", "float32"),
    "transformers-bfloat16": ("transformers", "bfloat16"),
    # ggml's extra weight buffers on (llama.cpp's default; the embedded server turns them off, since AMX's
    # segfault on the first decode): on a CPU without AMX, the two llama.cpp rows should match
    "llama.cpp-extra-buffers": ("llama.cpp", "auto"),
}


def prepare_papers(work: Path) -> list[dict]:
    cfg = replace(Config(), work_dir=str(work))
    pipeline.ingest(cfg)
    pipeline.keywords(cfg)
    return [p for p in with_keywords(work) if not p.get("existing_qa")]  # released pairs need no model


async def ask_all(client: LLMClient, papers: list[dict], seed_cfg) -> tuple[list[dict], int]:
    await client.chat([{"role": "user", "content": "Say hello."}], max_tokens=8)  # warm-up
    out = []
    for paper in papers:  # one at a time, as the embedded server answers
        started = time.monotonic()
        rec = await request_qa(paper, client, seed_cfg, origin="teacher")
        out.append(
            {"seconds": time.monotonic() - started, "pairs": len(rec["qa"]), "tokens": rec["completion_tokens"]}
        )
    await client.aclose()
    return out, client.usage.requests - 1


def bench_engine(name: str, papers: list[dict], seed_cfg, log_dir: Path) -> dict:
    engine, dtype = SETUPS[name]
    choice = embedded.choose_here(engine, dtype)
    server = embedded.server_for(choice, log_path=log_dir / f"{name}.log")
    if name == "llama.cpp-extra-buffers":
        server.plain_buffers = False
    server.start()
    try:
        client = LLMClient(
            server.base_url, server.model, params={"temperature": 0.6, "top_p": 0.9, "max_tokens": 512}, concurrency=1
        )  # as the stages ask the embedded server
        rows, requests = asyncio.run(ask_all(client, papers, seed_cfg))
    finally:
        server.stop()
    seconds = sum(r["seconds"] for r in rows)
    return {
        "engine": choice.describe() + (" extra bufs" if name.endswith("extra-buffers") else ""),
        "s/paper": seconds / len(rows),
        "tok/s": sum(r["tokens"] for r in rows) / seconds,
        "req/paper": requests / len(rows),
        "pairs/paper": sum(r["pairs"] for r in rows) / len(rows),
        ">=5 pairs": f"{sum(r['pairs'] >= 5 for r in rows)}/{len(rows)}",
    }


def bench_run(tmp: Path) -> dict:
    started = time.monotonic()
    if embedded.choose_here().engine.name == "transformers":
        models.default_model_dir()  # converted from the GGUF once and cached; llama.cpp reads the GGUF as is
    prepare = time.monotonic() - started
    work = tmp / "run"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "run", "--work", str(work)], capture_output=True, text=True
    )
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"sciqag run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    times = re.search(r"^  time +(.*)$", proc.stdout, re.M)
    seed = [json.loads(line) for line in (work / "seed.jsonl").read_text().splitlines()]
    latest = {r["id"]: r for r in seed}
    return {
        "model preparation (once)": f"{prepare:.0f}s",
        "sciqag run wall": f"{wall:.0f}s",
        "stages": times.group(1) if times else "?",
        "engine": (re.search(r"^  model +(.*)$", proc.stdout, re.M) or [None, "none started"])[1],
        "seed papers >= 5 pairs": f"{sum(len(r.get('qa') or []) >= 5 for r in latest.values())}/{len(latest)}",
        "exit": proc.returncode,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", "--backends", default=",".join(SETUPS), help="comma-separated: " + ", ".join(SETUPS))
    ap.add_argument("--prompt", choices=("profile", "paper"), default="profile")
    ap.add_argument("--no-run", action="store_true", help="skip part 2 (the whole `sciqag run`)")
    args = ap.parse_args()
    flags = embedded.cpu_flags()
    bf16 = ", ".join(sorted(flags & transformers_engine.BF16_FLAGS)) or "none (AVX2-class: bfloat16 is emulated, slow)"
    print(f"CPU: {len(os.sched_getaffinity(0))} cores; bf16 flags: {bf16}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        papers = prepare_papers(tmp / "papers")
        cfg = Config()
        seed_cfg = pipeline.profiled(cfg, cfg.teacher, "seed") if args.prompt == "profile" else cfg.seed
        print(
            f"{len(papers)} sample papers to ask; prompt: {args.prompt} "
            f"({seed_cfg.prompt_style}, chunk_words={seed_cfg.chunk_words}, max_chunks={seed_cfg.max_chunks})\n"
        )
        print(f"{'engine':<34}{'s/paper':>9}{'tok/s':>8}{'req/paper':>11}{'pairs/paper':>13}{'>=5 pairs':>11}")
        for name in [b.strip() for b in args.engines.split(",") if b.strip()]:
            if SETUPS[name][0] not in embedded.ENGINES.installed():
                print(f"{name:<34}  not installed (pip install 'sciqag-hf[embedded]')")
                continue
            r = bench_engine(name, papers, seed_cfg, tmp)
            print(
                f"{r['engine']:<34}{r['s/paper']:>9.1f}{r['tok/s']:>8.1f}{r['req/paper']:>11.1f}"
                f"{r['pairs/paper']:>13.1f}{r['>=5 pairs']:>11}",
                flush=True,
            )
        if not args.no_run:
            print("\nsciqag run (embedded default, no config):")
            for k, v in bench_run(tmp).items():
                print(f"  {k:<26}{v}")


if __name__ == "__main__":
    main()
