"""The persistent response cache: SQLite, keyed by the request, complete replies only.

The cache only saves money: a file that is not a database any more (a crashed disk, a truncated copy) is
moved aside as ``cache.sqlite.corrupt-<time>`` and started afresh, and a read or write that fails is
logged and treated as a miss, so a reply in hand is never lost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)


def complete_reply(value: dict) -> bool:
    """A reply worth caching and replaying: some text, and not cut at ``max_tokens``."""
    return bool(value.get("text")) and value.get("finish_reason") != "length"


class ResponseCache:
    """SQLite cache of complete responses, safe to share between processes (WAL).

    The cache only saves money: a file that is not a database any more (a crash of the disk, a
    truncated copy) is moved aside as ``cache.sqlite.corrupt-<time>`` and started afresh, and a read
    or write that fails is logged and treated as a miss, so the reply in hand is never lost.
    """

    def __init__(self, path: str | Path, timeout: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._timeout = timeout
        try:
            self._db = self._open_when_free()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
            log.warning(
                "response cache %s is unreadable (%s); moved aside to %s and rebuilt", self.path, exc, aside.name
            )
            for suffix in ("", "-wal", "-shm"):
                part = Path(f"{self.path}{suffix}")
                if part.exists():
                    os.replace(part, f"{aside}{suffix}")
            self._db = self._open()

    def _open_when_free(self, tries: int = 5) -> sqlite3.Connection:
        """Open; a database another process holds locked (ranks of a scaled-out run opening it at once) is
        waited for, never taken for a corrupt one and moved aside."""
        for attempt in range(tries):
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == tries - 1:
                    raise
                time.sleep(1 + attempt)
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=self._timeout)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
                " created REAL NOT NULL)"
            )
            db.commit()
            db.execute("SELECT key, value FROM responses ORDER BY rowid DESC LIMIT 1").fetchall()
            wal = Path(f"{self.path}-wal")
            pages = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
            if not (wal.exists() and wal.stat().st_size) and self.path.stat().st_size < pages:
                raise sqlite3.DatabaseError(f"truncated: {self.path.stat().st_size} of {pages} bytes")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    @staticmethod
    def key(request: dict) -> str:
        # surrogatepass: a key must never fail to compute (bodies are repaired first anyway)
        blob = json.dumps(request, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return hashlib.sha256(blob).hexdigest()

    def get(self, key: str, *, partial: bool = False) -> dict | None:
        """The stored reply; a cut or empty one only with ``partial`` (a request that takes such replies)."""
        try:
            with self._lock:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            value = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            log.warning("response cache read failed (%s: %s); asking the model", type(exc).__name__, exc)
            return None
        # older versions cached cut replies
        return value if value is not None and (partial or complete_reply(value)) else None

    def put(self, key: str, value: dict) -> bool:
        """Store a complete reply; False (logged) when the write failed."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                    (key, json.dumps(value, ensure_ascii=False), time.time()),
                )
                self._db.commit()
            return True
        except (sqlite3.Error, ValueError) as exc:
            log.warning(
                "response cache write failed (%s: %s); the reply is kept in the stage output but "
                "will be asked again if that is lost",
                type(exc).__name__,
                exc,
            )
            return False

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
