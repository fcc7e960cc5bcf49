"""Benchmark the evaluation stage: coverage seconds per paper, and RACAR judge calls per paper.

    python bench/evaluate.py --papers 3 --words 3000      # both parts
    python bench/evaluate.py --part coverage              # or --part judge

Coverage: seconds per paper with the paper's sentence embeddings encoded once (what `sciqag evaluate`
does) versus re-encoded for every answer.

Corpus: deterministic synthetic ~3k-word physical-science papers (seeded, from the word lists below),
each with 10 QA pairs whose answers restate a few of the paper's sentences. Both strategies run on the
same papers, interleaved paper by paper (alternating which goes first), after a warm-up encode, and must
give the same coverage numbers. Wall-clock and process-CPU seconds are reported; CPU time is what other
load on a shared machine does not inflate. The model load is timed separately and not counted.

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

import numpy as np  # noqa: E402

from sciqag_dataset.evaluation import coverage as cov  # noqa: E402
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, default_instruction, load_embedder  # noqa: E402

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


# --- the two strategies -------------------------------------------------------------------------


def cached(paper: dict, model, instruction: str) -> dict:
    """What the stage does: sentences encoded once, all queries in one call."""
    sim, _ = cov.answer_sentence_matrix(paper, model, instruction=instruction)
    return cov.coverage_from_matrix(sim)


def per_answer(paper: dict, model, instruction: str) -> dict:
    """The naive loop: every answer re-encodes the whole paper next to its own query."""
    sentences = cov.split_sentences(paper["text"])
    rows = []
    for pair in paper["qa"]:
        sim, _ = cov.answer_sentence_matrix(
            {"text": paper["text"], "qa": [pair]}, model, instruction=instruction, sentences=list(sentences)
        )
        rows.append(sim[0])
    return cov.coverage_from_matrix(np.vstack(rows))


def _timed(fn, *args) -> tuple[dict, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench_coverage(papers: list[dict], model_name: str = DEFAULT_MODEL) -> dict:
    t = time.perf_counter()
    model = load_embedder(model_name)
    load_s = time.perf_counter() - t
    instruction = default_instruction(model_name)
    model.encode(["warm-up sentence for the embedder"] * 8)
    runs = {"cached": [], "per_answer": []}
    for i, paper in enumerate(papers):
        order = [("cached", cached), ("per_answer", per_answer)]
        for name, fn in order if i % 2 == 0 else order[::-1]:
            out, wall, cpu = _timed(fn, paper, model, instruction)
            runs[name].append((out, wall, cpu))
        a, b = runs["cached"][-1][0], runs["per_answer"][-1][0]
        assert a["released"] == b["released"] and a["eq1"] == b["eq1"], "the two strategies disagree"
        assert np.allclose(a["chunk_rates"], b["chunk_rates"])
    summary = {
        name: {
            "wall_s_per_paper": statistics.mean(r[1] for r in rs),
            "cpu_s_per_paper": statistics.mean(r[2] for r in rs),
        }
        for name, rs in runs.items()
    }
    summary["ratio_wall"] = summary["per_answer"]["wall_s_per_paper"] / summary["cached"]["wall_s_per_paper"]
    summary["ratio_cpu"] = summary["per_answer"]["cpu_s_per_paper"] / summary["cached"]["cpu_s_per_paper"]
    summary["load_s"] = load_s
    summary["sentences"] = statistics.mean(r[0]["n_sentences"] for r in runs["cached"])
    summary["coverage"] = statistics.mean(r[0]["released"] for r in runs["cached"])
    summary["coverage_eq1"] = statistics.mean(r[0]["eq1"] for r in runs["cached"])
    return summary


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
    from sciqag_dataset.evaluation import racar
    from sciqag_dataset.evaluation.racar import racar_summary
    from sciqag_dataset.llm import LLMClient, ResponseCache
    from sciqag_dataset.llm.server import LocalServer
    from sciqag_dataset.runner import run_stage

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
    ap.add_argument("--papers", type=int, default=3, help="synthetic papers to time (10 QA pairs each)")
    ap.add_argument("--words", type=int, default=3000, help="words per synthetic paper")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="sentence-transformers model")
    ap.add_argument("--part", choices=("all", "coverage", "judge"), default="all", help="run only one part")
    ap.add_argument("--judge-papers", type=int, default=3, help="papers for the judge-call count")
    args = ap.parse_args(argv)
    if args.part == "judge":
        return 0 if print_judge_calls(args.judge_papers) else 1

    papers = [synthetic_paper(seed, args.words) for seed in range(args.papers)]
    words = statistics.mean(len(p["text"].split()) for p in papers)
    print(
        f"coverage benchmark: {len(papers)} synthetic papers, ~{words:.0f} words, 10 QA pairs each; "
        f"model {args.model}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
        flush=True,
    )
    s = bench_coverage(papers, args.model)
    print(
        f"model load {s['load_s']:.1f} s (not counted); {s['sentences']:.0f} sentences per paper; "
        f"coverage {s['coverage']:.0%} (released), {s['coverage_eq1']:.0%} (Eq. 1)"
    )
    print(f"{'strategy':<34}{'wall s/paper':>14}{'CPU s/paper':>14}")
    for name, label in (
        ("cached", "sentences encoded once per paper"),
        ("per_answer", "sentences re-encoded per answer"),
    ):
        print(f"{label:<34}{s[name]['wall_s_per_paper']:>14.2f}{s[name]['cpu_s_per_paper']:>14.2f}")
    print(f"ratio (per answer / once): {s['ratio_wall']:.1f}x wall, {s['ratio_cpu']:.1f}x CPU")
    if args.part == "all":
        return 0 if print_judge_calls(args.judge_papers) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
