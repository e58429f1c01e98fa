"""`Workspace`: a session with its tool context and funnel, ready to run tools.

This is how every interface (CLI, web, MCP, agents) gets a working session.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from xhelio.config import Settings, load_settings
from xhelio.services import Services
from xhelio.session.persist import SessionStore
from xhelio.session.state import Session
from xhelio.tools.context import ToolContext
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.toolset import default_registry

__all__ = ["Workspace", "open_workspace"]


@dataclass
class Workspace:
    """A live session: its state, tool context, funnel and the store it saves to."""

    session: Session
    context: ToolContext
    funnel: ToolFunnel
    sessions: SessionStore
    ephemeral: bool = False

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
    funnel = ToolFunnel(default_registry(), context, session.events, operations=session.operations)
    return Workspace(session, context, funnel, sessions, ephemeral=ephemeral and session_id is None)
