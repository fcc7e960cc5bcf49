"""The sections of the YAML config, one dataclass per stage or service (``Config`` in ``config_file.py`` holds them).

Each field is declared with ``options.opt``: its default, its constraints and its CLI flag, beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.metrics import NAMES, default_metrics, get_metric, on_register
from sciqag_dataset.core.options import build_section, check_fields, extend_section
from sciqag_dataset.core.options import opt as _opt
from sciqag_dataset.core.schema import COMPONENT_KINDS
from sciqag_dataset.llm.embedded import ENGINES
from sciqag_dataset.llm.endpoint import JudgeEndpointConfig, ModelEndpointConfig

#: What `sciqag evaluate` can run: the registered metrics (read when used, so a plugin's count too). They run
#: cheapest first (``metrics.run_order``), so an LLM outage loses the least.
METRICS = NAMES
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass
class IngestConfig:
    on_duplicate: str = _opt(
        "skip",
        choices=("skip", "keep", "error"),
        help="a paper met twice: skip (keep the first, report the rest), keep (suffix the id), error",
    )
    follow_symlinks: bool = _opt(False, help="also read links that lead out of the input folders")
    pdf_backend: str = _opt(
        "auto",
        choices=("auto", "layout", "pdfplumber", "pdfium", "grobid"),
        help="PDFs: layout (PyMuPDF's layout model, the layout extra, AGPL), pdfplumber (rules on pdfminer, MIT), "
        "pdfium (rules on PDFium), grobid (a GROBID server, --grobid-url); auto: layout when installed, else "
        "pdfplumber",
    )
    grobid_url: str | None = _opt(None, metavar="URL", help="the GROBID server, e.g. http://localhost:8070")
    file_timeout: float = _opt(
        300.0,
        min=0.0,
        help="seconds to download and read one paper's file before giving "
        "up on it (a damaged PDF can keep a parser busy for hours); 0: "
        "no limit",
    )
    max_file_mb: float = _opt(
        512.0,
        min=0.0,
        help="megabytes one remote input file may download before it fails "
        "(a reply without end would fill the disk); 0: no limit",
    )


@dataclass
class KeywordsConfig:
    n: int = _opt(20, min=1, flag="n-keywords", short="-n", help="TopicRank keyphrases per paper (the paper: 20)")
    workers: int = _opt(2, min=1, help="worker processes")
    reuse_existing: bool = _opt(True, help="keep keywords a source already carries (the authors' JSON)")


@dataclass
class QAGenConfig:
    """How a model is asked for a paper's QA pairs (shared by seed and generate)."""

    n_pairs: int = _opt(10, min=1, help="QA pairs asked for per paper")
    prompt_style: str | None = _opt(
        "paper",
        choices=("paper", "alpaca", "small"),
        help="paper: the paper's prompt (Appendix D) as chat; alpaca: the released "
        "generator's raw template; small: the embedded profile's (SmolLM2's chat template "
        "through /v1/completions, a request per line: for the embedded model)",
    )
    context_tokens: int = _opt(8192, min=256, help="the model's context window; longer papers are fitted to it")
    long_paper: str = _opt(
        "truncate",
        choices=("truncate", "chunk"),
        help="a paper over the context: truncate it, or ask per chunk and merge",
    )
    chars_per_token: float = _opt(3.5, min=0.1, help="how paper length is measured against the context")
    raw_completion: bool = _opt(True, help="send the alpaca style to /v1/completions as one raw prompt")
    chunk_words: int | None = _opt(
        None,
        min=20,
        help="ask about chunks of about this many words, one request each "
        "(the embedded profile: 300); null: the whole paper",
    )
    max_chunks: int | None = _opt(
        None,
        min=1,
        help="with chunk_words, ask about at most this many chunks spread "
        "over the paper; the rest is left out with a warning",
    )
    chunk_filter: str = _opt(
        "off",
        choices=("off", "signals", "llm"),
        help="ask only about chunks worth asking about: signals (length, share of words, citations, references, "
        "captions, declarations, front matter; no model), llm (those signals, then the model judges the chunks "
        "left, a request per chunk_check_batch of them); off: every chunk",
    )
    chunk_check_batch: int = _opt(8, min=1, help="with chunk_filter: llm, the chunks the model judges in one request")

    components: dict[str, int] = _opt(
        {},
        choices=COMPONENT_KINDS,
        what="component kind",
        min=0,
        metavar="KIND=N,...",
        help="besides the prose pairs, ask about this many of each paper's tables, equations and figures, one "
        "request each (those the text mentions most), e.g. table=2,equation=1,figure=1; empty: none",
    )
    component_pairs: int = _opt(2, min=1, help="QA pairs asked for per table, equation or figure (see components)")

    def __post_init__(self) -> None:
        if self.chunk_filter is False:  # YAML reads a bare `off` as false
            self.chunk_filter = "off"


@dataclass
class SeedConfig(QAGenConfig):
    use_existing_qa: bool = _opt(True, help="papers that carry QA pairs (the authors' JSON) are not asked again")


@dataclass
class GenerateConfig(QAGenConfig):
    prompt_style: str | None = _opt(
        None,
        choices=("paper", "alpaca", "small"),
        help="null: read sciqag_generator.json in the model folder, else paper",
    )
    context_tokens: int = _opt(12288, min=256, help="the generator's context (the paper's: 12,288 tokens)")
    complete_sets_of: int | None = _opt(
        None,
        min=1,
        flag="complete-sets",
        help="mark papers with fewer pairs incomplete, not published (the authors: 10)",
    )
    shard: str | None = _opt(
        None, metavar="i/n", help="take slice i of n hash slices of the corpus; i counts from 0 (0/4, 1/4, 2/4, 3/4)"
    )


@dataclass
class PublishConfig:
    output_dir: str | None = _opt(
        None,
        flag="output",
        short="-o",
        help="publish folder (default WORK/dataset): a path, or an fsspec URL "
        "(s3://, gs://, hf://datasets/ORG/NAME...) built in WORK/dataset, then copied",
    )
    configs: list[str] | None = _opt(
        None,
        choices=("papers", "seed", "generated", "evaluated"),
        help="configs to publish, comma-separated (default: those whose stage ran)",
    )
    train: float = _opt(0.8, min=0.0, max=1.0, help="share of papers in the train split")
    validation: float = _opt(0.1, min=0.0, max=1.0, help="share of papers in the validation split; the rest is test")
    license: str = _opt("cc-by-4.0", help="the dataset's license id")
    pretty_name: str = _opt("SciQAG", help="the card's title")
    allow_partial: bool = _opt(
        False,
        help="publish papers read only in part too (ingest's partial: recovered "
        "XML, pages without text); left out by default",
    )
    push_to_hub: str | None = _opt(None, metavar="REPO", help="also upload the folder to this Hub dataset repo")
    private: bool = _opt(False, help="create the Hub repo private")


@dataclass
class EvaluateConfig:
    """`evaluate:` in the YAML config: the options every metric shares, then each registered metric's own
    (``Metric.options``, added as fields when the metric registers). The judge itself is the `judge:` section."""

    metrics: list[str] | None = _opt(
        None,
        choices=METRICS,
        what="metric",
        help="comma-separated (default: all four with a judge endpoint, else the three that need no LLM)",
    )
    source: str | None = _opt(
        None,
        choices=("generated", "seed"),
        what="QA source",
        help="QA file to evaluate (default: generated if present, else seed)",
    )
    judges: list[JudgeEndpointConfig] = _opt([], cli=False, help="committee members besides `judge:`")
    embedding_model: str = _opt(
        DEFAULT_EMBEDDER, help="sentence-transformers model or folder (the paper: e5-mistral-7b-instruct)"
    )
    batch_size: int = _opt(64, min=1, help="embedding batch size")
    device: str = _opt("cpu", help="embedding device")
    plots: bool = _opt(True, help="write PNG plots under WORK/plots")
    sample_papers: int = _opt(3, min=0, help="papers shown in question-similarity heatmaps")

    def __post_init__(self) -> None:
        if isinstance(self.metrics, str):
            self.metrics = [m.strip() for m in self.metrics.split(",") if m.strip()]
        self.judges = [
            build_section(JudgeEndpointConfig, j, "evaluate.judges") if isinstance(j, dict) else j
            for j in self.judges or []
        ]

    def validate(self) -> None:
        """Reject bad names before any metric runs (so a typo does not cost a judge run)."""
        check_fields(self, "evaluate.")
        if self.metrics is not None and not self.metrics:
            raise UserError(f"no metrics selected: choose from {', '.join(METRICS)}")

    def needs_judge(self) -> bool:
        return any(get_metric(m).needs_llm(self) for m in self.metrics or [] if m in METRICS)

    def resolve_metrics(self, judge_configured: bool) -> list[str]:
        """Fill in the default: RACAR only when a judge endpoint is configured (it is the costly metric)."""
        if self.metrics is None:
            self.metrics = default_metrics(judge_configured)
        return self.metrics


on_register(lambda metric: extend_section(EvaluateConfig, metric.options, f"metric {metric.name!r}"))


@dataclass
class BenchmarkConfig:
    """`benchmark:` what `sciqag benchmark` asks, of which models, and how it scores. The judge is `judge:`."""

    data: str | None = _opt(
        None, cli=False, help="a published folder or Hub id, or a JSON/JSONL/parquet file of pairs"
    )
    output_dir: str = _opt("sciqag_benchmark", flag="output", short="-o", help="results folder")
    config: str | None = _opt(
        None,
        flag="data-config",
        choices=("evaluated", "generated", "seed"),
        help="config of a published dataset (default: evaluated, else generated, else seed)",
    )
    split: str = _opt("test", help="split of a published dataset")
    limit: int | None = _opt(None, min=1, help="ask only the first N questions")
    authors_test_set: bool = _opt(
        False,
        help="keep only pairs scoring 3 on every RACAR dimension but agnosticism "
        "and free of source references (the paper's test set)",
    )
    system_prompt: str | None = _opt(
        None, help="the system prompt of every question (default: a closed-book instruction; the empty string: none)"
    )
    models: list[ModelEndpointConfig] = _opt([], cli=False, help="the models to benchmark (default: the embedded one)")
    judge: bool | None = _opt(None, help="score answers with the LLM judge (default: when a judge endpoint is set)")
    judge_batch: int = _opt(10, min=1, help="questions per judge call")
    combine: str = _opt(
        "mean", choices=("mean", "min", "majority"), what="combine mode", help="how a judge committee's scores combine"
    )
    max_attempts: int = _opt(3, min=1, help="tries per unusable judge reply before the score is recorded missing")
    structured: bool = _opt(True, help="ask judges for JSON-schema output (falls back to plain text if rejected)")
    bertscore: bool = _opt(True, help="compute BERTScore (the slowest reference metric)")
    bertscore_model: str = _opt(DEFAULT_EMBEDDER, help="BERTScore's model (a transformers name or folder)")
    bootstrap_samples: int = _opt(1000, min=100, help="resamples of the 95 %% confidence intervals")
    update_card: str | None = _opt(
        None, metavar="FOLDER", help="add or refresh the Benchmark section of this published dataset's card"
    )
    general_knowledge: bool = _opt(
        False,
        help="flag the questions a model answers right closed-book with their domain terms masked "
        "(`general_knowledge` in the item analysis; default model: the embedded one)",
    )
    # an endpoint section like `benchmark.models`' entries (url, model, api_key_env, prices, concurrency,
    # timeout ...); its flags are --general-knowledge-endpoint, --general-knowledge-model, ... (cli/benchmark.py)
    general_knowledge_endpoint: ModelEndpointConfig = _opt(
        ModelEndpointConfig(),
        cli=False,
        help="the general-knowledge check's endpoint; a url implies general_knowledge (no url: the embedded model)",
    )
    general_knowledge_keywords: str | None = _opt(
        None,
        metavar="PATH",
        help="a work dir's keywords.jsonl: its papers' keywords are masked too (beside the pairs' own keywords)",
    )

    def __post_init__(self) -> None:
        self.models = [
            build_section(ModelEndpointConfig, m, "benchmark.models") if isinstance(m, dict) else m
            for m in self.models or []
        ]
        if isinstance(self.general_knowledge_endpoint, dict):
            self.general_knowledge_endpoint = build_section(
                ModelEndpointConfig, self.general_knowledge_endpoint, "benchmark.general_knowledge_endpoint"
            )


@dataclass
class ExecutorConfig:
    """`executor:` where the per-paper stages of `sciqag run` run: in this process (plain), or as datatrove
    jobs of `tasks` ranks on this machine (local), a Slurm cluster (slurm) or a Ray cluster (ray)."""

    kind: str = _opt(
        "plain",
        flag="executor",
        choices=("plain", "local", "slurm", "ray"),
        what="executor",
        help="plain: this process; local, slurm, ray: datatrove executors (pip install 'sciqag-hf[scale]')",
    )
    tasks: int = _opt(4, min=1, help="ranks per stage: each takes a hash slice of the papers")
    workers: int | None = _opt(None, min=1, help="ranks running at once (local and ray; default: all)")
    logging_dir: str | None = _opt(None, help="datatrove's logs and completion markers (default WORK/.datatrove)")
    partition: str | None = _opt(None, help="slurm: partition")
    time: str = _opt("24:00:00", help="slurm: time limit per task")
    cpus_per_task: int = _opt(2, min=1, help="slurm and ray: CPUs per task")
    mem_per_cpu_gb: float = _opt(4.0, min=0.1, help="slurm and ray: memory per CPU")
    gpus_per_task: int = _opt(0, min=0, help="slurm and ray: GPUs per task")
    slurm_logs_dir: str | None = _opt(None, help="slurm: where sbatch writes its logs (default: LOGGING_DIR/slurm)")
    env_command: str | None = _opt(None, help="slurm: shell line that activates the environment on the nodes")
    wait: bool = _opt(
        True,
        help="slurm: wait for each stage's jobs, then go on (off: submit keywords, seed and "
        "generate, and return; evaluate and publish on the next run)",
    )
    poll_seconds: float = _opt(30.0, min=0.1, help="slurm: how often to look for finished jobs")
    sbatch_args: dict[str, str] = _opt({}, cli=False, help="slurm: further #SBATCH directives (account, qos, ...)")
    address: str | None = _opt(None, help="ray: cluster address (default: start a local Ray instance)")


@dataclass
class EmbeddedConfig:
    """`embedded:` the local model started when an endpoint section has no url (SmolLM2-135M-Instruct)."""

    backend: str = _opt(
        "auto",
        choices=("auto", *ENGINES.names()),
        flag="embedded-backend",
        help="auto: llama.cpp when llama-cpp-python[server] is installed, else transformers serve",
    )
    dtype: str = _opt(
        "auto",
        choices=("auto", "float32", "bfloat16", "float16"),
        help="transformers backend's dtype (auto: float32; in bfloat16 this model's replies collapse)",
    )
    threads: int | None = _opt(
        None,
        min=1,
        flag="embedded-threads",
        help="CPU threads of the server (default: all cores; it answers one request at a time)",
    )
    profile: bool = _opt(
        True,
        flag="embedded-profile",
        help="ask the embedded model as a 135M model can answer: 6 pairs from two ~300-word chunks, "
        "written one capped line at a time in a plain Q1:/A1: form after a worked example "
        "(seed.* and generate.* options that differ from their defaults win); off: the "
        "paper's prompt",
    )
