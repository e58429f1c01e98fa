"""`Workspace`: a session with its tool context and toolset, ready to run tools.

This is how every interface (CLI, web, MCP, agents) gets a working session. Its `funnel`
is the outermost toolset: the session's `ToolFunnel`, wrapped for good by `install` (a
server's policy) and for one turn by `wrapped` (the turn's usage), so every caller's
call passes through the same wrappers.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from xhelio.config import Settings, load_settings
from xhelio.services import Services
from xhelio.session.persist import SessionStore
from xhelio.session.state import Session
from xhelio.tools.context import ToolContext
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.meaning import backfill_meaning
from xhelio.tools.toolset import default_registry
from xhelio.tools.wrappers import Toolset

__all__ = ["Workspace", "open_workspace"]


@dataclass
class Workspace:
    """A live session: its state, tool context, toolset and the store it saves to."""

    session: Session
    context: ToolContext
    funnel: Toolset
    sessions: SessionStore
    ephemeral: bool = False

    def install(self, wrap: Callable[[Toolset], Toolset]) -> None:
        """Wrap the toolset for the rest of the session (e.g. a server's policy)."""
        self.funnel = wrap(self.funnel)

    @contextmanager
    def wrapped(self, wrap: Callable[[Toolset], Toolset]) -> Generator[Toolset]:
        """Wrap the toolset while the block runs (e.g. one turn's usage)."""
        outer = self.funnel
        self.funnel = wrap(outer)
        try:
            yield self.funnel
        finally:
            self.funnel = outer

    def save(self, title: str | None = None) -> None:
        """Persist the session now (an ephemeral one is never saved)."""
        if not self.ephemeral:
            self.sessions.save(self.session, title=title)

    def close(self) -> None:
        """Save (or, if ephemeral, delete) the session and stop background workers."""
        try:
            if self.ephemeral:
                shutil.rmtree(self.session.folder, ignore_errors=True)
            else:
                self.save()
        finally:
            self.context.close()


def open_workspace(
    session_id: str | None = None,
    settings: Settings | None = None,
    resume_latest: bool = False,
    ephemeral: bool = False,
    services: Services | None = None,
) -> Workspace:
    """Open (or create) a session and wire the tool funnel to it.

    An `ephemeral` workspace lives in a temporary folder and is never listed or saved.
    With `services`, the workspace uses that process-wide catalog, sources, session
    store and sandbox (and closing the workspace leaves them open).
    """
    settings = settings or (services.settings if services is not None else load_settings())
    sessions = services.sessions if services is not None else SessionStore(settings)
    if session_id is None and resume_latest:
        session_id = sessions.latest()
    if ephemeral and session_id is None:
        folder = Path(tempfile.mkdtemp(prefix="xhelio-scratch-"))
        session = Session(id=folder.name, folder=folder)
    else:
        session = sessions.open(session_id) if session_id else sessions.create()
    context = ToolContext(session, settings, services)
    registry = default_registry()
    backfill_meaning(session.operations, registry)
    funnel = ToolFunnel(
        registry,
        context,
        session.events,
        operations=session.operations,
        labels=session.store.labels,
    )
    context.funnel = funnel
    return Workspace(session, context, funnel, sessions, ephemeral=ephemeral and session_id is None)
