"""`Services`: the long-lived resources of one process, created once and closed once.

A process (the CLI command, the REST server, MCP, the web app) makes ONE `Services`
and hands it to every session it serves::

    with Services() as services:            # or Services(load_settings(home=...))
        workspace = open_workspace("L", services=services)
        ...
    # catalog connection, HTTP clients, cache index and sandbox worker are closed here

It owns the settings, the catalog connection, the disk cache (one index, one size limit
for fragments and CDF files), one data source per registered name (each with its HTTP
client, all behind the shared cache; `search` ranks every source's catalog at once), the
session store and the sandbox executor. Each is built on first use, under a lock, so
listing tools costs nothing and threads share one instance. Every attribute is safe to
use from several threads. After `close()` any use raises, and every source it opened has
been closed.

Imports config, catalog, sources, session and sandbox; nothing imports it but
interfaces (cli, tools.workspace and the servers).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from xhelio.catalog.index import Catalog, open_catalog
from xhelio.config import Settings, load_settings
from xhelio.errors import XhelioError
from xhelio.sandbox.executor import SandboxExecutor
from xhelio.session.persist import SessionStore
from xhelio.sources.base import DataSource
from xhelio.sources.cache import FragmentCache
from xhelio.sources.registry import make_source, source_names
from xhelio.sources.search import SearchResults, search_registered

__all__ = ["Services"]

T = TypeVar("T")


class ServicesClosedError(XhelioError):
    """A `Services` object was used after `close()`."""


class Services:
    """One per process: settings, catalog, cache, data sources, sessions and sandbox."""

    def __init__(self, settings: Settings | None = None) -> None:
        """Hold `settings` (loaded from the environment when omitted); build nothing yet."""
        self.settings = settings or load_settings()
        self._lock = threading.RLock()
        self._made: dict[str, Any] = {}
        self._sources: dict[str, DataSource] = {}
        self._closed = False

    def _once(self, name: str, build: Callable[[], T]) -> T:
        """Return the resource `name`, building it on first use."""
        with self._lock:
            if self._closed:
                raise ServicesClosedError(f"xhelio services are closed; cannot open {name}.")
            if name not in self._made:
                self._made[name] = build()
            return self._made[name]

    @property
    def catalog(self) -> Catalog:
        """The dataset catalog (the SQLite index, built from the snapshot if needed)."""
        return self._once("catalog", lambda: open_catalog(self.settings))

    @property
    def cache(self) -> FragmentCache:
        """The disk cache shared by every source of this process."""
        return self._once("cache", lambda: FragmentCache(self.settings))

    @property
    def sessions(self) -> SessionStore:
        """The session store (safe for concurrent writers)."""
        return self._once("sessions", lambda: SessionStore(self.settings))

    @property
    def sandbox(self) -> SandboxExecutor:
        """The sandbox executor for generated code (its worker starts on first call)."""
        return self._once("sandbox", lambda: SandboxExecutor(self.settings))

    def source(self, name: str | None = None) -> DataSource:
        """The registered source `name` (default from settings), behind the shared cache.

        Raises:
            UserError: no usable source has that name (the message lists those that do).
        """
        key = name or self.settings.default_source
        with self._lock:
            if self._closed:
                raise ServicesClosedError(f"xhelio services are closed; cannot open {key}.")
            found = self._sources.get(key)
            if found is None:
                found = self._sources[key] = make_source(
                    key, self.settings, cache=self.cache, catalog=lambda: self.catalog
                )
            return found

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> SearchResults:
        """Datasets of every registered source matching `query`, in one ranking.

        The default source is asked first (it wins ties); a source that cannot be built
        is left out with a note, like one whose server is down.
        """
        names = source_names(self.settings)
        first = self.settings.default_source
        return search_registered(names, self.source, query, limit, mission, first)

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    def close(self) -> None:
        """Close every resource that was opened (HTTP clients, catalog, cache, sandbox).

        Safe to call twice; failures to close one resource do not keep others open.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            made, self._made = self._made, {}
            sources, self._sources = list(self._sources.values()), {}
        closers: list[Callable[[], object]] = [source.close for source in sources]
        for name in ("sandbox", "catalog", "cache"):
            resource = made.get(name)
            if resource is not None:
                closers.append(resource.close)
        for close in closers:
            try:
                close()
            except Exception:  # a plugin's close may fail in any way; the rest still close
                continue

    def __enter__(self) -> Services:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
