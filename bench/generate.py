"""Benchmark the generate stage's request scheduling against one `transformers serve --continuous-batching`.

    python bench/generate.py                      # tiny random model, 48 papers, concurrency 8, 3 repeats
    python bench/generate.py --model-dir /root/.cache/sciqag/models/HuggingFaceTB--SmolLM2-135M-Instruct
    python bench/generate.py --memory             # peak RSS of the runner for 1k vs 10k papers
    python bench/generate.py --endpoint http://127.0.0.1:8000/v1 --served-model ./generator --server-name vllm \
        --strategies runner,bare_async --concurrency 64,256 --papers 512 --max-tokens 256 --json gen.jsonl

Throughput: the same papers, prompts (`build_messages`, the paper's prompt) and request parameters go
to the same server three ways, after a warm-up:
  (a) sequential  - a sync `openai.OpenAI` client in a for loop, one request at a time (the authors' code);
  (b) runner      - `run_generate` over a fresh work dir (papers.jsonl + keywords.jsonl), no response cache,
                    concurrency C: parsing, post-processing, JSONL output and manifest included;
  (c) bare async  - `openai.AsyncOpenAI` + `asyncio.Semaphore(C)` + `gather`: no cache, no files.
Repeats run the three in rotated order, since the machine is shared and its load drifts. Goals:
(b)/(a) >= 3x and (b)/(c) >= 90 % in papers/s. Beside the rates, the client process's own CPU time per paper
(the server runs in another process): one event loop cannot pass 1000 / (that many ms) papers/s, however fast
the server, so it says whether a fast GPU server would find the runner the bottleneck.

Greedy decoding (temperature 0) by default so every strategy decodes the same number of tokens per
paper; `--temperature 0.6` gives the paper's sampling. The papers are short (~60 words) synthetic texts,
generated deterministically; the prompt around them (Appendix D + format hint) is still ~1.2k tokens for
the tiny tokenizer, ~480 for SmolLM2. On CPU, `transformers serve`'s paged attention uses one dense
block-diagonal mask over the whole batch, so a step costs ~batch x (batch x prompt) attention: with
prompts this long, requests in flight slow the server down (measured here: the tiny model serves
concurrency 8 at ~0.45x the sequential rate; SmolLM2 at ~1.25x). The (b)/(a) goal is a property of the
server and hardware; (b)/(c) is the runner's own overhead.

Memory (`--memory`): `run_generate` runs in a child interpreter over N tiny papers (max_tokens 1) and
reports its own peak RSS (VmHWM) as it ends. Goal: 10k within 20 % of 1k. Concurrency 2 by default:
on this CPU the continuous-batching server answers these prefill-heavy requests fastest at 1-2 in
flight (~35 req/s) and slowest at 16 (~10 req/s), and in-flight count does not grow with N.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")  # the runner's progress bar would interleave with the table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # tests/tiny_model.py

import openai  # noqa: E402

from sciqag_dataset.builders import generate  # noqa: E402
from sciqag_dataset.config.config_file import GenerateConfig  # noqa: E402
from sciqag_dataset.core.jsonl import JsonlWriter, read_jsonl  # noqa: E402
from sciqag_dataset.core.runner import run_stage  # noqa: E402
from sciqag_dataset.llm import LLMClient  # noqa: E402
from sciqag_dataset.llm.server import LocalServer  # noqa: E402
from sciqag_dataset.qa.prompts import build_messages  # noqa: E402

# Large enough that no short paper is cut, for the tiny tokenizer (~1.5 chars/token) and real ones alike.
CFG = GenerateConfig(prompt_style="paper", context_tokens=4096, chars_per_token=1.0)

# --- deterministic synthetic papers -------------------------------------------------------------

SUBJECTS = [
    "The perovskite absorber",
    "A nickel-rich cathode",
    "The zeolite membrane",
    "A graphene oxide sheet",
    "The garnet electrolyte",
    "A titania photocatalyst",
    "The boron-doped diamond film",
    "A copper indium selenide layer",
    "The ceria support",
    "A silicon anode",
]
VERBS = ["was annealed at", "was cycled at", "was sintered at", "was irradiated at", "was quenched from"]
FINDINGS = [
    "its band gap narrowed to {x:.2f} eV",
    "its ionic conductivity rose to {x:.2f} mS/cm",
    "its capacity retention reached {y} % after {z} cycles",
    "its grain size grew to {z} nm",
    "its photocurrent doubled to {x:.2f} mA/cm2",
    "its lattice strain fell below {x:.2f} %",
]
CAUSES = [
    "oxygen vacancies formed at grain boundaries",
    "dopant segregation pinned the boundaries",
    "a secondary phase nucleated near the surface",
    "cation mixing was suppressed",
    "the carrier lifetime increased",
    "surface hydroxyl groups were removed",
]
KEYWORDS = [
    "band gap",
    "ionic conductivity",
    "grain boundary",
    "oxygen vacancy",
    "capacity retention",
    "lattice strain",
    "photocurrent",
    "dopant segregation",
    "cation mixing",
    "secondary phase",
]


def synthetic_paper(i: int, words: int = 60) -> dict:
    """A ~``words``-word paper; same ``i``, same paper."""
    rng = random.Random(i)
    subject = rng.choice(SUBJECTS)
    sentences, count = [], 0
    while count < words:
        s = (
            f"{subject} {rng.choice(VERBS)} {rng.randint(300, 1200)} K, and "
            + rng.choice(FINDINGS).format(x=rng.uniform(0.1, 5), y=rng.randint(60, 99), z=rng.randint(10, 900))
            + f" because {rng.choice(CAUSES)}."
        )
        sentences.append(s)
        count += len(s.split())
    return {
        "id": f"bench-{i:05d}",
        "title": f"Synthetic study {i}",
        "text": " ".join(sentences),
        "source_format": "txt",
        "keywords": rng.sample(KEYWORDS, 3),
    }


def write_work(root: Path, papers: list[dict]) -> Path:
    """A generate-stage work dir: papers.jsonl plus keywords.jsonl, as the earlier stages leave them."""
    root.mkdir(parents=True, exist_ok=True)
    with JsonlWriter(root / "papers.jsonl") as pw, JsonlWriter(root / "keywords.jsonl") as kw:
        for p in papers:
            pw.write({k: v for k, v in p.items() if k != "keywords"})
            kw.write({"id": p["id"], "keywords": p["keywords"], "status": "ok"})
    return root


def messages_for(paper: dict) -> list[dict]:
    # exactly what the runner sends for a paper that fits the context (builders/qagen.request_qa)
    return build_messages(
        paper["text"], paper["keywords"], n=CFG.n_pairs, style=CFG.prompt_style, title=paper["title"]
    )


# --- the three strategies -------------------------------------------------------------------------


def sequential(server: LocalServer, papers: list[dict], params: dict, concurrency: int) -> dict:
    client = openai.OpenAI(base_url=server.base_url, api_key="not-needed", timeout=600)
    prompts = [messages_for(p) for p in papers]
    tokens = 0
    t, cpu = time.perf_counter(), time.process_time()
    for messages in prompts:
        r = client.chat.completions.create(model=server.model, messages=messages, **params)
        tokens += r.usage.completion_tokens
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    client.close()
    return {"seconds": seconds, "cpu_s": cpu, "completion_tokens": tokens, "papers": len(papers)}


def runner(server: LocalServer, papers: list[dict], params: dict, concurrency: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        work = write_work(Path(tmp) / "work", papers)  # fresh dir: nothing to resume, no cache
        client = LLMClient(server.base_url, server.model, params=dict(params), concurrency=concurrency)
        t, cpu = time.perf_counter(), time.process_time()
        summary = run_stage(generate.stage(client, CFG), work)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        recs = list(read_jsonl(work / "generated.jsonl"))
    bad = summary.failed + sum(any("truncated" in w for w in r.get("warnings") or []) for r in recs)
    if bad or len(recs) != len(papers) or client.usage.requests != len(papers):
        raise RuntimeError(
            f"runner run is not comparable: {summary.line()}, {len(recs)} records, "
            f"{client.usage.requests} requests, {bad} failed/truncated"
        )
    return {
        "seconds": seconds,
        "cpu_s": cpu,
        "completion_tokens": client.usage.completion_tokens,
        "papers": len(papers),
    }


async def _bare(server: LocalServer, prompts: list[list[dict]], params: dict, concurrency: int) -> int:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="not-needed", timeout=600)
    sem = asyncio.Semaphore(concurrency)

    async def one(messages):
        async with sem:
            r = await client.chat.completions.create(model=server.model, messages=messages, **params)
            return r.usage.completion_tokens

    try:
        return sum(await asyncio.gather(*(one(m) for m in prompts)))
    finally:
        await client.close()


def bare_async(server: LocalServer, papers: list[dict], params: dict, concurrency: int) -> dict:
    prompts = [messages_for(p) for p in papers]
    t, cpu = time.perf_counter(), time.process_time()
    tokens = asyncio.run(_bare(server, prompts, params, concurrency))
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    return {"seconds": seconds, "cpu_s": cpu, "completion_tokens": tokens, "papers": len(papers)}


STRATEGIES = {"sequential": sequential, "runner": runner, "bare_async": bare_async}
LABELS = {
    "sequential": "(a) sequential loop",
    "runner": "(b) our runner (run_generate)",
    "bare_async": "(c) bare async load generator",
}


def tiny_model(root: Path) -> Path:
    from tiny_model import build_tiny_model

    return build_tiny_model(root / "tiny-model")


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Endpoint:
    """A server this bench did not start (e.g. `vllm serve`): its URL and the model name it serves."""

    base_url: str
    model: str


def compare(server, papers: list[dict], params: dict, concurrency: int, names: list[str], repeats: int, turn=0):
    """Each strategy ``repeats`` times at ``concurrency``, in rotated order (``turn`` rotates it further: the
    concurrency levels take turns too); their pooled rates."""
    runs: dict[str, list[dict]] = {name: [] for name in names}
    print(f"{'repeat':<8}{'strategy':<34}{'seconds':>9}{'papers/s':>10}{'compl tok/s':>13}")
    for rep in range(repeats):
        first = (rep + turn) % len(names)
        order = names[first:] + names[:first]  # rotate who goes first
        for name in order:
            r = STRATEGIES[name](server, papers, params, concurrency)
            runs[name].append(r)
            print(
                f"{rep + 1:<8}{LABELS[name]:<34}{r['seconds']:>9.2f}{r['papers'] / r['seconds']:>10.2f}"
                f"{r['completion_tokens'] / r['seconds']:>13.1f}",
                flush=True,
            )
    pooled = {}
    for name, rs in runs.items():
        t = {k: sum(r[k] for r in rs) for k in ("seconds", "cpu_s", "completion_tokens", "papers")}
        pooled[name] = {
            **t,
            "papers_per_s": t["papers"] / t["seconds"],
            "tokens_per_s": t["completion_tokens"] / t["seconds"],
            "tokens_per_paper": t["completion_tokens"] / t["papers"],
            # the client's own CPU per paper: one event loop's ceiling is 1 / this, whatever the server
            "client_cpu_ms_per_paper": 1000 * t["cpu_s"] / t["papers"],
        }
    return pooled


def report(pooled: dict, concurrency: int) -> dict:
    """Print the pooled rates and the goals; the ratios, for the JSON record."""
    print(f"\nconcurrency {concurrency}, all repeats pooled (load avg now {load()}):")
    print(f"{'strategy':<34}{'papers/s':>10}{'compl tok/s':>13}{'tokens/paper':>14}{'client CPU ms/paper':>21}")
    for name, r in pooled.items():
        print(
            f"{LABELS[name]:<34}{r['papers_per_s']:>10.2f}{r['tokens_per_s']:>13.1f}{r['tokens_per_paper']:>14.1f}"
            f"{r['client_cpu_ms_per_paper']:>21.1f}"
        )
    ratios = {}
    if "runner" in pooled and "sequential" in pooled:
        ba = ratios["runner_vs_sequential"] = pooled["runner"]["papers_per_s"] / pooled["sequential"]["papers_per_s"]
        print(f"(b)/(a) runner vs sequential: {ba:.2f}x papers/s  (goal >= 3x: {'met' if ba >= 3 else 'NOT met'})")
    if "runner" in pooled and "bare_async" in pooled:
        bc = ratios["runner_vs_bare"] = pooled["runner"]["papers_per_s"] / pooled["bare_async"]["papers_per_s"]
        tok = pooled["runner"]["tokens_per_s"] / pooled["bare_async"]["tokens_per_s"]
        print(
            f"(b)/(c) runner vs bare async: {bc:.1%} papers/s, {tok:.1%} tokens/s  "
            f"(goal >= 90 %: {'met' if bc >= 0.9 else 'NOT met'})"
        )
    return ratios


def bench_throughput(args) -> int:
    names = [x.strip() for x in args.strategies.split(",") if x.strip()]
    unknown = [x for x in names if x not in STRATEGIES]
    if unknown or not names:
        raise SystemExit(f"--strategies: each of {', '.join(STRATEGIES)} (got {args.strategies!r})")
    levels = [int(x) for x in str(args.concurrency).split(",")]
    papers = [synthetic_paper(i, args.words) for i in range(args.papers)]
    params = {"max_tokens": args.max_tokens, "temperature": args.temperature, "top_p": args.top_p}
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp, contextlib.ExitStack() as stack:
        words = statistics.mean(len(p["text"].split()) for p in papers)
        if args.endpoint:
            server = Endpoint(args.endpoint, args.served_model or args.model_dir or "")
            what = f"{args.server_name} at {args.endpoint}"
        else:
            model_dir = Path(args.model_dir) if args.model_dir else tiny_model(Path(tmp))
            t = time.perf_counter()
            server = stack.enter_context(
                LocalServer(
                    model_dir,
                    continuous_batching=True,
                    log_path=Path(tmp) / "server.log",
                    device=args.device,
                    kv_cache_tokens=args.kv_cache_tokens,
                )
            )
            what = f"transformers serve --continuous-batching ({args.device})"
            print(f"server healthy in {time.perf_counter() - t:.1f} s ({what})")
        print(
            f"generate benchmark: {len(papers)} synthetic papers (~{words:.0f} words), concurrency "
            f"{args.concurrency}, max_tokens {args.max_tokens}, temperature {args.temperature}, "
            f"{args.repeats} repeat(s); model {args.model_dir or 'tiny random (tests/tiny_model.py)'}; "
            f"server {what}; load avg {load()}",
            flush=True,
        )
        top = max(levels)
        warm = [synthetic_paper(10**6 + i, args.words) for i in range(top)]
        bare_async(server, warm, params, top)
        with openai.OpenAI(base_url=server.base_url, api_key="not-needed") as c:
            probe = c.chat.completions.create(model=server.model, messages=messages_for(papers[0]), **params)
        print(f"warm-up done ({len(warm)} requests); prompt ~{probe.usage.prompt_tokens} tokens", flush=True)
        for turn, level in enumerate(levels):
            pooled = compare(server, papers, params, level, names, args.repeats, turn * args.repeats)
            ratios = report(pooled, level)
            if args.json:
                record = {
                    "server": what,
                    "model": args.model_dir or "tiny random",
                    "concurrency": level,
                    "papers": len(papers),
                    "words": args.words,
                    "prompt_tokens": probe.usage.prompt_tokens,
                    "max_tokens": args.max_tokens,
                    "temperature": args.temperature,
                    "repeats": args.repeats,
                    "strategies": pooled,
                    **ratios,
                }
                with args.json.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
    return 0


# --- memory -----------------------------------------------------------------------------------------

CHILD = """
import json, os, sys, time
os.environ.setdefault("TQDM_DISABLE", "1")
from sciqag_dataset.builders import generate
from sciqag_dataset.config.config_file import GenerateConfig
from sciqag_dataset.llm import LLMClient
from sciqag_dataset.core.runner import run_stage
def hwm_kb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
work, url, model, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
before = hwm_kb()
client = LLMClient(url, model, params={"max_tokens": 1, "temperature": 0.0}, concurrency=concurrency)
t = time.perf_counter()
s = run_stage(generate.stage(client, GenerateConfig(prompt_style="paper", context_tokens=4096, chars_per_token=1.0)),
              work)
print(json.dumps({"after_imports_kb": before, "peak_kb": hwm_kb(), "seconds": time.perf_counter() - t,
                  "counts": dict(s.counts), "requests": client.usage.requests}))
"""


def child_peak(work: Path, server: LocalServer, concurrency: int) -> dict:
    """Run the runner in a fresh interpreter; it reports its own peak RSS (VmHWM) as it ends.

    Not getrusage/wait4: a child's ru_maxrss keeps the RSS it had before exec, i.e. this parent's
    image (~400 MB with torch loaded), which would hide the runner's own footprint.
    """
    out, err = work / "child.out", work / "child.err"  # files, not pipes: nothing can block on a full pipe
    with out.open("w") as fo, err.open("w") as fe:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(work), server.base_url, server.model, str(concurrency)],
            stdout=fo,
            stderr=fe,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"memory child failed ({proc.returncode}): {err.read_text()[-2000:]}")
    return json.loads(out.read_text().strip().splitlines()[-1])


def bench_memory(args) -> int:
    sizes = [int(x) for x in args.memory_sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-generate-mem-") as tmp:
        tmp = Path(tmp)
        model_dir = tiny_model(tmp)
        print(
            f"memory benchmark: run_generate in a child process, {'/'.join(map(str, sizes))} papers "
            f"(~{args.memory_words} words), max_tokens 1, concurrency {args.memory_concurrency}, "
            f"tiny random model; load avg {load()}",
            flush=True,
        )
        results = {}
        with LocalServer(model_dir, continuous_batching=True, log_path=tmp / "server.log") as server:
            asyncio.run(
                _bare(
                    server,
                    [
                        messages_for(synthetic_paper(10**6 + i, args.memory_words))
                        for i in range(args.memory_concurrency)
                    ],
                    {"max_tokens": 1},
                    args.memory_concurrency,
                )
            )
            print(
                f"{'papers':>8}{'seconds':>9}{'papers/s':>10}{'RSS after imports MB':>22}{'peak RSS MB':>13}"
                f"{'growth MB':>11}"
            )
            for n in sizes:
                work = write_work(tmp / f"work-{n}", [synthetic_paper(i, args.memory_words) for i in range(n)])
                r = child_peak(work, server, args.memory_concurrency)
                done = sum(v for k, v in r["counts"].items() if k != "failed")
                if done != n or r["requests"] != n:
                    raise RuntimeError(f"{n} papers: child finished {r['counts']} with {r['requests']} requests")
                results[n] = r
                print(
                    f"{n:>8}{r['seconds']:>9.1f}{n / r['seconds']:>10.1f}{r['after_imports_kb'] / 1024:>22.1f}"
                    f"{r['peak_kb'] / 1024:>13.1f}{(r['peak_kb'] - r['after_imports_kb']) / 1024:>11.1f}",
                    flush=True,
                )
    lo, hi = results[sizes[0]]["peak_kb"], results[sizes[-1]]["peak_kb"]
    ratio = hi / lo
    print(
        f"peak RSS {sizes[-1]} / {sizes[0]} papers: {ratio:.3f}  "
        f"(goal <= 1.20: {'met' if ratio <= 1.2 else 'NOT met'})"
    )
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", help="a model folder to serve (default: the tiny random test model)")
    ap.add_argument("--endpoint", help="an OpenAI-compatible server already running (e.g. vllm serve): its /v1 URL")
    ap.add_argument("--served-model", help="the model name --endpoint serves (default: --model-dir)")
    ap.add_argument("--server-name", default="endpoint", help="what --endpoint is, for the output (e.g. vllm)")
    ap.add_argument("--device", default="auto", help="transformers serve's device: auto, cpu, cuda (default auto)")
    ap.add_argument("--kv-cache-tokens", type=int, default=32768, help="transformers serve's paged KV cache size")
    ap.add_argument("--papers", type=int, default=48)
    ap.add_argument("--words", type=int, default=60, help="words per synthetic paper")
    ap.add_argument("--concurrency", default="8", help="requests in flight; several comma-separated (e.g. 64,256)")
    ap.add_argument("--strategies", default="sequential,runner,bare_async", help="which of the three to run")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3, help="rounds of all strategies, rotated order")
    ap.add_argument("--json", type=Path, help="append one JSON line per concurrency level to this file")
    ap.add_argument("--memory", action="store_true", help="measure the runner's peak RSS instead")
    ap.add_argument("--memory-sizes", default="1000,10000", help="paper counts for --memory (first vs last)")
    ap.add_argument("--memory-words", type=int, default=20)
    ap.add_argument("--memory-concurrency", type=int, default=2)
    args = ap.parse_args(argv)
    return bench_memory(args) if args.memory else bench_throughput(args)


if __name__ == "__main__":
    sys.exit(main())
