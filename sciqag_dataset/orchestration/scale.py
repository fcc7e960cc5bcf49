"""Scale-out on datatrove: the per-paper stages of `sciqag run` as jobs of many ranks, here, on Slurm or on Ray.

Each per-paper stage (keywords, seed, generate, the evaluation metrics) becomes a datatrove job of ``tasks``
ranks: rank i runs ``run_stage(stage, work, shard=(i, tasks))`` (``StageStep``); then a one-rank job folds
the ranks' shard files into the stage's output (``MergeStep``), and the next stage's job depends on that. A
killed run resumes twice over: datatrove skips the ranks it marked complete, and the runner's fingerprints
skip the finished papers inside a rank that was killed. The merged output is the plain run's, record for record.

Ingest is a job too (``IngestStep``): each rank parses its hash slice of the input files (local paths or any
fsspec URL), and the merge stores them in the plain run's order; every run reruns its ranks, which skip the
files already parsed (see ``builders/ingest/ranks.py``). Stages are built inside each rank from the config and
the stage's name (``StageBuilder``), so that models, worker pools and HTTP clients are created where they run.
The evaluation's merge into evaluated.jsonl and publish run in this process, after the last stage. The
embedded model is started once, here, and every rank on this machine talks to it; on a cluster each LLM
stage needs an endpoint URL (a TGI/vLLM/SGLang server or an Inference Endpoint).

Completion markers live in ``LOGGING_DIR/<nn>-<stage>-<run key>``: the key hashes the config, the task count
and the record files upstream of the stage (for ingest: every input's stamp), so a rerun of the same run
skips finished ranks and submits nothing, and new papers or new settings start the ranks afresh (the
fingerprints still skip every unchanged paper).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core.errors import ServerDown, Unavailable, UserError
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import NAMES, get_metric
from sciqag_dataset.core.processes import this_process, tied
from sciqag_dataset.core.redact import redact_url
from sciqag_dataset.core.runner import FAILED, Summary, output_path, status_of
from sciqag_dataset.core.stage import Stage, digest
from sciqag_dataset.core.wiring import INGEST_REPORT, PAPERS, RECORD_FILES, endpoint_of
from sciqag_dataset.llm.budget import CostCapReached
from sciqag_dataset.orchestration import pipeline
from sciqag_dataset.orchestration.scale_steps import IngestStep, MergeStep, StageBuilder, StageStep

log = logging.getLogger(__name__)


def _check(cfg: Config) -> None:
    x = cfg.executor
    try:
        import datatrove  # noqa: F401 - the `scale` extra
    except ImportError:
        raise UserError(f"--executor {x.kind} needs datatrove: pip install 'sciqag-hf[scale]'") from None
    if cfg.generate.shard:
        raise UserError("generate.shard and --executor shard the same way twice: use one of them")
    if x.kind == "slurm" and not x.partition:
        raise UserError("--executor slurm needs a partition (executor.partition / --partition)")
    endpoints = [e for _, e in pipeline.endpoints_needed(cfg, cfg.stages)]
    if (x.kind == "slurm" or (x.kind == "ray" and x.address)) and any(not e.url for e in endpoints):
        raise UserError(
            f"on a {x.kind} cluster every LLM stage needs an endpoint URL: the embedded model "
            "runs on this machine only (set teacher.url, generator.url, judge.url)"
        )
    urls = [u for e in endpoints for u in ([e.url] if isinstance(e.url, str) else e.url or [])]
    if any(redact_url(u) != u for u in urls):  # datatrove writes the steps, config included, to its logging dir
        raise UserError(
            "a URL with a user:password part or a query string would be written to datatrove's logging "
            "dir: name the key in api_key_env instead (every rank reads it from its environment)"
        )


def _asks_judge(cfg: Config, names: list[str]) -> bool:
    """Whether any of the stages ``names`` is a metric that asks the judge under this config."""
    return any(get_metric(n).needs_llm(cfg.evaluate) for n in names if n in NAMES)


#: the record files in pipeline order: a stage's key hashes those before its own output
_UPSTREAM = RECORD_FILES


def run_key(cfg: Config, output: str) -> str:
    """What decides which ranks of the stage writing ``output`` count as finished: the config, the task count,
    and the record files upstream of it as they are now (the evaluation metrics: all four). A run killed
    mid-stage, or run again, finds its finished ranks; new papers or new upstream records start the ranks
    afresh (the fingerprints still skip every finished paper). Its own output and the stages after it are left
    out, since they change as the run goes on (a missing output reopens the stage: ``_reopen_missing``)."""
    work = Path(cfg.work_dir)
    upstream = _UPSTREAM[: _UPSTREAM.index(output)] if output in _UPSTREAM else _UPSTREAM
    stats = [
        [name, (work / name).stat().st_size, (work / name).stat().st_mtime_ns]
        for name in upstream
        if (work / name).exists()
    ]
    return digest([_settings(cfg), cfg.executor.tasks, stats])[:10]


def _settings(cfg: Config) -> dict:
    return {
        k: v for k, v in cfg.to_dict().items() if k not in ("executor", "benchmark", "publish", "train", "set_options")
    }


class ScaledRunner:
    """A ``pipeline.StageRunner`` that runs each stage as datatrove jobs (see the module docstring)."""

    def __init__(self, cfg: Config):
        _check(cfg)
        # absolute: ranks may start in another directory (Ray workers, Slurm nodes)
        self.cfg = Config.from_dict({**cfg.to_dict(), "work_dir": str(Path(cfg.work_dir).resolve())})
        self.x = self.cfg.executor
        self.logging_root = Path(self.x.logging_dir or Path(self.cfg.work_dir) / ".datatrove").resolve()
        # ranks on this machine watch this process (their parent is a fork server or a Ray worker, not it)
        self.owner = this_process() if _on_this_machine(self.x) else None
        self.previous = None  # the last job launched (Slurm chains every job on the one before)
        self.submitted = 0  # Slurm jobs submitted by this run
        self.count = 0

    def __call__(
        self, names: list[str], endpoints: pipeline.Endpoints, built: dict[str, Stage] | None = None
    ) -> dict[str, Summary]:  # built here: unused, ranks build
        running = endpoints.serving() if self._needs_embedded(names) else None
        config = self._config()
        work = self.cfg.work_dir
        out = {}
        for name in names:
            self.count += 1
            stage = StageBuilder(name, config, running)
            output = stage().output_file
            base = self.logging_root / f"{self.count:02d}-{name}-{run_key(self.cfg, output)}"
            _reopen_missing(base, Path(work) / output)
            try:
                self._jobs(
                    name,
                    StageStep(stage, work, self._threads(), self.owner),
                    MergeStep(output, work, self.x.tasks, self.owner),
                    base,
                )
            except Unavailable as exc:  # ranks stop when the server they share dies: say so, not "did not finish"
                if running is not None and (death := endpoints.dead()):
                    raise ServerDown(
                        f"{name}: the embedded server died under the ranks: {death}\nNo paper was "
                        "marked failed: rerun to go on."
                    ) from exc
                if self.cfg.max_cost is not None and _stopped_at_cap(base):
                    raise CostCapReached(
                        f"{name}: ranks stopped at the cost cap (--max-cost {self.cfg.max_cost:g}); finished papers "
                        "are kept: rerun with a higher --max-cost to go on."
                    ) from exc
                raise
            if self.x.kind != "slurm" or self.x.wait:
                self._reopen_failed(base, output)
            out[name] = self._summary(name, output)
        return out

    def _config(self) -> dict:
        """The config the ranks build their stages from."""
        config = self.cfg.to_dict()
        config["keywords"]["workers"] = 1  # the ranks are the worker processes
        return config

    def ingest(self) -> Summary:
        """Ranks parse their slices of the input files, a merge stores them. The run key also hashes every
        input's stamp, so new or changed files start the ranks afresh (each skips the files its slice holds at
        the same stamp), and an unchanged input submits nothing."""
        self.count += 1
        config = self._config()
        key = digest([_settings(self.cfg), self.x.tasks, pipeline.ingest_inputs(self.cfg)])[:10]
        base = self.logging_root / f"{self.count:02d}-ingest-{key}"
        _reopen_missing(base, Path(self.cfg.work_dir) / PAPERS)
        cwd = os.getcwd()  # inputs are read as given (relative paths too): from the directory of this run
        self._jobs(
            "ingest",
            IngestStep(config, cwd=cwd, owner=self.owner),
            IngestStep(config, parsed_by=self.x.tasks, cwd=cwd, owner=self.owner),
            base,
        )
        if self.x.kind == "slurm" and not self.x.wait:
            return self._summary("ingest", "")
        report = json.loads((Path(self.cfg.work_dir) / INGEST_REPORT).read_text(encoding="utf-8"))
        summary = Summary("ingest")
        summary.counts.update({k: v for k, v in report["counts"].items() if v})
        return summary

    def _jobs(self, name: str, rank_step, merge_step, base: Path) -> None:
        """``rank_step`` on every rank, then ``merge_step`` on one, after the jobs before."""
        ranks = self._executor([rank_step], self.x.tasks, base / "ranks", name)
        merge = self._executor([merge_step], 1, base / "merge", f"{name}-merge", depends=ranks)
        if self.x.kind == "slurm":  # submitted after the job before; then waited for, unless told not to
            merge.run()  # submits its dependency, the ranks, first
            self.submitted += sum(j.job_id not in (None, -1) for j in (ranks, merge))
            if self.x.wait:
                self._wait(name, ranks, merge)
        else:
            ranks.run()
            if missing := ranks.get_incomplete_ranks():  # Ray logs a failed rank and goes on
                raise Unavailable(
                    f"{name}: ranks {missing} did not finish; see {base / 'ranks' / 'logs'} (a rerun runs only them)"
                )
            merge.run()
        self.previous = merge

    def _reopen_failed(self, base: Path, output: str) -> None:
        """A rank whose papers failed is not finished: its marker goes, so that a rerun retries them (and
        the fingerprints skip the rest), as a plain rerun retries failed papers."""
        stem = output.removesuffix(".jsonl")
        for rank in range(self.x.tasks):
            manifest = Path(self.cfg.work_dir) / f"{stem}.shard-{rank}-of-{self.x.tasks}_manifest.json"
            if manifest.exists() and json.loads(manifest.read_text(encoding="utf-8"))["counts"].get(FAILED):
                for marker in (
                    base / "ranks" / "completions" / f"{rank:05d}",
                    base / "merge" / "completions" / "00000",
                ):
                    marker.unlink(missing_ok=True)

    def _threads(self) -> int:
        if self.x.kind == "local":
            return max(1, (os.cpu_count() or 1) // min(self.x.workers or self.x.tasks, self.x.tasks))
        return self.x.cpus_per_task

    def _needs_embedded(self, names: list[str]) -> bool:
        """Whether a stage of ``names`` asks the embedded model (a metric: where it asks the judge)."""
        stages = [n for n in names if endpoint_of(n)] + ["evaluate"] * _asks_judge(self.cfg, names)
        return any(not e.url for s in stages if s in self.cfg.stages for _, e in pipeline.endpoints_of(self.cfg, s))

    def _executor(self, steps: list, tasks: int, logging_dir: Path, job: str, depends=None):
        from datatrove.executor import LocalPipelineExecutor, RayPipelineExecutor, SlurmPipelineExecutor

        x = self.x
        if x.kind == "local":
            return LocalPipelineExecutor(
                steps, tasks=tasks, workers=min(x.workers or tasks, tasks), logging_dir=str(logging_dir)
            )  # run in turn here: no `depends`
        if x.kind == "ray":
            import ray

            if not ray.is_initialized():  # a cluster's address, or a Ray instance started on this machine
                ray.init(address=x.address, include_dashboard=False, log_to_driver=False)
            return RayPipelineExecutor(
                steps,
                tasks=tasks,
                workers=min(x.workers or tasks, tasks),
                logging_dir=str(logging_dir),
                cpus_per_task=x.cpus_per_task,
                mem_per_cpu_gb=x.mem_per_cpu_gb,
                gpus_per_task=x.gpus_per_task,
            )
        return SlurmPipelineExecutor(
            steps,
            tasks=tasks,
            time=x.time,
            partition=x.partition,
            cpus_per_task=x.cpus_per_task,
            mem_per_cpu_gb=int(max(1, round(x.mem_per_cpu_gb))),
            gpus_per_task=x.gpus_per_task,
            job_name=f"sciqag-{job}",
            logging_dir=str(logging_dir),
            depends=depends or self.previous,
            slurm_logs_folder=str(Path(x.slurm_logs_dir or self.logging_root / "slurm") / job),
            env_command=x.env_command,
            sbatch_args=dict(x.sbatch_args) or None,
        )

    def _wait(self, name: str, ranks, merge) -> None:
        """Until the merge job marked itself complete. Ranks that left the queue unfinished are an error (their
        merge, waiting on them with afterok, would stay queued for ever: it is cancelled)."""
        ranks_job, merge_job = (str(j) if j not in (None, -1) else None for j in (ranks.job_id, merge.job_id))
        logs = self.x.slurm_logs_dir or self.logging_root / "slurm"
        while not merge.logging_dir.isfile("completions/00000"):
            if ranks_job and not _queued([ranks_job]) and ranks.get_incomplete_ranks():
                if merge_job:
                    try:
                        subprocess.run(["scancel", merge_job], capture_output=True, timeout=60)
                    except (OSError, subprocess.TimeoutExpired):
                        log.warning("could not cancel slurm job %s (waiting on ranks that failed)", merge_job)
                raise Unavailable(
                    f"{name}: slurm job {ranks_job} ended with ranks {ranks.get_incomplete_ranks()} "
                    f"unfinished (logs in {logs}); a rerun submits only them"
                )
            if not (ranks_job and _queued([ranks_job])) and not (merge_job and _queued([merge_job])):
                raise Unavailable(
                    f"{name}: the slurm jobs ({ranks_job}, {merge_job}) left the queue before the "
                    f"stage was merged (logs in {logs}); a rerun submits what is unfinished"
                )
            log.info("waiting for the slurm jobs of %s (%s, %s)", name, ranks_job, merge_job)
            time.sleep(self.x.poll_seconds)

    def _summary(self, name: str, output: str) -> Summary:
        """The stage's records by status (on Slurm without waiting, where nothing has run yet: the jobs)."""
        summary = Summary(name)
        if self.x.kind == "slurm" and not self.x.wait:
            summary.counts["submitted to slurm"] += 1
            return summary
        for rec in iter_latest(output_path(Path(self.cfg.work_dir), output)):
            summary.counts[status_of(rec)] += 1
        return summary


def _stopped_at_cap(base: Path) -> bool:
    """Whether a rank of the job logged under ``base`` stopped at the cost cap (datatrove logs its error)."""
    name = CostCapReached.__name__
    return any(name in p.read_text(encoding="utf-8", errors="replace") for p in base.rglob("*.log"))


def _reopen_missing(base: Path, output: Path) -> None:
    """A stage merged once whose output is gone (deleted by hand) runs again: its markers go. (A stage killed
    before its merge keeps its finished ranks.)"""
    if not output.exists() and (base / "merge" / "completions" / "00000").exists():
        for marker in [*base.glob("ranks/completions/*"), *base.glob("merge/completions/*")]:
            marker.unlink()


def _on_this_machine(x) -> bool:
    """Whether every rank runs here: only then does this process's pid name it to them (not on a Ray address)."""
    return x.kind == "local" or (x.kind == "ray" and not x.address)


def _queued(jobs: list[str]) -> bool:
    """Whether Slurm still lists any of ``jobs`` (pending or running); True when squeue cannot tell."""
    try:
        out = subprocess.run(["squeue", "-h", "-j", ",".join(jobs)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return True
    if out.returncode != 0:  # "Invalid job id": purged since it ended
        return "invalid job id" not in (out.stderr + out.stdout).lower()
    return bool(out.stdout.strip())


def run_scaled(cfg: Config, report: Callable[[str, object], int], done: pipeline.RunReport) -> int:
    """`sciqag run` with the per-paper stages on datatrove. On Slurm with ``executor.wait: false`` the jobs of
    ingest and the per-paper stages are submitted and the command returns; the whole-corpus steps (evaluation,
    publish) need their output, so they run on the next `sciqag run` (whose finished ranks are skipped). Ranks,
    datatrove's helpers and a Ray instance started here die with this process (``processes.tied``)."""
    runner = ScaledRunner(cfg)
    if cfg.executor.kind != "slurm" or cfg.executor.wait:
        with tied() if _on_this_machine(cfg.executor) else nullcontext():
            return pipeline.run_all(cfg, report, done, runner=runner)
    first = [s for s in cfg.stages if pipeline.STEPS[s].run is None]  # the stages the ranks run
    status = pipeline.run_all(Config.from_dict({**cfg.to_dict(), "stages": first}), report, done, runner=runner)
    rest = [s for s in cfg.stages if pipeline.STEPS[s].run is not None]  # whole-corpus steps: here
    if runner.submitted or not rest:
        return status  # evaluation needs their output: the next run, once they are done
    # nothing was left to submit: the earlier jobs are done, and evaluation runs now, waited for
    waited = Config.from_dict(
        {**cfg.to_dict(), "stages": rest, "executor": {**cfg.to_dict()["executor"], "wait": True}}
    )
    return max(status, pipeline.run_all(waited, report, done, runner=ScaledRunner(waited)))
