"""`sciqag review` (people rate and correct pairs in the browser) and `sciqag agreement` (how well the
judge and the people agree)."""

from __future__ import annotations

import json
import secrets
import socket
import webbrowser
from pathlib import Path
from urllib.parse import urlencode

from sciqag_dataset.cli.flags import check_port, command
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import Unavailable, UserError
from sciqag_dataset.core.schema import REASONING_TYPES
from sciqag_dataset.core.wiring import AGREEMENT, EVALUATED, REVIEWS
from sciqag_dataset.evaluation.agreement import write_agreement
from sciqag_dataset.evaluation.ratings import collect
from sciqag_dataset.review.dataset import copy_for_review, is_work_dir, looks_like_hub_id
from sciqag_dataset.review.session import ReviewSession
from sciqag_dataset.review.store import JUDGE, check_reviewer

try:  # the `review` extra: a plain install still runs every other command
    import uvicorn

    from sciqag_dataset.review.app import create_app
except ImportError as exc:
    uvicorn = create_app = exc


def _work(path: str) -> Path:
    work = Path(path)
    if not work.is_dir():
        raise UserError(f"{work} is not a work directory (run `sciqag evaluate WORK` first)")
    return work


def _source(args) -> Path:
    """The folder to review in: WORK itself, or a copy of DATASET's pairs in --review-dir."""
    if is_work_dir(args.source):
        return Path(args.source)
    path = Path(args.source)
    if path.is_dir() and not (path / "README.md").exists():
        raise UserError(f"{path} is neither a work directory with evaluated.jsonl nor a published dataset folder")
    if not path.exists() and not looks_like_hub_id(args.source):
        raise UserError(f"{args.source}: no such folder, and not a Hub dataset id (owner/name)")
    folder = copy_for_review(args.source, args.review_dir)
    print(f"Reviewing the `evaluated` pairs of {args.source}, copied to {folder}")
    return folder


def cmd_review(args) -> int:
    if isinstance(create_app, ImportError):
        raise Unavailable(f"`sciqag review` needs {create_app.name}: pip install 'sciqag-hf[review]'")
    check_port(args.port)
    work = _source(args)
    if args.reviewer:
        check_reviewer(args.reviewer)
    session = ReviewSession(
        work,
        work / REVIEWS,
        sample=args.sample,
        overlap=args.overlap,
        seed=args.seed,
        blind=args.blind,
    )
    token = secrets.token_urlsafe(24)
    app = create_app(session, token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as e:
        raise UserError(
            f"port {args.port} on 127.0.0.1 is taken ({e.strerror}): pass --port 0 for a free one"
        ) from None
    sock.listen(128)  # connections wait in the backlog from now on, so the URL printed below answers at once
    port = sock.getsockname()[1]
    query = {"token": token, **({"reviewer": args.reviewer} if args.reviewer else {})}
    url = f"http://127.0.0.1:{port}/?{urlencode(query)}"
    total = len(session.entries)
    n = min(args.sample or total, total)
    print(
        f"Reviewing {plural(n, 'pair')} of the {total} in {work}; every action is saved to "
        f"{session.log.path}.\nOpen {url}\n(only this machine can reach it; Ctrl-C stops the server, nothing is lost)",
        flush=True,
    )
    if args.open:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the usual way to stop, nothing to resume but the review
        pass
    print(f"Review server stopped; every action is in {session.log.path}. The same command goes on.", flush=True)
    return 0


def _number(stat: dict | None) -> str:
    return "–" if not stat or stat.get("value") is None else f"{stat['value']:.2f}"


def agreement_summary(result: dict, out: Path) -> list[str]:
    """What `sciqag agreement` prints: raters, sources, per dimension kappa and alpha, where it wrote."""
    raters = result["raters"]
    people = [r for r, v in raters.items() if v["kind"] != JUDGE]
    lines = [
        f"Agreement of {plural(len(people), 'person', 'people')}"
        + (" and the judge" if JUDGE in raters else "")
        + f" over {plural(result['pairs'], 'pair')} people rated:",
        "  raters: " + ", ".join(f"{r} ({v['kind']}, {plural(v['pairs'], 'pair')})" for r, v in raters.items()),
    ]
    for source in result.get("inputs") or []:
        fmt = f" ({source['format']})" if source.get("format") else ""
        lines.append(f"  {source['source']}{fmt}: {plural(source['rows'], 'row')}, {source['used']} used")
        lines += [f"    {note}" for note in source["notes"]]
    for dim, d in result["dimensions"].items():
        kappas = [
            f"{p['a']}–{p['b']} {_number(p['kappa'])} ({p['n']})"
            for p in d["pairs"]
            if p["a"] in people or p["b"] in people
        ]
        lines.append(
            f"  {dim}: kappa {', '.join(kappas) or '–'}; alpha people {_number(d.get('alpha_humans'))}, "
            f"people + judge {_number(d.get('alpha_all'))}"
        )
    plots = result.get("plots") or {}
    where = f"; {plural(len(plots), 'plot')} in {(out.parent / next(iter(plots))).parent}" if plots else ""
    lines.append(f"Written to {out}{where}")
    lines += [f"Warning: {w}" for w in result.get("warnings") or []]
    return lines


def cmd_agreement(args) -> int:
    work = _work(args.work)
    if not is_work_dir(work):
        raise UserError(f"{work} has no {EVALUATED}: run `sciqag evaluate {work}` first")
    ratings = collect(work, args.ratings or ())
    if not ratings.humans():
        raise UserError(
            f"no human ratings: review pairs with `sciqag review {work}` or pass --ratings FILE (CSV or JSONL)"
        )
    out = write_agreement(work, ratings, Path(args.output) if args.output else None, rounds=args.bootstrap)
    result = json.loads(out.read_text(encoding="utf-8"))
    print("\n".join(agreement_summary(result, out)))
    return 0


def add_parsers(sub) -> None:
    p = command(
        sub, "review", "rate and correct QA pairs in the browser (local, token-protected) -> WORK/reviews.jsonl"
    )
    p.add_argument(
        "source",
        metavar="WORK|DATASET",
        help="a work directory that `sciqag evaluate` has run in, or a published dataset (folder or Hub id)",
    )
    p.add_argument(
        "--review-dir",
        default="sciqag_review",
        metavar="DIR",
        help="for a DATASET: the folder its pairs are copied to and the reviews saved in (default sciqag_review)",
    )
    p.add_argument("--reviewer", metavar="NAME", help="your name, saved with every action (else the page asks)")
    p.add_argument("--sample", type=int, metavar="N", help="review N pairs, stratified by RACAR mean and paper")
    p.add_argument("--overlap", type=int, default=0, metavar="K", help="of them, K pairs every reviewer sees")
    p.add_argument("--seed", type=int, default=0, help="the sample's seed (the same seed gives the same pairs)")
    p.add_argument("--blind", action="store_true", help="hide the judge's scores (else shown as suggestions)")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free one)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.set_defaults(func=cmd_review)

    p = command(
        sub,
        "agreement",
        "agreement between the judge and people, per RACAR dimension (kappa, Spearman, Krippendorff's alpha)",
    )
    p.add_argument("work", metavar="WORK", help="the work directory reviewed")
    p.add_argument(
        "--ratings",
        action="extend",
        nargs="+",
        metavar="FILE",
        help="more ratings (repeatable; every file is used), CSV (comma, semicolon or tab; UTF-8, UTF-16 with "
        "BOM or Windows-1252) or JSONL. Required columns: pair_id, rater. Optional: relevance, agnosticism, "
        f"completeness, accuracy, reasonableness, difficulty (1-3), reasoning_type ({', '.join(REASONING_TYPES)}),"
        " keep (0/1); blanks allowed. A pair and rater given twice counts once (values that differ are left "
        "out); rows of pairs not in WORK are left out",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"where to write the result (default WORK/{AGREEMENT}); the plots go to a folder beside it named "
        "after it (WORK/agreement_plots/)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=500,
        metavar="N",
        help="bootstrap rounds for the 95 %% intervals (the time grows with the rounds and the pairs of raters)",
    )
    p.set_defaults(func=cmd_agreement)
