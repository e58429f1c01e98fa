"""Bounded, thread-safe memory of catalog answers, forgotten when the index changes.

The catalog is read far more than it is written: every offline turn browses a mission's
datasets and searches it, and a server's sessions ask the same few quantities of the same
few missions. `Memo` keeps the most recently used answers (least recently used go first
past `size`); the `Catalog` clears it whenever its index changes (a refresh written by
this process, or by another one, as SQLite's `data_version` tells). Imports nothing from
xhelio.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Generic, TypeVar

__all__ = ["Memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """At most `size` answers by key, the least recently used forgotten first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0  # which `clear` answers were computed after

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The answer for `key`, computed (outside the lock) when it is not remembered."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            generation = self._generation
        value = compute()
        self._remember({key: value}, generation)
        return value

    def get_many(
        self, keys: Iterable[K], compute: Callable[[list[K]], Mapping[K, V]]
    ) -> dict[K, V]:
        """The answers for `keys`; `compute` gets the ones not remembered, in one call."""
        found: dict[K, V] = {}
        missing: list[K] = []
        with self._lock:
            for key in keys:
                if key in self._items:
                    self._items.move_to_end(key)
                    found[key] = self._items[key]
                else:
                    missing.append(key)
            generation = self._generation
        if missing:
            computed = compute(missing)
            self._remember(computed, generation)
            found.update(computed)
        return found

    def clear(self) -> None:
        """Forget every answer."""
        with self._lock:
            self._items.clear()
            self._generation += 1

    def _remember(self, values: Mapping[K, V], generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # computed from an index that has changed since
            self._items.update(values)
            for key in values:
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
