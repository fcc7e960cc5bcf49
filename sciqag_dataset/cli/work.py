"""What a command checks and holds before it works on a work directory: its inputs, keys and endpoints, the
folder (ours, never someone else's), its lock, and the resolved config saved there once every check passed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sciqag_dataset.core import remote, work_lock
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.folders import WORK_LAYOUT, check_publish_target, claim
from sciqag_dataset.core.redact import redact
from sciqag_dataset.core.wiring import PAPERS
from sciqag_dataset.llm import check_reachable
from sciqag_dataset.orchestration import pipeline


@contextmanager
def open_work(
    cfg, args, stages=(), *, save: bool = True, papers: bool = False, shared: bool = False
) -> Iterator[Path]:
    """Checks before any work, then the work directory held for this command.

    First the key of every endpoint these stages call, and that each answers; then the work directory (ours,
    or new, or empty: never someone else's folder), locked while the command runs (``work_lock``: a second
    command is refused, or waits with --wait-turn); only then is the resolved config saved there (``save``), so a
    refused command leaves the work directory as it was. ``papers``: the work directory must hold ingested papers
    (checked before anything is written, or once the lock is ours when waiting for a command that may ingest
    them). ``shared``: a shard run, beside other shard runs.
    """
    wait = getattr(args, "wait_turn", False)
    if papers and not wait:
        existing_work(cfg)
    needed = pipeline.endpoints_needed(cfg, stages)
    for option, endpoint in needed:
        endpoint.api_key(f"{option}.api_key_env")
    for _, endpoint in needed:
        if endpoint.url:
            check_reachable(endpoint.url)
    work = claim(cfg.work_dir, "work", option="work_dir", adopt=WORK_LAYOUT)
    command = redact(" ".join(["sciqag", *getattr(args, "argv", [args.command])]))
    with work_lock.hold(work, command, shared=shared, wait=wait):
        if papers and wait:
            existing_work(cfg)
        if save:
            cfg.save(work / "config.yaml")  # holds api_key_env names only, never keys; URLs without credentials
        yield work


def check_inputs(cfg) -> None:
    """Every local input is there (a URL is looked at when it is read): a mistyped path is a user error."""
    for path in cfg.inputs:
        local = remote.local(path)
        if not remote.is_remote(local) and not set("*?[") & set(local) and not Path(local).exists():
            raise UserError(f"inputs: {path} does not exist")


def existing_work(cfg) -> None:
    """The work dir of a stage after ingest must hold papers: refused before anything is written there."""
    papers = Path(cfg.work_dir) / PAPERS
    if not papers.exists():
        raise MissingInput(f"{papers} not found: run `sciqag ingest {cfg.work_dir} PAPERS` (or `sciqag run`) first")


def check_publish_targets(cfg) -> None:
    check_publish_target(cfg.output_dir, Path(cfg.work_dir))
    if cfg.publish_url:
        remote.check_target(cfg.publish_url)
