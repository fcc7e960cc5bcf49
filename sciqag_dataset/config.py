"""One YAML config holds every option; CLI flags override it.

Secrets never live here: an endpoint names the environment variable that
holds its key (``api_key_env``), and that is all that is ever written to disk.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .evaluation.stage import EvaluateConfig, FilterConfig


@dataclass
class EndpointConfig:
    """An OpenAI-compatible endpoint. ``url: null`` means the embedded local server."""

    url: str | list[str] | None = None
    model: str | None = None
    backend: str = "openai"  # openai | hf (huggingface_hub InferenceClient; same Messages API)
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    max_retries: int = 5
    timeout: float = 600.0
    temperature: float = 0.6  # the paper's inference settings
    top_p: float = 0.9
    max_tokens: int | None = None  # None: 2048, or 512 for the small embedded model
    price_prompt_per_m: float = 0.0  # optional cost accounting, per million tokens
    price_completion_per_m: float = 0.0

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None


@dataclass
class JudgeEndpointConfig(EndpointConfig):
    temperature: float = 0.0  # judgements should be repeatable


@dataclass
class IngestConfig:
    on_duplicate: str = "skip"  # skip | keep | error


@dataclass
class KeywordsConfig:
    n: int = 20
    workers: int = 2
    reuse_existing: bool = True  # keep keywords a source already carries (the authors' JSON)


@dataclass
class QAGenConfig:
    """How a model is asked for a paper's QA pairs (shared by seed and generate)."""

    n_pairs: int = 10
    prompt_style: str | None = "paper"  # paper (Appendix D prompt, chat) | alpaca (released raw template)
    context_tokens: int = 8192  # the model's context window; longer papers are fitted to it
    long_paper: str = "truncate"  # truncate | chunk
    chars_per_token: float = 3.5  # how papers are measured against the context; ~4 for English BPE models
    raw_completion: bool = True  # alpaca style goes to /v1/completions as one raw prompt (else chat)


@dataclass
class SeedConfig(QAGenConfig):
    use_existing_qa: bool = True  # papers that already carry QA (the authors' JSON) are not re-asked


@dataclass
class GenerateConfig(QAGenConfig):
    prompt_style: str | None = None  # None: read from the model folder (sciqag_generator.json), else paper
    context_tokens: int = 12288  # the paper's generator was trained at 12,288 tokens
    complete_sets_of: int | None = None  # keep only papers with at least this many pairs (the authors: 10)
    shard: str | None = None  # "i/n": this process takes the i-th of n hash shards of the corpus


@dataclass
class PublishConfig:
    output_dir: str | None = None  # default: WORK/dataset
    configs: list[str] | None = None  # default: every config whose stage has run (seed, generated)
    train: float = 0.8
    validation: float = 0.1  # the rest is test
    license: str = "cc-by-4.0"
    pretty_name: str = "SciQAG"
    push_to_hub: str | None = None
    private: bool = False


STAGES = ("ingest", "keywords", "seed", "generate", "evaluate", "publish")


@dataclass
class Config:
    work_dir: str = "sciqag_work"
    inputs: list[str] = field(default_factory=list)  # empty: the sample papers shipped with the package
    stages: list[str] = field(default_factory=lambda: list(STAGES))  # what `sciqag run` does
    ingest: IngestConfig = field(default_factory=IngestConfig)
    keywords: KeywordsConfig = field(default_factory=KeywordsConfig)
    teacher: EndpointConfig = field(default_factory=EndpointConfig)
    seed: SeedConfig = field(default_factory=SeedConfig)
    generator: EndpointConfig = field(default_factory=lambda: EndpointConfig(backend="hf"))
    generate: GenerateConfig = field(default_factory=GenerateConfig)
    judge: JudgeEndpointConfig = field(default_factory=JudgeEndpointConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    filter: FilterConfig = field(default_factory=FilterConfig)
    publish: PublishConfig = field(default_factory=PublishConfig)

    @classmethod
    def load(cls, path: str | Path | None) -> "Config":
        if path is None:
            return cls()
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: the config must be a YAML mapping")
        return _build(cls, data, str(path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False), encoding="utf-8")

    @property
    def output_dir(self) -> Path:
        return Path(self.publish.output_dir or Path(self.work_dir) / "dataset")


def _build(cls, data: dict, where: str):
    if "api_key" in data:  # guard against pasting a key into a file that may be shared
        raise ValueError(f"{where}: put the key in an environment variable and name it in `api_key_env`")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        raise ValueError(f"{where}: unknown option(s) {sorted(unknown)}; known: {sorted(fields)}")
    kwargs = {}
    for name, value in data.items():
        ftype = fields[name].type
        sub = _NESTED.get(ftype) if isinstance(ftype, str) else None
        if sub is not None:
            if not isinstance(value, dict):
                raise ValueError(f"{where}: `{name}` must be a mapping")
            value = _build(sub, value, f"{where}:{name}")
        kwargs[name] = value
    return cls(**kwargs)


_NESTED = {"IngestConfig": IngestConfig, "KeywordsConfig": KeywordsConfig, "EndpointConfig": EndpointConfig,
           "SeedConfig": SeedConfig, "GenerateConfig": GenerateConfig, "PublishConfig": PublishConfig,
           "JudgeEndpointConfig": JudgeEndpointConfig, "EvaluateConfig": EvaluateConfig,
           "FilterConfig": FilterConfig}
