"""`ToolContext`: what a tool may touch — the session and lazily built services.

Services (catalog, data sources, sandbox, plot state) are created on first use so that
listing tools or running a cheap one costs nothing. Without a process-wide `Services`, a
context opens its own on first use and closes it with the context.
"""

from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from xhelio.catalog.index import Catalog
from xhelio.config import Settings
from xhelio.data.fetch import DataFetcher
from xhelio.data.store import DataStore
from xhelio.render.plot_state import PlotState
from xhelio.sandbox.executor import SandboxExecutor
from xhelio.sandbox.ops_library import DEFAULT_USER, OpsLibrary
from xhelio.services import Services
from xhelio.session.state import Session
from xhelio.sources.search import SearchResults

if TYPE_CHECKING:
    from xhelio.tools.funnel import ToolFunnel

__all__ = ["ToolContext"]


class ToolContext:
    """The session a tool acts on, and the services it may use."""

    def __init__(
        self, session: Session, settings: Settings, services: Services | None = None
    ) -> None:
        self.session = session
        self.settings = settings
        # Shared per-process resources when given (never closed here); else built per context.
        self.services = services
        self._own_services: Services | None = None
        self._fetchers: dict[str, DataFetcher] = {}
        self._lock = threading.RLock()  # `fetcher` reads `catalog` under it
        self.funnel: ToolFunnel | None = None
        """The session's funnel, through which a tool runs other tools (pipeline replay);
        set by `open_workspace`."""
        self.library_user = DEFAULT_USER
        """Whose proven operations this context reads and adds to ("local": the one user
        of a CLI). A server sets one per session, so no client is shown another's code."""

    @property
    def store(self) -> DataStore:
        """The session's labelled data."""
        return self.session.store

    @property
    def export_dir(self) -> Path:
        """The only folder tools may write files into."""
        path = self.session.folder / "exports"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def shared(self) -> Services:
        """The process's services, or this context's own (opened on first use)."""
        if self.services is not None:
            return self.services
        with self._lock:
            if self._own_services is None:
                self._own_services = Services(self.settings)
            return self._own_services

    @cached_property
    def catalog(self) -> Catalog:
        """The dataset catalog (built from the offline snapshot on first use)."""
        return self.shared.catalog

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> SearchResults:
        """Datasets of every registered source matching `query`, in one ranking."""
        return self.shared.search(query, limit, mission)

    def fetcher(self, source: str | None = None) -> DataFetcher:
        """The DataFetcher for the registered source `source` (default from settings)."""
        name = source or self.settings.default_source
        chosen = self.shared.source(name)
        with self._lock:
            if name not in self._fetchers:
                budget = self.settings.session_memory_mb * 2**20
                self._fetchers[name] = DataFetcher(self.catalog, chosen, self.store, budget)
            return self._fetchers[name]

    @cached_property
    def sandbox(self) -> SandboxExecutor:
        """The warm sandbox worker for generated code."""
        return self.shared.sandbox

    @cached_property
    def ops_library(self) -> OpsLibrary:
        """The library of proven custom operations."""
        return OpsLibrary(self.settings, user=self.library_user)

    @property
    def plot(self) -> PlotState:
        """The session's current figure."""
        return self.session.plot

    def close(self) -> None:
        """Close the services this context opened itself (sources, sandbox process)."""
        with self._lock:
            own, self._own_services = self._own_services, None
        if own is not None:
            own.close()
