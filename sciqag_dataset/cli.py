"""`sciqag`: one subcommand per stage over a work directory, and `sciqag run` for all of them.

Options come from, in rising order: defaults, the YAML config (``--config``, or
``WORK/config.yaml`` written by an earlier run), then flags.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from importlib import resources
from pathlib import Path

from . import __version__
from .config import Config
from .runner import Summary

log = logging.getLogger("sciqag")

EXIT_OK, EXIT_FAILED_RECORDS, EXIT_ERROR = 0, 1, 2


def sample_papers() -> list[str]:
    """The original sample papers shipped inside the package."""
    folder = resources.files("sciqag_dataset.examples").joinpath("papers")
    return [str(folder)]


# ---------------------------------------------------------------- options -> config

def _add_work(p, positional=True):
    if positional:
        p.add_argument("work", help="work directory (created if missing)")
    p.add_argument("--config", help="YAML config (default: WORK/config.yaml if present)")


def _add_endpoint(p, prefix="teacher"):
    g = p.add_argument_group(f"{prefix} endpoint (any OpenAI-compatible server; none = embedded local model)")
    g.add_argument("--endpoint", action="append", dest="url", metavar="URL",
                   help="base URL such as http://host:8080/v1; repeat for several replicas")
    g.add_argument("--model", help="model name the endpoint serves")
    g.add_argument("--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--concurrency", type=int, help="requests in flight per endpoint (default 8)")
    g.add_argument("--max-tokens", type=int, help="completion budget per request (default 2048)")
    g.add_argument("--temperature", type=float, help="default 0.6 (the paper)")
    g.add_argument("--top-p", type=float, help="default 0.9 (the paper)")


def _add_seed(p):
    g = p.add_argument_group("seed QA")
    g.add_argument("--n-pairs", type=int, help="QA pairs per paper (default 10)")
    g.add_argument("--prompt-style", choices=["paper", "alpaca"], help="prompt template (default paper)")
    g.add_argument("--context-tokens", type=int, help="teacher context window (default 8192)")
    g.add_argument("--long-paper", choices=["truncate", "chunk"], help="papers over the context (default truncate)")


def _add_keywords(p):
    g = p.add_argument_group("keywords")
    g.add_argument("-n", "--n-keywords", type=int, help="TopicRank keyphrases per paper (default 20)")
    g.add_argument("--workers", type=int, help="worker processes (default 2)")


def _add_publish(p):
    g = p.add_argument_group("publish")
    g.add_argument("-o", "--output", help="publish folder (default WORK/dataset)")
    g.add_argument("--configs", help="comma-separated configs to publish (default seed)")
    g.add_argument("--license", help="dataset license id (default cc-by-4.0)")
    g.add_argument("--push-to-hub", metavar="REPO", help="also upload the folder to this Hub dataset repo")
    g.add_argument("--private", action="store_true", default=None, help="create the Hub repo private")


FLAG_MAP = {  # argparse dest -> (config section, field)
    "url": ("teacher", "url"), "model": ("teacher", "model"), "api_key_env": ("teacher", "api_key_env"),
    "concurrency": ("teacher", "concurrency"), "max_tokens": ("teacher", "max_tokens"),
    "temperature": ("teacher", "temperature"), "top_p": ("teacher", "top_p"),
    "n_pairs": ("seed", "n_pairs"), "prompt_style": ("seed", "prompt_style"),
    "context_tokens": ("seed", "context_tokens"), "long_paper": ("seed", "long_paper"),
    "n_keywords": ("keywords", "n"), "workers": ("keywords", "workers"),
    "on_duplicate": ("ingest", "on_duplicate"),
    "output": ("publish", "output_dir"), "license": ("publish", "license"),
    "push_to_hub": ("publish", "push_to_hub"), "private": ("publish", "private"),
}


def resolve_config(args) -> Config:
    path = getattr(args, "config", None)
    work = getattr(args, "work", None)
    if path is None and work and (Path(work) / "config.yaml").exists():
        path = Path(work) / "config.yaml"
    cfg = Config.load(path)
    if work:
        cfg.work_dir = str(work)
    for dest, (section, name) in FLAG_MAP.items():
        value = getattr(args, dest, None)
        if value is not None:
            if dest == "url" and len(value) == 1:
                value = value[0]
            setattr(getattr(cfg, section), name, value)
    if getattr(args, "configs", None):
        cfg.publish.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if getattr(args, "inputs", None):
        cfg.inputs = list(args.inputs)
    return cfg


# ---------------------------------------------------------------- stages

def do_ingest(cfg: Config) -> Summary:
    from .builders.ingest import run_ingest

    return run_ingest(cfg.inputs or sample_papers(), Path(cfg.work_dir), on_duplicate=cfg.ingest.on_duplicate)


def do_keywords(cfg: Config) -> Summary:
    from .builders.keywords import run_keywords

    k = cfg.keywords
    return run_keywords(Path(cfg.work_dir), n=k.n, workers=k.workers, reuse_existing=k.reuse_existing)


@contextlib.contextmanager
def teacher_endpoint(cfg: Config):
    """Yield (url, model, label): the configured endpoint, or the embedded server for the run's length."""
    if cfg.teacher.url:
        yield cfg.teacher.url, cfg.teacher.model, None
        return
    from .local_server import DEFAULT_MODEL_ID, embedded_default

    print(f"No endpoint configured: starting the embedded {DEFAULT_MODEL_ID} server", file=sys.stderr)
    with embedded_default(log_path=Path(cfg.work_dir) / "local_server.log") as server:
        yield server.base_url, server.model, DEFAULT_MODEL_ID


def do_seed(cfg: Config, url, model, label) -> Summary:
    from .builders.seed import run_seed
    from .llm import check_reachable, client_from_config

    work = Path(cfg.work_dir)
    check_reachable(url)
    client = client_from_config(cfg.teacher, work / "cache.sqlite", url=url, model=model, label=label)
    started = time.time()
    summary = run_seed(work, client, cfg.seed)
    manifest = {**client.describe(), "counts": dict(summary.counts), "seconds": round(time.time() - started, 1),
                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (work / "seed_manifest.json").write_text(json.dumps(manifest, indent=2))
    return summary


def do_publish(cfg: Config) -> Path:
    from .publish import push_to_hub, write_folder

    out = write_folder(cfg.work_dir, cfg.output_dir, cfg)
    print(f"Published {out}  ->  datasets.load_dataset({str(out)!r}, {cfg.publish.configs[0]!r})")
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


def _save_config(cfg: Config) -> None:
    work = Path(cfg.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    cfg.save(work / "config.yaml")  # holds api_key_env names only, never keys


# ---------------------------------------------------------------- commands

def cmd_ingest(args) -> int:
    cfg = resolve_config(args)
    _save_config(cfg)
    return _report(do_ingest(cfg))


def cmd_keywords(args) -> int:
    return _report(do_keywords(resolve_config(args)))


def cmd_seed(args) -> int:
    cfg = resolve_config(args)
    _save_config(cfg)
    with teacher_endpoint(cfg) as (url, model, label):
        return _report(do_seed(cfg, url, model, label))


def cmd_publish(args) -> int:
    do_publish(resolve_config(args))
    return EXIT_OK


def cmd_run(args) -> int:
    cfg = resolve_config(args)
    _save_config(cfg)
    print(f"Work directory: {Path(cfg.work_dir).resolve()}")
    worst = max(_report(do_ingest(cfg)), _report(do_keywords(cfg)))
    with teacher_endpoint(cfg) as (url, model, label):
        worst = max(worst, _report(do_seed(cfg, url, model, label)))
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
    p.add_argument("--on-duplicate", choices=["skip", "keep", "error"], help="default skip (reported)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("keywords", help="TopicRank keyphrases per paper -> WORK/keywords.jsonl")
    _add_work(p)
    _add_keywords(p)
    p.set_defaults(func=cmd_keywords)

    p = sub.add_parser("seed", help="teacher QA pairs per paper -> WORK/seed.jsonl")
    _add_work(p)
    _add_endpoint(p)
    _add_seed(p)
    p.set_defaults(func=cmd_seed)

    p = sub.add_parser("publish", help="parquet configs + dataset card -> a folder `load_dataset` reads")
    _add_work(p)
    _add_publish(p)
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("run", help="ingest -> keywords -> seed -> publish, from one config")
    p.add_argument("config", nargs="?", help="YAML config (default: built-in defaults, sample papers, "
                                             "embedded local model)")
    p.add_argument("--work", help="work directory (default sciqag_work)")
    p.add_argument("--inputs", nargs="+", help="papers to ingest instead of the samples")
    _add_keywords(p)
    _add_endpoint(p)
    _add_seed(p)
    _add_publish(p)
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("Interrupted: finished papers are saved; rerun the same command to resume.", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"sciqag {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
