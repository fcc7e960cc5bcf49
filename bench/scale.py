"""Scale-out on datatrove: papers/s of the CPU stages with 1 vs 2 tasks, side by side, and the cost per paper.

    python bench/scale.py                          # the 5 sample papers x 8 copies, tasks 1 and 2
    python bench/scale.py --copies 16 --llm-work sciqag_work   # + LLM costs read from a finished `sciqag run`

One run, one machine: the shipped sample papers are ingested once and copied ``--copies`` times under new ids
(the text changes by a sentence, so keywords and metrics do real work), each with QA pairs taken from its own
sentences (no model needed); the text and Markdown samples are also written as that many input files. Then
for tasks = 1 and tasks = 2 (workers = tasks), in a fresh work dir each, the datatrove Local executor runs
ingest (of those files), keywords, then numeric and coverage, as `sciqag run --executor local` does.
Printed: papers/s per stage for each task count and their ratio; per stage and paper: CPU seconds, peak RSS
per worker (from the runner's manifests of every rank), model calls and tokens (0 here; with ``--llm-work``,
seed and generate read from that work dir's manifests, e.g. README's embedded run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

from sciqag_dataset.config.config_file import Config  # noqa: E402
from sciqag_dataset.core.jsonl import read_jsonl  # noqa: E402
from sciqag_dataset.orchestration import pipeline  # noqa: E402
from sciqag_dataset.orchestration.scale import ScaledRunner  # noqa: E402

STAGES = (("ingest", ["ingest"]), ("keywords", ["keywords"]), ("numeric+coverage", ["numeric", "coverage"]))


def corpus(root: Path, copies: int) -> Path:
    """Ingested sample papers x ``copies``, with 6 QA pairs each made of the paper's own sentences."""
    base = root / "base"
    cfg = Config(work_dir=str(base))
    pipeline.ingest(cfg)
    papers = list(read_jsonl(base / "papers.jsonl"))
    work = root / "corpus"
    work.mkdir()
    out_papers, seed = [], []
    for c in range(copies):
        for p in papers:
            text = f"This is copy {c} of the study, prepared for a throughput test.\n{p['text']}"
            pid = f"{p['id']}-{c}"
            out_papers.append({**p, "id": pid, "text": text, "existing_qa": []})
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) > 8][:6]
            seed.append(
                {
                    "id": pid,
                    "status": "ok",
                    "qa": [
                        {
                            "question": f"What does the study report in its passage {k + 1}?",
                            "answer": s,
                            "origin": "teacher",
                        }
                        for k, s in enumerate(sentences)
                    ],
                }
            )
    for name, rows in (("papers.jsonl", out_papers), ("seed.jsonl", seed)):
        (work / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    inputs = root / "inputs"  # the text and Markdown samples as files, as many copies, for ingest
    inputs.mkdir()
    for c in range(copies):
        for path in Path(pipeline.sample_papers()[0]).glob("*_*.*"):
            if path.suffix in (".md", ".txt"):
                text = path.read_text(encoding="utf-8").replace("\n\n", f"\n\nThis is copy {c}.\n\n", 1)
                (inputs / f"{path.stem}-{c}{path.suffix}").write_text(text, encoding="utf-8")
    return work


def run(work: Path, tasks: int) -> dict[str, dict]:
    out = {}
    for label, names in STAGES:
        # ingest in a work dir of its own: its papers are not the corpus the other stages read
        stage_work = work.parent / f"{work.name}-ingest" if names == ["ingest"] else work
        cfg = Config(work_dir=str(stage_work), inputs=[str(work.parent / "inputs")])
        cfg.executor.kind, cfg.executor.tasks, cfg.executor.workers = "local", tasks, tasks
        cfg.evaluate.metrics, cfg.evaluate.source, cfg.evaluate.plots = ["numeric", "coverage"], "seed", False
        with pipeline.Endpoints(cfg) as endpoints:
            started = time.monotonic()
            ScaledRunner(cfg)(names, endpoints)
            out[label] = {"seconds": time.monotonic() - started, "costs": costs(stage_work, names)}
    return out


def costs(work: Path, names: list[str]) -> dict:
    """Summed over every rank's manifest: papers, CPU seconds, peak RSS of the largest rank, calls, tokens."""
    total = {"papers": 0, "cpu": float("nan"), "rss": float("nan"), "calls": 0, "tokens": 0}
    if names == ["ingest"]:  # no per-rank manifest: the papers stored
        total["papers"] = json.loads((work / "ingest_report.json").read_text())["counts"]["ok"]
        return total
    total["cpu"] = total["rss"] = 0.0
    for name in names:
        for path in work.glob(f"{name}.shard-*_manifest.json"):
            m = json.loads(path.read_text())
            total["papers"] += sum(m["counts"].values())
            total["cpu"] += m.get("cpu_seconds", 0.0)
            total["rss"] = max(total["rss"], m.get("peak_rss_mb", 0.0))
            usage = m.get("usage") or {}
            total["calls"] += usage.get("requests", 0)
            total["tokens"] += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    total["papers"] //= len(names)
    return total


def llm_costs(work: Path) -> list[str]:
    lines = []
    for name in ("seed", "generated"):
        path = work / f"{name}_manifest.json"
        if not path.exists():
            continue
        m = json.loads(path.read_text())
        papers = max(1, sum(m["counts"].values()) - m["counts"].get("skipped", 0))
        u = m.get("usage") or {}
        lines.append(
            f"{name:>16} | {'(model)':>10} | {m.get('cpu_seconds', float('nan')):>9.2f}* | "
            f"{m.get('peak_rss_mb', float('nan')):>8.0f} | {u.get('requests', 0) / papers:>11.1f} | "
            f"{(u.get('prompt_tokens', 0) + u.get('completion_tokens', 0)) / papers:>10.0f}"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--llm-work", type=Path, help="a work dir of a finished `sciqag run`: seed/generate costs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = corpus(root, args.copies)
        results = {}
        for tasks in (1, 2):
            work = root / f"tasks-{tasks}"
            shutil.copytree(base, work)
            results[tasks] = run(work, tasks)
            print(
                f"tasks {tasks}: " + ", ".join(f"{k} {v['seconds']:.1f} s" for k, v in results[tasks].items()),
                flush=True,
            )
    n = results[1]["keywords"]["costs"]["papers"]
    print(
        f"\n{n} papers ({args.copies} copies of the 5 samples; ingest: the {results[1]['ingest']['costs']['papers']} "
        f"text and Markdown files among them), datatrove Local executor, {os.cpu_count()} cores"
    )
    print(f"{'stage':>16} | {'1 task p/s':>10} | {'2 tasks p/s':>11} | ratio")
    for label, _ in STAGES:
        r1, r2 = (results[1][label]["costs"]["papers"] / results[t][label]["seconds"] for t in (1, 2))
        print(f"{label:>16} | {r1:>10.2f} | {r2:>11.2f} | {r2 / r1:.2f}x")
    print(
        f"\nper paper (1 task)\n{'stage':>16} | {'papers':>10} | {'CPU s':>10} | {'RSS MB':>8} | "
        f"{'model calls':>11} | {'tokens':>10}"
    )
    for label, _ in STAGES:
        c = results[1][label]["costs"]
        print(
            f"{label:>16} | {c['papers']:>10} | {c['cpu'] / max(1, c['papers']):>10.3f} | {c['rss']:>8.0f} | "
            f"{c['calls'] / max(1, c['papers']):>11.1f} | {c['tokens'] / max(1, c['papers']):>10.0f}"
        )
    if args.llm_work:
        print("\n".join(llm_costs(args.llm_work)))
        print("  * the client process only: the model's own CPU is the server's (see its tokens/s instead)")


if __name__ == "__main__":
    main()
