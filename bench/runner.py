"""The runner's own cost at corpus scale: seconds and peak RSS of a synthetic stage over QA-sized records.

    python bench/runner.py                       # 10k and 100k records
    python bench/runner.py --sizes 10000,100000,1000000

For each size, in one fresh work dir, three runs of the same stage, each in a process of its own (so each
peak RSS is that run's alone): a **first run** (every record processed), a **resume** (the same command again:
every record skipped) and a **sharded resume** (shard 0/4 after the unsharded run: its records are found
finished in the unsharded output). The stage's input is generated, not read, and its function writes a
record of ~2 KB (ten QA pairs), so what is measured is the runner: resume bookkeeping, writing, compaction.
Printed per run: seconds, microseconds per record, peak RSS in MB; after the resume, the time to parse the
output's lines once (what any resume must read), measured in the same run, and the runner's overhead
beyond it per record. Disk: about 2.2 KB per record (2.2 GB at
one million).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.core.stage import Stage  # noqa: E402

ANSWER = "The film's band gap widened from 1.52 to 1.61 eV as the bromide share rose to 30 %, "


def inputs(n: int):
    def gen(work: Path):
        for i in range(n):
            yield {"id": f"paper-{i:07d}", "keywords": ["band gap", "bromide"]}

    return gen


def qa(rec: dict) -> dict:
    pairs = [
        {
            "question": f"Q{k} about {rec['id']}: how did the band gap change?",
            "answer": ANSWER * 2,
            "origin": "generator",
        }
        for k in range(10)
    ]
    return {"id": rec["id"], "status": "ok", "qa": pairs}


def one_run(work: Path, n: int, shard: str | None) -> dict:
    started = time.perf_counter()
    summary = run_stage(
        Stage(name="bench", inputs=inputs(n), process=qa, params={"v": 1}), work, shard=shard, progress=False
    )
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "counts": dict(summary.counts),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def floor(work: Path) -> float:
    """The least any resume must do: parse every line of the output once (seconds)."""
    started = time.perf_counter()
    with (work / "bench.jsonl").open("rb") as f:
        for line in f:
            json.loads(line)
    return time.perf_counter() - started


def child(work: Path, n: int, shard: str | None) -> dict:
    cmd = [sys.executable, __file__, "--child", str(work), "--n", str(n)] + (["--shard", shard] if shard else [])
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--child")
    ap.add_argument("--n", type=int)
    ap.add_argument("--shard")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one_run(Path(args.child), args.n, args.shard)))
        return
    print(f"{'records':>9} {'run':<15} {'seconds':>8} {'µs/record':>10} {'peak RSS MB':>12}  counts")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            for label, shard in (("first run", None), ("resume", None), ("sharded resume", "0/4")):
                r = child(Path(tmp), n, shard)
                done = n if shard is None else sum(r["counts"].values())
                print(
                    f"{n:>9} {label:<15} {r['seconds']:>8.1f} {r['seconds'] / max(done, 1) * 1e6:>10.1f} "
                    f"{r['peak_rss_mb']:>12.0f}  {r['counts']}",
                    flush=True,
                )
                if label == "resume":  # side by side: the runner's own share of a resume
                    parse = floor(Path(tmp))
                    print(
                        f"{n:>9} {'  parse only':<15} {parse:>8.1f} {parse / n * 1e6:>10.1f} {'':>12}  runner "
                        f"overhead {(r['seconds'] - parse) / n * 1e6:.1f} µs/record",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
