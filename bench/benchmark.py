"""`sciqag benchmark`'s answering throughput against the embedded server: concurrency 1 vs 8, side by side.

    python bench/benchmark.py                       # 16 questions, llama.cpp (or transformers serve), 2 rounds
    python bench/benchmark.py --questions 32 --engine transformers --rounds 1

One run, one server, the same machine: the embedded model is started once and warmed up; then the answer
stage of `sciqag benchmark` (the real stage on the real runner: closed-book prompt, greedy, 256-token budget)
asks the same questions at concurrency 1 and at concurrency 8, each into a fresh results folder (no cache),
alternating the order over rounds so that drift of a shared machine falls on both. Printed per setting:
questions/s, completion tokens/s, and the ratio 8 vs 1. The questions are templated here (own text).

What to expect: llama-cpp-python's server decodes one request at a time, so 8 in flight only queue inside it
(and a waiting request slowed the running one's decoding on 2 cores in an earlier measurement); the CLI
sends one at a time to the embedded model for that reason. Against TGI or vLLM, which batch requests, the
same stage at `--concurrency 8` or more is what scales.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

from sciqag_dataset.core.jsonl import read_jsonl  # noqa: E402
from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.evaluation.benchmark.answer import answer_stage, model_dir  # noqa: E402
from sciqag_dataset.evaluation.benchmark.questions import load_questions, write_questions  # noqa: E402
from sciqag_dataset.llm import LLMClient, embedded  # noqa: E402

MATERIALS = [
    "anatase TiO2",
    "layered NaCoO2",
    "CoSb3 skutterudite",
    "MAPbI3 perovskite",
    "LiFePO4",
    "ZnO nanowires",
    "graphene oxide",
    "Bi2Te3",
    "NiO",
    "BaTiO3",
    "MoS2 monolayers",
    "SnO2",
    "CdTe",
    "GaN",
    "CeO2",
    "Cu2O",
]
ASKS = [
    "What is the band gap of {m}?",
    "How does annealing change the grain size of {m}?",
    "Why is {m} used in energy devices?",
    "What limits the conductivity of {m}?",
]


def questions_file(folder: Path, n: int) -> Path:
    import json

    rows = [
        {"question": ASKS[i % len(ASKS)].format(m=MATERIALS[i % len(MATERIALS)]), "answer": "n/a"} for i in range(n)
    ]
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def one(server, data: Path, concurrency: int, root: Path, tag: str) -> tuple[float, int, int]:
    """Seconds, questions answered and completion tokens for one setting, in a fresh results folder."""
    results = root / tag
    questions, info = load_questions(str(data))
    write_questions(results, questions, info)
    client = LLMClient(
        server.base_url,
        server.model,
        label=embedded.DEFAULT_MODEL_ID,
        params={"temperature": 0.0, "max_tokens": 256},
        concurrency=concurrency,
    )
    folder = model_dir(client.name)
    started = time.monotonic()
    run_stage(answer_stage(client, folder=folder), results, progress=False)
    seconds = time.monotonic() - started
    rows = [r for r in read_jsonl(results / folder / "answers.jsonl") if r.get("status") == "ok"]
    return seconds, len(rows), sum(r["completion_tokens"] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--engine", "--backend", default="auto", choices=("auto", *embedded.ENGINES.names()))
    args = ap.parse_args()
    choice = embedded.choose_here(args.engine)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = questions_file(root, args.questions)
        server = embedded.start(choice, log_path=root / "server.log")
        try:
            one(server, data, 1, root, "warm-up")
            totals = {1: [0.0, 0, 0], 8: [0.0, 0, 0]}
            for r in range(args.rounds):
                for c in (1, 8) if r % 2 == 0 else (8, 1):
                    s, n, tok = one(server, data, c, root, f"r{r}-c{c}")
                    totals[c][0] += s
                    totals[c][1] += n
                    totals[c][2] += tok
                    print(f"round {r + 1}, concurrency {c}: {n} questions in {s:.1f} s", flush=True)
        finally:
            server.stop()
    print(
        f"\nembedded {embedded.DEFAULT_MODEL_ID} on {choice.describe()}; {args.questions} questions x "
        f"{args.rounds} round(s), greedy, 256-token budget, no cache"
    )
    print(f"{'concurrency':>11} | {'questions/s':>11} | {'tokens/s':>8} | {'s/question':>10}")
    rate = {}
    for c, (s, n, tok) in totals.items():
        rate[c] = n / s
        print(f"{c:>11} | {n / s:>11.3f} | {tok / s:>8.1f} | {s / n:>10.2f}")
    print(f"ratio concurrency 8 / 1: {rate[8] / rate[1]:.2f}x questions/s")


if __name__ == "__main__":
    main()
