"""Credentials never leave the process except to the host they were configured for.

Everything that shows or stores a URL or an error text goes through here: config files, manifests,
cards, failure records, log lines (every level) and the CLI's error messages. Three things are removed:
the ``user:password@`` part of any URL, secret-looking query parameters (``?api_key=...``), and every
key value this process has resolved (``remember_secret``), wherever it appears.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import urlsplit

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s@?#]+)@")
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:api[_-]?key|access[_-]?token|token|key|secret|password|sig)=)"
    r"(?P<value>[^&#\s\"'<>]+)",
    re.I,
)
_secrets: set[str] = set()
_lock = threading.Lock()


def remember_secret(value: str | None) -> None:
    """Mask ``value`` in everything redacted from now on (a resolved API key, a URL password)."""
    if value and len(value) >= 4:  # a 1-3 character "key" would mask ordinary words
        with _lock:
            _secrets.add(value)


def is_secret(value: str | None) -> bool:
    """Whether ``value`` is a key or password this process has resolved."""
    with _lock:
        return bool(value) and value in _secrets


def redact(text: str) -> str:
    """``text`` with URL credentials, secret query parameters and remembered secrets masked."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _SECRET_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_url(url: str) -> str:
    """Scheme, host, port and path only: no ``user:password@``, no query, no fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return redact(f"{parts.scheme}://{host}{parts.path}")


def url_secrets(url: str) -> list[str]:
    """The credentials embedded in ``url`` (to remember them before anything is logged)."""
    parts = urlsplit(url)
    return [s for s in (parts.password, parts.username if parts.password is None else None) if s]


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then redacts the whole line, traceback included."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def install_log_redaction() -> None:
    """Give every handler of the root logger a redacting formatter (call after ``basicConfig``)."""
    for handler in logging.getLogger().handlers:
        fmt = handler.formatter
        handler.setFormatter(RedactingFormatter(fmt._fmt if fmt else None, fmt.datefmt if fmt else None))
