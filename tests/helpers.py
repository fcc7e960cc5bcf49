"""Helpers the tests import (``from helpers import ...``): JSONL files, a recording proxy, fakes of a chat
endpoint and of the Hub. Fixtures and hooks live in ``conftest.py``."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

from sciqag_dataset.core.schema import RACAR_DIMENSIONS

#: a dozen materials the tests write small papers about (seed, publish and training data)
MATERIALS = [
    "perovskite film",
    "sodium cathode",
    "zeolite membrane",
    "skutterudite",
    "titania photocatalyst",
    "garnet electrolyte",
    "graphene oxide",
    "spinel ferrite",
    "MOF sorbent",
    "silicon anode",
    "bismuth telluride",
    "nickel catalyst",
]


class RecordingProxy:
    """A loopback HTTP proxy in front of a real server: it records each request's path, headers and body, then
    forwards the request unchanged and returns the real reply. It shows what a client sends to a host
    (which key, if any), which no server here logs. ``rewrite`` may change a reply body on its way back,
    for replies no real server here writes (lone surrogates)."""

    def __init__(self, upstream: str, rewrite=None):
        upstream = upstream.rstrip("/").removesuffix("/v1")  # a server root or its /v1 base URL
        self.requests: list[dict] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self, body: bytes | None):
                proxy.requests.append({"path": self.path, "headers": dict(self.headers), "body": body or b""})
                req = urllib.request.Request(
                    upstream.rstrip("/") + self.path,
                    data=body,
                    method=self.command,
                    headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
                )
                try:
                    with urllib.request.urlopen(req, timeout=120) as r:
                        status, data = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, data = e.code, e.read()
                if rewrite is not None and status == 200:
                    data = rewrite(data)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def authorizations(self) -> list[str | None]:
        return [
            next((v for k, v in r["headers"].items() if k.lower() == "authorization"), None)
            for r in self.requests
            if r["path"].endswith("/completions")
        ]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ScriptedChat:
    """FAKE OpenAI-style chat endpoint (loopback) for replies no server here writes (a judge's exact scores):
    ``reply(body)`` returns the reply text, or ``(status, error payload)``. Each request body is recorded."""

    def __init__(self, reply):
        self.requests: list[dict] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                out = reply(body)
                status, payload = (
                    out
                    if isinstance(out, tuple)
                    else (
                        200,
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body["model"],
                            "choices": [
                                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": out}}
                            ],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                        },
                    )
                )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ScriptedJudge(ScriptedChat):
    """FAKE OpenAI-style endpoint (loopback): replies written by the test, chosen by the prompt's dimension.

    ``replies[dim]`` is a list: attempt k gets item k (the last one repeats). With
    ``reject_structured`` every request carrying ``response_format`` gets a 400.
    """

    def __init__(self, replies: dict[str, list[str]], reject_structured: bool = False):
        def reply(body):
            if reject_structured and "response_format" in body:
                return 400, {"error": {"message": "response_format is not supported"}}
            prompt = body["messages"][-1]["content"]
            dim = next(d for d in RACAR_DIMENSIONS if f"Rate the {d}" in prompt)
            attempt = prompt.count("a previous reply to this request could not be used")
            return replies[dim][min(attempt, len(replies[dim]) - 1)]

        super().__init__(reply)


class FakeHfApi:
    """A fake of huggingface_hub.HfApi: the Hub cannot be reached here, so record the calls."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def upload_folder(self, **kw):
        self.calls.append(("upload_folder", kw["repo_id"], kw))
        return type("CommitInfo", (), {"commit_url": f"https://hub.example/{kw['repo_id']}/commit/1"})()


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
