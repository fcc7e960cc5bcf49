"""`sciqag review WORK|DATASET`: people rate and correct QA pairs in the browser (local, token-protected)."""

from __future__ import annotations

import secrets
import socket
import webbrowser
from pathlib import Path
from urllib.parse import urlencode

from sciqag_dataset.cli.flags import check_port, command
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import Unavailable, UserError
from sciqag_dataset.core.wiring import REVIEWS
from sciqag_dataset.review.dataset import copy_for_review, is_work_dir, looks_like_hub_id
from sciqag_dataset.review.session import ReviewSession
from sciqag_dataset.review.store import check_reviewer

try:  # the `review` extra: a plain install still runs every other command
    import uvicorn

    from sciqag_dataset.review.app import create_app
except ImportError as exc:
    uvicorn = create_app = exc


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


def add_parser(subparsers) -> None:
    p = command(
        subparsers, "review", "rate and correct QA pairs in the browser (local, token-protected) -> WORK/reviews.jsonl"
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
