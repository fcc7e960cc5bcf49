"""The GPU bench's arithmetic, tables and install list, checked where no GPU is (a GPU run is rare and short)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def train():
    return load("train")


@pytest.fixture(scope="module")
def gpu(train):
    return load("gpu")


@pytest.fixture(scope="module")
def wheels():
    return load("gpu_wheels")


def _tiny_llama(tied: bool, attn: str = "sdpa", layers: int = 2):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=tied,
        attn_implementation=attn,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(config)


@pytest.mark.parametrize("full", [True, False])
def test_model_flops_per_token_match_what_torch_counts_in_a_training_step(train, full):
    import torch
    from peft import LoraConfig, get_peft_model
    from torch.utils.flop_counter import FlopCounterMode

    # eager: the counter sees attention's matrix products. Eight layers: LoRA's first layer needs no gradient
    # of its input (the frozen embedding's output), which 4N counts; one layer in eight keeps that small
    model = _tiny_llama(tied=False, attn="eager", layers=8)
    if not full:
        model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    tokens = 512
    ids = torch.randint(0, 512, (1, tokens))
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids, labels=ids).loss.backward()
    shape = train.shape_of(model)
    predicted = tokens * train.model_flops_per_token(
        shape["matmul_params"], shape["layers"], shape["hidden"], tokens, full=full
    )
    assert counter.get_total_flops() == pytest.approx(predicted, rel=0.03)


def test_context_is_token_weighted_over_padded_and_packed_examples(train):
    padded = datasets.Dataset.from_dict({"input_ids": [[1] * 100, [1] * 300]})
    packed = datasets.Dataset.from_dict({"input_ids": [[1] * 400], "seq_lengths": [[100, 300]]})
    assert train.example_lengths(padded) == train.example_lengths(packed) == [100, 300]
    # a token sits in a 300-token example three times as often as in a 100-token one
    assert train.token_weighted_length([100, 300]) == pytest.approx((100**2 + 300**2) / 400)


@pytest.mark.parametrize("tied", [False, True])
def test_an_input_embedding_is_no_matrix_product_unless_it_is_the_output_layer_too(train, tied):
    from peft import LoraConfig, get_peft_model

    model = _tiny_llama(tied)
    total = sum(p.numel() for p in model.parameters())
    shape = train.shape_of(model)
    assert shape["params"] == total and shape["layers"] == 2 and shape["hidden"] == 64
    assert shape["matmul_params"] == (total if tied else total - 512 * 64)
    lora = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    adapters = sum(p.numel() for n, p in lora.named_parameters() if "lora_" in n)
    wrapped = train.shape_of(lora)
    assert wrapped["trainable"] == adapters and wrapped["params"] == total + adapters


def test_peak_flops_by_device_name_or_as_given(train):
    assert train.peak_tflops("NVIDIA H200", None) == 989.0
    assert train.peak_tflops("NVIDIA A100-SXM4-80GB", None) == 312.0
    assert train.peak_tflops("NVIDIA H200 NVL", None) == 835.0
    assert train.peak_tflops("NVIDIA L40", None) == 181.0 and train.peak_tflops("NVIDIA L4", None) == 121.0
    assert train.peak_tflops("NVIDIA GeForce RTX 4090", None) is None
    assert train.peak_tflops("NVIDIA GeForce RTX 4090", 165.0) == 165.0


def _row(method="lora", ds="none", packing=False, runner="sciqag", tps=1000.0, **kw):
    return {"method": method, "deepspeed": ds, "packing": packing, "runner": runner, "tokens_per_s": tps,
            "tflops": 1.5, "mfu": 0.25, "peak_mem_gib": 3.0, **kw}  # fmt: skip


def test_sft_table_gives_the_ratio_to_trl_packing_gain_and_failures(train):
    rows = [
        _row(tps=1000.0),
        _row(runner="trl", tps=800.0),
        _row(packing=True, tps=2000.0),
        _row(packing=True, runner="trl", tps=2100.0),
        {"method": "full", "deepspeed": "zero3", "packing": False, "runner": "sciqag", "error": "OutOfMemoryError"},
    ]
    lines = train.table(rows).splitlines()
    assert lines[2].split("|")[9].strip() == "1.25"  # 1000 / 800
    assert lines[4].split("|")[9].strip() == "0.95" and lines[4].split("|")[10].strip() == "2.00x"
    assert lines[5].split("|")[10].strip() == "2.62x"  # TRL's own packing gain: 2100 / 800
    assert "failed: OutOfMemoryError" in lines[6] and "25.0%" in lines[2]


def test_wheels_follow_extras_leave_out_torch_and_carry_what_the_target_has_too_old(wheels, tmp_path):
    import importlib.metadata as md

    needed, asked = wheels.closure(wheels.ROOTS)
    assert {"trl", "transformers", "accelerate", "datasets", "deepspeed", "openai", "fastapi", "uvicorn"} <= set(
        needed
    )
    assert "matplotlib" in needed  # `sciqag train` draws its loss curve (the train extra)
    assert "torch" not in needed and "numpy" not in needed and not any(n.startswith("nvidia-") for n in needed)
    assert needed["trl"] == md.version("trl")
    have = tmp_path / "have.txt"
    have.write_text(
        f"transformers==5.0.0\ntrl=={md.version('trl')}\ndill\n# a comment\nuvicorn==0.1\n"
        "tokenizers==0.1.0\nregex==2020.1.8\nmatplotlib\n"
    )
    todo = wheels.wanted(needed, asked, wheels.read_have(have))
    assert "transformers" in todo  # the stack at the target's own version: ours is carried
    assert "tokenizers" in todo  # too old for transformers' requirement
    assert "regex" in todo  # the same
    assert "trl" not in todo and "dill" not in todo and "matplotlib" not in todo  # there, and fit
    assert "uvicorn" not in todo  # nothing asks more of its version
    assert "fastapi" in todo  # not there


def test_children_run_outside_the_checkout(gpu, tmp_path):
    """`python -m` imports from the working folder first: the checkout's partial sciqag_dataset/ would win."""
    cmd = [sys.executable, "-c", "import os; print(os.getcwd())"]
    assert gpu.run(cmd, tmp_path, "where", timeout=60)
    assert (tmp_path / "where.log").read_text().strip() == str(tmp_path)


def test_report_is_written_from_what_was_measured_and_names_failed_parts(gpu, tmp_path):
    env = {"device": "NVIDIA H200", "gpu_memory_gib": 139.8, "cuda": "13.0", "date": "2026-11-29",
           "versions": {"torch": "2.11.0", "vllm": None}, "flash_attn_importable": False}  # fmt: skip
    base = {"model": "SmolLM2-135M-Instruct", "params": 134_515_008, "batch": 8, "max_length": 4096,
            "steps_requested": 8, "timed_steps": 6, "attn": "sdpa", "bf16": True}  # fmt: skip
    with (tmp_path / "sft.jsonl").open("w") as f:
        for row in (_row(**base), _row(runner="trl", tps=990.0, **base)):
            f.write(json.dumps(row) + "\n")
    pooled = {"runner": {"papers_per_s": 9.0, "tokens_per_s": 2300.0},
              "bare_async": {"papers_per_s": 10.0, "tokens_per_s": 2560.0}}  # fmt: skip
    gen = {"server": "vllm", "concurrency": 64, "papers": 512, "words": 300, "prompt_tokens": 700,
           "max_tokens": 256, "temperature": 0.0, "repeats": 2, "strategies": pooled,
           "runner_vs_bare": 0.9}  # fmt: skip
    (tmp_path / "generate.jsonl").write_text(json.dumps(gen) + "\n")
    (tmp_path / "errors.log").write_text("zero3: exit 1; see sft-zero3-smollm2.log\n")
    gpu.write_report(tmp_path, env, type("Args", (), {"parts": "sft,generate,zero3"})())
    md = (tmp_path / "results.md").read_text()
    assert "## SFT: SmolLM2-135M-Instruct" in md and "135M parameters" in md and "| 1.01 |" in md
    assert "| vllm | 64 | 9.00 | 10.00 | 2300 | 2560 | 90.0% |" in md
    assert "zero3: exit 1" in md and "vllm" not in md.split("\n")[2]  # versions list only what is installed
    assert json.loads((tmp_path / "results.json").read_text())["generate"][0]["concurrency"] == 64


def test_the_install_script_parses():
    assert subprocess.run(["bash", "-n", str(ROOT / "bench" / "gpu.sh")]).returncode == 0


def test_each_setting_trains_beside_plain_trl_on_the_same_examples(train, tmp_path):
    out = tmp_path / "sft.jsonl"
    argv = ["--steps", "2", "--papers", "8", "--words", "20-60", "--batch-size", "2", "--max-length", "2048"]
    assert train.main([*argv, "--packing", "off", "--baseline", "--json", str(out)]) == 0
    ours, trl = (json.loads(line) for line in out.read_text().splitlines())
    assert (ours["runner"], trl["runner"]) == ("sciqag", "trl")
    # the same examples, the same number of real tokens in the same steps
    assert ours["examples"] == trl["examples"] > 0 and ours["tokens"] == trl["tokens"] > 0
    assert ours["timed_steps"] == trl["timed_steps"] == 1 and ours["tokens_per_s"] > 0 and trl["tokens_per_s"] > 0
    assert ours["trainable"] == trl["trainable"] < ours["params"]  # the same LoRA adapters
