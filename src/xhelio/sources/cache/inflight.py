"""Merging of identical in-flight fetches: one future per fragment being fetched.

N threads asking for the same missing fragment cause one fetch; the others wait on its
future and see its result or its error. Imports only the sibling `encoding` (for the type).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

from xhelio.sources.cache.encoding import ArrowTable

__all__ = ["INFLIGHT", "FetchKey", "InflightFetches"]


FetchKey = tuple[str, str, int]
"""(cache folder, series key text, fragment index): one fragment being fetched."""


class InflightFetches:
    """Fragments some thread is fetching right now, so identical requests wait, not refetch.

    One registry per process (not per `CachedSource`), because each `make_source` call
    builds a new wrapper over the same cache folder.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[FetchKey, Future[ArrowTable]] = {}

    def claim(
        self, keys: Sequence[FetchKey]
    ) -> tuple[dict[FetchKey, Future[ArrowTable]], dict[FetchKey, Future[ArrowTable]]]:
        """Return (futures this caller must resolve, futures other threads will resolve)."""
        owned: dict[FetchKey, Future[ArrowTable]] = {}
        others: dict[FetchKey, Future[ArrowTable]] = {}
        with self._lock:
            for key in keys:
                existing = self._futures.get(key)
                if existing is None:
                    owned[key] = self._futures[key] = Future()
                else:
                    others[key] = existing
        return owned, others

    def release(self, key: FetchKey) -> None:
        """Forget a resolved fragment."""
        with self._lock:
            self._futures.pop(key, None)


INFLIGHT = InflightFetches()
