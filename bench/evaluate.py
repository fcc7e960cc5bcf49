"""Benchmark the evaluation stage: coverage seconds per paper, and RACAR judge calls per paper.

    python bench/evaluate.py --papers 3 --words 3000      # both parts
    python bench/evaluate.py --part coverage --papers-dir DIR   # also real papers (*.json / *.jsonl with QA)
    python bench/evaluate.py --part judge

Coverage (issue 28), side by side in one run, on the same papers interleaved paper by paper (the order
rotated), after a warm-up encode: the plain reference script (``SentenceTransformer.encode`` of a paper's
sentences and of its Q+A texts, batch 64, one matrix product), the stage as it was before issue 28 (the same
encode, then evidence, quotes and grounding), the stage now with an empty embeddings cache, and the stage
again on the same paper with its sentence vectors cached (what new QA pairs for a paper cost), and the opt-in
int8 route (``evaluate.embedder: onnx-int8``, its own empty cache). Each row gives
seconds, papers/s, the ratio to the reference, pooled coverage (released definition) and the mean per-answer
chunk rate; the run fails when the new stage is off today's numbers by more than 0.5 points. Wall-clock and
process-CPU seconds are reported; on a shared machine CPU time is the steadier of the two (at one thread;
with more, threads waiting on a busy core count too). The model load is timed separately and not counted.

Corpora: deterministic synthetic ~3k-word physical-science papers (seeded, from the word lists below), each
with 10 QA pairs whose answers restate a few of the paper's sentences; and with ``--papers-dir`` real papers,
in this project's record shape (id, text, qa) or the authors' release (data/select_50.json of
MasterAI-EAM/SciQAG: txt, Q&A). Synthetic sentences are all of similar length, so batching by length gains
little there; real papers mix 5- and 250-token sentences.

Judge calls: `run_racar` with one judge (the tiny random test model behind a real `transformers serve`)
over a hand-made work dir (papers.jsonl + seed.jsonl, 10 QA pairs per paper), max_attempts=1; calls per
paper = the client's usage counters (requests + cached) / papers. RACAR scores all pairs of a paper in one
call per dimension, so this must be 5 (not 5 x 10). The tiny model's replies are gibberish: the papers come
out "unjudged", which does not change the number of calls at max_attempts=1.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("TQDM_DISABLE", "1")  # read when tqdm is imported; bars would interleave with the table

from sciqag_dataset.core.errors import Unavailable  # noqa: E402
from sciqag_dataset.evaluation import coverage as cov  # noqa: E402
from sciqag_dataset.evaluation import fast_embed as fe  # noqa: E402
from sciqag_dataset.evaluation import int8_embed  # noqa: E402
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, default_instruction, encode, load_embedder  # noqa: E402

# --- deterministic synthetic papers -------------------------------------------------------------

MATERIALS = [
    "the tungsten oxide film",
    "the nickel cobalt spinel",
    "the layered sodium cathode",
    "the boron nitride sheet",
    "the copper zinc tin sulfide absorber",
    "the garnet electrolyte",
    "the bismuth telluride alloy",
    "the iron phosphate cathode",
    "the titania photoanode",
    "the silicon carbide wafer",
    "the zirconia membrane",
    "the gallium nitride layer",
]
PROPERTIES = [
    "band gap",
    "ionic conductivity",
    "carrier lifetime",
    "lattice strain",
    "surface area",
    "grain size",
    "Seebeck coefficient",
    "specific capacity",
    "hardness",
    "thermal conductivity",
    "dielectric loss",
    "photocurrent density",
    "oxygen vacancy concentration",
    "work function",
]
PROCESSES = [
    "annealing in argon",
    "ball milling",
    "spin coating",
    "hydrothermal growth",
    "spark plasma sintering",
    "atomic layer deposition",
    "ion implantation",
    "chemical vapour deposition",
    "sol-gel synthesis",
    "electrochemical cycling",
    "laser irradiation",
    "acid etching",
]
EFFECTS = [
    "rose",
    "fell",
    "saturated",
    "doubled",
    "stayed nearly constant",
    "dropped sharply",
    "increased linearly",
    "peaked",
]
UNITS = ["K", "eV", "nm", "S/cm", "mAh/g", "GPa", "%", "h", "W/(m K)", "mA/cm^2"]
TEMPLATES = [
    "After {process}, the {prop} of {mat} {effect} to {num} {unit}.",
    "We attribute the change in {prop} to {process}, which alters the defect chemistry of {mat}.",
    "Compared with the reference sample, {mat} showed a {prop} of {num} {unit} at room temperature.",
    "The {prop} {effect} when the processing temperature exceeded {num} {unit}, indicating a phase change.",
    "Density functional calculations suggest that {process} lowers the formation energy of defects "
    "that control the {prop}.",
    "Samples prepared by {process} retained {num} {unit} of their initial {prop} after repeated tests.",
    "A second mechanism links the {prop} of {mat} to the {prop2}, which {effect} under the same conditions.",
    "These observations indicate that {process} is a practical route to tune the {prop} without "
    "degrading the {prop2}.",
]
HEADINGS = ["Introduction", "Experimental methods", "Results", "Discussion", "Conclusions"]


def synthetic_paper(seed: int, words: int = 3000, n_pairs: int = 10) -> dict:
    """A grammatical ~``words``-word paper with ``n_pairs`` QA pairs; same seed, same paper."""
    rng = random.Random(seed)
    mats = rng.sample(MATERIALS, 4)
    sentences, count = [], 0
    while count < words:
        s = rng.choice(TEMPLATES).format(
            mat=rng.choice(mats),
            prop=rng.choice(PROPERTIES),
            prop2=rng.choice(PROPERTIES),
            process=rng.choice(PROCESSES),
            effect=rng.choice(EFFECTS),
            num=round(rng.uniform(0.1, 900), 2),
            unit=rng.choice(UNITS),
        )
        sentences.append(s[0].upper() + s[1:])
        count += len(s.split())
    per_section = -(-len(sentences) // len(HEADINGS))
    parts = []
    for h, start in zip(HEADINGS, range(0, len(sentences), per_section)):
        body = sentences[start : start + per_section]
        parts.append(h + "\n\n" + "\n\n".join(" ".join(body[i : i + 6]) for i in range(0, len(body), 6)))
    qa = []
    for i in range(n_pairs):
        # answers restate two sentences from one region of the paper, so evidence is findable
        j = rng.randrange(len(sentences) - 1)
        qa.append(
            {
                "question": f"What did the authors observe in experiment {i + 1} about {rng.choice(PROPERTIES)}?",
                "answer": f"{sentences[j]} In addition, {sentences[j + 1][0].lower()}{sentences[j + 1][1:]}",
                "origin": "synthetic",
            }
        )
    return {"id": f"synthetic-{seed}", "title": f"Synthetic study {seed}", "text": "\n\n".join(parts), "qa": qa}


# --- papers from a folder ---------------------------------------------------------------------------


def read_papers(folder: str | Path) -> list[dict]:
    """Papers with QA pairs from every *.json / *.jsonl in ``folder``: this project's records (id, text, qa
    with question/answer) or the authors' release (data/select_50.json: doi, txt, Q&A with Q/A)."""
    import json

    out = []
    for path in sorted(Path(folder).iterdir()):
        if path.suffix == ".jsonl":
            items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        elif path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            items = data if isinstance(data, list) else [data]
        else:
            continue
        for i, r in enumerate(items):
            qa = r.get("qa") or [{"question": q.get("Q"), "answer": q.get("A")} for q in r.get("Q&A") or []]
            text = r.get("text") or r.get("txt") or ""
            if qa and text:
                out.append({"id": str(r.get("id") or r.get("doi") or f"{path.stem}-{i}"), "text": text, "qa": qa})
    return out


# --- the strategies -------------------------------------------------------------------------------


def reference(paper: dict, model, instruction: str) -> dict:
    """The issue's plain script: split, SentenceTransformer.encode the sentences (batch 64) and the Q+A texts
    once, one matrix product, top-15 % per answer (numbers by the same chunk arithmetic), no evidence."""
    sentences = cov.split_sentences(paper["text"])
    s = model.encode(sentences, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    q = model.encode(cov.queries_for(paper["qa"], instruction), batch_size=64, normalize_embeddings=True)
    return cov.coverage_from_matrix(q @ s.T)


def today(paper: dict, model, instruction: str) -> dict:
    """The stage before issue 28 (a copy of its code path): SentenceTransformer.encode, then the record with
    evidence, quotes and grounding."""
    sentences = cov.split_sentences(paper["text"])
    s = encode(model, sentences, 64)
    q = encode(model, cov.queries_for(paper["qa"], instruction), 64)
    return _numbers(cov.record_from_matrix(paper, q @ s.T, sentences, DEFAULT_MODEL, "released", 3, instruction))


def new(paper: dict, model, instruction: str, cache) -> dict:
    """The stage now: token-budget batches, the paper's sentence vectors through the work dir's cache."""
    return _numbers(cov.coverage_record(paper, model, instruction=instruction, cache=cache))


def _numbers(rec: dict) -> dict:
    return {
        "released": rec["info"]["coverage_released"],
        "chunk_rates": [p["chunk_rate"] for p in rec["pair_metrics"]],
    }


def _timed(fn, *args) -> tuple[dict, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


STRATEGIES = (
    ("reference", "plain reference (ST.encode)"),
    ("today", "today's stage (before #28)"),
    ("new", "new stage, cold cache"),
    ("new_warm", "new stage, paper cached"),  # the cost of new pairs for a paper: only queries
    ("int8", "new stage, onnx-int8, cold"),  # opt-in (evaluate.embedder): not the float32 vectors
)


def bench_coverage(papers: list[dict], model_name: str = DEFAULT_MODEL) -> dict:
    """Each strategy on every paper, interleaved paper by paper (order rotated), after a warm-up encode.
    ``new_warm`` reruns the new stage on the same paper with its sentences in the cache (what new QA pairs
    for a paper cost)."""
    t = time.perf_counter()
    model = load_embedder(model_name)
    load_s = time.perf_counter() - t
    instruction = default_instruction(model_name)
    t = time.perf_counter()
    try:
        quant = int8_embed.load(model, "onnx-int8")
    except Unavailable as exc:  # without the [fast-embed] extra: the float32 rows alone
        print(f"no onnx-int8 row: {exc}")
        quant = None
    build_s = time.perf_counter() - t
    for m in (model, quant) if quant else (model,):
        fe.encode_sorted(m, ["warm-up sentence for the embedder"] * 8)
    model.encode(["warm-up sentence for the embedder"] * 8)
    runs: dict[str, list] = {name: [] for name, _ in STRATEGIES}
    with tempfile.TemporaryDirectory(prefix="bench-cov-") as tmp:
        cache = fe.SentenceCache(Path(tmp) / "embeddings.sqlite", fe.model_key(model, model_name))
        cache8 = fe.SentenceCache(Path(tmp) / "int8.sqlite", fe.model_key(quant or model, model_name))
        for i, paper in enumerate(papers):
            cold = [
                ("reference", lambda p=paper: reference(p, model, instruction)),
                ("today", lambda p=paper: today(p, model, instruction)),
                ("new", lambda p=paper: new(p, model, instruction, cache)),
                ("int8", lambda p=paper: new(p, quant, instruction, cache8)),
            ][: 4 if quant else 3]
            r = i % len(cold)
            for name, fn in cold[r:] + cold[:r]:
                runs[name].append(_timed(fn))
            runs["new_warm"].append(_timed(lambda p=paper: new(p, model, instruction, cache)))
        cache.close()
        cache8.close()
    summary = {"load_s": load_s, "build_s": build_s, "papers": len(papers)}
    for name, rs in runs.items():
        if not rs:
            continue
        wall = sum(r[1] for r in rs)
        summary[name] = {
            "wall_s": wall,
            "cpu_s": sum(r[2] for r in rs),
            "papers_per_s": len(rs) / wall,
            "coverage": statistics.mean(r[0]["released"] for r in rs),
            "chunk_rate": statistics.mean(statistics.mean(r[0]["chunk_rates"]) for r in rs),
            "per_paper": [r[0]["released"] for r in rs],
        }
    return summary


def print_coverage(papers: list[dict], label: str, model_name: str) -> bool:
    words = statistics.mean(len(p["text"].split()) for p in papers)
    pairs = statistics.mean(len(p["qa"]) for p in papers)
    print(
        f"\ncoverage benchmark: {len(papers)} {label}, ~{words:.0f} words, {pairs:.1f} QA pairs each; model "
        f"{model_name}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
        flush=True,
    )
    s = bench_coverage(papers, model_name)
    base, old = s["reference"], s["today"]
    print(f"model load {s['load_s']:.1f} s, int8 graph built in {s['build_s']:.1f} s (neither counted)")
    print(f"{'strategy':<32}{'wall s':>9}{'CPU s':>9}{'papers/s':>10}{'vs ref':>8}{'coverage':>10}{'chunk rate':>12}")
    for name, label_ in STRATEGIES:
        if name not in s:
            continue
        r = s[name]
        print(
            f"{label_:<32}{r['wall_s']:>9.1f}{r['cpu_s']:>9.1f}{r['papers_per_s']:>10.3f}"
            f"{base['wall_s'] / r['wall_s']:>7.2f}x{r['coverage']:>10.2%}{r['chunk_rate']:>12.2%}"
        )

    def agrees(n: str) -> bool:
        return (
            abs(s[n]["coverage"] - old["coverage"]) <= 0.005 and abs(s[n]["chunk_rate"] - old["chunk_rate"]) <= 0.005
        )

    agree = agrees("new") and agrees("new_warm")
    for n, what in (("new", "new"), ("int8", "onnx-int8 (opt-in)")):
        if n not in s:
            continue
        print(
            f"{what} vs reference: {base['wall_s'] / s[n]['wall_s']:.2f}x wall, {base['cpu_s'] / s[n]['cpu_s']:.2f}x "
            f"CPU (cold cache; goal >= 3x); pooled numbers within 0.5 pt of today's: {'yes' if agrees(n) else 'NO'}"
        )
    if "int8" not in s:
        return agree
    # pooled numbers can agree while papers move: say how far one paper's coverage moves under int8
    moved = [abs(a - b) for a, b in zip(s["int8"]["per_paper"], s["new"]["per_paper"])]
    print(
        f"onnx-int8 per paper: coverage moved {statistics.mean(moved):.2%} on average, {max(moved):.2%} at most, "
        f"{sum(m > 0 for m in moved)}/{len(moved)} papers changed"
    )
    return agree  # the default route must agree; the int8 route's agreement is reported, not enforced


# --- judge calls per paper (RACAR) ----------------------------------------------------------------


def judge_work(root: Path, n_papers: int, n_pairs: int = 10) -> Path:
    """papers.jsonl + seed.jsonl with ``n_pairs`` short QA pairs per paper (short: the tiny judge's context)."""
    import json

    root.mkdir(parents=True, exist_ok=True)
    with open(root / "papers.jsonl", "w") as pf, open(root / "seed.jsonl", "w") as sf:
        for i in range(n_papers):
            paper = synthetic_paper(100 + i, words=120, n_pairs=0)
            sentences = cov.split_sentences(paper["text"])
            # questions differ between papers, or the questions-only (agnosticism) prompt would repeat
            qa = [
                {
                    "question": f"What happened in measurement {k + 1} of study {i}?",
                    "answer": sentences[k % len(sentences)],
                    "origin": "teacher",
                }
                for k in range(n_pairs)
            ]
            pf.write(json.dumps({"id": paper["id"], "title": paper["title"], "text": paper["text"]}) + "\n")
            sf.write(json.dumps({"id": paper["id"], "qa": qa, "status": "ok"}) + "\n")
    return root


def bench_judge_calls(n_papers: int = 3, max_tokens: int = 8, concurrency: int = 4) -> dict:
    from sciqag_dataset.core.runner import run_stage
    from sciqag_dataset.evaluation import racar
    from sciqag_dataset.evaluation.racar import racar_summary
    from sciqag_dataset.llm import LLMClient, ResponseCache
    from sciqag_dataset.llm.server import LocalServer

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tiny_model import build_tiny_model

    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp:
        tmp = Path(tmp)
        work = judge_work(tmp / "work", n_papers)
        t = time.perf_counter()
        with LocalServer(build_tiny_model(tmp / "tiny-model"), log_path=tmp / "server.log") as server:
            judge = LLMClient(
                server.base_url,
                server.model,
                params={"max_tokens": max_tokens, "temperature": 0.0},
                concurrency=concurrency,
                cache=ResponseCache(tmp / "judge-cache.sqlite"),
            )
            summary = run_stage(racar.stage([judge], max_attempts=1, context_tokens=4096, chars_per_token=1.0), work)
        seconds = time.perf_counter() - t
        racar = racar_summary(work)
    calls = judge.usage.requests + judge.usage.cached
    return {
        "papers": n_papers,
        "pairs_per_paper": 10,
        "requests": judge.usage.requests,
        "cached": judge.usage.cached,
        "failures": judge.usage.failures,
        "calls_per_paper": calls / n_papers,
        "recorded_calls_per_paper": racar["judge_calls_per_paper"],
        "statuses": summary.line(),
        "prompt_tokens_per_call": judge.usage.prompt_tokens / max(judge.usage.requests, 1),
        "seconds": seconds,
    }


def print_judge_calls(n_papers: int) -> bool:
    print(
        f"\nRACAR judge-call benchmark: {n_papers} papers x 10 QA pairs, one judge (tiny random model, "
        f"transformers serve), max_attempts=1",
        flush=True,
    )
    j = bench_judge_calls(n_papers)
    print(
        f"{j['statuses']}; {j['requests']} requests + {j['cached']} cached ({j['failures']} failed), "
        f"~{j['prompt_tokens_per_call']:.0f} prompt tokens per call, {j['seconds']:.1f} s with server start"
    )
    ok = j["calls_per_paper"] == 5 and j["recorded_calls_per_paper"] == 5
    print(
        f"judge calls per paper: {j['calls_per_paper']:g} (usage counters), {j['recorded_calls_per_paper']:g} "
        f"(racar.jsonl judge_calls)  (must be 5: {'met' if ok else 'NOT met'})"
    )
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=3, help="synthetic papers to time (10 QA pairs each; 0: none)")
    ap.add_argument("--words", type=int, default=3000, help="words per synthetic paper")
    ap.add_argument("--papers-dir", help="also time the papers with QA pairs in this folder (*.json, *.jsonl)")
    ap.add_argument("--max-papers", type=int, help="at most this many papers from --papers-dir")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="sentence-transformers model")
    ap.add_argument("--part", choices=("all", "coverage", "judge"), default="all", help="run only one part")
    ap.add_argument("--judge-papers", type=int, default=3, help="papers for the judge-call count")
    args = ap.parse_args(argv)
    if args.part == "judge":
        return 0 if print_judge_calls(args.judge_papers) else 1
    ok = True
    if args.papers:
        ok &= print_coverage(
            [synthetic_paper(seed, args.words) for seed in range(args.papers)], "synthetic papers", args.model
        )
    if args.papers_dir:
        real = read_papers(args.papers_dir)[: args.max_papers]
        ok &= print_coverage(real, f"papers from {args.papers_dir}", args.model)
    if args.part == "all":
        ok &= print_judge_calls(args.judge_papers)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
