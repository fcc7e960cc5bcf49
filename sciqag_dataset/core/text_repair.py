"""Text that cannot be encoded as UTF-8 is repaired, never allowed to fail a write.

Lone surrogates reach us from JSON escapes (``"\\ud800"``), from file names and bytes decoded with
``surrogateescape``, and from servers. They cannot be written as UTF-8: unrepaired, one of them would
cost a whole paper or stop a run. Here a surrogate *pair* is joined into its character and a lone surrogate
becomes U+FFFD; callers record a warning with the count.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def repair_text(text: str) -> tuple[str, int]:
    """(text with every lone surrogate replaced by U+FFFD, how many were replaced)."""
    if not _SURROGATE.search(text):
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")  # joins valid pairs
    joined = len(text) - len(fixed)  # each joined pair became one character
    return fixed, len(_SURROGATE.findall(text)) - 2 * joined


def repair(value: Any) -> tuple[Any, int]:
    """``value`` (str, or dicts/lists of them, keys included) repaired, and the number of repairs."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        out, n = {}, 0
        for k, v in value.items():
            k2, a = repair(k)
            v2, b = repair(v)
            out[k2] = v2
            n += a + b
        return out, n
    if isinstance(value, (list, tuple)):
        items, n = [], 0
        for v in value:
            v2, a = repair(v)
            items.append(v2)
            n += a
        return (items if isinstance(value, list) else tuple(items)), n
    return value, 0
