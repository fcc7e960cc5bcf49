"""Generator fine-tuning on the real stack: TRL SFTTrainer + PEFT (+ DeepSpeed) on a tiny random model,
the published `seed` folder read with `load_dataset`, the merged model served by `transformers serve`
and prompted by the generation stage."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import MATERIALS, FakeHfApi, read_jsonl, write_jsonl

from sciqag_dataset.cli.train import main as train_main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.config.generator_info import GENERATOR_INFO_FILE, read_generator_info
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.hub.upload import push_model
from sciqag_dataset.qa.prompts import build_messages, build_raw_prompt
from sciqag_dataset.trainers.augment import generated_rows, select_papers
from sciqag_dataset.trainers.config import TrainConfig
from sciqag_dataset.trainers.data import prepare_examples
from sciqag_dataset.trainers.modeling import TrainingUnavailable, pick_attention
from sciqag_dataset.trainers.sft import build_trainer, train


def _paper(i: int) -> dict:
    m = MATERIALS[i % len(MATERIALS)]
    return {
        "id": f"paper-{i:02d}",
        "title": f"Growth of {m} {i}",
        "source_format": "txt",
        "text": f"We annealed the {m} at {420 + 5 * i} C for {i + 1} h.\n\nIts band gap reached "
        f"{1.1 + i / 20:.2f} eV and the conductivity {i + 2}.4 S/cm.",
    }


def _qa(i: int, k: int = 3) -> list[dict]:
    m = MATERIALS[i % len(MATERIALS)]
    return [
        {
            "question": f"Why does annealing change the {m} band gap in step {j}?",
            "answer": f"Annealing at {420 + 5 * i} C removes defects, giving {1.1 + i / 20:.2f} eV.",
            "origin": "teacher",
        }
        for j in range(k)
    ]


def make_seed_folder(root: Path, n: int = 12) -> Path:
    """A real `sciqag publish` folder with a `seed` config (ids chosen so every split is non-empty)."""
    work = root / "work"
    write_jsonl(work / "papers.jsonl", [_paper(i) for i in range(n)])
    write_jsonl(
        work / "keywords.jsonl",
        [
            {"id": f"paper-{i:02d}", "status": "ok", "keywords": [MATERIALS[i % len(MATERIALS)], "band gap"]}
            for i in range(n)
        ],
    )
    write_jsonl(
        work / "seed.jsonl",
        [
            {"id": f"paper-{i:02d}", "qa": _qa(i), "status": "ok", "model": "teacher", "prompt_style": "paper"}
            for i in range(n)
        ],
    )
    cfg = Config(work_dir=str(work))
    cfg.publish.configs = ["seed"]
    return write_folder(work, root / "dataset", cfg)


@pytest.fixture(scope="module")
def seed_folder(tmp_path_factory) -> Path:
    return make_seed_folder(tmp_path_factory.mktemp("seed"))


def quick(tiny_model_dir, seed_folder, out, **kw) -> TrainConfig:
    """Paper defaults, shrunk to seconds on a CPU."""
    base = dict(
        model_name_or_path=str(tiny_model_dir),
        dataset=str(seed_folder),
        output_dir=str(out),
        method="lora",
        max_steps=6,
        learning_rate=5e-3,
        warmup_steps=1,
        gradient_accumulation_steps=1,
        per_device_train_batch_size=2,
        max_length=2048,
        save_strategy="no",
        eval_split=None,
    )
    return TrainConfig.from_dict({**base, **kw})


def tokenizer_of(path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


# --- data: prompts as the generation stage sends them ---------------------------------------------


def test_examples_are_prompted_as_the_generation_stage_prompts(seed_folder, tiny_model_dir):
    import datasets

    rows = list(datasets.load_dataset(str(seed_folder), "seed")["train"])
    tok = tokenizer_of(tiny_model_dir)
    row = rows[0]
    chat = prepare_examples(rows, "paper", tok, 4096)
    assert chat.used == len(rows) and not chat.skipped and not chat.shortened
    ex = chat.dataset[0]
    # what builders.qagen.request_qa sends: the title heads the paper, n = pairs in the target
    assert ex["prompt"] == build_messages(row["input"], row["keywords"], n=3, style="paper", title=row["title"])
    assert ex["completion"] == [{"role": "assistant", "content": row["output"]}]
    assert ex["completion"][0]["content"] == row["messages"][-1]["content"]  # the published target

    raw = prepare_examples(rows, "alpaca", tok, 4096).dataset[0]
    assert raw["prompt"] == build_raw_prompt(row["input"], row["keywords"], n=3, title=row["title"])
    assert raw["prompt"].endswith("### Response:\n") and raw["completion"] == row["output"]


def test_long_papers_are_shortened_never_the_answer_and_bad_rows_are_reported(tiny_model_dir, caplog):
    tok = tokenizer_of(tiny_model_dir)
    answer = "Keywords: strain\n\nQ1: Why does strain grow?\nA1: The lattice mismatch is 2.1 %."
    long_text = "\n\n".join(
        f"Paragraph {i}: the lattice strain of film {i} was 0.{i} % after growth." for i in range(400)
    )
    rows = [
        {"id": "long", "title": "Strain", "keywords": ["strain"], "input": long_text, "output": answer},
        {"id": "no-text", "title": "x", "keywords": [], "input": " ", "output": answer},
        {"id": "no-target", "title": "x", "keywords": [], "input": "text", "output": "", "qa": []},
        {"id": "huge-answer", "title": "x", "keywords": [], "input": "text", "output": answer * 200},
    ]
    with caplog.at_level(logging.WARNING):
        prep = prepare_examples(rows, "paper", tok, 1500)
    assert prep.used == 1 and prep.shortened == ["long"]
    assert dict(prep.skipped).keys() == {"no-text", "no-target", "huge-answer"}
    assert "max_length" in dict(prep.skipped)["huge-answer"]
    ex = prep.dataset[0]
    assert ex["completion"][0]["content"] == answer  # the answer is whole
    ids = tok.apply_chat_template(ex["prompt"] + ex["completion"], tokenize=True)
    assert len(ids["input_ids"] if hasattr(ids, "keys") else ids) <= 1500
    assert "shortened" in caplog.text and "not usable" in caplog.text


def test_local_folders_are_read_as_they_are_now_not_from_a_stale_cache(tmp_path):
    from sciqag_dataset.trainers.data import load_splits

    # both folders are named `dataset`, which datasets alone would cache as one
    small, large = make_seed_folder(tmp_path / "a", n=12), make_seed_folder(tmp_path / "b", n=14)
    assert small.name == large.name == "dataset"
    assert sum(len(s) for s in load_splits(str(small)).values()) == 12
    assert sum(len(s) for s in load_splits(str(large)).values()) == 14
    with pytest.raises(FileNotFoundError, match="neither a local folder nor a Hub dataset id"):
        load_splits(str(tmp_path / "missing" / "folder"))


@pytest.mark.parametrize("style,packing", [("paper", False), ("alpaca", True)])
def test_completion_only_loss_masks_the_prompt(seed_folder, tiny_model_dir, tmp_path, style, packing):
    built = build_trainer(quick(tiny_model_dir, seed_folder, tmp_path / "m", prompt_style=style, packing=packing))
    trainer, tok = built.trainer, built.trainer.processing_class
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(2)])
    ids, labels = batch["input_ids"], batch["labels"]
    assert labels.shape == ids.shape
    kept = labels[labels != -100]
    assert 0 < len(kept) < 0.5 * (ids != tok.pad_token_id).sum()  # the prompt and paper dominate, masked
    text = tok.decode(kept)
    assert "Attached is a detailed" not in text and "### Instruction" not in text  # no prompt in the loss
    assert text.count("Keywords:") >= 1 and "Q1:" in text and "A3:" in text and tok.eos_token in text
    # every label that is kept is the token itself: masking only, no shifting mistakes
    assert bool(((labels == ids) | (labels == -100)).all())
    if packing:
        assert ids.shape[0] == 1 and "position_ids" in batch  # padding-free: rows packed end to end


def test_assistant_only_loss_trains_on_messages_with_the_template_mask(seed_folder, tiny_model_dir, tmp_path):
    built = build_trainer(quick(tiny_model_dir, seed_folder, tmp_path / "m", assistant_only_loss=True))
    trainer, tok = built.trainer, built.trainer.processing_class
    assert built.train_data.dataset.column_names == ["messages"]
    batch = trainer.data_collator([trainer.train_dataset[0]])
    text = tok.decode(batch["labels"][batch["labels"] != -100])
    assert text.startswith("Keywords:") and text.endswith(tok.eos_token) and "Attached is" not in text


def test_an_interrupted_run_resumes_from_its_checkpoint(seed_folder, tiny_model_dir, tmp_path, caplog):
    out = tmp_path / "resume"
    first = train(
        quick(
            tiny_model_dir, seed_folder, out, max_steps=4, save_strategy="steps", save_steps=2, keep_checkpoints=True
        )
    )
    assert first.runtime["global_step"] == 4 and (out / "checkpoints" / "checkpoint-4").is_dir()
    with caplog.at_level(logging.INFO, logger="sciqag_dataset.trainers.sft"):
        again = train(quick(tiny_model_dir, seed_folder, out, max_steps=6, save_strategy="steps", save_steps=2))
    assert "resuming from" in caplog.text and "checkpoint-4" in caplog.text
    assert again.runtime["global_step"] == 6 and len(again.losses) == 6  # steps 1-4 from the first run's state
    assert not (out / "checkpoints").exists()  # cleaned after success unless keep_checkpoints


# --- training, merge, reload, serve, generate -----------------------------------------------------


@pytest.fixture(scope="module")
def trained(seed_folder, tiny_model_dir, tmp_path_factory):
    """`sciqag train` through its CLI: YAML + flag overrides, LoRA, merged, evaluated each epoch."""
    root = tmp_path_factory.mktemp("trained")
    cfg_path = root / "train.yaml"
    cfg_path.write_text(
        yaml.safe_dump(
            {
                "train": {
                    "model_name_or_path": str(tiny_model_dir),
                    "dataset": str(seed_folder),
                    "method": "lora",
                    "learning_rate": 1e-4,
                    "max_length": 2048,
                    "save_strategy": "no",
                    "warmup_steps": 2,
                }
            }
        )
    )
    out = root / "generator"
    rc = train_main(
        [
            str(cfg_path),
            "--output_dir",
            str(out),
            "--max_steps",
            "30",
            "--learning_rate",
            "5e-3",
            "--per_device_train_batch_size",
            "2",
            "--gradient_accumulation_steps",
            "1",
            "--eval_split",
            "validation",
        ]
    )
    assert rc == 0
    return out


def test_lora_sft_loss_goes_down_and_the_folder_is_complete(trained):
    history = json.loads((trained / "training_log.json").read_text())
    losses = [h["loss"] for h in history if "loss" in h]
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.05
    assert any("eval_loss" in h for h in history)
    names = {p.name for p in trained.iterdir()}
    assert {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "generation_config.json",
        GENERATOR_INFO_FILE,
        "train_config.yaml",
        "README.md",
        "loss_curve.png",
        "adapter",
    } <= names
    assert "checkpoints" not in names
    info = read_generator_info(trained)
    assert info["prompt_style"] == "paper" and info["endpoint"] == "chat" and info["n_pairs"] == 10
    assert info["max_length"] == 2048 and info["training"]["attn_implementation"] == "sdpa"
    resolved = TrainConfig.load(trained / "train_config.yaml")  # the resolved config reloads as is
    assert resolved.sft.learning_rate == 5e-3 and resolved.sft.max_steps == 30 and resolved.args.method == "lora"
    gen = json.loads((trained / "generation_config.json").read_text())
    assert gen["do_sample"] and gen["temperature"] == 0.6 and gen["top_p"] == 0.9
    assert json.loads((trained / "config.json").read_text())["use_cache"] is True


def test_model_card_has_the_base_data_hyperparameters_and_loss_curve(trained):
    from huggingface_hub import ModelCard

    card = ModelCard.load(trained / "README.md")
    assert card.data.pipeline_tag == "text-generation" and "sciqag" in card.data.tags
    text = card.text
    assert "![training loss](loss_curve.png)" in text and (trained / "loss_curve.png").stat().st_size > 5000
    assert "| learning rate | 0.005 |" in text and "| scheduler | constant_with_warmup |" in text
    assert "/v1/chat/completions" in text and "arXiv:2405.09939" in text and "wan2024sciqag" in text
    assert "Intended use" in text and "Limitations" in text


def test_merged_model_reloads_and_equals_base_plus_adapter(trained, tiny_model_dir):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    tok = tokenizer_of(trained)
    x = tok("Q1: Why does doping raise the band gap?", return_tensors="pt")
    with torch.no_grad():
        merged = AutoModelForCausalLM.from_pretrained(trained).eval()(**x).logits
        adapter = (
            PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(trained / "adapter"))
            .eval()(**x)
            .logits
        )
        base = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()(**x).logits
    assert torch.allclose(merged, adapter, atol=1e-4)
    assert (merged - base).abs().max() > 1e-3  # training changed the weights


def test_served_merged_model_generates_through_the_generation_stage(trained, tmp_path):
    from sciqag_dataset.builders import generate
    from sciqag_dataset.config.config_file import GenerateConfig
    from sciqag_dataset.core.runner import run_stage
    from sciqag_dataset.llm import LLMClient
    from sciqag_dataset.llm.server import LocalServer

    work = tmp_path / "work"
    write_jsonl(work / "papers.jsonl", [_paper(20), _paper(21)])
    write_jsonl(work / "keywords.jsonl", [{"id": "paper-20", "keywords": ["band gap"], "status": "ok"}])
    with LocalServer(trained, log_path=tmp_path / "serve.log") as server:
        client = LLMClient(server.base_url, server.model, params={"max_tokens": 16, "temperature": 0.6, "top_p": 0.9})
        summary = run_stage(generate.stage(client, GenerateConfig(context_tokens=2048, chars_per_token=1.0)), work)
    recs = read_jsonl(work / "generated.jsonl")
    assert sorted(r["id"] for r in recs) == ["paper-20", "paper-21"] and summary.failed == 0
    for r in recs:  # the tiny model writes gibberish: structure only
        assert r["prompt_style"] == "paper" and r["completion_tokens"] > 0 and r["raw_output"] is not None


# --- methods ---------------------------------------------------------------------------------------


def test_alpaca_style_with_packing_saves_an_adapter_that_loads(seed_folder, tiny_model_dir, tmp_path):
    from peft import PeftConfig

    out = tmp_path / "alpaca"
    result = train(quick(tiny_model_dir, seed_folder, out, prompt_style="alpaca", packing=True, save="adapter"))
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()
    assert PeftConfig.from_pretrained(out).base_model_name_or_path == str(tiny_model_dir)
    info = read_generator_info(out)
    assert info["prompt_style"] == "alpaca" and info["endpoint"] == "completion" and info["weights"] == "adapter"
    assert result.runtime["global_step"] == 6 and "/v1/completions" in (out / "README.md").read_text()


def _embed(path):
    from safetensors.torch import load_file

    state = load_file(str(Path(path) / "model.safetensors"))
    return next(v for k, v in state.items() if k.endswith("embed_tokens.weight"))


def test_longlora_trains_embeddings_and_norms_and_merges_them(seed_folder, tiny_model_dir, tmp_path):
    built = build_trainer(quick(tiny_model_dir, seed_folder, tmp_path / "x", method="longlora"))
    trainable = [n for n, p in built.trainer.model.named_parameters() if p.requires_grad]
    assert any("embed_tokens.modules_to_save" in n for n in trainable)
    assert any("input_layernorm.modules_to_save" in n for n in trainable)
    assert any("model.norm.modules_to_save" in n for n in trainable)
    assert any("q_proj.lora_A" in n for n in trainable)
    assert not any(n.endswith("mlp.up_proj.weight") for n in trainable)
    del built
    out = tmp_path / "longlora"
    train(quick(tiny_model_dir, seed_folder, out, method="longlora", max_steps=3))
    assert (_embed(out) - _embed(tiny_model_dir)).abs().max() > 0  # the trained embedding was merged


def test_full_fine_tuning_saves_all_weights(seed_folder, tiny_model_dir, tmp_path):
    out = tmp_path / "full"
    train(quick(tiny_model_dir, seed_folder, out, method="full", max_steps=3, learning_rate=1e-3))
    assert not (out / "adapter").exists() and (out / "model.safetensors").exists()
    assert (_embed(out) - _embed(tiny_model_dir)).abs().max() > 0
    assert read_generator_info(out)["method"] == "full"
    assert json.loads((out / "config.json").read_text())["use_cache"] is True


def test_qlora_on_cpu_fails_clearly_before_loading_anything(seed_folder, tiny_model_dir, tmp_path, capsys):
    with pytest.raises(TrainingUnavailable, match="CUDA GPU.*bitsandbytes.*lora or longlora"):
        train(quick(tiny_model_dir, seed_folder, tmp_path / "q", method="qlora"))
    rc = train_main(
        [
            "--model_name_or_path",
            str(tiny_model_dir),
            "--dataset",
            str(seed_folder),
            "--method",
            "qlora",
            "--output_dir",
            str(tmp_path / "q"),
        ]
    )
    assert rc == 2 and "qlora" in capsys.readouterr().err
    assert not (tmp_path / "q").exists()


def test_flash_attention_falls_back_to_sdpa_on_cpu_and_says_so(caplog):
    with caplog.at_level(logging.WARNING, logger="sciqag_dataset.trainers.modeling"):
        assert pick_attention("auto", bf16=True) == "sdpa"
    assert "sdpa" in caplog.text and "flash_attention_2 unavailable" in caplog.text
    with pytest.raises(TrainingUnavailable, match="flash-attn package on a CUDA GPU"):
        pick_attention("flash_attention_2")
    assert pick_attention("eager") == "eager"


# --- config, CLI, generator info, Hub ----------------------------------------------------------------


def test_paper_defaults_and_config_errors(tmp_path):
    cfg = TrainConfig.from_dict({})
    sft = cfg.sft
    assert (sft.num_train_epochs, sft.learning_rate, sft.weight_decay, sft.warmup_steps) == (15, 2e-5, 0.0, 20)
    assert (
        sft.lr_scheduler_type,
        sft.gradient_accumulation_steps,
        sft.per_device_train_batch_size,
        sft.max_length,
    ) == ("constant_with_warmup", 8, 1, 12288)
    assert sft.bf16 is False and sft.use_cpu is True  # bf16 where the hardware has it: no GPU here
    assert (cfg.model.lora_r, cfg.model.lora_alpha) == (8, 16) and cfg.args.method == "longlora"
    assert cfg.model.lora_modules_to_save == ["embed_tokens", "norm"]  # LongLoRA trains them in full
    with pytest.raises(ValueError, match="method must be one of"):
        TrainConfig.from_dict({"method": "qlora4"})
    with pytest.raises(ValueError, match="missing required option.*model_name_or_path.*dataset"):
        TrainConfig.from_dict({}).validate()
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rat: 1e-4\n")
    with pytest.raises(ValueError, match="unknown option"):
        TrainConfig.load(bad)
    with pytest.raises(ValueError, match="save: adapter needs a PEFT method"):
        TrainConfig.from_dict({"method": "full", "save": "adapter"})


def test_yaml_and_flags_are_trl_fields(tmp_path):
    """TRL's own fields, parsed by TrlParser: the YAML (any SFTConfig field passes through), then flags."""
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(
        yaml.safe_dump(
            {
                "model_name_or_path": "org/base",
                "dataset": "me/sciqag",
                "packing": True,
                "learning_rate": 1e-4,
                "logging_first_step": True,
            }
        )
    )
    cfg = TrainConfig.parse(
        [
            str(cfg_path),
            "--learning_rate",
            "3e-4",
            "--packing",
            "false",
            "--deepspeed",
            "zero3",
            "--lora_target_modules",
            "all-linear",
            "--max_grad_norm",
            "0.5",
            "--eval_split",
            "null",
            "--output_dir",
            "gen",
        ]
    )
    assert (cfg.sft.learning_rate, cfg.sft.packing, cfg.sft.output_dir) == (3e-4, False, "gen")
    assert cfg.to_dict()["deepspeed"] == "zero3" and cfg.sft.deepspeed.endswith("zero3.json")
    assert cfg.model.lora_target_modules == "all-linear" and cfg.args.eval_split is None  # TRL's own form
    assert cfg.sft.logging_first_step is True and cfg.sft.max_grad_norm == 0.5
    assert cfg.sft.num_train_epochs == 15  # untouched fields keep the paper's defaults


def test_read_generator_info(tmp_path):
    assert read_generator_info(tmp_path) is None
    (tmp_path / GENERATOR_INFO_FILE).write_text(json.dumps({"prompt_style": "alpaca"}))
    assert read_generator_info(tmp_path) == {"prompt_style": "alpaca", "n_pairs": 10, "endpoint": "completion"}
    (tmp_path / GENERATOR_INFO_FILE).write_text(json.dumps({"prompt_style": "vicuna"}))
    with pytest.raises(ValueError, match="prompt_style"):
        read_generator_info(tmp_path)
    (tmp_path / GENERATOR_INFO_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_generator_info(tmp_path)


def test_push_uploads_the_model_folder_without_checkpoints(tmp_path):
    api = FakeHfApi()
    assert push_model(tmp_path, "me/gen", private=True, api=api).endswith("/commit/1")
    assert api.calls[0] == ("create_repo", "me/gen", {"repo_type": "model", "private": True, "exist_ok": True})
    up = api.calls[1][2]
    assert (
        up["folder_path"] == str(tmp_path) and up["repo_type"] == "model" and "checkpoints/*" in up["ignore_patterns"]
    )


# --- augmentation -------------------------------------------------------------------------------------


def test_generated_rows_keep_usable_pairs_and_apply_the_racar_threshold(tmp_path):
    work = tmp_path / "aug"
    write_jsonl(work / "papers.jsonl", [_paper(30), _paper(31), _paper(32)])
    write_jsonl(work / "keywords.jsonl", [{"id": "paper-30", "keywords": ["band gap"], "status": "ok"}])
    write_jsonl(
        work / "generated.jsonl",
        [
            {"id": "paper-30", "status": "ok", "qa": _qa(30, 3)},
            {"id": "paper-31", "status": "unparsed", "qa": []},
            {"id": "paper-32", "status": "short", "qa": _qa(32, 2)},
        ],
    )
    rows, counts = generated_rows(work)
    assert [r["id"] for r in rows] == ["paper-30", "paper-32"] and counts["pairs_kept"] == 5
    assert counts["papers_unparsed"] == 1
    assert rows[0]["output"].startswith("Keywords: band gap\n\nQ1: ") and rows[0]["input"].startswith("We annealed")
    write_jsonl(
        work / "racar.jsonl",
        [
            {
                "id": "paper-30",
                "status": "ok",
                "pair_metrics": [{"racar_mean": 3.0}, {"racar_mean": 2.2}, {"racar_mean": None}],
            },
            {"id": "paper-32", "status": "ok", "pair_metrics": [{"racar_mean": 1.4}, {"racar_mean": 1.8}]},
        ],
    )
    rows, counts = generated_rows(work, threshold=2.5)
    assert [r["id"] for r in rows] == ["paper-30"] and len(rows[0]["qa"]) == 1
    assert (counts["pairs_kept"], counts["pairs_below_threshold"], counts["pairs_unjudged"]) == (1, 3, 1)


def test_extra_papers_never_include_dataset_papers(tmp_path):
    src = tmp_path / "extra"
    write_jsonl(src / "papers.jsonl", [_paper(i) for i in range(6)])
    write_jsonl(
        src / "keywords.jsonl", [{"id": f"paper-{i:02d}", "keywords": ["k"], "status": "ok"} for i in range(6)]
    )
    chosen = select_papers(src, 3, {"paper-00", "paper-01"}, tmp_path / "dest", seed=1)
    assert len(chosen) == 3 and not {"paper-00", "paper-01"} & set(chosen)
    assert chosen == select_papers(src, 3, {"paper-00", "paper-01"}, tmp_path / "dest2", seed=1)
    assert sorted(r["id"] for r in read_jsonl(tmp_path / "dest" / "papers.jsonl")) == chosen
    assert sorted(r["id"] for r in read_jsonl(tmp_path / "dest" / "keywords.jsonl")) == chosen


def test_generated_rows_join_the_seed_rows_in_training(seed_folder, tiny_model_dir, tmp_path):
    extra = [
        {
            "id": "paper-50",
            "title": "Extra",
            "keywords": ["band gap"],
            "qa": _qa(50, 2),
            "input": _paper(50)["text"],
            "output": "Keywords: band gap\n\nQ1: Why?\nA1: Because.",
        }
    ]
    cfg = quick(tiny_model_dir, seed_folder, tmp_path / "m")
    alone = build_trainer(cfg).train_data.used
    assert build_trainer(cfg, extra_rows=extra).train_data.used == alone + 1


def test_augment_runs_both_rounds(seed_folder, tiny_model_dir, tmp_path):
    src = tmp_path / "extra"
    write_jsonl(src / "papers.jsonl", [_paper(i) for i in range(40, 43)] + [_paper(0)])  # paper-00 is in the dataset
    write_jsonl(
        src / "keywords.jsonl",
        [{"id": f"paper-{i:02d}", "keywords": ["band gap"], "status": "ok"} for i in range(40, 43)],
    )
    out = tmp_path / "final"
    rc = train_main(
        [
            "--model_name_or_path",
            str(tiny_model_dir),
            "--dataset",
            str(seed_folder),
            "--output_dir",
            str(out),
            "--method",
            "lora",
            "--max_steps",
            "4",
            "--learning_rate",
            "5e-3",
            "--warmup_steps",
            "1",
            "--gradient_accumulation_steps",
            "1",
            "--max_length",
            "2048",
            "--save_strategy",
            "no",
            "--eval_split",
            "null",
            "--augment",
            "--augment_work",
            str(src),
            "--augment_papers",
            "2",
            "--augment_max_tokens",
            "16",
            "--augment_min_pairs",
            "0",
        ]
    )
    assert rc == 0
    generated = read_jsonl(out / "augment" / "work" / "generated.jsonl")
    assert len(generated) == 2 and "paper-00" not in {r["id"] for r in generated}
    assert all(r["prompt_style"] == "paper" and r["completion_tokens"] > 0 for r in generated)
    assert (out / "augment" / "intermediate" / "model.safetensors").exists()
    info = read_generator_info(out)
    assert info["augment"]["papers_selected"] == 2 and (out / "model.safetensors").exists()
    # whatever the tiny model managed to write is exactly what joined the seed data
    usable = [r for r in generated if r["status"] in ("ok", "short") and r["qa"]]
    assert info["augment"].get("pairs_kept", 0) == sum(len(r["qa"]) for r in usable)
    resolved = (out / "train_config.yaml").read_text()
    assert f"extra_rows: {len(usable)}" in resolved


# --- DeepSpeed -------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_deepspeed_zero3_trains_as_one_cpu_process(seed_folder, tiny_model_dir, tmp_path):
    from sciqag_dataset.llm.server import free_port

    out = tmp_path / "ds"
    env = {
        **os.environ,
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "OMP_NUM_THREADS": "1",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciqag_dataset.cli.train",
            "--model_name_or_path",
            str(tiny_model_dir),
            "--dataset",
            str(seed_folder),
            "--output_dir",
            str(out),
            "--deepspeed",
            "zero3",
            "--method",
            "lora",
            "--max_steps",
            "3",
            "--learning_rate",
            "5e-3",
            "--warmup_steps",
            "1",
            "--gradient_accumulation_steps",
            "2",
            "--max_length",
            "2048",
            "--save_strategy",
            "no",
            "--eval_split",
            "null",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Generator saved to" in proc.stdout
    resolved = (out / "train_config.yaml").read_text()
    assert "deepspeed: zero3" in resolved
    history = json.loads((out / "training_log.json").read_text())
    assert len([h for h in history if "loss" in h]) == 3
    assert read_generator_info(out)["prompt_style"] == "paper"
    assert _embed(out).shape == _embed(tiny_model_dir).shape  # gathered from the ZeRO-3 shards, not empty


@pytest.mark.e2e
def test_torchrun_two_processes_train_one_model(seed_folder, tiny_model_dir, tmp_path):
    """The multi-GPU launch path, on CPU: two real DDP ranks (gloo), one output written by rank 0."""
    from sciqag_dataset.llm.server import free_port

    out = tmp_path / "ddp"
    torchrun = Path(sys.executable).parent / "torchrun"
    proc = subprocess.run(
        [
            str(torchrun),
            "--nproc_per_node",
            "2",
            "--master_port",
            str(free_port()),
            "-m",
            "sciqag_dataset.cli.train",
            "--model_name_or_path",
            str(tiny_model_dir),
            "--dataset",
            str(seed_folder),
            "--output_dir",
            str(out),
            "--method",
            "lora",
            "--max_steps",
            "3",
            "--learning_rate",
            "5e-3",
            "--warmup_steps",
            "1",
            "--gradient_accumulation_steps",
            "1",
            "--max_length",
            "2048",
            "--save_strategy",
            "no",
            "--eval_split",
            "null",
        ],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("Generator saved to") == 1  # rank 1 trained too, but only rank 0 writes
    assert "parallel_mode != ParallelMode.DISTRIBUTED" not in proc.stderr
    history = json.loads((out / "training_log.json").read_text())
    assert len([h for h in history if "loss" in h]) == 3 and (out / "model.safetensors").exists()
