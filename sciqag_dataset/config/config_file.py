"""One YAML config holds every option; CLI flags override it.

Secrets never live here: an endpoint names the environment variable that
holds its key (``api_key_env``), and that is all that is ever written to disk;
URLs are written without any ``user:password@`` part.

Every value is checked before any work starts (``Config.validate``): its type
from the field's annotation, its range from the field's metadata (``min``,
``max``, ``choices``), so a typo costs one line on the terminal, not a run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sciqag_dataset.config.filter_section import FilterConfig
from sciqag_dataset.config.sections import (
    DEFAULT_EMBEDDER,
    METRICS,
    BenchmarkConfig,
    EmbeddedConfig,
    EvaluateConfig,
    ExecutorConfig,
    GenerateConfig,
    IngestConfig,
    KeywordsConfig,
    PublishConfig,
    QAGenConfig,
    SeedConfig,
)
from sciqag_dataset.core import remote
from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.metrics import load_plugins, plugin_modules
from sciqag_dataset.core.options import build_section, check_fields, read_yaml
from sciqag_dataset.core.options import opt as _opt
from sciqag_dataset.core.redact import redact_url
from sciqag_dataset.core.wiring import BUILT_IN_STAGES, RUN_STAGES
from sciqag_dataset.llm.endpoint import EndpointConfig, JudgeEndpointConfig, ModelEndpointConfig

# the sections are imported from here, with the config that holds them
__all__ = [
    "Config",
    "EndpointConfig",
    "JudgeEndpointConfig",
    "ModelEndpointConfig",
    "STAGES",
    "METRICS",
    "DEFAULT_EMBEDDER",
    "IngestConfig",
    "KeywordsConfig",
    "QAGenConfig",
    "SeedConfig",
    "GenerateConfig",
    "PublishConfig",
    "EvaluateConfig",
    "FilterConfig",
    "BenchmarkConfig",
    "ExecutorConfig",
    "EmbeddedConfig",
]


#: the stages of `sciqag run` in run order (``core.wiring``), those a plugin registers included
STAGES = RUN_STAGES


@dataclass
class Config:
    work_dir: str = _opt("sciqag_work", flag="work", help="work directory")
    inputs: list[str] = _opt(
        [], help="papers to ingest: files, folders or fsspec URLs (default: the shipped sample papers)"
    )
    stages: list[str] = _opt(
        list(BUILT_IN_STAGES), choices=STAGES, what="stage", help="what `sciqag run` does, comma-separated"
    )
    max_cost: float | None = _opt(
        None,
        min=0.0,
        metavar="USD",
        help="stop before LLM calls could pass this many USD spent in the work dir, all runs together "
        "(endpoint prices: price_prompt_per_m, price_completion_per_m); a rerun with a higher cap resumes",
    )
    plugins: list[str] = _opt(
        [],
        metavar="MODULE",
        help="Python modules imported first: they register metrics (examples/custom_metric.py) or stages "
        "(examples/custom_pipeline_stage.py) of their own, comma-separated",
    )
    ingest: IngestConfig = field(default_factory=IngestConfig)
    keywords: KeywordsConfig = field(default_factory=KeywordsConfig)
    teacher: EndpointConfig = field(default_factory=EndpointConfig)
    seed: SeedConfig = field(default_factory=SeedConfig)
    generator: EndpointConfig = field(default_factory=EndpointConfig)
    generate: GenerateConfig = field(default_factory=GenerateConfig)
    judge: JudgeEndpointConfig = field(default_factory=JudgeEndpointConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    filter: FilterConfig = field(default_factory=FilterConfig)
    publish: PublishConfig = field(default_factory=PublishConfig)
    embedded: EmbeddedConfig = field(default_factory=EmbeddedConfig)
    benchmark: BenchmarkConfig = field(default_factory=BenchmarkConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    # `sciqag train`'s options (its TrainArgs, TRL's SFTConfig and ModelConfig fields), so that one file
    # configures every stage; `sciqag train` and `sciqag run` check them (see trainers/config.py)
    train: dict[str, Any] = field(default_factory=dict)
    # The options the user set ("seed.prompt_style"), in a YAML file or by a flag, even to their default value:
    # the embedded profile leaves them alone. WORK/config.yaml writes every option out, so it keeps this list.
    set_options: list[str] = field(default_factory=list, compare=False, metadata={"cli": False, "internal": True})

    @classmethod
    def load(cls, path: str | Path | None) -> Config:
        data = read_yaml(path) if path is not None else {}
        plugins = data.get("plugins") if isinstance(data.get("plugins"), list) else []
        load_plugins([p for p in plugins if isinstance(p, str)])  # their options and rules are keys of this file
        if path is None:
            return cls()
        cfg = build_section(cls, data, str(path))
        if isinstance(data, dict) and "set_options" not in data:  # the user's own file: what it names
            cfg.set_options = sorted(
                f"{k}.{sub}" if sub else k
                for k, v in data.items()
                for sub in (v if isinstance(v, dict) and k != "train" else [None])
            )
        return cfg

    def user_set(self, section: str, name: str) -> bool:
        """Whether the user chose ``section.name``: named in their YAML or a flag, or not at its default."""
        default = getattr(type(getattr(self, section))(), name)
        return f"{section}.{name}" in self.set_options or getattr(getattr(self, section), name) != default

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        """The config ``to_dict`` returned (how a config travels to worker processes and cluster nodes): its
        plugins are imported first, since their options are keys of it."""
        load_plugins([p for p in data.get("plugins") or [] if isinstance(p, str)])
        return build_section(cls, data, "config")

    def to_dict(self) -> dict[str, Any]:
        """Every option, and as ``plugins`` every module whose options the sections hold (one imported by another
        route than this config's ``plugins:`` too), so that ``from_dict`` in another process reads it back."""
        data = dataclasses.asdict(self)
        data["plugins"] = list(dict.fromkeys([*self.plugins, *plugin_modules()]))
        return data

    def save(self, path: str | Path) -> None:
        """Write the resolved config; URLs lose any ``user:password@`` (keys live in the environment). A shard
        (``generate.shard``) belongs to the one command that was given it, never to the work directory's later
        commands, so it is not written."""
        data = _redacted_urls(dataclasses.asdict(self))  # the plugins the user named, as they named them
        data["generate"]["shard"] = None
        data["set_options"] = [o for o in data.get("set_options", []) if o != "generate.shard"]
        write_whole(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

    def validate(self) -> Config:
        """Types and ranges of every option, and the publish split shares; UserError naming the option."""
        load_plugins(self.plugins)  # before the metric and stage names are checked
        if self.stages == list(BUILT_IN_STAGES) and "stages" not in self.set_options:
            self.stages = list(STAGES)  # `stages:` left at its default: every stage, a plugin's included
        check_fields(self)
        self.filter.check()
        if remote.is_remote(self.work_dir):
            raise UserError(
                f"work_dir: {self.work_dir} is a URL; the work dir must be a folder on this machine or "
                "a shared filesystem (records are appended, the cache is SQLite): put the papers "
                "(inputs) and the published dataset (publish.output_dir) on the object store instead"
            )
        for url in filter(remote.is_remote, self.inputs):
            remote.check_url(url, "inputs")  # before the config is saved anywhere
        if self.ingest.pdf_backend == "grobid" and not self.ingest.grobid_url:
            raise UserError("ingest.pdf_backend grobid needs ingest.grobid_url (--grobid-url URL)")
        if self.ingest.grobid_url:
            remote.check_url(self.ingest.grobid_url, "ingest.grobid_url")
        if remote.is_remote(self.publish.output_dir):
            remote.check_url(self.publish.output_dir, "publish.output_dir")
        if self.publish.train + self.publish.validation > 1 + 1e-9:
            raise UserError(
                f"publish.train + publish.validation must be at most 1, got "
                f"{self.publish.train} + {self.publish.validation}"
            )
        return self

    @property
    def output_dir(self) -> Path:
        """The local publish folder (where a remote publish is built before it is copied up)."""
        out = remote.local(self.publish.output_dir)
        return Path(self.work_dir) / "dataset" if not out or remote.is_remote(out) else Path(out)

    @property
    def publish_url(self) -> str | None:
        """The remote publish folder, when ``publish.output_dir`` is a URL."""
        return self.publish.output_dir if remote.is_remote(self.publish.output_dir) else None


def _redacted_urls(value):
    if isinstance(value, dict):
        return {
            k: ([redact_url(u) for u in v] if isinstance(v, list) else redact_url(v))
            if k == "url" and v
            else _redacted_urls(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redacted_urls(v) for v in value]
    return value
