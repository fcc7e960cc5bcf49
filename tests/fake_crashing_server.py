"""A fake OpenAI-compatible server that kills itself with SIGSEGV, as llama.cpp does on CPUs with AMX.

    python fake_crashing_server.py PORT ANSWERS

It answers /health and /v1/models at once, then ANSWERS completion requests (chat or raw) with a short
well-formed reply, and on the next one sends itself SIGSEGV (ANSWERS 0: the first request; -1: never).
No real server here crashes on demand, hence a fake; it is named so wherever it is used.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys

PORT, ANSWERS = int(sys.argv[1]), int(sys.argv[2])
answered = 0
REPLY = "What does the film's grain size depend on? It grows with the annealing temperature."


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        print("fake server:", fmt % args, flush=True)

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self):
        global answered
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if answered == ANSWERS:
            print("fake server: segfaulting on purpose", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        answered += 1
        usage = {"prompt_tokens": 5, "completion_tokens": 12, "total_tokens": 17}
        if self.path.endswith("/chat/completions"):
            choice = {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
            self._json(
                200,
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 0,
                    "model": request.get("model"),
                    "choices": [choice],
                    "usage": usage,
                },
            )
        else:
            choice = {"index": 0, "text": REPLY, "finish_reason": "stop"}
            self._json(
                200,
                {
                    "id": "c",
                    "object": "text_completion",
                    "created": 0,
                    "model": request.get("model"),
                    "choices": [choice],
                    "usage": usage,
                },
            )


signal.signal(signal.SIGSEGV, signal.SIG_DFL)  # die of it, as a native crash does
http.server.HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
