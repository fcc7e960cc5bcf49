"""The GPU half, measured in one run: SFT throughput per setting beside plain TRL, and generation on a server.

    python bench/gpu.py RESULTS                         # every part
    python bench/gpu.py RESULTS --parts sft,generate    # no DeepSpeed settings
    python bench/gpu.py RESULTS --parts zero3           # the DeepSpeed ZeRO-3 settings alone

`bench/gpu.sh` installs what this needs and calls it. Parts, in this order:

- ``sft``: `bench/train.py` on two models, each in a process of its own: SmolLM2-135M-Instruct (the embedded
  model: from the Hub, else the offline GGUF copy, else its config and tokenizer from ``--smollm2-config``
  with random weights) and a randomly initialised Llama of ~1.2B parameters (TinyLlama's shape with
  SmolLM2's tokenizer: the stack is measured, not the model). LoRA and full fine-tuning, packing off and on,
  each beside a plain TRL script on the same examples (``--baseline``), without DeepSpeed;
- ``generate``: `sciqag train` (the CLI) makes a generator folder from SmolLM2 in a few steps; it is served
  by vLLM (``--vllm`` names its executable, e.g. one in a venv of its own: vLLM pins its own torch and
  transformers) or, without vLLM, by ``transformers serve --continuous-batching`` on the GPU; then
  `bench/generate.py` sends the same papers through the generate stage's runner and a bare async client at
  64 and 256 requests in flight;
- ``zero3``: the SFT settings again under the shipped ZeRO-3 preset (one process, one GPU).

Every figure is appended to RESULTS/sft.jsonl and RESULTS/generate.jsonl as it is measured, so a run cut short
keeps what it measured; RESULTS/results.md is the tables, rewritten after each part, and RESULTS/env.json
the machine and versions. A part that fails is recorded in RESULTS/errors.log and the next one runs.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from train import publish, synthetic_work  # noqa: E402  (bench/train.py)
from train import table as sft_table  # noqa: E402

from sciqag_dataset.core.errors import Unavailable  # noqa: E402
from sciqag_dataset.llm.models import default_model_dir  # noqa: E402
from sciqag_dataset.llm.server import free_port  # noqa: E402

PARTS = ("sft", "generate", "zero3")

#: TinyLlama-1.1B's shape; with SmolLM2's 49,152-token vocabulary, 1.17B parameters.
LLAMA_1B = dict(
    hidden_size=2048,
    intermediate_size=5632,
    num_hidden_layers=22,
    num_attention_heads=32,
    num_key_value_heads=4,
    max_position_embeddings=8192,
    rope_theta=10000.0,
    tie_word_embeddings=False,
)
#: ``--smoke``: the same script on a CPU in minutes (it checks the script, not the speed).
SMOKE = dict(
    steps=2, warmup_steps=1, batch_size=2, max_length=1024, papers_train=16, train_words="50-300",
    generator_steps=2, concurrency="2,4", papers=8, words=60, max_tokens=8, repeats=1, kv_cache_tokens=32768,
)  # fmt: skip
SMOKE_LLAMA = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2)  # fmt: skip


def log(msg: str) -> None:
    print(f"[gpu bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --- models --------------------------------------------------------------------------------------


def smollm2(work: Path, config_dir: Path | None) -> tuple[Path, str]:
    """SmolLM2-135M-Instruct's folder and how it was had: real weights, or random ones in its shape."""
    try:
        return default_model_dir(), "SmolLM2-135M-Instruct"
    except Unavailable as exc:
        if config_dir is None:
            raise SystemExit(
                f"SmolLM2-135M-Instruct is out of reach ({exc}). Give --smollm2-config DIR (SMOLLM2_CONFIG for "
                "bench/gpu.sh): its config and tokenizer, as `python bench/gpu_wheels.py` saves them"
            ) from None
        log(f"SmolLM2's weights unavailable ({exc}); random weights in its shape from {config_dir}")
    return random_model(config_dir, work / "smollm2-random", {}), "SmolLM2-135M shape, random weights"


def random_model(like: Path, out: Path, overrides: dict) -> Path:
    """A randomly initialised causal LM with ``like``'s config (changed by ``overrides``) and tokenizer, in bf16."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if (out / "config.json").exists():
        return out
    config = AutoConfig.from_pretrained(like)
    for key, value in overrides.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(like).save_pretrained(out)
    del model
    return out


# --- parts -------------------------------------------------------------------------------------------


def python_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "1", "TOKENIZERS_PARALLELISM": "false"}


#: When the run must end (``--budget``): no child outlives it, so what was measured is reported in time.
DEADLINE = float("inf")


def run(cmd: list[str], results: Path, name: str, timeout: float) -> bool:
    """A child process whose output goes to RESULTS/NAME.log; False (and a line in errors.log) when it fails."""
    timeout = min(timeout, DEADLINE - time.monotonic())
    if timeout < 30:
        log(f"{name}: skipped, the budget is spent")
        with (results / "errors.log").open("a", encoding="utf-8") as f:
            f.write(f"{name}: not run, the budget (--budget) was spent\n")
        return False
    log(f"{name}: {' '.join(cmd)}")
    started = time.perf_counter()
    with (results / f"{name}.log").open("a", encoding="utf-8") as out:
        try:
            # cwd: not the checkout, whose partial sciqag_dataset/ folder `python -m` would import first
            done = subprocess.run(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=python_env(), timeout=timeout, cwd=results
            )
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    log(f"{name}: exit {code} after {time.perf_counter() - started:.0f} s")
    if code != 0:
        with (results / "errors.log").open("a", encoding="utf-8") as f:
            f.write(f"{name}: exit {code}; see {name}.log\n")
    return code == 0


def sft(results: Path, models: list[tuple[Path, str]], dataset: Path, deepspeed: str, args) -> None:
    for path, label in models:
        slug = label.split()[0].split(",")[0].lower()
        cmd = [sys.executable, str(ROOT / "bench" / "train.py"), "--model", str(path), "--label", label]
        cmd += ["--dataset", str(dataset), "--methods", "lora,full", "--deepspeed", deepspeed, "--packing", "off,on"]
        cmd += ["--baseline", "--json", str(results / "sft.jsonl"), "--steps", str(args.steps)]
        cmd += ["--warmup-steps", str(args.warmup_steps), "--batch-size", str(args.batch_size)]
        cmd += ["--max-length", str(args.max_length)]
        run(cmd, results, f"sft-{deepspeed}-{slug}", args.part_timeout)


def train_generator(results: Path, base: Path, dataset: Path, out: Path, args) -> bool:
    """`sciqag train` as a user runs it (merged weights, serving defaults): the folder the server serves."""
    cmd = [sys.executable, "-m", "sciqag_dataset.cli.train", "--model_name_or_path", str(base)]
    cmd += ["--dataset", str(dataset), "--output_dir", str(out), "--method", "lora"]
    cmd += ["--max_steps", str(args.generator_steps)]
    cmd += ["--learning_rate", "1e-3", "--warmup_steps", "2", "--gradient_accumulation_steps", "1"]
    cmd += ["--per_device_train_batch_size", "4", "--max_length", str(args.max_length), "--eval_split", "null"]
    cmd += ["--save_strategy", "no", "--activation_checkpointing", "false"]
    return run(cmd, results, "train-generator", args.part_timeout)


def vllm_server(executable: str, model: Path, port: int, log_path: Path) -> subprocess.Popen:
    """`vllm serve MODEL` on loopback; its /health answers once the model is loaded."""
    cmd = [executable, "serve", str(model), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--max-model-len", "8192", "--dtype", "bfloat16"]
    log(" ".join(cmd))
    with log_path.open("ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"vllm serve exited with {proc.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            pass
        time.sleep(1)
    proc.kill()
    raise RuntimeError("vllm serve did not become healthy in 600 s")


def generate(results: Path, generator: Path, args) -> None:
    bench = [sys.executable, str(ROOT / "bench" / "generate.py"), "--model-dir", str(generator)]
    bench += ["--strategies", "runner,bare_async", "--concurrency", args.concurrency, "--papers", str(args.papers)]
    bench += ["--words", str(args.words), "--max-tokens", str(args.max_tokens), "--repeats", str(args.repeats)]
    bench += ["--json", str(results / "generate.jsonl")]
    vllm = args.vllm or shutil.which("vllm")
    if not vllm:
        log("vLLM is not installed: transformers serve --continuous-batching serves the generator instead")
        run(bench + ["--device", "auto", "--kv-cache-tokens", str(args.kv_cache_tokens)], results, "generate", 1800)
        return
    port = free_port()
    proc = vllm_server(vllm, generator, port, results / "vllm.log")
    try:
        endpoint = ["--endpoint", f"http://127.0.0.1:{port}/v1", "--served-model", str(generator)]
        run(bench + endpoint + ["--server-name", "vllm"], results, "generate", 1800)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# --- the report ----------------------------------------------------------------------------------


def environment() -> dict:
    import torch

    versions = {}
    for pkg in ("torch", "transformers", "trl", "peft", "accelerate", "deepspeed", "datasets", "flash-attn", "vllm"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    cuda = torch.cuda.is_available()
    return {
        "device": torch.cuda.get_device_name(0) if cuda else "CPU",
        "gpu_memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1) if cuda else None,
        "cuda": torch.version.cuda,
        "cpu_count": os.cpu_count(),
        "flash_attn_importable": importlib.util.find_spec("flash_attn") is not None,
        "versions": versions,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def generate_table(rows: list[dict]) -> str:
    lines = [
        "| server | in flight | runner papers/s | bare papers/s | runner tok/s | bare tok/s | runner / bare |",
        "|" + " --- |" * 7,
    ]
    for r in rows:
        run_, bare = r["strategies"].get("runner"), r["strategies"].get("bare_async")
        if not (run_ and bare):
            continue
        lines.append(
            f"| {r['server']} | {r['concurrency']} | {run_['papers_per_s']:.2f} | {bare['papers_per_s']:.2f} | "
            f"{run_['tokens_per_s']:.0f} | {bare['tokens_per_s']:.0f} | {r['runner_vs_bare']:.1%} |"
        )
    return "\n".join(lines)


def write_report(results: Path, env: dict, args) -> None:
    sft_rows = read_jsonl(results / "sft.jsonl")
    gen_rows = read_jsonl(results / "generate.jsonl")
    text = [
        f"# GPU bench: {env['device']} ({env['gpu_memory_gib']} GiB), CUDA {env['cuda']}, {env['date']}",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v),
        f"flash-attn importable: {env['flash_attn_importable']}. Command: `bash bench/gpu.sh RESULTS {args.parts}`.",
        "",
    ]
    for model in dict.fromkeys(r.get("model") for r in sft_rows):
        rows = [r for r in sft_rows if r.get("model") == model]
        first = next((r for r in rows if not r.get("error")), rows[0])
        text += [
            f"## SFT: {model}",
            "",
            f"{first.get('params', 0) / 1e6:.0f}M parameters; batch {first.get('batch')} x max_length "
            f"{first.get('max_length')}; {first.get('steps_requested')} steps, tokens/s over the last "
            f"{first.get('timed_steps', '?')}; attention {first.get('attn')}; bf16 {first.get('bf16')}. "
            "vs TRL: this project's tokens/s over a plain TRL script's, same examples and settings.",
            "",
            sft_table(rows),
            "",
        ]
    if gen_rows:
        text += [
            "## Generation: the generate stage's runner against a bare async client",
            "",
            f"{gen_rows[0]['papers']} synthetic papers (~{gen_rows[0]['words']} words, prompt ~"
            f"{gen_rows[0]['prompt_tokens']} tokens), max_tokens {gen_rows[0]['max_tokens']}, temperature "
            f"{gen_rows[0]['temperature']}, {gen_rows[0]['repeats']} repeats in rotated order.",
            "",
            generate_table(gen_rows),
            "",
        ]
    errors = results / "errors.log"
    if errors.exists():
        text += ["## Failed parts", "", "```", errors.read_text().strip(), "```", ""]
    (results / "results.md").write_text("\n".join(text), encoding="utf-8")
    (results / "results.json").write_text(
        json.dumps({"environment": env, "sft": sft_rows, "generate": gen_rows}, indent=1), encoding="utf-8"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, help="folder for the figures (JSON Lines, JSON, Markdown, logs)")
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    p.add_argument("--work", type=Path, help="folder for models and data, kept for a rerun (default: .gpu/work)")
    p.add_argument("--smollm2-config", type=Path, help="SmolLM2's config and tokenizer, for random weights offline")
    p.add_argument("--vllm", help="the vllm executable (default: `vllm` on PATH, else transformers serve)")
    p.add_argument("--papers-train", type=int, default=256, help="synthetic seed papers to train on")
    p.add_argument("--train-words", default="200-2000", help="their lengths in words, log-uniform")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup-steps", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--max-length", type=int, default=4096)
    p.add_argument("--concurrency", default="64,256")
    p.add_argument("--papers", type=int, default=512, help="papers per generation run")
    p.add_argument("--words", type=int, default=300, help="words per paper in generation")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--kv-cache-tokens", type=int, default=1 << 20, help="transformers serve's KV cache (tokens)")
    p.add_argument("--generator-steps", type=int, default=20, help="training steps of the served generator")
    p.add_argument("--part-timeout", type=float, default=900, help="seconds one child process may run")
    p.add_argument("--budget", type=float, help="seconds the whole run may take; parts that would pass it are cut")
    p.add_argument("--smoke", action="store_true", help="tiny sizes: check the script on a CPU")
    args = p.parse_args(argv)
    global DEADLINE
    if args.budget:
        DEADLINE = time.monotonic() + args.budget
    if args.smoke:
        vars(args).update(SMOKE)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    if not parts or any(x not in PARTS for x in parts):
        raise SystemExit(f"--parts: comma-separated, of {', '.join(PARTS)} (got {args.parts!r})")

    results = args.results.resolve()
    results.mkdir(parents=True, exist_ok=True)
    work = (args.work or ROOT / ".gpu" / "work").resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = environment()
    (results / "env.json").write_text(json.dumps(env, indent=1))
    log(f"{env['device']}; parts {parts}; results in {results}")

    small, small_label = smollm2(work, args.smollm2_config)
    dataset = work / "dataset"
    if not (dataset / "README.md").exists():
        lo, hi = (int(x) for x in args.train_words.split("-"))
        publish(synthetic_work(work, args.papers_train, 0, (lo, hi)), dataset)
    shape, label = ({**LLAMA_1B, **SMOKE_LLAMA}, "Llama-shaped, tiny") if args.smoke else (LLAMA_1B, "Llama 1.2B")
    models = [(random_model(small, work / "llama-random", shape), f"{label}, random weights")]
    models.append((small, small_label))

    for part in parts:
        try:
            if part == "sft":
                sft(results, models, dataset, "none", args)
            elif part == "zero3":
                sft(results, models, dataset, "zero3", args)
            elif part == "generate":
                generator = work / "generator"
                if (generator / "sciqag_generator.json").exists() or train_generator(
                    results, small, dataset, generator, args
                ):
                    generate(results, generator, args)
        except Exception as exc:  # a part that fails must not cost the others their figures
            log(f"{part} failed: {type(exc).__name__}: {exc}")
            with (results / "errors.log").open("a", encoding="utf-8") as f:
                f.write(f"{part}: {type(exc).__name__}: {exc}\n")
        write_report(results, env, args)
    log(f"done: {results / 'results.md'}")
    print((results / "results.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
