"""Benchmark generator fine-tuning: training tokens/s with packing vs without, side by side.

    python bench/train.py                       # tiny random model, CPU or GPU (picked automatically)
    python bench/train.py --model PATH --steps 30 --batch-size 4 --max-length 4096

Both runs go through `sciqag_dataset.trainers.sft.build_trainer` (TRL SFTTrainer, LoRA by
default) on the same published `seed` folder for the same number of optimizer steps.
Without packing a batch is padded to its longest example; with packing (TRL's padding-free
BFD) examples are laid end to end in ``max_length`` rows, so a step carries more real
tokens. "tokens/s" counts real (non-padding) tokens, from TRL's ``num_tokens``, between the
end of the first step and the end of the last (the first step's warm-up is left out).

The papers are deterministic synthetic texts of varied length (seeded), so padding matters
as it does on real corpora, where paper lengths vary by an order of magnitude.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]

WORDS = (
    "lattice strain annealing film cathode electrolyte band gap conductivity grain boundary dopant "
    "vacancy oxide spinel perovskite zeolite catalyst surface adsorption diffusion phase transition "
    "crystal anisotropy phonon carrier mobility"
).split()


def synthetic_work(root: Path, n: int, seed: int = 0) -> Path:
    """A work dir (papers, keywords, seed QA) with paper lengths spread over ~150-3000 characters."""
    from sciqag_dataset.core.jsonl import JsonlWriter

    rng = random.Random(seed)
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    with (
        JsonlWriter(work / "papers.jsonl") as papers,
        JsonlWriter(work / "keywords.jsonl") as kws,
        JsonlWriter(work / "seed.jsonl") as seed_out,
    ):
        for i in range(n):
            pid = f"bench-{i:04d}"
            n_words = int(20 * 1.6 ** rng.uniform(0, 6.5))  # log-uniform: ~20 to ~420 words
            text = " ".join(rng.choice(WORDS) for _ in range(n_words)).capitalize() + "."
            papers.write({"id": pid, "title": f"Synthetic paper {i}", "text": text, "source_format": "txt"})
            kws.write({"id": pid, "keywords": rng.sample(WORDS, 3), "status": "ok"})
            qa = [
                {
                    "question": f"Why does the {rng.choice(WORDS)} change in sample {i}, case {k}?",
                    "answer": " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))) + ".",
                    "origin": "teacher",
                }
                for k in range(rng.randint(2, 6))
            ]
            seed_out.write({"id": pid, "qa": qa, "status": "ok", "model": "bench", "prompt_style": "paper"})
    return work


def publish(work: Path, out: Path) -> Path:
    from sciqag_dataset.config.config_file import Config
    from sciqag_dataset.hub.publish import write_folder

    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed"]
    return write_folder(work, out, cfg)


def run(model: str, dataset: Path, out: Path, packing: bool, args) -> dict:
    import torch
    from transformers import TrainerCallback

    from sciqag_dataset.trainers.config import TrainConfig
    from sciqag_dataset.trainers.sft import build_trainer

    marks: list[tuple[float, float]] = []  # (time, cumulative real tokens) at each logged step

    class Clock(TrainerCallback):
        def on_log(self, _args, state, control, logs=None, **kw):
            if logs and "num_tokens" in logs:
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                marks.append((time.perf_counter(), float(logs["num_tokens"])))

    cfg = TrainConfig.from_dict(
        dict(
            model_name_or_path=model,
            dataset=str(dataset),
            output_dir=str(out),
            method=args.method,
            packing=packing,
            max_steps=args.steps,
            per_device_train_batch_size=args.batch_size,
            gradient_accumulation_steps=1,
            max_length=args.max_length,
            learning_rate=1e-4,
            warmup_steps=0,
            logging_steps=1,
            save_strategy="no",
            eval_split=None,
            seed=args.seed,
            activation_checkpointing=args.gradient_checkpointing,
        )
    )
    built = build_trainer(cfg)
    built.trainer.add_callback(Clock())
    rows = len(built.trainer.train_dataset)
    start = time.perf_counter()
    built.trainer.train()
    wall = time.perf_counter() - start
    (t0, n0), (t1, n1) = marks[0], marks[-1]
    return {
        "packing": packing,
        "rows": rows,
        "examples": built.train_data.used,
        "wall_s": wall,
        "tokens": n1,
        "tokens_per_s": (n1 - n0) / max(t1 - t0, 1e-9),
        "steps": len(marks),
        "attn": built.attn,
        "bf16": built.bf16,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="base model folder or Hub id (default: a tiny random Llama built here)")
    p.add_argument("--papers", type=int, default=96, help="synthetic papers (default 96)")
    p.add_argument("--steps", type=int, default=10, help="optimizer steps per run (default 10)")
    p.add_argument("--batch-size", type=int, default=4, help="per-device batch (default 4)")
    p.add_argument("--max-length", type=int, default=4096, help="tokens per row (default 4096)")
    p.add_argument("--method", default="lora", choices=["lora", "longlora", "full"])
    p.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({torch.get_num_threads()} threads)"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model
        if model is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from tiny_model import build_tiny_model

            model = str(build_tiny_model(tmp / "tiny-model"))
        dataset = publish(synthetic_work(tmp, args.papers, args.seed), tmp / "dataset")
        results = [run(model, dataset, tmp / f"out-{mode}", mode, args) for mode in (False, True)]

    plain, packed = results
    print(
        f"\nDevice: {device}; model: {args.model or 'tiny random Llama (2 layers, hidden 64)'}; "
        f"method {args.method}; attention {plain['attn']}; bf16 {plain['bf16']}"
    )
    print(
        f"Data: {plain['examples']} examples; {args.steps} optimizer steps of batch {args.batch_size}; "
        f"max_length {args.max_length}\n"
    )
    print(f"{'':<12}{'rows':>8}{'steps':>8}{'real tokens':>14}{'wall s':>10}{'tokens/s':>12}")
    for r in results:
        name = "packing" if r["packing"] else "no packing"
        print(
            f"{name:<12}{r['rows']:>8}{r['steps']:>8}{int(r['tokens']):>14}{r['wall_s']:>10.1f}"
            f"{r['tokens_per_s']:>12.0f}"
        )
    print(f"\npacking / no packing tokens/s: {packed['tokens_per_s'] / plain['tokens_per_s']:.2f}x")
    if plain["attn"] != "flash_attention_2":
        print(
            f"(attention {plain['attn']}: packed rows are kept apart by a block-diagonal mask over the whole "
            "row, quadratic in max_length; flash-attn's variable-length kernels avoid that)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
