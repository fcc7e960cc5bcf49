"""A key goes only to the host it was configured for, and no credential is ever written or logged
(`--backend hf` for real too).

What a client sends is seen by ``RecordingProxy``, a loopback proxy in front of the real `transformers
serve`, or of a scripted FAKE endpoint (``ScriptedChat``) where only the headers sent matter (no server here
logs request headers). Where logs are checked the CLI runs in a subprocess, so its real stderr, with `-vv`
debug logging, is what is checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import RecordingProxy, ScriptedChat, write_jsonl
from huggingface_hub import constants
from published import PAIRS, published_folder

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import EndpointConfig
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.llm import client_from_config, resolve_api_key
from sciqag_dataset.llm.budget import spend_by_stage
from sciqag_dataset.llm.server import free_port

OPENAI_KEY = "sk-openai-never-sent-elsewhere-0123456789"
HF_TOKEN = "hf_never_sent_to_a_custom_host_0123456789abcdef"
MY_KEY = "my-teacher-key-value-0123456789"
URL_SECRET = "s3cr3t-in-the-url-98765"


def make_work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    write_jsonl(
        work / "papers.jsonl", [{"id": f"p{i}", "title": f"Paper {i}", "text": f"Body {i}. " * 30} for i in range(2)]
    )
    write_jsonl(work / "keywords.jsonl", [{"id": f"p{i}", "keywords": ["body"], "status": "ok"} for i in range(2)])
    return work


def sciqag(*args, env_extra=None, timeout=300):
    env = {**os.environ, "OPENAI_API_KEY": OPENAI_KEY, "HF_TOKEN": HF_TOKEN}
    env.pop("HF_HUB_OFFLINE", None)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "sciqag_dataset.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def everything_written(*folders: Path) -> str:
    return "".join(
        p.read_bytes().decode("utf-8", "replace") for folder in folders for p in folder.rglob("*") if p.is_file()
    )


def test_an_unset_key_variable_is_an_error_naming_it(tmp_path):
    work = make_work(tmp_path)
    proc = sciqag(
        "seed", str(work), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "SOME_UNSET_VAR"
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "SOME_UNSET_VAR" in lines[0] and "teacher.api_key_env" in lines[0]
    assert OPENAI_KEY not in proc.stderr + proc.stdout
    assert not (work / "seed.jsonl").exists()  # refused before any work


def test_resolution_rules(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("MY_KEY", MY_KEY)
    assert resolve_api_key("https://api.openai.com/v1", None) == OPENAI_KEY
    assert resolve_api_key("http://tgi.internal:8080/v1", None) is None  # not OpenAI's host: no implicit key
    assert resolve_api_key(["http://a:1/v1", "http://b:2/v1"], "MY_KEY") == MY_KEY  # configured for them
    assert resolve_api_key(None, "MY_KEY") is None  # the embedded server never gets a key
    with pytest.raises(UserError, match="NOPE_UNSET"):
        resolve_api_key("http://tgi.internal:8080/v1", "NOPE_UNSET")


def test_an_endpoints_backend_option_names_its_transport(tmp_path):
    """`backend:` (and `--backend`) keep their name; they pick the transport (client library) of the registry."""
    from dataclasses import fields

    from sciqag_dataset.config.config_file import Config
    from sciqag_dataset.llm import LLMClient
    from sciqag_dataset.llm.transports import TRANSPORTS

    assert next(f for f in fields(EndpointConfig) if f.name == "backend").metadata["choices"] == TRANSPORTS.names()
    (tmp_path / "cfg.yaml").write_text("judge:\n  url: http://judge.example/v1\n  model: m\n  backend: openai\n")
    judge = Config.load(tmp_path / "cfg.yaml").judge
    assert client_from_config(judge).transport == "openai"
    if not constants.is_offline_mode():  # hf refuses to run then (see below)
        hf = client_from_config(EndpointConfig(url="http://judge.example/v1", model="m", backend="hf"))
        assert hf.transport == "hf"
    with pytest.raises(ValueError, match="backend must be one of 'openai', 'hf', not 'grpc'"):
        LLMClient("http://judge.example/v1", "m", transport="grpc")


@pytest.mark.parametrize("backend", ["openai", "hf"])
def test_no_key_configured_sends_no_key_from_the_environment(says_server, monkeypatch, backend):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    if backend == "hf" and constants.is_offline_mode():  # read once at import: set for this whole process
        pytest.skip("HF_HUB_OFFLINE is set for the test process; the hf backend refuses to run then")
    with RecordingProxy(says_server.base_url) as proxy:
        client = client_from_config(EndpointConfig(url=proxy.base_url, model=says_server.model, backend=backend))
        reply = asyncio.run(client.chat([{"role": "user", "content": "hi"}]))
    assert reply.text and reply.finish_reason == "stop"
    sent = proxy.authorizations()
    assert sent == ["Bearer no-key"]
    agent = next(v for k, v in proxy.requests[0]["headers"].items() if k.lower() == "user-agent")
    # the backend option does what it says: the hf backend's requests come from huggingface_hub
    assert ("hf_hub" in agent) == (backend == "hf") and ("OpenAI" in agent) == (backend == "openai")


def test_hf_backend_with_offline_mode_is_a_clear_error_not_a_silent_switch(says_server, tmp_path):
    work = make_work(tmp_path)
    proc = sciqag(
        "seed",
        str(work),
        "--endpoint",
        says_server.base_url,
        "--model",
        says_server.model,
        "--backend",
        "hf",
        env_extra={"HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 2 and "HF_HUB_OFFLINE" in proc.stderr and "backend openai" in proc.stderr
    assert not (work / "seed.jsonl").exists()


def test_a_named_key_goes_to_its_endpoint_and_nowhere_else(says_server, tmp_path):
    work = make_work(tmp_path)
    with RecordingProxy(says_server.base_url) as teacher, RecordingProxy(says_server.base_url) as generator:
        seed = sciqag(
            "seed",
            str(work),
            "--endpoint",
            teacher.base_url,
            "--model",
            says_server.model,
            "--api-key-env",
            "MY_KEY",
            env_extra={"MY_KEY": MY_KEY},
        )
        assert seed.returncode == 0, seed.stderr
        gen = sciqag(
            "generate",
            str(work),
            "--endpoint",
            generator.base_url,
            "--model",
            says_server.model,
            "--prompt-style",
            "paper",
            env_extra={"MY_KEY": MY_KEY},
        )
        assert gen.returncode == 0, gen.stderr
    assert teacher.authorizations() == [f"Bearer {MY_KEY}"] * 2
    assert generator.authorizations() == ["Bearer no-key"] * 2
    written = everything_written(work)
    assert MY_KEY not in written and OPENAI_KEY not in written and HF_TOKEN not in written
    assert "MY_KEY" in (work / "config.yaml").read_text()  # the variable's name is what is saved


def test_a_password_in_the_url_is_never_written_or_logged(says_server, tmp_path):
    work = make_work(tmp_path)
    port = says_server.base_url.split(":")[2].split("/")[0]
    url = f"http://user:{URL_SECRET}@127.0.0.1:{port}/v1"
    proc = sciqag("-vv", "seed", str(work), "--endpoint", url, "--model", says_server.model)
    assert proc.returncode == 0, proc.stderr
    assert "HTTP Request" in proc.stderr  # -vv really logged the requests (with their URLs)
    assert URL_SECRET not in proc.stderr + proc.stdout
    assert URL_SECRET not in everything_written(work)
    saved = (work / "config.yaml").read_text()
    assert f"http://127.0.0.1:{port}/v1" in saved
    manifest = json.loads((work / "seed_manifest.json").read_text())
    assert manifest["endpoints"] == [f"http://127.0.0.1:{port}/v1"]

    dead = f"http://user:{URL_SECRET}@127.0.0.1:{free_port()}/v1"  # an error message names the URL
    proc = sciqag("-vv", "seed", str(work), "--endpoint", dead, "--model", "m")
    assert proc.returncode == 2 and "no endpoint is reachable" in proc.stderr
    assert URL_SECRET not in proc.stderr + proc.stdout


def test_a_key_value_is_masked_in_every_log_line(says_server, tmp_path):
    work = make_work(tmp_path)
    proc = sciqag(
        "-vv",
        "seed",
        str(work),
        "--endpoint",
        says_server.base_url,
        "--model",
        says_server.model,
        "--api-key-env",
        "MY_KEY",
        env_extra={"MY_KEY": MY_KEY},
    )
    assert proc.returncode == 0, proc.stderr
    assert "DEBUG" in proc.stderr and MY_KEY not in proc.stderr + proc.stdout


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode("utf-8", "replace").split("=", 1) for item in raw if b"=" in item)


def test_local_servers_start_without_the_keys_of_this_process(tmp_path, monkeypatch):
    """A llama.cpp server and any `transformers serve`-style LocalServer this process starts hold no key
    in /proc/<pid>/environ: not OPENAI_API_KEY, HF_TOKEN or HUGGING_FACE_HUB_TOKEN, not a variable an endpoint's
    `api_key_env` names (resolved by this command or not), no proxy URL with a password."""
    from fakes import FakeCrashingServer

    from sciqag_dataset.llm.llama_cpp_engine import LlamaCppServer
    from sciqag_dataset.llm.llama_cpp_engine import installed as llama_cpp_installed
    from sciqag_dataset.llm.models import DEFAULT_MODEL_ID, gguf_path

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("HUGGING_FACE_HUB_TOKEN", HF_TOKEN)
    monkeypatch.setenv("TEACHER_CREDS", MY_KEY)
    monkeypatch.setenv("JUDGE_KEY", MY_KEY + "-judge")  # named by a stage this command does not run: unresolved
    monkeypatch.setenv("HTTPS_PROXY", f"http://user:{URL_SECRET}@proxy.example:3128")
    monkeypatch.setenv("PYTHON_SERVICE_TOKEN", URL_SECRET + "-2")  # a kept prefix, a credential's name
    monkeypatch.setenv("SCIQAG_PLAIN_SETTING", "kept")
    resolve_api_key("http://teacher.example/v1", "TEACHER_CREDS")
    servers = [FakeCrashingServer(-1, tmp_path / "fake.log")]
    if llama_cpp_installed():
        servers.append(LlamaCppServer(gguf_path(), DEFAULT_MODEL_ID, threads=1, log_path=tmp_path / "llama.log"))
    for server in servers:
        with server:
            env = _environ(server.proc.pid)
        assert env.get("SCIQAG_PLAIN_SETTING") == "kept" and env.get("PATH") == os.environ["PATH"], server.name
        leaked = [
            k for k, v in env.items() if any(secret in v for secret in (OPENAI_KEY, HF_TOKEN, MY_KEY, URL_SECRET))
        ]
        assert not leaked, f"{server.name} holds {leaked}"
    assert len(servers) == 2, "llama-cpp-python[server] is missing: install the dev extra"


def test_the_general_knowledge_key_goes_to_its_endpoint_only_and_is_never_written_or_logged(tmp_path):
    """The general-knowledge check's endpoint is an endpoint section like a benchmarked model's: its key
    (``--general-knowledge-api-key-env``) goes to its host and to no other, no results file, card or -vv log
    line holds it; its prices reach the spend ledger and its concurrency the saved config. The two hosts are
    FAKE endpoints (``ScriptedChat``: replies written here) behind ``RecordingProxy``, which sees the headers."""
    pub = published_folder(tmp_path)
    results = tmp_path / "res"
    with (
        ScriptedChat(lambda body: "I do not know that.") as model,
        ScriptedChat(lambda body: "I do not know that either.") as small,
        RecordingProxy(model.base_url) as to_model,
        RecordingProxy(small.base_url) as to_small,
    ):
        proc = sciqag(
            "-vv",
            "benchmark",
            str(pub),
            "-o",
            str(results),
            "--no-bertscore",
            "--update-card",
            str(pub),
            "--endpoint",
            to_model.base_url,
            "--model",
            "model-a",
            "--general-knowledge-endpoint",
            to_small.base_url,
            "--general-knowledge-model",
            "small",
            "--general-knowledge-api-key-env",
            "GK_KEY",
            "--general-knowledge-concurrency",
            "2",
            "--general-knowledge-price-prompt-per-m",
            "1000",
            env_extra={"GK_KEY": MY_KEY},
        )
    assert proc.returncode == 0, proc.stderr
    assert to_small.authorizations() == [f"Bearer {MY_KEY}"] * len(PAIRS)
    assert to_model.authorizations() == ["Bearer no-key"] * len(PAIRS)  # the benchmarked model names no key
    assert not any(MY_KEY in str(r["headers"]) for r in to_model.requests)  # its reachability probe neither
    assert "DEBUG" in proc.stderr and MY_KEY not in proc.stderr + proc.stdout
    assert MY_KEY not in everything_written(results, pub)
    saved = yaml.safe_load((results / "config.yaml").read_text())["benchmark"]["general_knowledge_endpoint"]
    assert saved["api_key_env"] == "GK_KEY" and saved["concurrency"] == 2  # the variable's name is what is saved
    spent = {r["stage"]: r for r in spend_by_stage(results)}
    # the scripted replies report 10 prompt tokens each, at 1000 USD per million
    assert spent["benchmark-general-knowledge"]["cost"] == pytest.approx(len(PAIRS) * 10 * 1000 / 1e6)
    assert spent["benchmark"]["cost"] == 0


def test_an_unset_general_knowledge_key_variable_is_refused_before_any_work(tmp_path, capsys):
    pub, results = published_folder(tmp_path), tmp_path / "res"
    capsys.readouterr()  # publishing's progress bars
    args = ["benchmark", str(pub), "-o", str(results), "--no-bertscore"]
    args += ["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--general-knowledge-endpoint"]
    args += ["http://127.0.0.1:9/v1", "--general-knowledge-model", "small"]
    assert main([*args, "--general-knowledge-api-key-env", "SOME_UNSET_VAR"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "benchmark.general_knowledge_endpoint.api_key_env" in err
    assert "SOME_UNSET_VAR" in err and not results.exists()
