"""`ToolContext`: what a tool may touch — the session and lazily built services.

Services (catalog, data sources, sandbox, plot state) are created on first use so that
listing tools or running a cheap one costs nothing.
"""

from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from xhelio.catalog.index import Catalog, open_catalog
from xhelio.config import Settings
from xhelio.data.fetch import DataFetcher
from xhelio.data.store import DataStore
from xhelio.render.plot_state import PlotState
from xhelio.sandbox.executor import SandboxExecutor
from xhelio.sandbox.ops_library import DEFAULT_USER, OpsLibrary
from xhelio.services import Services
from xhelio.session.state import Session
from xhelio.sources.registry import make_source

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
        self._fetchers: dict[str, DataFetcher] = {}
        self._lock = threading.Lock()
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

    @cached_property
    def catalog(self) -> Catalog:
        """The dataset catalog (built from the offline snapshot on first use)."""
        if self.services is not None:
            return self.services.catalog
        return open_catalog(self.settings)

    def fetcher(self, source: str | None = None) -> DataFetcher:
        """The DataFetcher for `source` ('hapi' or 'cdf'; default from settings)."""
        name = source or self.settings.default_source
        with self._lock:
            if name not in self._fetchers:
                chosen = (
                    self.services.source(name)
                    if self.services is not None
                    else make_source(name, self.settings)
                )
                budget = self.settings.session_memory_mb * 2**20
                self._fetchers[name] = DataFetcher(self.catalog, chosen, self.store, budget)
            return self._fetchers[name]

    @cached_property
    def sandbox(self) -> SandboxExecutor:
        """The warm sandbox worker for generated code."""
        if self.services is not None:
            return self.services.sandbox
        return SandboxExecutor(self.settings)

    @cached_property
    def ops_library(self) -> OpsLibrary:
        """The library of proven custom operations."""
        return OpsLibrary(self.settings, user=self.library_user)

    @property
    def plot(self) -> PlotState:
        """The session's current figure."""
        return self.session.plot

    def close(self) -> None:
        """Stop background workers (the sandbox process)."""
        if "sandbox" in self.__dict__ and self.services is None:
            self.sandbox.close()
