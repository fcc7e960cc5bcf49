"""Benchmark generator fine-tuning: training tokens/s, peak accelerator memory and MFU, per setting.

    python bench/train.py                       # tiny random model, LoRA, packing off vs on, CPU or GPU
    python bench/train.py --model PATH --steps 30 --batch-size 4 --max-length 4096
    python bench/train.py --model PATH --methods lora,full --deepspeed none,zero3 --baseline --json sft.json

Each setting (method x DeepSpeed x packing) trains through `sciqag_dataset.trainers.sft.build_trainer`
(what `sciqag train` runs: TRL SFTTrainer, PEFT, the shipped DeepSpeed presets) on the same published
`seed` folder for the same number of optimizer steps. ``--baseline`` runs each setting a second time as a
plain TRL script would (``SFTTrainer(model=PATH, args=SFTConfig(...), peft_config=LoraConfig(...))`` on the
same examples saved as JSON Lines, the same dtype, attention and DeepSpeed file) and prints the ratio of
the two: what this project's layer costs or gains over TRL alone.

- tokens/s counts real (non-padding) tokens, from TRL's ``num_tokens``, between the end of step
  ``--warmup-steps`` and the end of the last step (warm-up, compilation and DeepSpeed's first gathers left out);
- peak memory is ``torch.cuda.max_memory_allocated`` over the run, less what was allocated before it;
- MFU is model FLOPs per second over the accelerator's peak dense bf16 FLOP/s (``--peak-tflops``, else
  known for the device's name). Model FLOPs per token: 6 N for full fine-tuning and 4 N for LoRA (no weight
  gradients of the frozen base), N the parameters outside the input embedding, plus attention's 12 L d T
  (PaLM, appendix B), T the token-weighted mean example length. Recomputation (activation checkpointing)
  is not counted, as MFU's definition has it.

Without packing a batch is padded to its longest example; with packing (TRL's padding-free BFD) examples
are laid end to end in ``max_length`` rows. The papers are deterministic synthetic texts of varied length
(seeded, log-uniform over ``--words``), so padding matters as it does on real corpora.
A DeepSpeed setting in a single process sets the one-process distributed environment itself.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]

from transformers.integrations.deepspeed import unset_hf_deepspeed_config  # noqa: E402

from sciqag_dataset.config.config_file import Config  # noqa: E402
from sciqag_dataset.core.jsonl import JsonlWriter  # noqa: E402
from sciqag_dataset.hub.publish import write_folder  # noqa: E402
from sciqag_dataset.llm.server import free_port  # noqa: E402
from sciqag_dataset.trainers.config import (  # noqa: E402
    PAPER_DEFAULTS,
    TrainConfig,
    deepspeed_config,
    machine_defaults,
)
from sciqag_dataset.trainers.data import load_splits, pick_split, prepare_examples  # noqa: E402
from sciqag_dataset.trainers.modeling import load_tokenizer, pick_attention  # noqa: E402
from sciqag_dataset.trainers.sft import build_trainer  # noqa: E402

WORDS = (
    "lattice strain annealing film cathode electrolyte band gap conductivity grain boundary dopant "
    "vacancy oxide spinel perovskite zeolite catalyst surface adsorption diffusion phase transition "
    "crystal anisotropy phonon carrier mobility"
).split()

#: Peak dense bf16 TFLOP/s by a part of the device's name, first match (the vendors' data sheets, no sparsity).
PEAK_TFLOPS = [
    ("H100 NVL", 835.0),
    ("H200 NVL", 835.0),
    ("H100 PCIe", 756.0),
    ("H100", 989.0),
    ("H200", 989.0),
    ("H800", 989.0),
    ("A100", 312.0),
    ("A800", 312.0),
    ("L40S", 362.0),
    ("L40", 181.0),
    ("L4", 121.0),
]


def synthetic_work(root: Path, n: int, seed: int = 0, words: tuple[int, int] = (20, 420)) -> Path:
    """A work dir (papers, keywords, seed QA) with paper lengths log-uniform over ``words``."""
    rng = random.Random(seed)
    lo, hi = words
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    with (
        JsonlWriter(work / "papers.jsonl") as papers,
        JsonlWriter(work / "keywords.jsonl") as kws,
        JsonlWriter(work / "seed.jsonl") as seed_out,
    ):
        for i in range(n):
            pid = f"bench-{i:04d}"
            n_words = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
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
    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed"]
    return write_folder(work, out, cfg)


def one_process_distributed() -> None:
    """The environment torch.distributed needs for DeepSpeed in one process, unless a launcher set it."""
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1")):
        os.environ.setdefault(key, value)
    os.environ.setdefault("MASTER_PORT", str(free_port()))


# --- FLOPs ---------------------------------------------------------------------------------------


def model_flops_per_token(n_params: int, n_layers: int, d_model: int, context: float, full: bool) -> float:
    """Training FLOPs per token: 6 N (full) or 4 N (LoRA: no weight gradients) plus attention's 12 L d T."""
    return (6 if full else 4) * n_params + 12 * n_layers * d_model * context


def token_weighted_length(lengths) -> float:
    """The mean example length a token sees: sum(l^2) / sum(l)."""
    lengths = [int(x) for x in lengths]
    return sum(x * x for x in lengths) / max(sum(lengths), 1)


def example_lengths(dataset) -> list[int]:
    """Each example's token count in a tokenized (``input_ids``) or packed (``seq_lengths``) TRL dataset."""
    if "seq_lengths" in dataset.column_names:
        return [x for row in dataset["seq_lengths"] for x in row]
    return [len(ids) for ids in dataset["input_ids"]]


def shape_of(model) -> dict:
    """Parameters outside the input embedding (its lookup is no matrix product), layers and width."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    embed = base.get_input_embeddings().weight
    params = list(base.parameters())
    # under ZeRO-3 a parameter's local tensor is empty: its full size is ds_numel
    size = lambda p: getattr(p, "ds_numel", p.numel())  # noqa: E731
    total = sum(size(p) for p in params)
    tied = getattr(base.config, "tie_word_embeddings", False)
    return {
        "params": total,
        "matmul_params": total - (0 if tied else size(embed)),  # tied: the embedding is the output layer too
        "trainable": sum(size(p) for p in model.parameters() if p.requires_grad),
        "layers": base.config.num_hidden_layers,
        "hidden": base.config.hidden_size,
    }


def peak_tflops(device_name: str, given: float | None) -> float | None:
    if given:
        return given
    return next((v for k, v in PEAK_TFLOPS if k in device_name), None)


# --- one setting -----------------------------------------------------------------------------------


def clock():
    """A TrainerCallback that keeps (time, cumulative real tokens) at each logged step in ``.marks``."""
    import torch
    from transformers import TrainerCallback

    class Clock(TrainerCallback):
        def __init__(self):
            self.marks: list[tuple[float, float]] = []

        def on_log(self, _args, state, control, logs=None, **kw):
            if logs and "num_tokens" in logs:
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self.marks.append((time.perf_counter(), float(logs["num_tokens"])))

    return Clock()


def settings_dict(model: str, dataset: Path, out: Path, method: str, deepspeed: str, packing: bool, args) -> dict:
    """One setting as `sciqag train` options (a ``train:`` section)."""
    return dict(
        model_name_or_path=model,
        dataset=str(dataset),
        output_dir=str(out),
        method=method,
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
        deepspeed=None if deepspeed == "none" else deepspeed,
    )


def build_plain_trl(settings: dict, examples: Path, attn: str, bf16: bool):
    """What a plain TRL script builds for the same settings: the model from its path, loaded by TRL."""
    import torch
    from datasets import load_dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    full = settings["method"] == "full"
    # the dtypes `sciqag train` loads with: fp32 master weights for full fine-tuning without DeepSpeed, else bf16
    dtype = "bfloat16" if bf16 and not (full and not settings["deepspeed"]) else "float32"
    args = SFTConfig(
        output_dir=settings["output_dir"],
        max_steps=settings["max_steps"],
        per_device_train_batch_size=settings["per_device_train_batch_size"],
        gradient_accumulation_steps=1,
        max_length=settings["max_length"],
        packing=settings["packing"],
        learning_rate=settings["learning_rate"],
        warmup_steps=0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=settings["seed"],
        bf16=bf16,
        use_cpu=not torch.cuda.is_available(),
        gradient_checkpointing=settings["activation_checkpointing"],
        deepspeed=deepspeed_config(settings["deepspeed"]),
        model_init_kwargs={"dtype": dtype, "attn_implementation": attn},
    )
    lora = None
    if not full:
        lora = LoraConfig(
            r=PAPER_DEFAULTS["lora_r"],
            lora_alpha=PAPER_DEFAULTS["lora_alpha"],
            lora_dropout=PAPER_DEFAULTS["lora_dropout"],
            target_modules=PAPER_DEFAULTS["lora_target_modules"],
            task_type="CAUSAL_LM",
        )
    data = load_dataset("json", data_files=str(examples), split="train")
    return SFTTrainer(model=settings["model_name_or_path"], args=args, train_dataset=data, peft_config=lora)


def memory_mark() -> int:
    """Bytes allocated on the accelerator now, with its peak counter reset (0 without CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return 0
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def measure(trainer, info: dict, args, device_name: str, before: int) -> dict:
    """Train, and read tokens/s, peak memory (since ``before``: the model's load included) and MFU."""
    import torch

    cuda = torch.cuda.is_available()
    timer = clock()
    trainer.add_callback(timer)
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    marks = timer.marks
    if len(marks) < 2:
        raise RuntimeError(f"{len(marks)} logged step(s): tokens/s needs two at least (--steps 2 or more)")
    first = min(max(args.warmup_steps, 1), len(marks) - 1) - 1  # the end of the last warm-up step
    (t0, n0), (t1, n1) = marks[first], marks[-1]
    shape = shape_of(trainer.model)
    context = token_weighted_length(example_lengths(trainer.train_dataset))
    tokens_per_s = (n1 - n0) / max(t1 - t0, 1e-9)
    flops = model_flops_per_token(
        shape["matmul_params"], shape["layers"], shape["hidden"], context, full=info["method"] == "full"
    )
    peak = peak_tflops(device_name, args.peak_tflops) if cuda else None
    return {
        **info,
        "rows": len(trainer.train_dataset),
        "steps": len(marks),
        "timed_steps": len(marks) - 1 - first,
        "wall_s": round(wall, 2),
        "tokens": int(n1),
        "tokens_per_s": round(tokens_per_s, 1),
        "context_tokens": round(context, 1),
        "tflops": round(tokens_per_s * flops / 1e12, 3),
        "mfu": round(tokens_per_s * flops / (peak * 1e12), 4) if peak else None,
        "peak_mem_gib": round((torch.cuda.max_memory_allocated() - before) / 2**30, 2) if cuda else None,
        **{k: shape[k] for k in ("params", "trainable")},
    }


def free(trainer) -> None:
    """Let go of a finished trainer's accelerator state (one process runs many settings)."""
    trainer.accelerator.free_memory()
    unset_hf_deepspeed_config()


def prepared_examples(settings: dict):
    """The prompt/completion rows `sciqag train` builds from the seed rows (``build_trainer`` makes the same)."""
    cfg = TrainConfig.from_dict(dict(settings))
    rows = pick_split(load_splits(cfg.args.dataset, cfg.args.dataset_config), cfg.args.train_split, required=True)
    a, tokenizer = cfg.args, load_tokenizer(cfg)
    prep_kw = dict(n_default=a.n_pairs, messages_form=cfg.sft.assistant_only_loss)
    return prepare_examples(list(rows), a.prompt_style, tokenizer, cfg.sft.max_length, **prep_kw).dataset


def run_setting(model: str, dataset: Path, tmp: Path, setting: tuple[str, str, bool], args, device, order: int):
    """This project's run of one setting, and with ``--baseline`` plain TRL's on the same examples; the two
    take turns going first (``order``). A run that fails is a row with its error; the other still runs."""
    method, deepspeed, packing = setting
    name = f"{method}-{deepspeed}-{'packed' if packing else 'padded'}"
    settings = settings_dict(model, dataset, tmp / f"out-{name}", method, deepspeed, packing, args)
    base = {"method": method, "deepspeed": deepspeed, "packing": packing}
    examples = tmp / f"examples-{name}.jsonl"
    prepared = prepared_examples(settings)
    prepared.to_json(str(examples))
    bf16 = machine_defaults()["bf16"]  # what build_trainer decides too
    attn = pick_attention("auto", bf16)

    def ours():
        built = build_trainer(TrainConfig.from_dict(dict(settings)))
        return built.trainer, {"attn": built.attn, "bf16": built.bf16, "examples": built.train_data.used}

    def plain():
        trainer = build_plain_trl({**settings, "output_dir": str(tmp / f"trl-{name}")}, examples, attn, bf16)
        return trainer, {"attn": attn, "bf16": bf16, "examples": len(prepared)}

    runners = [("sciqag", ours)] + ([("trl", plain)] if args.baseline else [])
    rows = []
    for runner, build in runners[::-1] if order % 2 else runners:
        before = memory_mark()
        trainer = None
        try:
            trainer, info = build()
            rows.append(measure(trainer, {**base, **info, "runner": runner}, args, device, before))
        except Exception as exc:  # one failed run (an out-of-memory, say) must not lose the other's figures
            rows.append({**base, "runner": runner, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            if trainer is not None:
                free(trainer)
            del trainer
            memory_mark()
    return sorted(rows, key=lambda r: r["runner"] != "sciqag")


# --- the table -------------------------------------------------------------------------------------


def table(results: list[dict]) -> str:
    """Markdown: one line per setting and runner; the TRL ratio and packing's gain where both ran."""
    head = "| method | DeepSpeed | packing | runner | tokens/s | TFLOP/s | MFU | peak GiB | vs TRL | packing gain |"
    lines = [head, "|" + " --- |" * 10]
    by = {(r["method"], r["deepspeed"], r["packing"], r["runner"]): r for r in results}
    for r in results:
        if r.get("error"):
            lines.append(
                f"| {r['method']} | {r['deepspeed']} | {'on' if r['packing'] else 'off'} | {r['runner']} | "
                f"failed: {r['error'][:80]} | | | | | |"
            )
            continue
        trl = by.get((r["method"], r["deepspeed"], r["packing"], "trl"))
        vs = f"{r['tokens_per_s'] / trl['tokens_per_s']:.2f}" if r["runner"] == "sciqag" and _ok(trl) else ""
        padded = by.get((r["method"], r["deepspeed"], False, r["runner"]))
        gain = f"{r['tokens_per_s'] / padded['tokens_per_s']:.2f}x" if r["packing"] and _ok(padded) else ""
        mfu = f"{r['mfu']:.1%}" if r.get("mfu") is not None else "-"
        mem = f"{r['peak_mem_gib']:.1f}" if r.get("peak_mem_gib") is not None else "-"
        lines.append(
            f"| {r['method']} | {r['deepspeed']} | {'on' if r['packing'] else 'off'} | {r['runner']} | "
            f"{r['tokens_per_s']:.0f} | {r['tflops']:.3g} | {mfu} | {mem} | {vs} | {gain} |"
        )
    return "\n".join(lines)


def _ok(r: dict | None) -> bool:
    return bool(r) and not r.get("error") and r.get("tokens_per_s", 0) > 0


def _split(value: str, allowed: tuple[str, ...], what: str) -> list[str]:
    items = [x.strip() for x in value.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise SystemExit(f"--{what}: each of {', '.join(allowed)}, comma-separated (got {value!r})")
    return items


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="base model folder or Hub id (default: a tiny random Llama built here)")
    p.add_argument("--label", help="the model's name in the output (default: --model)")
    p.add_argument("--dataset", type=Path, help="a `sciqag publish` folder to train on (default: synthetic papers)")
    p.add_argument("--papers", type=int, default=96, help="synthetic papers (default 96)")
    p.add_argument("--words", default="20-420", help="paper lengths in words, log-uniform LOW-HIGH (default 20-420)")
    p.add_argument("--steps", type=int, default=10, help="optimizer steps per run (default 10)")
    p.add_argument("--warmup-steps", type=int, default=1, help="steps left out of tokens/s (default 1)")
    p.add_argument("--batch-size", type=int, default=4, help="per-device batch (default 4)")
    p.add_argument("--max-length", type=int, default=4096, help="tokens per row (default 4096)")
    p.add_argument("--methods", default="lora", help="lora, longlora, full; comma-separated (default lora)")
    p.add_argument("--method", dest="methods", help=argparse.SUPPRESS)
    p.add_argument("--deepspeed", default="none", help="none, zero2, zero3; comma-separated (default none)")
    p.add_argument("--packing", default="off,on", help="off, on; comma-separated (default off,on)")
    p.add_argument("--baseline", action="store_true", help="also run each setting as a plain TRL script")
    p.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--peak-tflops", type=float, help="the accelerator's peak dense bf16 TFLOP/s (MFU)")
    p.add_argument("--json", type=Path, help="append each result to this JSON Lines file as it is measured")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    methods = _split(args.methods, ("lora", "longlora", "full"), "methods")
    speeds = _split(args.deepspeed, ("none", "zero2", "zero3"), "deepspeed")
    packings = [x == "on" for x in _split(args.packing, ("off", "on"), "packing")]
    lo, hi = (int(x) for x in args.words.split("-"))

    import torch

    if any(s != "none" for s in speeds):
        one_process_distributed()
    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else f"CPU ({torch.get_num_threads()} threads)"
    label = args.label or args.model or "tiny random Llama (2 layers, hidden 64)"
    results: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model
        if model is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from tiny_model import build_tiny_model

            model = str(build_tiny_model(tmp / "tiny-model"))
        dataset = args.dataset or publish(synthetic_work(tmp, args.papers, args.seed, (lo, hi)), tmp / "dataset")
        settings = [(m, speed, packing) for speed in speeds for m in methods for packing in packings]
        for order, (method, speed, packing) in enumerate(settings):
            try:
                got = run_setting(model, dataset, tmp, (method, speed, packing), args, device, order)
            except Exception as exc:  # one failed setting must not lose the others' figures
                got = [{"method": method, "deepspeed": speed, "packing": packing, "runner": "sciqag",
                        "error": f"{type(exc).__name__}: {exc}"}]  # fmt: skip
            for r in got:
                r.update(model=label, device=device, steps_requested=args.steps, batch=args.batch_size,
                         max_length=args.max_length)  # fmt: skip
                print(json.dumps(r), flush=True)
                if args.json:
                    with args.json.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(r) + "\n")
            results.extend(got)

    print(f"\nDevice: {device}; model: {label}; batch {args.batch_size}; max_length {args.max_length}; "
          f"{args.steps} steps ({args.warmup_steps} left out)\n")  # fmt: skip
    print(table(results))
    ok = [r for r in results if not r.get("error")]
    if ok and ok[0].get("attn") != "flash_attention_2":
        print(
            f"\n(attention {ok[0].get('attn')}: with packing a batch is one row whose examples are kept apart by a "
            "block-diagonal mask, quadratic in batch x max_length; flash-attn's variable-length kernels avoid that)"
        )
    return 1 if len(ok) < len(results) else 0


if __name__ == "__main__":
    sys.exit(main())
