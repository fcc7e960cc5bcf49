"""`sciqag filter --decontaminate`: a planted benchmark question is dropped (word for word, by a shared 13-word
sequence, or as a close paraphrase), the rest kept, and the card says what was checked."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import read_jsonl, write_jsonl

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.evaluation.decontaminate import load_benchmarks
from sciqag_dataset.hub.publish import write_folder

LONG = (
    "Which reaction conditions let nickel particles on ceria resist coking for one hundred hours on stream in dry "
    "reforming?"
)


def test_exact_ngram_and_paraphrase_are_found_and_the_rest_passes(review_work, tmp_path):
    bench_file = write_jsonl(
        tmp_path / "bench.jsonl",
        [
            {"question": "how much do SILICON anodes swell", "answer": "a lot"},
            {"question": LONG, "answer": "small particles"},
            {"question": "What is the metasurface lens made of?", "answer": "pillars"},
        ],
    )
    bench = load_benchmarks([str(bench_file)], threshold=0.9)
    reasons = bench.check(
        [
            "How much do silicon anodes swell?",  # the same words, other case and punctuation
            "In short: " + LONG.replace("Which", "which") + " Explain.",  # shares 13 words in a row
            "What is the metasurface lens made from?",  # a paraphrase
            "What happens to water uptake at 80 degrees Celsius?",  # not in the benchmark
            "Tell me briefly: what is the metasurface lens made of, and why?",  # holds a whole benchmark question
            "Which reaction conditions let nickel particles on ceria resist coking?",  # a stretch of LONG
        ]
    )
    assert reasons[0].startswith("shares its words") and "SILICON" in reasons[0]
    assert reasons[1].startswith("shares its words") and "hundred hours" in reasons[1]
    assert reasons[5].startswith("shares its words") and "hundred hours" in reasons[5]
    assert reasons[2].startswith("cosine") and reasons[3] is None
    assert reasons[4].startswith("shares its words") and "metasurface" in reasons[4]

    proc = subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", "filter", str(review_work), "--decontaminate", str(bench_file)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((review_work / "filter_summary.json").read_text())
    assert summary["decontamination"]["dropped"] == 2 and summary["decontamination"]["questions"] == 3
    kept = {r["question"] for r in read_jsonl(review_work / "filtered.jsonl")}
    assert summary["kept"] == 18 and "How much do silicon anodes swell?" not in kept
    reasons = [r for v in read_jsonl(review_work / "filter_verdicts.jsonl") for r in v["contaminated"] if r]
    assert len(reasons) == 2 and any("SILICON" in r for r in reasons)
    assert "What is the metasurface lens made of?" not in kept
    out = write_folder(review_work, tmp_path / "published", Config(work_dir=str(review_work)))
    card = (out / "README.md").read_text()
    assert "no question a benchmark asks (bench.jsonl: 3 questions;" in card and "2 pairs dropped" in card
