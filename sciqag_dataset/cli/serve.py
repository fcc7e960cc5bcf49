"""`sciqag serve`: the embedded model on a port, for requests of your own and for the harnesses (lm-eval,
lighteval) that run the exported benchmark task.

The server is started and watched by the pipeline's supervisor (``llm.supervisor.EmbeddedServer``): a server
that dies is started again on the same port, or replaced by the next engine, as in a run. Ctrl-C or SIGTERM
stops it and exits 0.
"""

from __future__ import annotations

import functools
import socket
import sys
import time

from sciqag_dataset.cli.flags import add_embedded, check_port, command, resolve_config
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.llm import embedded
from sciqag_dataset.llm.supervisor import EmbeddedServer

#: Seconds between two looks at whether the server is still alive.
WATCH_SECONDS = 1.0


def _port(host: str, port: int) -> int:
    """``port`` on ``host`` if it is free (0: a free one); UserError when it is taken or the host is not ours."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.bind((host, port))
            return s.getsockname()[1]
    except OSError as exc:
        raise UserError(f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})") from None


def cmd_serve(args) -> int:
    check_port(args.port)
    cfg = resolve_config(args)
    e = cfg.embedded
    choice = embedded.choose_here(e.backend, e.dtype, e.threads)
    port = _port(args.host, args.port)
    server = EmbeddedServer(
        choice, log_path=args.log, start=functools.partial(embedded.start, port=port, host=args.host)
    )
    try:
        serving = None
        while True:
            if serving is None or server.dead():
                serving = server.connect()  # the first start, or a restart on the same port
                pid = serving.process[0] if serving.process else "?"
                print(
                    f"Serving {embedded.DEFAULT_MODEL_ID} with {server.choice.describe()} (server pid {pid}); "
                    f"Ctrl-C stops it.\nbase_url: {serving.urls[0]}\nmodel: {serving.model}",
                    flush=True,
                )
            time.sleep(WATCH_SECONDS)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM turned into it by `main`: the way to stop it
        pass
    finally:
        server.stop()
    print("Server stopped.", file=sys.stderr, flush=True)
    return 0


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "serve",
        "serve the embedded model (OpenAI-compatible: /v1/chat/completions) on a port until Ctrl-C; prints the "
        "base URL and the model name requests send",
    )
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one, printed)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface, no key asked)",
    )
    p.add_argument("--log", metavar="FILE", help="append the server's own output to FILE (default: discarded)")
    p.add_argument("--config", help="YAML config (its embedded: section)")
    add_embedded(p, "serve")
    p.set_defaults(func=cmd_serve)
