"""The pipeline: stages built from the config and run in order. The layer between the CLI and the stages.

The CLI parses and reports; the stages (``builders``, ``evaluation``, ``trainers``) know nothing of each
other or of the config file; here a ``Config`` becomes stages (``*_stage``) and commands (``ingest``,
``seed``, ... ``run_all``). ``Endpoints`` turns endpoint sections into LLM clients and starts the embedded
model, lazily, the first time a stage has a request to send.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Protocol

from sciqag_dataset.builders import generate as generate_stage_module
from sciqag_dataset.builders import keywords as keywords_stage_module
from sciqag_dataset.builders import qagen
from sciqag_dataset.builders import seed as seed_stage_module
from sciqag_dataset.builders.ingest import listing as ingest_listing
from sciqag_dataset.builders.ingest import run_ingest
from sciqag_dataset.config.config_file import Config, EndpointConfig
from sciqag_dataset.core import metrics, records, remote, wiring
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.runner import Summary, merge_shards, run_stage
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.core.wiring import RUN_STAGES, Wire, endpoint_of
from sciqag_dataset.evaluation import filter as filter_module
from sciqag_dataset.evaluation.benchmark.items import flagged_questions
from sciqag_dataset.evaluation.decontaminate import load_benchmarks
from sciqag_dataset.evaluation.duplicates import find_duplicates
from sciqag_dataset.evaluation.evaluate import metric_stage, plan_evaluate
from sciqag_dataset.evaluation.filter import filter_pairs
from sciqag_dataset.evaluation.merge import merge_evaluation
from sciqag_dataset.hub.publish import write_folder
from sciqag_dataset.hub.upload import push_to_hub
from sciqag_dataset.llm import LLMClient, check_reachable, client_from_config, embedded
from sciqag_dataset.llm.budget import Budget
from sciqag_dataset.llm.supervisor import AttachedServer, EmbeddedServer, Serving

log = logging.getLogger(__name__)


def sample_papers() -> list[str]:
    """The original sample papers shipped inside the package."""
    return [str(resources.files("sciqag_dataset.examples").joinpath("papers"))]


class Endpoints:
    """Resolves endpoint sections to clients. The embedded server (a section with no url) is started once for
    all stages, and only when a request first misses the cache: a work dir that needs no call starts none.
    It is watched (``llm.supervisor``): a dead one is restarted or replaced, or stops the run."""

    def __init__(self, cfg: Config, running: Serving | None = None):
        self.cfg = cfg
        # an embedded server another process started: the ranks of a scaled-out run all talk to the one server
        # their parent started, as the plain run's stages do
        self.running = running
        self._server: EmbeddedServer | None = None
        self.budget = Budget(cfg.work_dir, cfg.max_cost)  # what the run's clients spend, and its cap

    @functools.cached_property
    def choice(self) -> embedded.Choice:
        """Which embedded server: decided (and a bad `embedded:` option refused) only where one is needed."""
        e = self.cfg.embedded
        return embedded.choose_here(e.backend, e.dtype, e.threads)

    @property
    def local(self) -> EmbeddedServer | AttachedServer:
        if self.running is not None:
            return AttachedServer(self.running)
        if self._server is None:
            self._server = EmbeddedServer(self.choice, log_path=Path(self.cfg.work_dir) / "local_server.log")
        return self._server

    @property
    def started(self) -> bool:
        return self._server is not None and self._server.started

    def dead(self) -> str | None:
        """How the embedded server this run started ended, if it died."""
        return self._server.dead() if self._server is not None else None

    def describe(self) -> str | None:
        """The embedded backend that served last, if one was started."""
        return self._server.choice.describe() if self.started else None

    def serving(self) -> Serving:
        """Start the embedded server now (for ranks in other processes) and say where it is."""
        return self.local.connect()

    def client(self, endpoint: EndpointConfig, stage: str) -> LLMClient:
        """A client of ``endpoint`` for ``stage`` (the name its spending is recorded under)."""
        cache = Path(self.cfg.work_dir) / "cache.sqlite"
        if endpoint.url:
            check_reachable(endpoint.url)
            client = client_from_config(endpoint, cache)
        else:
            client = client_from_config(
                endpoint, cache, model=self.choice.identity, label=embedded.DEFAULT_MODEL_ID, local=self.local
            )
            client.json_schema = self.choice.json_schema
        self.budget.add(client, stage)
        return client

    def __enter__(self) -> Endpoints:
        return self

    def __exit__(self, *exc) -> None:
        self.budget.record()
        if self._server is not None:
            self._server.stop()


# ---------------------------------------------------------------- one command per stage


def ingest(cfg: Config, shard: tuple[int, int] | None = None, parsed_by: int | None = None) -> Summary:
    """The papers into WORK/papers.jsonl; scaled out, ``shard`` parses one rank's slice and ``parsed_by``
    stores what the ranks parsed."""
    grobid = cfg.ingest.grobid_url if cfg.ingest.pdf_backend == "grobid" else None
    return run_ingest(
        cfg.inputs or sample_papers(),
        Path(cfg.work_dir),
        on_duplicate=cfg.ingest.on_duplicate,
        follow_symlinks=cfg.ingest.follow_symlinks,
        shard=shard,
        parsed_by=parsed_by,
        grobid_url=grobid,
        pdf_backend=None if grobid else cfg.ingest.pdf_backend,
        file_timeout=cfg.ingest.file_timeout,
        max_file_mb=cfg.ingest.max_file_mb,
    )


def ingest_inputs(cfg: Config) -> list[list]:
    """Every input with its stamp (what decides whether a scaled ingest's ranks have work to do)."""
    return ingest_listing(cfg.inputs or sample_papers(), cfg.work_dir, cfg.ingest.follow_symlinks)


def keywords_stage(cfg: Config, endpoints: Endpoints | None = None) -> Stage:
    k = cfg.keywords
    return keywords_stage_module.stage(n=k.n, workers=k.workers, reuse_existing=k.reuse_existing)


def keywords(cfg: Config) -> Summary:
    return run_stage(keywords_stage(cfg), cfg.work_dir)


def profiled(cfg: Config, endpoint: EndpointConfig, name: str):
    """The ``name`` options (seed or generate) as the embedded model needs them: requests fit its context, and
    the embedded profile asks it as a small model can answer, except for the options the user chose."""
    section = getattr(cfg, name)
    if endpoint.url:
        return section
    if section.context_tokens > embedded.CONTEXT_TOKENS:  # a longer prompt is refused by the server (400)
        section = replace(section, context_tokens=embedded.CONTEXT_TOKENS)
    if not cfg.embedded.profile or cfg.user_set(name, "prompt_style"):
        return section  # the profile off, or a prompt style of the user's choosing (even the default one)
    return replace(section, **{k: v for k, v in embedded.PROFILE.items() if not cfg.user_set(name, k)})


def seed_stage(cfg: Config, endpoints: Endpoints) -> Stage:
    return seed_stage_module.stage(endpoints.client(cfg.teacher, "seed"), profiled(cfg, cfg.teacher, "seed"))


def seed(cfg: Config, endpoints: Endpoints) -> Summary:
    return run_stage(seed_stage(cfg, endpoints), cfg.work_dir)


def generate_stage(cfg: Config, endpoints: Endpoints) -> Stage:
    client = endpoints.client(cfg.generator, "generate")
    return generate_stage_module.stage(client, profiled(cfg, cfg.generator, "generate"))


def generate(cfg: Config, endpoints: Endpoints) -> Summary:
    return run_stage(generate_stage(cfg, endpoints), cfg.work_dir, shard=cfg.generate.shard)


def merge_generated(cfg: Config) -> Summary:
    return merge_shards(cfg.work_dir, generate_stage_module.OUTPUT)


def judges(cfg: Config) -> list[EndpointConfig]:
    """The judge committee: `judge:` and the further members in `evaluate.judges`."""
    return [cfg.judge, *cfg.evaluate.judges]


def endpoints_of(cfg: Config, stage: str) -> list[tuple[str, EndpointConfig]]:
    """(option name of its key variable, endpoint section) of each endpoint ``stage`` may ask (``wiring``)."""
    section = endpoint_of(stage)
    if section == "judge":
        return [("judge" if i == 0 else f"evaluate.judges[{i - 1}]", j) for i, j in enumerate(judges(cfg))]
    return [(section, getattr(cfg, section))] if section else []


def endpoints_needed(cfg: Config, stages: list[str]) -> list[tuple[str, EndpointConfig]]:
    """``endpoints_of`` each of ``stages``, the judges only where the metrics to run ask one."""
    ev = replace(cfg.evaluate)
    ev.resolve_metrics(bool(cfg.judge.url))
    return [
        pair
        for stage in stages
        if endpoint_of(stage) != "judge" or ev.needs_judge()
        for pair in endpoints_of(cfg, stage)
    ]


def evaluate(cfg: Config, endpoints: Endpoints) -> dict[str, Summary]:
    return evaluate_with(cfg, endpoints, PlainRunner(cfg))


def evaluate_with(cfg: Config, endpoints: Endpoints, runner: StageRunner) -> dict[str, Summary]:
    """The metric stages through ``runner``, then their merge into evaluated.jsonl, the summary and plots."""
    src, stages = evaluation_stages(cfg, endpoints)
    summaries = runner([s.name for s in stages], endpoints, {s.name: s for s in stages})
    merge_evaluation(cfg.work_dir, src, cfg.evaluate)
    return summaries


def judge_clients(cfg: Config, endpoints: Endpoints) -> list[LLMClient] | None:
    metrics.load_plugins(cfg.plugins)  # a datatrove rank builds its stage from the config alone
    ev = cfg.evaluate
    ev.resolve_metrics(bool(cfg.judge.url))
    ev.validate()
    return [endpoints.client(j, "evaluate") for j in judges(cfg)] if ev.needs_judge() else None


def evaluation_stages(cfg: Config, endpoints: Endpoints) -> tuple[str, list[Stage]]:
    """The QA source and the metric stages `evaluate` runs (before their merge into evaluated.jsonl)."""
    clients = judge_clients(cfg, endpoints)
    ev = cfg.evaluate
    if clients and not all(j.url for j in judges(cfg)) and ev.context_tokens > embedded.CONTEXT_TOKENS:
        ev = replace(ev, context_tokens=embedded.CONTEXT_TOKENS)  # the embedded judge refuses a longer prompt
    return plan_evaluate(cfg.work_dir, ev, clients)


def judged_stages(cfg: Config, endpoints: Endpoints) -> list[Stage]:
    """The metric stages of `evaluate` that ask a model, built as ``evaluation_stages`` builds them (without
    the checks and the other metrics, which a plan need not build: some load models)."""
    clients = judge_clients(cfg, endpoints)
    if not clients:
        return []
    ev = cfg.evaluate
    if not all(j.url for j in judges(cfg)) and ev.context_tokens > embedded.CONTEXT_TOKENS:
        ev = replace(ev, context_tokens=embedded.CONTEXT_TOKENS)
    src = records.qa_source(cfg.work_dir, ev.source)
    return [metric_stage(m.name, ev, src, clients, None) for m in metrics.run_order(ev.metrics) if m.needs_llm(ev)]


def build_stage(name: str, cfg: Config, endpoints: Endpoints) -> Stage:
    """A per-paper stage of `sciqag run` by name: keywords, seed, generate, a plugin's, or an evaluation metric."""
    metrics.load_plugins(cfg.plugins)  # a datatrove rank builds a plugin's stage from the config alone
    step = STEPS.get(name)
    if step is not None and step.build is not None:
        stage = step.build(cfg, endpoints)
        if stage.output_file != wiring.WIRING[name].output:
            raise ValueError(
                f"stage {name!r} writes {stage.output_file}, but its Wire says {wiring.WIRING[name].output}"
            )
        return stage
    stages = {s.name: s for s in evaluation_stages(cfg, endpoints)[1]}
    if name not in stages:
        per_paper = [n for n, s in STEPS.items() if s.build is not None]
        raise UserError(f"no stage {name!r} in this run (its stages: {', '.join([*per_paper, *stages])})")
    return stages[name]


class StageRunner(Protocol):
    """How `run_all` runs the stages that go over the papers: by default here, one after another
    (``PlainRunner``); the scaled runner (``scale.py``) runs each as datatrove jobs, built inside its ranks."""

    def __call__(
        self, names: list[str], endpoints: Endpoints, built: dict[str, Stage] | None = None
    ) -> dict[str, Summary]:
        """Run the per-paper stages ``names`` (``built``: those already built here, by name); their summaries."""

    def ingest(self) -> Summary:
        """Read the input files into papers.jsonl."""


@dataclass
class PlainRunner:
    """Runs the stages here, one after another."""

    cfg: Config

    def __call__(
        self, names: list[str], endpoints: Endpoints, built: dict[str, Stage] | None = None
    ) -> dict[str, Summary]:
        return {
            n: run_stage(
                (built or {}).get(n) or build_stage(n, self.cfg, endpoints),
                self.cfg.work_dir,
                shard=shard_of(n, self.cfg),
            )
            for n in names
        }

    def ingest(self) -> Summary:
        return ingest(self.cfg)


def clear_filter(cfg: Config) -> list[str]:
    return filter_module.clear(cfg.work_dir)


def filter_evaluated(cfg: Config) -> dict:
    f = cfg.filter
    bench = (
        load_benchmarks(f.decontaminate, f.decontaminate_threshold, cfg.evaluate.embedding_model)
        if f.decontaminate
        else None
    )
    dups = (
        find_duplicates(cfg.work_dir, f.duplicate_threshold, f.duplicate_jaccard, cfg.evaluate.embedding_model)
        if f.drop_duplicates
        else None
    )
    flagged = flagged_questions(f.drop_flagged_items) if f.drop_flagged_items else None
    return filter_pairs(
        cfg.work_dir, allow_missing=f.allow_missing_scores, bench=bench, dups=dups, flagged=flagged, **f.rules()
    )


def publish(cfg: Config) -> tuple[Path, list[str]]:
    """The local publish folder, and where it was copied (Hub commit URLs, the remote folder's URL)."""
    out = write_folder(cfg.work_dir, cfg.output_dir, cfg)
    copies = (
        [push_to_hub(out, cfg.publish.push_to_hub, private=cfg.publish.private)] if cfg.publish.push_to_hub else []
    )
    if cfg.publish_url:
        remote.upload_folder(out, cfg.publish_url)
        copies.append(cfg.publish_url)
    return out, copies


# ---------------------------------------------------------------- the stages of `sciqag run`


@dataclass(frozen=True)
class Planned:
    """A stage as `sciqag run --plan` runs it, with clients that send nothing (``orchestration/plan.py``), and
    ``most(paper, record)``: the most requests the stage may send for one input, where a reply the plan takes as
    usable may be asked again (``record``: what the stage wrote for it in the plan); None: only as planned."""

    stage: Stage
    most: Callable[[dict, dict], int | None] | None = None


def plan_qa(build: Callable[[Config, Endpoints], Stage], section: str, name: str):
    """The plan hook of seed or generate: its stage, and the most requests a paper's paced lines may take
    (``builders.qagen.most_requests``, with the options the stage is built with)."""

    def plan(cfg: Config, endpoints: Endpoints) -> list[Planned]:
        options = profiled(cfg, getattr(cfg, section), name)
        return [Planned(build(cfg, endpoints), functools.partial(qagen.most_requests, cfg=options))]

    return plan


@dataclass(frozen=True)
class Step:
    """How `sciqag run` builds and runs one stage; what it reads and writes is its ``core.wiring.Wire``, under
    the same name. Exactly one of ``build``, ``run``, ``read``."""

    name: str
    #: a per-paper stage, built from the config and endpoints: the runner runs it over the papers (`run_stage`;
    #: scaled: one job of ranks over slices of the papers, then a merge)
    build: Callable[[Config, Endpoints], Stage] | None = None
    #: a whole-corpus step, run once in this process after the stages before it (it may run stages itself)
    run: Callable[[Config, Endpoints, StageRunner], object] | None = None
    #: the reader of the input files: ``runner.ingest()`` (scaled: ranks over slices of the files, then a merge)
    read: bool = False
    #: the slice of the papers a per-paper stage takes in a plain run (``generate.shard``), None: all
    shard: Callable[[Config], tuple[int, int] | None] = lambda cfg: None
    #: how `sciqag run --plan` counts the requests of a step that asks a model: the stages to run with clients
    #: that send nothing, built from the config and the plan's endpoints. None: the plan lists the step as not
    #: planned (a step that asks no model needs none)
    plan: Callable[[Config, Endpoints], list[Planned]] | None = None


STEPS: dict[str, Step] = {
    s.name: s
    for s in (
        Step("ingest", read=True),
        Step("keywords", build=keywords_stage),
        Step("seed", build=seed_stage, plan=plan_qa(seed_stage, "teacher", "seed")),
        Step(
            "generate",
            build=generate_stage,
            shard=lambda cfg: cfg.generate.shard,
            plan=plan_qa(generate_stage, "generator", "generate"),
        ),
        Step("evaluate", run=evaluate_with, plan=lambda cfg, e: [Planned(s) for s in judged_stages(cfg, e)]),
        Step("publish", run=lambda cfg, endpoints, runner: publish(cfg)),
    )
}


def register_stage(
    wire: Wire,
    build: Callable[[Config, Endpoints], Stage],
    plan: Callable[[Config, Endpoints], list[Planned]] | None = None,
) -> None:
    """Add a per-paper stage of your own to `sciqag run` (``examples/custom_pipeline_stage.py``): ``wire`` names
    the file it writes and the files it reads (it runs after the stages that write them) and the endpoint it
    asks; ``build(cfg, endpoints)`` returns its ``Stage``. A stage that asks a model is counted by `sciqag run
    --plan` through ``plan`` (``Step.plan``; often ``lambda cfg, e: [Planned(build(cfg, e))]``), else listed
    there as not planned. Called by a module the config names in ``plugins:``."""
    wiring.register(wire)
    STEPS[wire.stage] = Step(wire.stage, build=build, plan=plan)


def shard_of(name: str, cfg: Config) -> tuple[int, int] | None:
    """The slice of the papers stage ``name`` takes in a plain run (an evaluation metric: all)."""
    step = STEPS.get(name)
    return step.shard(cfg) if step is not None else None


@dataclass
class RunReport:
    """What `sciqag run` did, for the summary at its end."""

    seconds: dict[str, float] = field(default_factory=dict)
    embedded: str | None = None  # the embedded server's backend, when one was started


def uses_embedded(cfg: Config) -> bool:
    """Whether a stage of this run may ask the embedded model (an endpoint section it uses has no url)."""
    return any(not endpoint.url for stage in cfg.stages for _, endpoint in endpoints_of(cfg, stage))


def run_all(
    cfg: Config, report: Callable[[str, object], int], done: RunReport | None = None, runner: StageRunner | None = None
) -> int:
    """The configured stages in run order (``core.wiring.run_order``), each as its ``Step`` says; the endpoints
    close, and the embedded server stops, after the last stage that asks one. ``report(stage, result)``
    prints each result and returns its exit status; ``done`` collects each stage's wall time; ``runner`` runs
    the per-paper stages and ingest (default: here, one after another). Returns the worst status."""
    done = done if done is not None else RunReport()
    runner = runner or PlainRunner(cfg)
    names = [n for n in RUN_STAGES if n in cfg.stages]
    asking = 1 + max((i for i, n in enumerate(names) if endpoint_of(n)), default=-1)  # names[:asking] ask a model
    worst = 0

    def step(name: str, endpoints: Endpoints) -> None:
        nonlocal worst
        s = STEPS[name]
        started = time.monotonic()
        try:
            if s.run is not None:
                result = s.run(cfg, endpoints, runner)
            else:
                result = runner.ingest() if s.read else runner([name], endpoints, None)[name]
        finally:
            done.seconds[name] = time.monotonic() - started
            endpoints.budget.record()  # a stop or a crash later in the run keeps this stage's spending
        worst = max(worst, report(name, result))

    with Endpoints(cfg) as endpoints:
        if uses_embedded(cfg):
            endpoints.choice  # noqa: B018 - a bad `embedded:` option is refused before any stage runs
        for name in names[:asking]:
            step(name, endpoints)
        done.embedded = endpoints.describe()
    for name in names[asking:]:  # they ask no model: run after the embedded server stopped
        step(name, endpoints)
    return worst


def with_committee(cfg: Config, urls: list[str] | None, models: list[str] | None) -> Config:
    """``cfg`` with the judge committee named by ``--judge-endpoint``/``--judge-model`` flags, if any.

    Unlike ``--endpoint`` (replicas of one model), each ``--judge-endpoint`` is a judge of its own; models
    pair with them in order, or one model applies to all. Without urls, one model renames the judge.
    """
    members = committee(cfg.judge, list(cfg.evaluate.judges), urls, models)
    return replace(cfg, judge=members[0], evaluate=replace(cfg.evaluate, judges=members[1:]))


def committee(judge, extra: list, urls: list[str] | None, models: list[str] | None, flag: str = "judge-") -> list:
    if not urls:
        if models and len(models) > 1:
            raise UserError(f"several --{flag}model values need as many --{flag}endpoint values")
        return [replace(judge, model=models[0]) if models else judge, *extra]
    if models and len(models) not in (1, len(urls)):
        raise UserError(
            f"{len(models)} --{flag}model values for {len(urls)} --{flag}endpoint values: "
            "give one model for all, or one per endpoint"
        )
    names = models * len(urls) if models and len(models) == 1 else models or [judge.model] * len(urls)
    return [replace(judge, url=u, model=m) for u, m in zip(urls, names)]
