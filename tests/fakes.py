"""Fakes, for the parts no real process here can play (each says which)."""

from __future__ import annotations

import sys
from pathlib import Path

from sciqag_dataset.llm.server import LocalServer

CRASHING_SERVER = Path(__file__).with_name("fake_crashing_server.py")


class FakeCrashingServer(LocalServer):
    """In place of llama.cpp's server on a CPU with AMX, whose crash cannot be produced here on demand: a
    server that answers ``answers`` completions, then segfaults (-1: never)."""

    name = "fake llama.cpp server"

    def __init__(self, answers: int, log_path):
        super().__init__("fake", log_path=log_path, continuous_batching=False, threads=1, startup_timeout=30)
        self.answers = answers

    def command(self) -> list[str]:
        return [sys.executable, str(CRASHING_SERVER), str(self.port), str(self.answers)]
