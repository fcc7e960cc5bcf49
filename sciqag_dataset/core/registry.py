"""Things looked up by name (metrics, ingest readers, LLM engines, transports), and the one "did you mean".

A :class:`Registry` keeps items by name in registration order; ``get`` of a name it does not hold raises one
line naming the choices and the nearest name. ``nearest`` and ``did_you_mean`` are that suggestion for any
list of names (a config key, a CLI flag, a training option).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from sciqag_dataset.core.errors import UserError

T = TypeVar("T")


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` (a likely typo of it), or None when none is close."""
    near = difflib.get_close_matches(str(word), list(choices), 1)
    return near[0] if near else None


def did_you_mean(word: str, choices: Iterable[str], prefix: str = "") -> str:
    """`` (did you mean PREFIXchoice?)`` for the nearest choice, or the empty string when none is close."""
    near = nearest(word, choices)
    return f" (did you mean {prefix}{near}?)" if near else ""


class Registry(Generic[T]):
    """Items by name, in registration order. ``what`` names an item in messages ("metric"); ``key`` gives an
    item's name; ``same(old, new)`` says when registering a taken name again is harmless (the item replaces
    the old one), else it is a ValueError."""

    def __init__(
        self,
        what: str,
        key: Callable[[T], str] = lambda item: item.name,
        same: Callable[[T, T], bool] | None = None,
    ):
        self.what, self._key, self._same = what, key, same
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        name = self._key(item)
        old = self._items.get(name)
        if old is not None and not (self._same and self._same(old, item)):
            article = "an" if self.what[:1] in "aeiou" else "a"
            raise ValueError(f"{article} {self.what} named {name!r} is already registered")
        self._items[name] = item
        return item

    def key(self, item: T) -> str:
        """The name ``item`` is registered under."""
        return self._key(item)

    def unregister(self, name: str) -> None:
        del self._items[name]

    def get(self, name: str) -> T:
        """The item named ``name``; UserError naming the choices and the nearest one when there is none."""
        if name not in self._items:
            raise self.unknown(name)
        return self._items[name]

    def find(self, name: str) -> T | None:
        return self._items.get(name)

    def unknown(self, name: str) -> UserError:
        near = nearest(name, self._items)
        return UserError(
            f"unknown {self.what} {name!r}: choose from {', '.join(self._items) or '(none registered)'}"
            + (f"; did you mean {near}?" if near else "")
        )

    def names(self) -> tuple[str, ...]:
        return tuple(self._items)

    def items(self) -> list[T]:
        return list(self._items.values())

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items
