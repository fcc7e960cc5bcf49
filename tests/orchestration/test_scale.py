"""`sciqag run --executor local|slurm|ray`: the per-paper stages as datatrove jobs.

Real parts: datatrove's Local executor with worker processes, the real stages (pke keywords, the embedder,
the numeric metric) and a real `transformers serve` (tiny model) as teacher and generator. One fake: ``sbatch``,
a script put on PATH that records the job scripts it is given (there is no Slurm here), named so.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import read_jsonl, write_jsonl

from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.orchestration import pipeline, scale

VOLATILE = {"seconds", "elapsed", "duration", "started", "finished", "usage", "cached", "endpoint"}
STAGE_FILES = (
    "papers.jsonl",
    "keywords.jsonl",
    "seed.jsonl",
    "generated.jsonl",
    "numeric.jsonl",
    "coverage.jsonl",
    "evaluated.jsonl",
)


def config(work: Path, server, inputs: list[str] | None = None, **executor) -> Config:
    cfg = Config(work_dir=str(work), inputs=inputs or [])
    cfg.stages = ["ingest", "keywords", "seed", "generate", "evaluate"]
    for endpoint in (cfg.teacher, cfg.generator):
        endpoint.url, endpoint.model, endpoint.max_tokens, endpoint.temperature = (
            server.base_url,
            server.model,
            24,
            0.0,
        )
    for section in (cfg.seed, cfg.generate):
        section.context_tokens, section.chars_per_token = 2048, 1.0
    cfg.evaluate.plots = False
    cfg.evaluate.metrics = ["numeric", "coverage"]
    for key, value in executor.items():
        setattr(cfg.executor, key, value)
    return cfg.validate()


def records(path: Path) -> dict[str, dict]:
    return {
        r.get("id") or f"{r['paper_id']}/{r['question']}": {k: v for k, v in r.items() if k not in VOLATILE}
        for r in read_jsonl(path)
    }


@pytest.mark.e2e
def test_the_local_executor_gives_the_plain_run_record_for_record(says_server, paper_host, tmp_path):
    plain, scaled = tmp_path / "plain", tmp_path / "scaled"
    papers = [f"{paper_host[0]}/papers/"]  # read over HTTP by fsspec, in the ranks' processes too
    assert pipeline.run_all(config(plain, says_server, papers), lambda stage, result: 0) == 0
    cfg = config(scaled, says_server, papers, kind="local", tasks=2, workers=2)
    assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    for name in STAGE_FILES:
        assert records(scaled / name) == records(plain / name), name
    assert len(records(plain / "seed.jsonl")) == 5
    assert all(r["source_path"].startswith(papers[0]) for r in records(scaled / "papers.jsonl").values())
    assert (
        json.loads((scaled / "ingest_report.json").read_text())["warnings"]
        == json.loads((plain / "ingest_report.json").read_text())["warnings"]
    )
    shards = sorted(p.name for p in scaled.glob("seed.shard-*.jsonl"))
    assert shards == [f"seed.shard-{i}-of-2.jsonl" for i in range(2)]
    completions = list((scaled / ".datatrove").rglob("completions/*"))
    # ingest, keywords, seed, generate, numeric, coverage: 2 ranks and a merge each
    assert len(completions) == 6 * (2 + 1)
    manifests = [json.loads((w / "seed_manifest.json").read_text()) for w in (plain, scaled)]
    assert manifests[1]["counts"] == manifests[0]["counts"] and manifests[1]["shards"] == 2  # the shards' summed
    # a rerun of the finished run runs no rank (same keys: every rank marked complete) and changes nothing
    before = {p.name: p.read_bytes() for p in (*(scaled / n for n in STAGE_FILES), *scaled.glob("*manifest.json"))}
    assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    after = {p.name: p.read_bytes() for p in (*(scaled / n for n in STAGE_FILES), *scaled.glob("*manifest.json"))}
    assert after == before and len(list((scaled / ".datatrove").iterdir())) == 6


def make_work(work: Path, n: int) -> None:
    """Papers with keywords, as ingest and keywords leave them."""
    write_jsonl(
        work / "papers.jsonl",
        [
            {
                "id": f"p{i:03d}",
                "title": f"Film {i}",
                "source_format": "txt",
                "text": f"Film {i} was annealed at "
                f"{300 + i} K for {i % 7 + 1} h; its band gap fell to {1 + i / 100:.2f} eV. " * 3,
            }
            for i in range(n)
        ],
    )
    write_jsonl(
        work / "keywords.jsonl", [{"id": f"p{i:03d}", "keywords": ["band gap"], "status": "ok"} for i in range(n)]
    )


@pytest.mark.e2e
def test_a_killed_scaled_run_redoes_no_finished_paper(tiny_server, tmp_path):
    n = 40
    work = tmp_path / "work"
    make_work(work, n)
    cmd = [
        sys.executable,
        "-m",
        "sciqag_dataset.cli",
        "run",
        "--work",
        str(work),
        "--stages",
        "seed",
        "--endpoint",
        tiny_server.base_url,
        "--model",
        tiny_server.model,
        "--max-tokens",
        "8",
        "--context-tokens",
        "2048",
        "--chars-per-token",
        "1",
        "--executor",
        "local",
        "--tasks",
        "4",
        "--workers",
        "1",
    ]  # ranks one after another: the kill lands after some finished
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300

    def finished() -> set[str]:
        return {r["id"] for p in work.glob("seed.shard-*.jsonl") for r in read_jsonl(p)}

    def marked() -> list[Path]:
        return list((work / ".datatrove").glob("*/ranks/completions/*"))

    while time.time() < deadline and not (
        marked() and len(finished()) > len(read_jsonl(work / "seed.shard-0-of-4.jsonl"))
    ):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its rank processes, as a lost machine would
    proc.wait()
    before, done_ranks = finished(), marked()
    assert done_ranks and len(before) < n, "the kill must land mid-run, after a rank finished"
    first = {p.name: p.read_text() for p in work.glob("seed.shard-*_manifest.json")}

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(r["id"] for r in read_jsonl(work / "seed.jsonl")) == [f"p{i:03d}" for i in range(n)]
    again = {p.name: p.read_text() for p in work.glob("seed.shard-*_manifest.json")}
    skipped = [name for name in first if again[name] == first[name]]
    assert len(skipped) == len(done_ranks)  # datatrove skipped the ranks it had marked complete
    # model calls of the rerun, over the ranks it ran: only the papers not finished before the kill (the one in
    # flight at the kill may come from the cache)
    usage = [json.loads(text)["usage"] for name, text in again.items() if name not in skipped]
    assert sum(u["requests"] + u["cached"] for u in usage) == n - len(before)
    assert sum(u["cached"] for u in usage) <= 1


def fake_sbatch(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """FAKE sbatch (no Slurm here): records each script and answers with a job id. Returns (bin dir, log dir)."""
    fake = tmp_path / "bin" / "sbatch"
    fake.parent.mkdir()
    log = tmp_path / "sbatch.log"
    fake.write_text(f"""#!{sys.executable}
import pathlib, shutil, sys
log = pathlib.Path({str(log)!r})
log.mkdir(exist_ok=True)
n = len(list(log.glob("*.sh")))
shutil.copy(sys.argv[-1], log / f"{{n}}.sh")
(log / f"{{n}}.args").write_text(" ".join(sys.argv[1:-1]))
print(f"Submitted batch job {{100 + n}}")
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    return fake.parent, log


def test_slurm_job_scripts_chain_every_stage(says_server, tmp_path, monkeypatch):
    bin_dir, log = fake_sbatch(tmp_path, monkeypatch)
    work = tmp_path / "work"
    cfg = config(
        work,
        says_server,
        kind="slurm",
        tasks=8,
        partition="cpu",
        time="02:00:00",
        cpus_per_task=4,
        mem_per_cpu_gb=3,
        env_command="source /shared/venv/bin/activate",
        wait=False,
    )
    assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    scripts = sorted(log.glob("*.sh"), key=lambda p: int(p.stem))
    texts = [p.read_text() for p in scripts]
    jobs = [t for t in texts if "launch_pickled_pipeline" in t]
    # ingest, keywords, seed, generate: each 8 ranks then a 1-rank merge (evaluation runs on a rerun once they
    # finish)
    assert len(jobs) == 8
    for text in jobs:
        assert "#SBATCH --partition=cpu" in text and "#SBATCH --time=02:00:00" in text
        assert "#SBATCH --cpus-per-task=4" in text and "#SBATCH --mem-per-cpu=3G" in text
        assert "source /shared/venv/bin/activate" in text
    assert "#SBATCH --array=0-7" in jobs[0] and "#SBATCH --array=0-0" in jobs[1]  # 8 ranks, then 1 merge
    names = [next(line for line in t.splitlines() if "--job-name" in line) for t in jobs]
    assert [n.split("=")[1] for n in names] == [
        "sciqag-ingest",
        "sciqag-ingest-merge",
        "sciqag-keywords",
        "sciqag-keywords-merge",
        "sciqag-seed",
        "sciqag-seed-merge",
        "sciqag-generate",
        "sciqag-generate-merge",
    ]
    ids = [100 + int(p.stem) for p in scripts if "launch_pickled_pipeline" in p.read_text()]  # the fake's job ids
    args = [(log / f"{p.stem}.args").read_text() for p in scripts if "launch_pickled_pipeline" in p.read_text()]
    assert "--dependency" not in args[0]
    for k in range(1, 8):  # each job after the one before it
        assert f"--dependency=afterok:{ids[k - 1]}" in args[k], (k, args[k])
    assert not (work / "papers.jsonl").exists() and not (work / "seed.jsonl").exists()  # the cluster runs them

    # waiting (the default): ranks that leave the queue unfinished are an error, not a hang on their merge
    (bin_dir / "squeue").write_text(f"#!{sys.executable}\n")  # FAKE squeue: no job listed any more
    (bin_dir / "squeue").chmod(0o755)
    cfg = config(tmp_path / "work2", says_server, kind="slurm", tasks=2, partition="cpu", poll_seconds=0.1)
    cfg.stages = ["ingest", "keywords"]
    with pytest.raises(UserError, match=r"ingest: slurm job \d+ ended with ranks \[0, 1\] unfinished"):
        scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport())


def test_a_finished_stage_is_not_submitted_again(says_server, tmp_path, monkeypatch):
    """Finished ranks stay finished across runs (the key hashes what is upstream, not the stage's own output),
    so `wait: false` reruns submit nothing once the jobs are done, and evaluation can follow."""
    _, log = fake_sbatch(tmp_path, monkeypatch)
    work = tmp_path / "work"
    cfg = config(work, says_server, kind="local", tasks=2, workers=2)
    cfg.stages = ["ingest", "keywords"]
    for _ in range(2):  # as the cluster would have run them
        assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    assert len(list((work / ".datatrove").iterdir())) == 2  # one key per stage, the same on the second run
    cfg = config(work, says_server, kind="slurm", tasks=2, partition="cpu", wait=False)
    cfg.stages = ["ingest", "keywords"]
    assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    assert not log.exists() or not list(log.glob("*.sh"))  # nothing left to submit
    (work / "keywords.jsonl").unlink()  # a deleted output reopens its stage
    assert scale.run_scaled(cfg, lambda stage, result: 0, pipeline.RunReport()) == 0
    names = [
        next(line for line in p.read_text().splitlines() if "--job-name" in line)
        for p in log.glob("*.sh")
        if "launch_pickled_pipeline" in p.read_text()
    ]  # not datatrove's stats jobs
    assert sorted(n.split("=")[1] for n in names) == ["sciqag-keywords", "sciqag-keywords-merge"]


@pytest.mark.e2e
def test_the_ray_executor_gives_the_plain_run_too(tmp_path):
    pytest.importorskip("ray", reason="ray is in the dev extra; `pip install ray==2.60.0` to run this")
    plain, scaled = tmp_path / "plain", tmp_path / "ray"
    for work, kind in ((plain, "plain"), (scaled, "ray")):
        assert (
            main(
                [
                    "run",
                    "--work",
                    str(work),
                    "--stages",
                    "ingest,keywords",
                    "--executor",
                    kind,
                    "--tasks",
                    "2",
                    "--workers",
                    "2",
                    "--cpus-per-task",
                    "1",
                    "--mem-per-cpu-gb",
                    "1",
                ]
            )
            == 0
        )
    assert records(scaled / "keywords.jsonl") == records(plain / "keywords.jsonl")
    assert len(list(scaled.glob("keywords.shard-*-of-2.jsonl"))) == 2


def test_options_are_refused_before_any_work(tmp_path, capsys):
    cfg = Config(work_dir=str(tmp_path / "w"))
    cfg.executor.kind = "slurm"
    with pytest.raises(UserError, match="partition"):
        scale.ScaledRunner(cfg)
    cfg.executor.partition = "cpu"
    with pytest.raises(UserError, match="needs an endpoint URL"):
        scale.ScaledRunner(cfg)  # the embedded model runs on this machine only
    cfg.stages = ["ingest", "seed", "generate"]
    for url in ("http://user:secret@gpu-1:8080/v1", "http://gpu-1:8080/v1?api_key=secret"):
        cfg.teacher.url = cfg.generator.url = url
        with pytest.raises(UserError, match="user:password part or a query string"):
            scale.ScaledRunner(cfg)
    cfg = Config(work_dir=str(tmp_path / "w"))
    cfg.executor.kind, cfg.generate.shard = "local", "0/2"
    with pytest.raises(UserError, match="shard the same way twice"):
        scale.ScaledRunner(cfg)


def test_a_plain_run_imports_no_datatrove(tmp_path):
    code = (
        f"import sys; from sciqag_dataset.cli import main; "
        f"main(['run', '--work', {str(tmp_path / 'w')!r}, '--stages', 'ingest']); print('datatrove' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("False"), out.stdout + out.stderr
    assert (tmp_path / "w" / "papers.jsonl").exists()
