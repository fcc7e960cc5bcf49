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

from .errors import UserError
from .evaluation.stage import EvaluateConfig, FilterConfig
from .llm import resolve_api_key
from .options import check_fields, opt as _opt
from .redact import redact_url


@dataclass
class EndpointConfig:
    """An OpenAI-compatible endpoint. ``url: null`` means the embedded local server."""

    url: str | list[str] | None = None
    model: str | None = None
    # openai | hf (huggingface_hub's InferenceClient for chat requests; same Messages API)
    backend: str = _opt("openai", choices=("openai", "hf"))
    # The environment variable holding this endpoint's key; it must be set when named. None: no key,
    # except OPENAI_API_KEY for api.openai.com. A key is sent to this endpoint's URL(s) only.
    api_key_env: str | None = None
    concurrency: int = _opt(8, min=1)
    max_retries: int = _opt(5, min=0)
    timeout: float = _opt(600.0, min=0.001)
    temperature: float = _opt(0.6, min=0.0)  # the paper's inference settings
    top_p: float = _opt(0.9, min=0.0, max=1.0)
    max_tokens: int | None = _opt(None, min=1)  # None: 2048, or 512 for the small embedded model
    price_prompt_per_m: float = _opt(0.0, min=0.0)  # optional cost accounting, per million tokens
    price_completion_per_m: float = _opt(0.0, min=0.0)

    def api_key(self, option: str = "api_key_env") -> str | None:
        """The key for this endpoint (see ``llm.resolve_api_key``); UserError if a named variable is unset."""
        return resolve_api_key(self.url, self.api_key_env, option)


@dataclass
class JudgeEndpointConfig(EndpointConfig):
    temperature: float = 0.0  # judgements should be repeatable


@dataclass
class IngestConfig:
    on_duplicate: str = _opt("skip", choices=("skip", "keep", "error"))
    follow_symlinks: bool = False  # follow links that lead out of the input folders


@dataclass
class KeywordsConfig:
    n: int = _opt(20, min=1)
    workers: int = _opt(2, min=1)
    reuse_existing: bool = True  # keep keywords a source already carries (the authors' JSON)


@dataclass
class QAGenConfig:
    """How a model is asked for a paper's QA pairs (shared by seed and generate)."""

    n_pairs: int = _opt(10, min=1)
    # paper (Appendix D prompt, chat) | alpaca (released raw template)
    prompt_style: str | None = _opt("paper", choices=("paper", "alpaca"))
    context_tokens: int = _opt(8192, min=256)  # the model's context window; longer papers are fitted to it
    long_paper: str = _opt("truncate", choices=("truncate", "chunk"))
    chars_per_token: float = _opt(3.5, min=0.1)  # how papers are measured against the context; ~4 for English BPE
    raw_completion: bool = True  # alpaca style goes to /v1/completions as one raw prompt (else chat)


@dataclass
class SeedConfig(QAGenConfig):
    use_existing_qa: bool = True  # papers that already carry QA (the authors' JSON) are not re-asked


@dataclass
class GenerateConfig(QAGenConfig):
    # None: read from the model folder (sciqag_generator.json), else paper
    prompt_style: str | None = _opt(None, choices=("paper", "alpaca"))
    context_tokens: int = _opt(12288, min=256)  # the paper's generator was trained at 12,288 tokens
    complete_sets_of: int | None = _opt(None, min=1)  # keep only papers with at least this many pairs (authors: 10)
    shard: str | None = None  # "i/n": this process takes the i-th of n hash shards of the corpus


@dataclass
class PublishConfig:
    output_dir: str | None = None  # default: WORK/dataset
    # default: every config whose stage has run (seed, generated, evaluated)
    configs: list[str] | None = _opt(None, choices=("papers", "seed", "generated", "evaluated"))
    train: float = _opt(0.8, min=0.0, max=1.0)
    validation: float = _opt(0.1, min=0.0, max=1.0)  # the rest is test
    license: str = "cc-by-4.0"
    pretty_name: str = "SciQAG"
    push_to_hub: str | None = None
    private: bool = False


STAGES = ("ingest", "keywords", "seed", "generate", "evaluate", "publish")


@dataclass
class Config:
    work_dir: str = "sciqag_work"
    inputs: list[str] = field(default_factory=list)  # empty: the sample papers shipped with the package
    stages: list[str] = _opt(list(STAGES), choices=STAGES)  # what `sciqag run` does
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

    @classmethod
    def load(cls, path: str | Path | None) -> "Config":
        if path is None:
            return cls()
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise UserError(f"cannot read the config {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
        if not isinstance(data, dict):
            raise UserError(f"{path}: the config must be a YAML mapping")
        return _build(cls, data, str(path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> None:
        """Write the resolved config; URLs lose any ``user:password@`` (keys live in the environment)."""
        data = _redacted_urls(self.to_dict())
        tmp = Path(f"{path}.tmp")
        tmp.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        tmp.replace(path)

    def validate(self) -> "Config":
        """Types and ranges of every option, and the publish split shares; UserError naming the option."""
        check_fields(self)
        if self.publish.train + self.publish.validation > 1 + 1e-9:
            raise UserError(f"publish.train + publish.validation must be at most 1, got "
                            f"{self.publish.train} + {self.publish.validation}")
        return self

    @property
    def output_dir(self) -> Path:
        return Path(self.publish.output_dir or Path(self.work_dir) / "dataset")


def _redacted_urls(value):
    if isinstance(value, dict):
        return {k: ([redact_url(u) for u in v] if isinstance(v, list) else redact_url(v))
                if k == "url" and v else _redacted_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted_urls(v) for v in value]
    return value


def _build(cls, data: dict, where: str):
    if "api_key" in data:  # guard against pasting a key into a file that may be shared
        raise UserError(f"{where}: put the key in an environment variable and name it in `api_key_env`")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        raise UserError(f"{where}: unknown option(s) {sorted(unknown)}; known: {sorted(fields)}")
    kwargs = {}
    for name, value in data.items():
        ftype = fields[name].type
        sub = _NESTED.get(ftype) if isinstance(ftype, str) else None
        if sub is not None:
            if value is None:
                continue  # an empty section in YAML: the defaults
            if not isinstance(value, dict):
                raise UserError(f"{where}: `{name}` must be a mapping")
            value = _build(sub, value, f"{where}:{name}")
        elif name in _LIST_OF and isinstance(value, list):
            value = [_build(_LIST_OF[name], v, f"{where}:{name}[{i}]") if isinstance(v, dict) else v
                     for i, v in enumerate(value)]
        kwargs[name] = value
    return cls(**kwargs)


_NESTED = {"IngestConfig": IngestConfig, "KeywordsConfig": KeywordsConfig, "EndpointConfig": EndpointConfig,
           "SeedConfig": SeedConfig, "GenerateConfig": GenerateConfig, "PublishConfig": PublishConfig,
           "JudgeEndpointConfig": JudgeEndpointConfig, "EvaluateConfig": EvaluateConfig,
           "FilterConfig": FilterConfig}
_LIST_OF = {"judges": JudgeEndpointConfig}  # list fields whose items are sections
