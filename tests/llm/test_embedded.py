"""The embedded default: which backend and dtype are chosen, and that its server starts only when needed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import fields, replace

import pytest

from sciqag_dataset.builders.qagen import paced_pairs
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.errors import ServerDown, UserError
from sciqag_dataset.llm import LLMClient, ResponseCache
from sciqag_dataset.llm.embedded import ENGINES, choose, server_for
from sciqag_dataset.llm.engines import Engine, Registry
from sciqag_dataset.llm.llama_cpp_engine import LlamaCppServer
from sciqag_dataset.llm.llama_cpp_engine import installed as llama_cpp_installed
from sciqag_dataset.llm.llama_launch import NO_EXTRA_BUFFERS
from sciqag_dataset.llm.models import DEFAULT_MODEL_ID, gguf_path
from sciqag_dataset.llm.supervisor import EmbeddedServer
from sciqag_dataset.orchestration.pipeline import profiled
from sciqag_dataset.qa import small_model
from sciqag_dataset.qa.parse import parse_qa
from sciqag_dataset.qa.prompts import build_messages
from sciqag_dataset.qa.small_model import chunks

AVX2 = {"avx", "avx2", "fma"}
# the engines installed, as choose() is told (embedded.choose_here asks the registry)
LLAMA = {"llama.cpp", "transformers"}
NO_LLAMA = {"transformers"}


@pytest.mark.parametrize(
    "backend,dtype,llama_cpp,flags,want",
    [
        ("auto", "auto", True, AVX2, ("llama.cpp", "Q4_1")),
        ("auto", "auto", False, AVX2, ("transformers", "float32")),
        ("transformers", "auto", True, AVX2, ("transformers", "float32")),
        ("transformers", "float16", True, AVX2, ("transformers", "float16")),
        ("llama.cpp", "auto", True, AVX2, ("llama.cpp", "Q4_1")),
        ("transformers", "bfloat16", False, AVX2 | {"avx512_bf16"}, ("transformers", "bfloat16")),
    ],
)
def test_backend_and_dtype_choice(backend, dtype, llama_cpp, flags, want):
    choice = choose(backend, dtype, installed=LLAMA if llama_cpp else NO_LLAMA, flags=flags, cores=2)
    assert (choice.engine.name, choice.dtype) == want
    assert choice.threads == 2  # a sequential server gets every core
    assert want[0] in choice.identity and want[1] in choice.identity  # other text, other cache entries


def test_a_missing_llama_cpp_is_named_and_the_fallback_says_so():
    assert any("llama-cpp-python" in n for n in choose(installed=NO_LLAMA, flags=AVX2, cores=2).notes)
    assert not choose(installed=LLAMA, flags=AVX2, cores=2).notes
    with pytest.raises(UserError, match=r"embedded\].*source build"):
        choose("llama.cpp", installed=NO_LLAMA, flags=AVX2, cores=2)


def test_bfloat16_warns_of_quality_and_of_speed_where_the_cpu_lacks_it():
    slow = choose("transformers", "bfloat16", installed=LLAMA, flags=AVX2, cores=2).notes
    fast = choose("transformers", "bfloat16", installed=LLAMA, flags=AVX2 | {"amx_bf16"}, cores=2).notes
    assert any("repetition" in n for n in slow) and any("slower" in n for n in slow)
    assert any("repetition" in n for n in fast) and not any("slower" in n for n in fast)


def test_a_dtype_llama_cpp_cannot_serve_is_refused_and_threads_are_kept():
    with pytest.raises(UserError, match="Q4_1"):
        choose("llama.cpp", "bfloat16", installed=LLAMA, flags=AVX2, cores=2)
    assert choose(threads=1, installed=LLAMA, flags=AVX2, cores=16).threads == 1


AMX = AVX2 | {"avx512f", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"}


@pytest.mark.parametrize("flags", [AVX2, AMX], ids=["avx2", "amx"])
def test_llama_cpp_is_launched_with_plain_weight_buffers_on_every_cpu(flags):
    """On CPUs with AMX, llama.cpp's AMX weight buffers segfault on the first decode (ggml-org/llama.cpp issue
    20824); the other extra buffers (weight repacking) have no kernel for the Q4_1 file, so plain buffers cost
    nothing anywhere (measured on an AVX-512 CPU without AMX: 2.11 s vs 2.12 s for a 482-token prompt and 64
    tokens) and do not depend on /proc/cpuinfo telling the truth inside a VM."""
    if not llama_cpp_installed():
        pytest.fail("llama-cpp-python[server] is missing: install the dev extra (pip install -e '.[dev]')")
    choice = choose(installed=LLAMA, flags=flags, cores=2)
    command = server_for(choice).command()
    at = command.index("-m")
    assert command[at + 1 : at + 3] == ["sciqag_dataset.llm.llama_launch", NO_EXTRA_BUFFERS]


def test_the_launcher_loads_the_model_without_extra_buffers_and_it_answers():
    if not llama_cpp_installed():
        pytest.fail("llama-cpp-python[server] is missing: install the dev extra (pip install -e '.[dev]')")
    check = f"""
from sciqag_dataset.llm.llama_launch import without_extra_buffers
import llama_cpp.llama_cpp as native
assert native.llama_model_default_params().use_extra_bufts  # llama.cpp's default
without_extra_buffers()
from llama_cpp import Llama
llm = Llama(model_path={str(gguf_path())!r}, n_ctx=256, n_threads=1, verbose=False)
assert llm.model_params.use_extra_bufts is False
print(llm.create_completion("The capital of France is", max_tokens=4, temperature=0)["usage"]["completion_tokens"])
"""
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and int(proc.stdout.split()[-1]) > 0, proc.stderr[-2000:]


def test_a_server_that_cannot_start_fails_each_request_once_tried():
    calls = []

    def start(choice, log_path):
        calls.append(choice.engine.name)
        raise RuntimeError("no model here")

    choice = choose(installed=NO_LLAMA, flags=AVX2, cores=2)
    client = LLMClient([], "m", local=EmbeddedServer(choice, start=start), max_retries=0)

    async def ask_three():
        return await asyncio.gather(
            *(client.chat([{"role": "user", "content": str(i)}]) for i in range(3)), return_exceptions=True
        )

    errors = asyncio.run(ask_three())
    # not an LLMError: no paper is to blame, so the runner stops the stage instead of failing each paper
    assert all(
        isinstance(e, ServerDown) and "could not be started" in str(e) and "no model here" in str(e) for e in errors
    )
    assert calls == ["transformers"]


def test_llama_cpp_chosen_for_speed_falls_back_to_transformers_but_one_chosen_by_the_user_does_not():
    assert choose(installed=LLAMA, flags=AVX2, cores=2).fallback.engine.name == "transformers"
    assert choose("llama.cpp", installed=LLAMA, flags=AVX2, cores=2).fallback is None
    assert choose(installed=NO_LLAMA, flags=AVX2, cores=2).fallback is None


# --- the engine registry ---------------------------------------------------------------------------------


def _fake_engine(name: str, rank: int, **kw) -> Engine:
    def launch(choice, log_path):
        raise AssertionError("not started in this test")

    return Engine(
        name=name, rank=rank, dtypes=("int8",), installed=lambda: True, launch=launch, tag=f"{name}-tag", **kw
    )


def test_a_registered_engine_takes_its_rank_in_the_choice_and_in_the_fallbacks():
    fast = _fake_engine(
        "fast",
        5,
        missing="embedded.backend fast needs the fast package",
        passed_over="the fast package is not installed: serving with {instead}",
    )
    engines = Registry(*ENGINES, fast)
    assert engines.names() == ("fast", "llama.cpp", "transformers")  # rank order, whatever the order of listing
    choice = choose(installed={"fast", *LLAMA}, flags=AVX2, cores=2, engines=engines)
    assert [c.engine.name for c in choice.plan()] == ["fast", "llama.cpp", "transformers"]
    assert [c.dtype for c in choice.plan()] == ["int8", "Q4_1", "float32"]  # each fallback at its default dtype
    assert choice.identity.endswith("@fast-tag-int8")
    served = EmbeddedServer(choice)
    assert [c.engine.name for c in served.plan] == ["fast", "llama.cpp", "transformers"]
    # not installed: passed over by auto with its note, refused by name with its message
    assert choose(installed=LLAMA, flags=AVX2, cores=2, engines=engines).notes == (
        "the fast package is not installed: serving with llama.cpp",
    )
    with pytest.raises(UserError, match="needs the fast package"):
        choose("fast", installed=LLAMA, flags=AVX2, cores=2, engines=engines)
    with pytest.raises(UserError, match="one of auto, fast, llama.cpp, transformers, not 'slow'"):
        choose("slow", installed=LLAMA, flags=AVX2, cores=2, engines=engines)
    with pytest.raises(UserError, match=r"int8 applies to the fast engine; llama.cpp serves Q4_1"):
        choose("llama.cpp", "int8", installed=LLAMA, flags=AVX2, cores=2, engines=engines)
    with pytest.raises(ValueError, match="already registered"):
        engines.register(_fake_engine("fast", 1))
    with pytest.raises(ValueError, match="auto"):
        engines.register(_fake_engine("auto", 1))
    assert "fast" not in ENGINES  # the default registry is untouched


def test_the_engines_declare_what_they_serve_and_take():
    llama = choose(installed=LLAMA, flags=AVX2, cores=2)
    assert llama.json_schema is False and llama.fallback.json_schema is True  # llama.cpp answers json_schema with 500
    assert llama.backend == llama.engine.name == "llama.cpp"  # the option's name for the engine still reads
    assert ENGINES.get("transformers").dtypes[0] == "float32" and ENGINES.get("llama.cpp").dtypes == ("Q4_1",)


def test_the_old_option_names_still_choose_the_engine(tmp_path):
    """`embedded.backend` (YAML) and `--embedded-backend` (flag) name the engine; their choices are the
    registry's names."""
    from sciqag_dataset.cli import build_parser
    from sciqag_dataset.cli.flags import resolve_config
    from sciqag_dataset.config.config_file import EmbeddedConfig

    field = next(f for f in fields(EmbeddedConfig) if f.name == "backend")
    assert field.metadata["choices"] == ("auto", *ENGINES.names())
    (tmp_path / "cfg.yaml").write_text("embedded:\n  backend: transformers\n  dtype: float16\n")
    cfg = Config.load(tmp_path / "cfg.yaml")
    choice = choose(cfg.embedded.backend, cfg.embedded.dtype, installed=LLAMA, flags=AVX2, cores=2)
    assert (choice.engine.name, choice.dtype, choice.fallback) == ("transformers", "float16", None)
    args = build_parser().parse_args(["seed", str(tmp_path / "work"), "--embedded-backend", "llama.cpp"])
    assert resolve_config(args).embedded.backend == "llama.cpp"
    (tmp_path / "bad.yaml").write_text("embedded:\n  backend: vllm\n")
    with pytest.raises(UserError, match="auto, llama.cpp, transformers"):
        Config.load(tmp_path / "bad.yaml").validate()


def _released_papers(path):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(2):
            text = (
                f"Perovskite film {i} was annealed at {150 + i} C for ten minutes. The grain size grew from "
                f"200 nm to {450 + i} nm and the carrier lifetime doubled. "
            ) * 20
            qa = [
                {"question": f"What did annealing change in film {i}-{k}?", "answer": "The grain size grew."}
                for k in range(10)
            ]
            f.write(json.dumps({"id": f"p{i}", "title": f"Film {i}", "text": text, "existing_qa": qa}) + "\n")


@pytest.mark.e2e
def test_a_run_that_needs_no_call_starts_no_server(tmp_path):
    """Every paper carries its pairs: seed asks nothing, so the embedded model is neither prepared nor started."""
    _released_papers(tmp_path / "papers.jsonl")
    work = tmp_path / "work"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciqag_dataset.cli",
            "run",
            "--work",
            str(work),
            "--inputs",
            str(tmp_path / "papers.jsonl"),
            "--stages",
            "ingest,keywords,seed",
            "-n",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Starting the embedded" not in proc.stderr
    assert not (work / "local_server.log").exists()
    rows = [json.loads(line) for line in (work / "seed.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"] and all(r["model"] == "released" for r in rows)


@pytest.mark.e2e
def test_llama_cpp_serves_the_packaged_model_to_the_one_client(tmp_path):
    if not llama_cpp_installed():
        pytest.fail("llama-cpp-python[server] is missing: install the dev extra (pip install -e '.[dev]')")
    with LlamaCppServer(gguf_path(), DEFAULT_MODEL_ID, threads=2, log_path=tmp_path / "llama.log") as server:
        client = LLMClient(server.base_url, server.model, params={"temperature": 0.0, "max_tokens": 24})
        reply = asyncio.run(client.chat([{"role": "user", "content": "Name one noble gas."}]))
    assert reply.text.strip() and reply.finish_reason in ("stop", "length")
    assert reply.completion_tokens > 0 and reply.prompt_tokens > 0


# --- the embedded profile ----------------------------------------------------------------------------
# our own text, about a made-up experiment
PASSAGE = (
    "Zinc oxide nanorods were grown on glass by a hydrothermal method at 90 C for six hours. Their mean "
    "length rose from 0.8 micrometres after two hours to 2.1 micrometres after six, while the diameter "
    "stayed near 60 nm. Annealing the rods in air at 400 C for one hour narrowed the green defect "
    "emission and raised the band-edge emission at 380 nm threefold, which we attribute to fewer oxygen "
    "vacancies. Gas sensors made from the annealed rods gave a response of 12 to 50 ppm of ethanol at "
    "250 C, against 5 for sensors made from rods that were not annealed. "
) * 3


@pytest.mark.e2e
def test_the_paced_profile_writes_numbered_capped_lines_and_gives_up_on_a_chunk_in_time(tmp_path):
    if not llama_cpp_installed():
        pytest.fail("llama-cpp-python[server] is missing: install the dev extra (pip install -e '.[dev]')")
    pieces, _ = chunks(PASSAGE, 100, max_chunks=2)
    with LlamaCppServer(gguf_path(), DEFAULT_MODEL_ID, threads=2, log_path=tmp_path / "llama.log") as server:

        def client():
            return LLMClient(server.base_url, server.model, params={"temperature": 0.6, "top_p": 0.9}, concurrency=1)

        paced = client()
        replies, _, _ = asyncio.run(paced_pairs(paced, pieces, ["zinc oxide nanorods"], 4))
        cut = client()  # a question may have one token: none fits, every one is cut
        none, warnings, _ = asyncio.run(paced_pairs(cut, pieces, ["zinc oxide nanorods"], 4, question_tokens=1))

    assert len(replies) == 2 and paced.usage.requests >= 2
    questions = []
    for reply in replies:
        lines = reply.text.splitlines()
        assert [line[:3] for line in lines] == [f"{k}{i}:" for i in range(1, len(lines) // 2 + 1) for k in "QA"]
        pairs = parse_qa(reply.text, expected=len(lines) // 2).pairs
        assert len(pairs) == len(lines) // 2  # every line pair the drive kept is a pair the parser reads
        questions += [small_model.question_key(p["question"]) for p in pairs]
        assert all(p["answer"] for p in pairs)
    assert len(questions) == len(set(questions)) >= 2  # no question twice, across chunks too
    # each chunk gave up after the retries it is allowed, asking for no answer to a cut question
    assert [r.text for r in none] == ["", ""]
    assert cut.usage.requests == 2 * (small_model.RETRIES_PER_CHUNK + 1)
    assert warnings == [
        f"embedded profile: {2 * (small_model.RETRIES_PER_CHUNK + 1)} attempt(s) discarded "
        "(a question cut, empty or asked before, an answer empty, or a pair not about its passage)"
    ]


def test_the_small_style_shows_a_worked_example_then_asks_about_the_chunk():
    messages = build_messages("The lattice constant grew by 0.3 %.", ["lattice constant"], n=5, style="small")
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "Q5: " in messages[1]["content"] and "Q6:" not in messages[1]["content"]
    assert "The lattice constant grew by 0.3 %." in messages[2]["content"]
    assert "Focus on: lattice constant." in messages[2]["content"] and "write 5 question" in messages[2]["content"]
    copied = parse_qa(messages[1]["content"] + "\nQ6: Why did the lattice grow?\nA6: Strain.", expected=1)
    assert [p["question"] for p in copied.pairs] == ["Why did the lattice grow?"]  # the example is not a pair


def test_chunks_end_at_sentences_and_say_what_was_left_out():
    text = " ".join(f"Sentence {i} has exactly six words." for i in range(300))  # 1800 words
    pieces, warnings = chunks(text, 450)
    assert len(pieces) == 4 and not warnings
    assert all(p.endswith(".") and len(p.split()) <= 450 for p in pieces)
    assert " ".join(pieces) == text
    kept, warnings = chunks(text, 450, max_chunks=2)
    assert kept == [pieces[0], pieces[2]]
    assert len(warnings) == 1 and "2 of 4 chunks" in warnings[0] and "900 words" in warnings[0]


def test_the_profile_applies_to_the_embedded_model_only_and_keeps_what_the_user_set():
    cfg = Config()
    assert profiled(cfg, cfg.teacher, "seed").prompt_style == "small"
    assert profiled(cfg, cfg.teacher, "seed").max_chunks == 2
    assert profiled(cfg, cfg.teacher, "seed").n_pairs == 6 and cfg.seed.n_pairs == 10
    mine = replace(cfg, seed=replace(cfg.seed, max_chunks=4))
    assert profiled(mine, mine.teacher, "seed").max_chunks == 4
    assert profiled(cfg, replace(cfg.teacher, url="http://teacher/v1"), "seed") == cfg.seed
    off = replace(cfg, embedded=replace(cfg.embedded, profile=False))
    assert profiled(off, off.teacher, "seed") == off.seed


def test_an_option_written_out_at_its_default_is_the_users_and_survives_the_saved_config(tmp_path):
    """`prompt_style: paper` written in a YAML file or given as a flag turns the profile off, even though it is
    the default; WORK/config.yaml, which writes every option out, keeps knowing which ones the user set."""
    from sciqag_dataset.cli import build_parser
    from sciqag_dataset.cli.flags import resolve_config

    (tmp_path / "cfg.yaml").write_text("seed:\n  prompt_style: paper\n  n_pairs: 10\n")
    cfg = Config.load(tmp_path / "cfg.yaml")
    assert profiled(cfg, cfg.teacher, "seed").prompt_style == "paper"
    assert profiled(cfg, cfg.generator, "generate").prompt_style == "small"  # not named: still profiled
    cfg.save(tmp_path / "config.yaml")
    again = Config.load(tmp_path / "config.yaml")
    assert profiled(again, again.teacher, "seed").prompt_style == "paper"
    assert profiled(again, again.generator, "generate").prompt_style == "small"
    args = build_parser().parse_args(["seed", str(tmp_path / "work"), "--prompt-style", "paper"])
    flagged = resolve_config(args)
    assert "seed.prompt_style" in flagged.set_options
    assert profiled(flagged, flagged.teacher, "seed").prompt_style == "paper"


def test_requests_to_the_embedded_model_fit_its_context():
    """generate.context_tokens defaults to the paper's 12,288; the embedded server holds 8,192, and a longer
    prompt is refused with a 400, so requests to it are fitted to 8,192 whatever the profile says."""
    cfg = Config()
    assert cfg.generate.context_tokens > 8192
    assert profiled(cfg, cfg.generator, "generate").context_tokens == 8192
    off = replace(cfg, embedded=replace(cfg.embedded, profile=False))
    assert profiled(off, off.generator, "generate").context_tokens == 8192
    remote = replace(cfg, generator=replace(cfg.generator, url="http://vllm:8000/v1"))
    assert profiled(remote, remote.generator, "generate").context_tokens == 12288


def test_a_long_run_without_sentence_ends_is_still_cut_to_size():
    pieces, _ = chunks("cell " * 1000, 450)
    assert [len(p.split()) for p in pieces] == [450, 450, 100]


def test_a_model_that_does_not_sample_is_served_from_linked_files_with_a_config_that_does(tmp_path):
    from sciqag_dataset.llm.models import sampling

    greedy = tmp_path / "greedy"
    greedy.mkdir()
    (greedy / "config.json").write_text("{}")
    (greedy / "generation_config.json").write_text(json.dumps({"eos_token_id": 2}))
    served = sampling(greedy, tmp_path / "served")
    assert json.loads((served / "generation_config.json").read_text()) == {"eos_token_id": 2, "do_sample": True}
    assert (served / "config.json").resolve() == (greedy / "config.json").resolve()
    assert json.loads((greedy / "generation_config.json").read_text()) == {"eos_token_id": 2}  # not ours to edit
    assert sampling(served, tmp_path / "other") == served  # one that samples is served as it is


def test_a_cut_answer_keeps_its_whole_sentences_and_questions_compare_loosely():
    assert small_model.whole_sentences("It fell to 0.09 mm per year. Then the layer") == "It fell to 0.09 mm per year."
    assert small_model.whole_sentences("It fell to 0.09 mm per") == ""
    assert small_model.question_key("  What  is X? ") == small_model.question_key("what is x")
    assert not small_model.usable_question("What is X?", {small_model.question_key("what is x")})
    assert not small_model.usable_question("[0]", set()) and small_model.usable_question("Why is it so?", set())


def test_a_cache_that_answers_starts_no_server(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    messages = [{"role": "user", "content": "Name one noble gas."}]
    key = ResponseCache.key({"kind": "chat", "model": "m", "messages": messages, "params": {}})
    cache.put(
        key,
        {
            "text": "Argon.",
            "finish_reason": "stop",
            "prompt_tokens": 5,
            "completion_tokens": 2,
            "endpoint": "http://127.0.0.1:1/v1",
        },
    )

    class NeverStarted:
        def connect(self):
            raise AssertionError("the server was started although the cache had the reply")

        recover = connect

    client = LLMClient([], "m", local=NeverStarted(), cache=cache)
    reply = asyncio.run(client.chat(messages))
    assert reply.cached and reply.text == "Argon."


def test_an_explicit_prompt_style_is_not_replaced_by_the_profile():
    cfg = Config()
    cfg = replace(cfg, seed=replace(cfg.seed, prompt_style="alpaca"))
    assert profiled(cfg, cfg.teacher, "seed") == cfg.seed  # no chunks mixed into a style the user chose


@pytest.mark.e2e
def test_an_embedded_server_that_cannot_start_stops_the_run_and_loses_no_paper(tmp_path):
    (tmp_path / "paper.txt").write_text("Zinc oxide nanorods were grown at 90 C. Their band gap was 3.3 eV. " * 40)
    (tmp_path / "not-a-folder").write_text("the cache root is a file, so no model can be prepared under it")
    env = {**os.environ, "SCIQAG_CACHE": str(tmp_path / "not-a-folder"), "HF_HUB_OFFLINE": "1"}
    work = tmp_path / "work"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciqag_dataset.cli",
            "run",
            "--work",
            str(work),
            "--inputs",
            str(tmp_path / "paper.txt"),
            "--embedded-backend",
            "transformers",
            "-n",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "could not be started" in proc.stderr and "Traceback" not in proc.stderr
    seed = work / "seed.jsonl"
    # no paper is blamed for our server: nothing is marked failed, and the next run asks again
    assert not any(
        json.loads(line).get("status") == "failed" for line in (seed.read_text().splitlines() if seed.exists() else [])
    )
    assert not (work / "generated.jsonl").exists()  # the later stages did not try again


def test_the_augmentation_judge_starts_no_server_when_no_pair_needs_judging(tmp_path):
    """`sciqag train --augment`'s judge (the embedded model when no judge endpoint is set) is started on the first
    request, as every stage's is: a round whose generator wrote no pair starts nothing."""
    from types import SimpleNamespace

    from helpers import write_jsonl

    from sciqag_dataset.orchestration.augmentation import augment_judge

    work = tmp_path / "augment" / "work"
    write_jsonl(work / "papers.jsonl", [{"id": "p0", "title": "Films", "text": "Zinc oxide films grew. " * 40}])
    write_jsonl(work / "generated.jsonl", [{"id": "p0", "status": "failed", "error": "LLMError: gave up", "qa": []}])
    args = SimpleNamespace(augment_judge_url=None, augment_judge_model=None, augment_judge_api_key_env=None)
    summary = augment_judge(work, SimpleNamespace(args=args))
    assert not summary.failed
    assert not (work.parent / "judge_server.log").exists()


@pytest.fixture(scope="module")
def sample_papers(tmp_path_factory):
    """The shipped sample papers as the run reads them (none is about corrosion, the worked example's topic)."""
    from sciqag_dataset.builders.ingest import run_ingest
    from sciqag_dataset.orchestration.pipeline import sample_papers as shipped

    work = tmp_path_factory.mktemp("samples")
    run_ingest(shipped(), work)
    return [json.loads(line) for line in (work / "papers.jsonl").read_text().splitlines()]


def test_the_worked_example_copied_into_a_reply_is_told_from_a_pair_about_the_passage(sample_papers):
    """The example's pairs came back for 4 of 5 sample papers ("How did the corrosion rate of carbon steel in
    seawater change over 90 days?"), reworded too: they share more words with the example than with any chunk
    the profile asks about; the authors' released pairs, and pairs written from each chunk's own sentences,
    do not."""
    reworded = [
        (
            "What happened to the corrosion rate of the steel in seawater after three months?",
            "It dropped to 0.09 mm per year.",
        ),
        ("Which additive slowed the corrosion of the coupons?", "Sodium molybdate at 50 ppm."),
        # mixed into a pair about the paper (seen in a sample run): the example's topic gives it away
        (
            "What is the median lateral grain size of carbon steel in aerated seawater?",
            "The median lateral grain size was 0.38 um.",
        ),
    ]
    for paper in sample_papers:
        pieces, _ = chunks(paper["text"], 300, max_chunks=2)
        for piece in pieces:
            for q, a in small_model.EXAMPLE_PAIRS + reworded:
                assert small_model.off_passage(q, a, piece) == "the prompt's worked example", (paper["id"], q)
            sentences = [s for s in small_model.SENTENCE_END.split(piece) if len(s.split()) > 6][:3]
            for sentence in sentences:  # a question and an answer taken from the passage's own words
                words = sentence.split()
                q = "What does the study report about " + " ".join(words[:6]) + "?"
                assert small_model.off_passage(q, sentence, piece) is None, (paper["id"], sentence)
        for qa in paper.get("existing_qa") or []:
            assert small_model.off_passage(qa["question"], qa["answer"], paper["text"]) is None, qa["question"]
    assert any(p.get("existing_qa") for p in sample_papers)
    assert small_model.off_passage("What is the capital city?", "It is Paris.", PASSAGE) == "no word of its passage"


def test_a_run_of_the_worked_examples_words_is_a_copy_whatever_the_pair_is_about():
    """A pair about the paper, with the example's words strung in: more of its words are the paper's, none is
    the example's topic, but five words in a row are the example's and not the paper's."""
    q = "What effect did annealing in air at 400 C have on the zinc oxide nanorods' emission?"
    copied = "It cut the rate to 0.04 mm per year."
    assert small_model.off_passage(q, copied, PASSAGE) == "the prompt's worked example"
    for answer in ("It cut the rate of the reaction.", "It raised the band-edge emission at 380 nm threefold."):
        assert small_model.off_passage(q, answer, PASSAGE) is None  # a word or two of the example is no copy
    own = PASSAGE + "A coating cut the rate to 0.04 mm per year."  # the paper's own words: its pair
    assert small_model.off_passage(q, copied, own) is None
    # the frame of one of the example's questions ("At what temperature were the ...") is no copy either
    assert small_model.off_passage("At what temperature were the rods annealed?", "At 400 C.", PASSAGE) is None
