"""A small folder written by `sciqag publish` from sample pairs written for these tests: what the benchmark,
its exports and the remote tests read."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import write_jsonl

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.hub.publish import write_folder

# Our own sample pairs and papers (written for these tests).
PAIRS = [
    ("What band gap does anatase titanium dioxide have?", "Anatase has a band gap of about 3.2 eV."),
    (
        "Why does cobalt substitution stabilise layered sodium cathodes?",
        "Cobalt suppresses cation mixing, so the layers stay ordered during cycling.",
    ),
    ("At what temperature were the skutterudite pellets sintered?", "They were sintered at 873 K for 2 hours."),
    (
        "Which phase forms when the perovskite film is annealed in humid air?",
        "A hydrated phase forms, which lowers the absorption.",
    ),
    ("How does grain size change with annealing time?", "Grains grow from 40 nm to 120 nm over 3 hours."),
    ("What limits the rate capability of the cathode?", "Slow sodium diffusion through the bulk limits it."),
]
SECRET = "zirconium-sentinel"  # in every paper's text, title and keywords: it must never reach a prompt


def write_pairs_file(path: Path, pairs=PAIRS) -> Path:
    rows = [{"question": q, "answer": a} for q, a in pairs]
    rows[1] = {"Q": rows[1]["question"], "A": rows[1]["answer"]}  # the released format's keys
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def published_folder(
    tmp_path: Path, pairs=PAIRS, scores=None, teacher: str | None = None, grounding: dict | None = None
) -> Path:
    """A folder written by `sciqag publish` (every paper in the test split), `evaluated` and `seed` configs;
    with ``teacher``, the seed stage's manifest records that model as the writer of the seed pairs; ``grounding``
    maps a pair's index to what it records it was asked from."""
    asked = {j: {"grounding": g} for j, g in (grounding or {}).items()}
    work = tmp_path / "work"
    papers, seed, evaluated = [], [], []
    for i in range(0, len(pairs), 2):
        pid = f"paper-{i // 2}"
        chunk = pairs[i : i + 2]
        papers.append(
            {
                "id": pid,
                "title": f"A {SECRET} study {i}",
                "text": f"We grew {SECRET} films. " * 20,
                "source_format": "txt",
                "metadata": {"doi": f"10.5555/{i}"},
            }
        )
        qa = [
            {"question": q, "answer": a, "origin": "teacher", **asked.get(i + k, {})} for k, (q, a) in enumerate(chunk)
        ]
        seed.append({"id": pid, "qa": qa, "status": "ok", "keywords": [SECRET, "films"]})
        for k, (q, a) in enumerate(chunk):
            s = (scores or {}).get(i + k, {})
            evaluated.append(
                {
                    "paper_id": pid,
                    "title": papers[-1]["title"],
                    "keywords": [SECRET],
                    # a question that cites its source says so in its text, which the authors' rule reads
                    "question": q.replace("?", " in this study?") if s.get("refers") else q,
                    "answer": a,
                    "origin": "teacher",
                    "refers_to_source": s.get("refers", False),
                    **{
                        d: s.get(d, 3)
                        for d in ("relevance", "agnosticism", "completeness", "accuracy", "reasonableness")
                    },
                    "racar_mean": 3.0,
                    **asked.get(i + k, {}),
                }
            )
    write_jsonl(work / "papers.jsonl", papers)
    write_jsonl(work / "keywords.jsonl", [{"id": p["id"], "keywords": [SECRET], "status": "ok"} for p in papers])
    write_jsonl(work / "seed.jsonl", seed)
    write_jsonl(work / "evaluated.jsonl", evaluated)
    if teacher:
        (work / "seed_manifest.json").write_text(json.dumps({"model": teacher, "settings": {}, "params": {}}))
    cfg = Config(work_dir=str(work))
    cfg.publish.train = cfg.publish.validation = 0.0
    cfg.publish.configs = ["seed", "evaluated"]
    return write_folder(work, tmp_path / "pub", cfg)
