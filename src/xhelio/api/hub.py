"""`SessionHub`: the open sessions of one process, each with its own lock and cancel switch.

The Python `Assistant`, the REST server and the MCP server all reach sessions through a hub.
A session is opened (loaded from the session store) on first use and kept open while it is
used; the least recently used idle sessions are closed when more than `max_open` are open.
Each open session has a lock, so one session runs one request at a time while other sessions
run in parallel: nothing here holds a process-wide lock while a request runs.

Ids of sessions the hub creates are unguessable (128 random bits): a session is reached only
by its id.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xhelio.errors import UserError
from xhelio.services import Services
from xhelio.session.db import wal_connection
from xhelio.session.persist import SessionStore, SessionSummary
from xhelio.tools.workspace import Workspace, open_workspace
from xhelio.tools.wrappers import Policy, PolicyToolset

__all__ = ["OpenSession", "SessionBusyError", "SessionHub", "SessionNotFoundError", "new_secret_id"]


class SessionNotFoundError(UserError):
    """No session has this id (or it was deleted)."""


class SessionBusyError(UserError):
    """The session is running another request; one request per session at a time."""


def new_secret_id() -> str:
    """An unguessable session id: 's' and 32 hex digits (128 random bits)."""
    return "s" + secrets.token_hex(16)


@dataclass
class OpenSession:
    """One open session: its workspace, the lock a request holds, and its cancel switch."""

    id: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    workspace: Workspace | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    last_used: float = field(default_factory=time.monotonic)
    state: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def busy(self) -> bool:
        """Whether a request is running in this session now."""
        return self.lock.locked()


class SessionHub:
    """Open, lock, cancel, rename, delete and list the sessions of one process."""

    def __init__(
        self,
        services: Services,
        max_open: int = 128,
        policy: Callable[[Path], Policy] | None = None,
    ) -> None:
        """Create a hub over the session store of the process's `services`.

        Args:
            services: The process's settings, catalog, sources, session store and sandbox.
            max_open: How many sessions stay open before idle ones are closed.
            policy: Builds the funnel policy of each opened session from its folder.
        """
        self.services = services
        self.settings = services.settings
        self.policy = policy
        self.store: SessionStore = services.sessions
        self.max_open = max_open
        self._open: dict[str, OpenSession] = {}
        self._lock = threading.Lock()
        self._closed = False

    # ids and listing ---------------------------------------------------------------------

    def create(self, title: str | None = None) -> str:
        """Create an empty session with an unguessable id and return the id."""
        sid = new_secret_id()
        self.store.create(sid)
        if title:
            self.rename(sid, title)
        return sid

    def exists(self, session_id: str) -> bool:
        """Whether `session_id` names a saved session (a malformed id never does)."""
        try:
            return self.store.exists(session_id)
        except UserError:
            return False

    def require(self, session_id: str) -> None:
        """Raise `SessionNotFoundError` unless the session exists."""
        if not self.exists(session_id):
            raise SessionNotFoundError(f"No session '{session_id}'. Create one first.")

    def list(self, limit: int = 50) -> list[SessionSummary]:
        """Most recently updated sessions first."""
        return self.store.list(limit)

    def summary(self, session_id: str) -> SessionSummary:
        """The list row of one session."""
        self.require(session_id)
        with wal_connection(self.store.db_path) as db:
            row = db.execute(
                "SELECT s.id, s.created, s.updated, s.title, "
                "(SELECT COUNT(*) FROM turns h WHERE h.session_id = s.id) "
                "FROM sessions s WHERE s.id = ?",
                (session_id,),
            ).fetchone()
        return SessionSummary(*row)

    def rename(self, session_id: str, title: str) -> None:
        """Set the title of a session."""
        self.require(session_id)
        with wal_connection(self.store.db_path) as db:
            db.execute("UPDATE sessions SET title = ? WHERE id = ?", (title[:200], session_id))

    def delete(self, session_id: str) -> None:
        """Delete a session: its records and its folder. Refused while it runs a request."""
        self.require(session_id)
        with self._lock:
            entry = self._open.get(session_id)
            if entry is not None and entry.busy:
                raise SessionBusyError(f"Session '{session_id}' is running a request; cancel it.")
            self._open.pop(session_id, None)
        if entry is not None and entry.workspace is not None:
            entry.workspace.context.close()
        self.store.delete(session_id)

    # open sessions -----------------------------------------------------------------------

    def peek(self, session_id: str) -> OpenSession | None:
        """The open session with this id, if it is open (never opens it)."""
        with self._lock:
            return self._open.get(session_id)

    def _entry(self, session_id: str) -> OpenSession:
        if self._closed:
            raise UserError("The assistant was closed; create a new one.")
        self.require(session_id)
        with self._lock:
            entry = self._open.get(session_id)
            if entry is None:
                entry = OpenSession(session_id)
                self._open[session_id] = entry
            entry.last_used = time.monotonic()
            return entry

    @contextmanager
    def checkout(self, session_id: str, wait: bool = True) -> Generator[OpenSession]:
        """Hold a session for one request: open it if needed and take its lock.

        Args:
            session_id: The session.
            wait: Wait for a running request to end (True) or raise `SessionBusyError`.

        Raises:
            SessionNotFoundError: No such session.
            SessionBusyError: `wait` is False and the session is running a request.
        """
        entry = self._entry(session_id)
        if not entry.lock.acquire(blocking=wait):
            raise SessionBusyError(
                f"Session '{session_id}' is already running a request; wait for it or cancel it."
            )
        try:
            if entry.workspace is None:
                entry.workspace = self._open_workspace(session_id)
            entry.cancel = threading.Event()
            yield entry
        finally:
            entry.last_used = time.monotonic()
            entry.lock.release()
            self._evict()

    def _open_workspace(self, session_id: str) -> Workspace:
        workspace = open_workspace(session_id, services=self.services)
        if self.policy is not None:
            # A server (it sets a policy) has many clients and no notion of who they are:
            # proven operations stay within the session that proved them.
            policy = self.policy(workspace.session.folder)
            workspace.install(lambda inner: PolicyToolset(inner, policy))
            workspace.context.library_user = f"session:{session_id}"
        return workspace

    def view(self, session_id: str) -> Workspace:
        """The session's workspace for reading, opened if needed; takes no request lock.

        Reads (entries, figure, events) go on while a request runs in the session.
        """
        entry = self._entry(session_id)
        if entry.workspace is None:
            with entry.lock:
                if entry.workspace is None:
                    entry.workspace = self._open_workspace(session_id)
        return entry.workspace

    def cancel(self, session_id: str) -> bool:
        """Ask the session's running request to stop; False when nothing was running."""
        self.require(session_id)
        entry = self.peek(session_id)
        if entry is None or not entry.busy:
            return False
        entry.cancel.set()
        return True

    def _evict(self) -> None:
        with self._lock:
            if len(self._open) <= self.max_open:
                return
            idle = sorted((e for e in self._open.values() if not e.busy), key=lambda e: e.last_used)
            doomed = idle[: len(self._open) - self.max_open]
            for entry in doomed:
                self._open.pop(entry.id, None)
        for entry in doomed:
            if entry.workspace is not None:
                entry.workspace.close()

    @property
    def open_count(self) -> int:
        """How many sessions are open now."""
        with self._lock:
            return len(self._open)

    def close(self) -> None:
        """Save and close every open session (requests still running are cancelled)."""
        with self._lock:
            self._closed = True
            entries = list(self._open.values())
            self._open.clear()
        for entry in entries:
            entry.cancel.set()
            if entry.workspace is not None:
                with entry.lock:
                    entry.workspace.close()
