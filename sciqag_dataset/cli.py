"""`sciqag`: one subcommand per stage over a work directory, and `sciqag run` for all of them.

Options come from, in rising order: defaults, the YAML config (``--config``, or
``WORK/config.yaml`` written by an earlier run), then flags. Every option, key
variable and output folder is checked before any work starts.

Exit status: 0 all done; 1 some papers failed (a rerun retries them) or a bug
(shown with its traceback); 2 a user error, on one line; 130 interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from importlib import resources
from pathlib import Path

from . import __version__
from .config import STAGES, Config
from .console import EXIT_FAILED, EXIT_OK, run_command, setup_logging
from .folders import WORK_LAYOUT, check_publish_target, claim
from .runner import Summary

log = logging.getLogger("sciqag")

EXIT_FAILED_RECORDS = EXIT_FAILED


def sample_papers() -> list[str]:
    """The original sample papers shipped inside the package."""
    folder = resources.files("sciqag_dataset.examples").joinpath("papers")
    return [str(folder)]


# ---------------------------------------------------------------- options -> config

def _add_work(p, positional=True):
    if positional:
        p.add_argument("work", help="work directory (created if missing)")
    p.add_argument("--config", help="YAML config (default: WORK/config.yaml if present)")


def _add_endpoint(p, section="teacher"):
    g = p.add_argument_group(f"{section} endpoint (any OpenAI-compatible server; none = embedded local model)")
    d = f"{section}."
    g.add_argument("--endpoint", action="append", dest=d + "url", metavar="URL",
                   help="base URL such as http://host:8080/v1; repeat for several replicas")
    g.add_argument("--model", dest=d + "model", help="model name the endpoint serves")
    g.add_argument("--backend", dest=d + "backend", choices=["openai", "hf"],
                   help="client library: openai, or hf (huggingface_hub InferenceClient)")
    g.add_argument("--api-key-env", dest=d + "api_key_env",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--concurrency", type=int, dest=d + "concurrency", help="requests in flight per endpoint (default 8)")
    g.add_argument("--max-retries", type=int, dest=d + "max_retries", help="retries on 429/5xx/timeouts (default 5)")
    g.add_argument("--max-tokens", type=int, dest=d + "max_tokens", help="completion budget per request (default 2048)")
    g.add_argument("--temperature", type=float, dest=d + "temperature", help="default 0.6 (the paper)")
    g.add_argument("--top-p", type=float, dest=d + "top_p", help="default 0.9 (the paper)")


def _add_qagen(p, section="seed"):
    g = p.add_argument_group(f"{section} QA")
    d = f"{section}."
    g.add_argument("--n-pairs", type=int, dest=d + "n_pairs", help="QA pairs per paper (default 10)")
    g.add_argument("--prompt-style", choices=["paper", "alpaca"], dest=d + "prompt_style",
                   help="the paper's prompt (chat) or the released Alpaca template (raw completion)")
    g.add_argument("--context-tokens", type=int, dest=d + "context_tokens", help="the model's context window")
    g.add_argument("--long-paper", choices=["truncate", "chunk"], dest=d + "long_paper",
                   help="papers over the context (default truncate)")
    if section == "generate":
        g.add_argument("--complete-sets", type=int, dest=d + "complete_sets_of", metavar="N",
                       help="keep only papers with at least N pairs (the authors: 10)")
        g.add_argument("--shard", dest=d + "shard", metavar="i/n", help="take the i-th of n hash shards of the corpus")


def _add_keywords(p):
    g = p.add_argument_group("keywords")
    g.add_argument("-n", "--n-keywords", type=int, dest="keywords.n", help="TopicRank keyphrases per paper (default 20)")
    g.add_argument("--workers", type=int, dest="keywords.workers", help="worker processes (default 2)")


def _add_publish(p):
    g = p.add_argument_group("publish")
    g.add_argument("-o", "--output", dest="publish.output_dir", help="publish folder (default WORK/dataset)")
    g.add_argument("--configs", help="comma-separated configs to publish (default: those whose stage has run)")
    g.add_argument("--license", dest="publish.license", help="dataset license id (default cc-by-4.0)")
    g.add_argument("--push-to-hub", metavar="REPO", dest="publish.push_to_hub",
                   help="also upload the folder to this Hub dataset repo")
    g.add_argument("--private", action="store_true", default=None, dest="publish.private",
                   help="create the Hub repo private")


def resolve_config(args) -> Config:
    path = getattr(args, "config", None)
    work = getattr(args, "work", None)
    if path is None and work and (Path(work) / "config.yaml").exists():
        path = Path(work) / "config.yaml"
    cfg = Config.load(path)
    if work:
        cfg.work_dir = str(work)
    for dest, value in vars(args).items():  # flags are named "section.field" after the config
        if "." not in dest or value is None:
            continue
        section, name = dest.split(".", 1)
        if name == "url" and len(value) == 1:
            value = value[0]
        setattr(getattr(cfg, section), name, value)
    if getattr(args, "configs", None):
        cfg.publish.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if getattr(args, "inputs", None):
        cfg.inputs = list(args.inputs)
    if getattr(args, "stages", None):
        cfg.stages = [x.strip() for x in args.stages.split(",") if x.strip()]
    return cfg.validate()


def check_keys(cfg: Config, stages) -> None:
    """Resolve the key of every endpoint the given stages will call (UserError for an unset variable)."""
    if "seed" in stages:
        cfg.teacher.api_key("teacher.api_key_env")
    if "generate" in stages:
        cfg.generator.api_key("generator.api_key_env")
    if "evaluate" in stages:
        cfg.judge.api_key("judge.api_key_env")
        for i, judge in enumerate(cfg.evaluate.judges):
            judge.api_key(f"evaluate.judges[{i}].api_key_env")


def prepare_work(cfg: Config, stages=()) -> Path:
    """Checks before any work: keys of the endpoints these stages call, then the work directory (ours,
    or new, or empty: never someone else's folder), where the resolved config is saved."""
    check_keys(cfg, stages)
    work = claim(cfg.work_dir, "work", option="work_dir", adopt=WORK_LAYOUT)
    cfg.save(work / "config.yaml")  # holds api_key_env names only, never keys; URLs without credentials
    return work


# ---------------------------------------------------------------- stages

def do_ingest(cfg: Config) -> Summary:
    from .builders.ingest import run_ingest

    return run_ingest(cfg.inputs or sample_papers(), Path(cfg.work_dir), on_duplicate=cfg.ingest.on_duplicate,
                      follow_symlinks=cfg.ingest.follow_symlinks)


def do_keywords(cfg: Config) -> Summary:
    from .builders.keywords import run_keywords

    k = cfg.keywords
    return run_keywords(Path(cfg.work_dir), n=k.n, workers=k.workers, reuse_existing=k.reuse_existing)


class Endpoints:
    """Resolves endpoint configs; starts the embedded local server once, on first need, for all stages."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self._stack = contextlib.ExitStack()
        self._server = None

    def resolve(self, endpoint) -> tuple:
        if endpoint.url:
            return endpoint.url, endpoint.model, None
        if self._server is None:
            from .local_server import DEFAULT_MODEL_ID, embedded_default

            print(f"No endpoint configured: starting the embedded {DEFAULT_MODEL_ID} server", file=sys.stderr)
            self._server = self._stack.enter_context(
                embedded_default(log_path=Path(self.cfg.work_dir) / "local_server.log"))
        from .local_server import DEFAULT_MODEL_ID

        return self._server.base_url, self._server.model, DEFAULT_MODEL_ID

    def client(self, endpoint):
        from .llm import check_reachable, client_from_config

        url, model, label = self.resolve(endpoint)
        check_reachable(url)
        return client_from_config(endpoint, Path(self.cfg.work_dir) / "cache.sqlite", url=url, model=model,
                                  label=label)

    def __enter__(self) -> "Endpoints":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()


def do_seed(cfg: Config, endpoints: Endpoints) -> Summary:
    from .builders.seed import run_seed

    return run_seed(cfg.work_dir, endpoints.client(cfg.teacher), cfg.seed)


def do_generate(cfg: Config, endpoints: Endpoints) -> Summary:
    from .builders.generate import run_generate

    return run_generate(cfg.work_dir, endpoints.client(cfg.generator), cfg.generate)


def do_evaluate(cfg: Config, endpoints: Endpoints) -> int:
    from .evaluation.cli import print_evaluation
    from .evaluation.stage import run_evaluate

    ev, judges = cfg.evaluate, [cfg.judge, *cfg.evaluate.judges]
    ev.resolve_metrics(bool(cfg.judge.url))
    clients = [endpoints.client(j) for j in judges] if ev.needs_judge() else None
    summaries = run_evaluate(cfg.work_dir, ev, clients)
    print_evaluation(Path(cfg.work_dir), summaries)
    return EXIT_FAILED_RECORDS if any(s.failed for s in summaries.values()) else EXIT_OK


def do_publish(cfg: Config) -> Path:
    from .publish import push_to_hub, write_folder

    out = write_folder(cfg.work_dir, cfg.output_dir, cfg)
    import yaml

    names = [c["config_name"] for c in yaml.safe_load((out / "README.md").read_text().split("---")[1])["configs"]]
    print(f"Published {out} (configs: {', '.join(names)})  ->  datasets.load_dataset({str(out)!r}, {names[0]!r})")
    if cfg.publish.push_to_hub:
        url = push_to_hub(out, cfg.publish.push_to_hub, private=cfg.publish.private)
        print(f"Uploaded to the Hub: {url}")
    return out


def _report(summary: Summary) -> int:
    print(summary.line())
    if summary.failed:
        print(f"  {summary.failed} paper(s) failed; rerun the same command to retry them "
              "(finished papers are not redone).", file=sys.stderr)
        return EXIT_FAILED_RECORDS
    return EXIT_OK


# ---------------------------------------------------------------- commands

def cmd_ingest(args) -> int:
    cfg = resolve_config(args)
    prepare_work(cfg, ["ingest"])
    return _report(do_ingest(cfg))


def cmd_keywords(args) -> int:
    cfg = resolve_config(args)
    claim(cfg.work_dir, "work", option="work_dir", adopt=WORK_LAYOUT)
    return _report(do_keywords(cfg))


def cmd_seed(args) -> int:
    cfg = resolve_config(args)
    prepare_work(cfg, ["seed"])
    with Endpoints(cfg) as endpoints:
        return _report(do_seed(cfg, endpoints))


def cmd_generate(args) -> int:
    cfg = resolve_config(args)
    if args.merge:
        from .builders.generate import merge_shards

        claim(cfg.work_dir, "work", option="work_dir", adopt=WORK_LAYOUT)
        return _report(merge_shards(cfg.work_dir))
    prepare_work(cfg, ["generate"])
    with Endpoints(cfg) as endpoints:
        return _report(do_generate(cfg, endpoints))


def cmd_publish(args) -> int:
    do_publish(resolve_config(args))
    return EXIT_OK


def cmd_run(args) -> int:
    cfg = resolve_config(args)
    stages = cfg.stages
    if "publish" in stages:
        check_publish_target(cfg.output_dir, Path(cfg.work_dir))  # refused now, not after an hour of work
    prepare_work(cfg, stages)
    print(f"Work directory: {Path(cfg.work_dir).resolve()}")
    worst = EXIT_OK
    if "ingest" in stages:
        worst = max(worst, _report(do_ingest(cfg)))
    if "keywords" in stages:
        worst = max(worst, _report(do_keywords(cfg)))
    with Endpoints(cfg) as endpoints:
        if "seed" in stages:
            worst = max(worst, _report(do_seed(cfg, endpoints)))
        if "generate" in stages:
            worst = max(worst, _report(do_generate(cfg, endpoints)))
        if "evaluate" in stages:
            worst = max(worst, do_evaluate(cfg, endpoints))
    if "publish" in stages:
        do_publish(cfg)
    return worst


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sciqag", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sciqag-hf {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", help="read papers (txt, md, json/jsonl, SciQAG JSON, JATS/Elsevier XML, "
                                      "HTML, PDF) into WORK/papers.jsonl")
    p.add_argument("inputs", nargs="+", help="files or folders")
    p.add_argument("-o", "--work", required=True, help="work directory")
    p.add_argument("--config", help="YAML config")
    p.add_argument("--on-duplicate", choices=["skip", "keep", "error"], dest="ingest.on_duplicate",
                   help="default skip (reported)")
    p.add_argument("--follow-symlinks", action="store_true", default=None, dest="ingest.follow_symlinks",
                   help="also read links that lead out of the input folders (default: skipped, reported)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("keywords", help="TopicRank keyphrases per paper -> WORK/keywords.jsonl")
    _add_work(p)
    _add_keywords(p)
    p.set_defaults(func=cmd_keywords)

    p = sub.add_parser("seed", help="teacher QA pairs per paper -> WORK/seed.jsonl")
    _add_work(p)
    _add_endpoint(p, "teacher")
    _add_qagen(p, "seed")
    p.set_defaults(func=cmd_seed)

    p = sub.add_parser("generate", help="generator QA pairs for every paper -> WORK/generated.jsonl "
                                        "(TGI, vLLM, OpenAI, transformers serve; resumable)")
    _add_work(p)
    _add_endpoint(p, "generator")
    _add_qagen(p, "generate")
    p.add_argument("--merge", action="store_true", help="fold generated.shard-*.jsonl into generated.jsonl")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("publish", help="parquet configs + dataset card -> a folder `load_dataset` reads")
    _add_work(p)
    _add_publish(p)
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("run", help="ingest -> keywords -> seed -> generate -> evaluate -> publish, from one config")
    p.add_argument("config", nargs="?", help="YAML config (default: built-in defaults, sample papers, "
                                             "embedded local model)")
    p.add_argument("--work", help="work directory (default sciqag_work)")
    p.add_argument("--inputs", nargs="+", help="papers to ingest instead of the samples")
    p.add_argument("--stages", help="comma-separated subset of " + ",".join(STAGES))
    _add_keywords(p)
    _add_endpoint(p, "teacher")
    _add_qagen(p, "seed")
    p.add_argument("--generator-endpoint", action="append", dest="generator.url", metavar="URL",
                   help="the generator's endpoint (default: the embedded local model)")
    p.add_argument("--generator-model", dest="generator.model", help="the generator's model name")
    _add_publish(p)
    p.set_defaults(func=cmd_run)

    from .evaluation.cli import register as register_evaluation

    register_evaluation(sub, Endpoints)
    from .trainers.cli import register as register_train

    register_train(sub)
    for action in (a for sp in sub.choices.values() for a in sp._actions):
        if "." in action.dest and action.metavar is None and action.nargs != 0:
            action.metavar = action.dest.split(".", 1)[1].upper()  # --model MODEL, not GENERATOR.MODEL
    return parser


def _sigterm(signum, frame):
    raise KeyboardInterrupt  # run the same cleanup as Ctrl-C: stop the local server, close files


def main(argv: list[str] | None = None) -> int:
    import signal

    signal.signal(signal.SIGTERM, _sigterm)
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    return run_command(args.func, args, f"sciqag {args.command}")


if __name__ == "__main__":
    sys.exit(main())
