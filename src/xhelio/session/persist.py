"""Sessions that survive restarts: SQLite (WAL) for records, parquet for data.

Layout under `settings.sessions_dir`: `sessions.sqlite` holds sessions, their chat
history, operations log and events; each session folder holds `data/` (the DataStore,
saved atomically by `xhelio.data.persist`), `figure.json` and `exports/`. Never pickle.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from xhelio.config import Settings
from xhelio.data.persist import load_store, save_store
from xhelio.errors import UserError
from xhelio.session.db import wal_connection
from xhelio.session.events import EventBus
from xhelio.session.state import Session, new_session_id

__all__ = ["SessionStore", "SessionSummary"]

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '', meta TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS history (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS operations (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL, id INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
"""


@dataclass(frozen=True)
class SessionSummary:
    """A row of the session list."""

    id: str
    created: str
    updated: str
    title: str
    turns: int


class SessionStore:
    """Create, save, load and list sessions."""

    def __init__(self, settings: Settings) -> None:
        self.root = settings.sessions_dir
        self.root.mkdir(parents=True, exist_ok=True)
        self.db_path = self.root / "sessions.sqlite"
        with self._db() as db:
            db.executescript(_SCHEMA)

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return wal_connection(self.db_path)

    def create(self, session_id: str | None = None) -> Session:
        """Start a new, empty session (registered at once so it can be resumed)."""
        sid = _check_id(session_id or new_session_id())
        session = Session(id=sid, folder=self.root / sid)
        now = datetime.now(UTC).isoformat()
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO sessions (id, created, updated) VALUES (?, ?, ?)",
                (session.id, now, now),
            )
        return session

    def exists(self, session_id: str) -> bool:
        """Whether a session with this id was saved."""
        _check_id(session_id)
        with self._db() as db:
            row = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def open(self, session_id: str) -> Session:
        """Load `session_id`, or create it when it does not exist yet."""
        return self.load(session_id) if self.exists(session_id) else self.create(session_id)

    def load(self, session_id: str) -> Session:
        """Restore a saved session: data, figure, history, operations and events."""
        if not self.exists(session_id):
            known = ", ".join(s.id for s in self.list(5)) or "none yet"
            raise UserError(f"No saved session '{session_id}'. Recent sessions: {known}.")
        folder = self.root / session_id
        data_dir = folder / "data"
        store = load_store(data_dir) if data_dir.exists() else None
        with self._db() as db:
            history = [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT message FROM history WHERE session_id = ? ORDER BY seq", (session_id,)
                )
            ]
            operations = [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT record FROM operations WHERE session_id = ? ORDER BY seq", (session_id,)
                )
            ]
            events = [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT record FROM events WHERE session_id = ? ORDER BY id", (session_id,)
                )
            ]
            created, meta = db.execute(
                "SELECT created, meta FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        bus = EventBus(first_id=(events[-1]["id"] + 1) if events else 1)
        session = Session(
            id=session_id, folder=folder, events=bus, created=created, meta=json.loads(meta)
        )
        if store is not None:
            session.store = store
            session.plot.store = store
        session.history.extend(history)
        session.operations.extend(operations)
        figure = folder / "figure.json"
        if figure.exists():
            session.plot.restore(json.loads(figure.read_text()))
        return session

    def save(self, session: Session, title: str | None = None) -> None:
        """Persist everything the session holds; a crash mid-save keeps the last state."""
        save_store(session.store, session.folder / "data")
        spec = session.plot.saved()
        figure = session.folder / "figure.json"
        if spec is None:
            figure.unlink(missing_ok=True)
        else:
            _atomic_write(figure, json.dumps(spec))
        now = datetime.now(UTC).isoformat()
        with self._db() as db:
            db.execute(
                "INSERT INTO sessions (id, created, updated, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET updated = excluded.updated, meta = excluded.meta",
                (session.id, session.created, now, json.dumps(session.meta, default=str)),
            )
            if title:
                db.execute(
                    "UPDATE sessions SET title = ? WHERE id = ? AND title = ''", (title, session.id)
                )
            db.executemany(
                "INSERT OR REPLACE INTO history VALUES (?, ?, ?)",
                [(session.id, i, json.dumps(m)) for i, m in enumerate(session.history)],
            )
            db.executemany(
                "INSERT OR REPLACE INTO operations VALUES (?, ?, ?)",
                [
                    (session.id, i, json.dumps(op, default=str))
                    for i, op in enumerate(session.operations)
                ],
            )
            db.executemany(
                "INSERT OR IGNORE INTO events VALUES (?, ?, ?)",
                [
                    (session.id, e.id, json.dumps(e.to_dict(), default=str))
                    for e in session.events.events()
                ],
            )

    def list(self, limit: int = 10) -> list[SessionSummary]:
        """Most recently updated sessions first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT s.id, s.created, s.updated, s.title, "
                "(SELECT COUNT(*) FROM history h WHERE h.session_id = s.id) "
                "FROM sessions s ORDER BY s.updated DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [SessionSummary(*row) for row in rows]

    def latest(self) -> str | None:
        """Id of the most recently updated session, if any."""
        found = self.list(1)
        return found[0].id if found else None

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """Every saved event of a session, in order."""
        with self._db() as db:
            return [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT record FROM events WHERE session_id = ? ORDER BY id", (session_id,)
                )
            ]


def _check_id(session_id: str) -> str:
    if not _SESSION_ID.fullmatch(session_id):
        raise UserError(
            f"Invalid session id {session_id!r}: use letters, digits, '.', '_' or '-' "
            "(at most 64 characters)."
        )
    return session_id


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
