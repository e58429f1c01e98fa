"""Sessions that survive restarts and concurrent writers: SQLite (WAL) plus parquet files.

Public API (stable; the REST server and MCP use it):

* ``SessionStore(settings)``: the store under ``settings.sessions_dir``; safe to share
  between threads, and many processes may open the same folder at once.
* ``create(id=None) -> Session``, ``open(id)`` (load or create), ``exists(id)``,
  ``load(id) -> Session``, ``save(session, title=None)``, ``list(limit)``, ``latest()``,
  ``events(id)``, ``delete(id)``, and ``lock(id)``: a context manager holding the
  session's lock across threads and processes, for callers whose steps must not
  interleave with another writer's (a chat turn that reads and rewrites ``meta``).

How concurrent writers are kept apart:

* Every data entry is written once, under a new unique file name in ``<id>/data/``,
  and its record (label -> file) is committed in one SQLite transaction. A save writes
  only the entries this `Session` object created or replaced since it was loaded, so two
  writers adding different labels both keep theirs; the same label written twice keeps
  the last commit. A save never deletes a file another writer may read: files no record
  names are removed only once they are older than `_ORPHAN_GRACE_S`.
* Chat history, the operations log and events are appended, each row with its own
  autoincrement id, never rewritten by list position. A `Session` remembers how many of
  each it loaded or saved and appends only the rest.
* ``meta`` is merged key by key (the keys this session set win), in the same
  transaction. ``figure.json`` is replaced atomically (temp file + rename).
* ``sessions.sqlite`` is opened in WAL mode, one short transaction per operation
  (``BEGIN IMMEDIATE`` for writes so read-modify-write steps cannot interleave).

Sessions saved by earlier versions (``data/index.json`` and position-keyed tables) are
read and migrated on first open. Never pickle.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO

from xhelio.config import Settings
from xhelio.data.persist import (
    INDEX_FILE,
    atomic_write_text,
    load_store,
    read_entry,
    write_entry,
)
from xhelio.data.store import DataStore
from xhelio.errors import DataUnavailableError, UserError
from xhelio.migrations import Migration, migrate, sql
from xhelio.session.events import EventBus
from xhelio.session.state import Session, new_session_id

__all__ = ["SessionStore", "SessionStoreError", "SessionSummary"]

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ORPHAN_GRACE_S = 3600.0
"""A data file no record names is deleted only after this long: a reader may hold it."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '', meta TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS turns (
    n INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, n);
CREATE TABLE IF NOT EXISTS oplog (
    n INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS oplog_by_session ON oplog (session_id, n);
CREATE TABLE IF NOT EXISTS eventlog (
    n INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS eventlog_by_session ON eventlog (session_id, n);
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL, label TEXT NOT NULL, file TEXT NOT NULL,
    record TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (session_id, label)
);
"""

_LEGACY_TABLES = (("history", "turns", "message", "seq"), ("operations", "oplog", "record", "seq"))


class SessionStoreError(DataUnavailableError):
    """The session database cannot be opened or written (permissions, damage, full disk)."""


@dataclass(frozen=True)
class SessionSummary:
    """A row of the session list."""

    id: str
    created: str
    updated: str
    title: str
    turns: int


@dataclass
class _Saved:
    """What of a `Session` object is already in the store (kept on the session)."""

    entries: dict[str, object]
    history: int
    operations: int
    events: int
    figure: str | None = None


class _HeldLock:
    """One session's lock in this process: a thread lock plus the file lock under it."""

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.depth = 0
        self.handle: BinaryIO | None = None
        self.users = 0  # threads holding or waiting for it (under _LOCKS_GUARD)


_LOCKS: dict[str, _HeldLock] = {}
"""The locks in use: an entry goes when its last user leaves, so none grows per session."""
_LOCKS_GUARD = threading.Lock()


class SessionStore:
    """Create, save, load, list and delete sessions; safe for concurrent writers."""

    def __init__(self, settings: Settings) -> None:
        self.root = settings.sessions_dir
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionStoreError(
                f"Cannot create the sessions folder {self.root}: {exc.strerror or exc}. "
                "Check its permissions or set XHELIO_HOME to a writable folder."
            ) from exc
        self.db_path = self.root / "sessions.sqlite"
        with self._db(write=True) as db:
            migrate(db, _MIGRATIONS, str(self.db_path))

    @contextmanager
    def _db(self, write: bool = False) -> Generator[sqlite3.Connection, None, None]:
        """One transaction on the database; SQLite failures become a clear error."""
        try:
            db = sqlite3.connect(self.db_path, timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        finally:
            db.close()

    def _error(self, exc: sqlite3.Error) -> SessionStoreError:
        return SessionStoreError(
            f"Cannot use the session database {self.db_path}: {exc}. Check that the file "
            "and its folder are writable (and the disk not full); nothing was changed."
        )

    # lifecycle ---------------------------------------------------------------------------

    def create(self, session_id: str | None = None) -> Session:
        """Start a new, empty session (registered at once so it can be resumed)."""
        sid = _check_id(session_id or new_session_id())
        session = Session(id=sid, folder=self.root / sid)
        now = datetime.now(UTC).isoformat()
        with self._db(write=True) as db:
            db.execute(
                "INSERT OR IGNORE INTO sessions (id, created, updated) VALUES (?, ?, ?)",
                (session.id, now, now),
            )
        _mark_saved(session)
        return session

    def exists(self, session_id: str) -> bool:
        """Whether a session with this id was saved."""
        _check_id(session_id)
        with self._db() as db:
            row = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def open(self, session_id: str) -> Session:
        """Load `session_id`, or create it when it does not exist yet."""
        if not self.exists(session_id):
            self.create(session_id)  # INSERT OR IGNORE: a concurrent creator is harmless
        return self.load(session_id)

    def load(self, session_id: str) -> Session:
        """Restore a saved session: data, figure, history, operations and events."""
        _check_id(session_id)
        with self._db() as db:
            row = db.execute(
                "SELECT created, meta FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                known = ", ".join(s.id for s in self.list(5)) or "none yet"
                raise UserError(f"No saved session '{session_id}'. Recent sessions: {known}.")
            created, meta = row
            history = _column(db, "turns", "message", session_id)
            operations = _column(db, "oplog", "record", session_id)
            events = _column(db, "eventlog", "record", session_id)
            records = [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT record FROM entries WHERE session_id = ? ORDER BY n", (session_id,)
                )
            ]
        folder = self.root / session_id
        store = DataStore()
        legacy = folder / "data" / INDEX_FILE
        if not records and legacy.exists():
            store = load_store(folder / "data")
        for record in records:
            store.put(read_entry(record, folder / "data"))
        last_id = max((int(e.get("id") or 0) for e in events), default=0)
        session = Session(
            id=session_id,
            folder=folder,
            store=store,
            events=EventBus(first_id=last_id + 1),
            created=created,
            meta=json.loads(meta),
        )
        session.history.extend(history)
        session.operations.extend(operations)
        figure = folder / "figure.json"
        if figure.exists():
            session.plot.restore(json.loads(figure.read_text()))
        # Entries read from a legacy folder are not in the table yet: the next save adds them.
        _mark_saved(session, skip_entries=bool(records) or not legacy.exists())
        return session

    def save(self, session: Session, title: str | None = None) -> None:
        """Persist what the session added or changed since it was loaded or last saved.

        Never rewrites what another writer saved: entries other labels, turns,
        operations and events of concurrent writers all survive.
        """
        saved = _saved_of(session)
        data_dir = session.folder / "data"
        changed = [e for e in session.store if saved.entries.get(e.label) is not e]
        written = [(entry, write_entry(entry, data_dir)) for entry in changed]
        figure_text = _figure_text(session)
        figure = session.folder / "figure.json"
        # Only a figure this writer changed is written or removed: a session loaded before
        # another writer plotted must not delete (or overwrite) that writer's figure.
        if figure_text != saved.figure:
            if figure_text is None:
                figure.unlink(missing_ok=True)
            else:
                atomic_write_text(figure, figure_text)
            saved.figure = figure_text
        history = session.history[saved.history :]
        operations = session.operations[saved.operations :]
        events = [e for e in session.events.events() if e.id > saved.events]
        now = datetime.now(UTC).isoformat()
        with self._db(write=True) as db:
            row = db.execute("SELECT meta FROM sessions WHERE id = ?", (session.id,)).fetchone()
            meta: dict[str, Any] = json.loads(row[0]) if row else {}
            meta.update(session.meta)
            db.execute(
                "INSERT INTO sessions (id, created, updated, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET updated = excluded.updated, meta = excluded.meta",
                (session.id, session.created, now, json.dumps(meta, default=str)),
            )
            if title:
                db.execute(
                    "UPDATE sessions SET title = ? WHERE id = ? AND title = ''", (title, session.id)
                )
            number = int(
                db.execute(
                    "SELECT COALESCE(MAX(n), 0) FROM entries WHERE session_id = ?", (session.id,)
                ).fetchone()[0]
            )
            db.executemany(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                [
                    (session.id, entry.label, record["file"], json.dumps(record), number + k)
                    for k, (entry, record) in enumerate(written, start=1)
                ],
            )
            db.executemany(
                "INSERT INTO turns (session_id, message) VALUES (?, ?)",
                [(session.id, json.dumps(m, default=str)) for m in history],
            )
            db.executemany(
                "INSERT INTO oplog (session_id, record) VALUES (?, ?)",
                [(session.id, json.dumps(op, default=str)) for op in operations],
            )
            db.executemany(
                "INSERT INTO eventlog (session_id, record) VALUES (?, ?)",
                [(session.id, json.dumps(e.to_dict(), default=str)) for e in events],
            )
        saved.entries.update({entry.label: entry for entry, _ in written})
        saved.history += len(history)
        saved.operations += len(operations)
        if events:
            saved.events = max(e.id for e in events)
        self._collect_orphans(session.id)

    def delete(self, session_id: str) -> bool:
        """Remove a session's records and folder; return whether it existed."""
        _check_id(session_id)
        with self._db(write=True) as db:
            found = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
            for table in ("turns", "oplog", "eventlog", "entries"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        shutil.rmtree(self.root / session_id, ignore_errors=True)
        return bool(found)

    @contextmanager
    def lock(self, session_id: str) -> Generator[None, None, None]:
        """Hold the session's lock (threads of this process and other processes); re-entrant."""
        _check_id(session_id)
        folder = self.root / session_id
        key = str(folder)
        with _LOCKS_GUARD:
            held = _LOCKS.setdefault(key, _HeldLock())
            held.users += 1
        try:
            with held.thread_lock:
                held.depth += 1
                try:
                    if held.depth == 1:
                        folder.mkdir(parents=True, exist_ok=True)
                        held.handle = (folder / ".lock").open("a+b")
                        _file_lock(held.handle.fileno(), True)
                    yield
                finally:
                    held.depth -= 1
                    if held.depth == 0 and held.handle is not None:
                        _file_lock(held.handle.fileno(), False)
                        held.handle.close()
                        held.handle = None
        finally:
            with _LOCKS_GUARD:
                held.users -= 1
                if held.users == 0:
                    del _LOCKS[key]

    # queries -----------------------------------------------------------------------------

    def list(self, limit: int = 10) -> list[SessionSummary]:
        """Most recently updated sessions first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT s.id, s.created, s.updated, s.title, "
                "(SELECT COUNT(*) FROM turns h WHERE h.session_id = s.id) "
                "FROM sessions s ORDER BY s.updated DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [SessionSummary(*row) for row in rows]

    def latest(self) -> str | None:
        """Id of the most recently updated session, if any."""
        found = self.list(1)
        return found[0].id if found else None

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """Every saved event of a session, in the order they were saved."""
        with self._db() as db:
            return _column(db, "eventlog", "record", session_id)

    def _collect_orphans(self, session_id: str) -> None:
        """Delete data files no record names, once no reader can still hold them."""
        data_dir = self.root / session_id / "data"
        if not data_dir.is_dir():
            return
        with self._db() as db:
            named = {
                str(r[0])
                for r in db.execute("SELECT file FROM entries WHERE session_id = ?", (session_id,))
            }
        cutoff = time.time() - _ORPHAN_GRACE_S
        for path in data_dir.iterdir():
            if path.name in named or not path.is_file() or path.name == INDEX_FILE:
                continue
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                continue  # another writer removed it first


def _column(db: sqlite3.Connection, table: str, column: str, session_id: str) -> list[Any]:
    return [
        json.loads(r[0])
        for r in db.execute(
            f"SELECT {column} FROM {table} WHERE session_id = ? ORDER BY n", (session_id,)
        )
    ]


def _mark_saved(session: Session, skip_entries: bool = True) -> None:
    """Record on `session` that everything it now holds is already in the store."""
    session.saved_state = _Saved(
        entries={e.label: e for e in session.store} if skip_entries else {},
        history=len(session.history),
        operations=len(session.operations),
        events=max((e.id for e in session.events.events()), default=session.events.next_id - 1),
        figure=_figure_text(session),
    )


def _figure_text(session: Session) -> str | None:
    """The session's figure as it is saved to ``figure.json`` (None without a figure)."""
    spec = session.plot.saved()
    return None if spec is None else json.dumps(spec)


def _saved_of(session: Session) -> _Saved:
    state = session.saved_state
    if isinstance(state, _Saved):
        return state
    # A Session built by hand (not by this store): everything in it is new.
    fresh = _Saved(entries={}, history=0, operations=0, events=0)
    session.saved_state = fresh
    return fresh


def _copy_schema_1_rows(db: sqlite3.Connection) -> None:
    """Copy the rows of schema 1's position-keyed tables into the new ones, once."""
    tables = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for old, new, column, order in _LEGACY_TABLES:
        if old in tables:
            db.execute(
                f"INSERT INTO {new} (session_id, {column}) "
                f"SELECT session_id, {column} FROM {old} ORDER BY session_id, {order}"
            )
            db.execute(f"DROP TABLE {old}")
    if "events" in tables:
        db.execute(
            "INSERT INTO eventlog (session_id, record) "
            "SELECT session_id, record FROM events ORDER BY session_id, id"
        )
        db.execute("DROP TABLE events")


_MIGRATIONS = (
    Migration(1, "sessions, turns, oplog, eventlog and entries tables", sql(_SCHEMA)),
    Migration(2, "rows of schema 1's history/operations/events tables copied", _copy_schema_1_rows),
)


def _check_id(session_id: str) -> str:
    if not _SESSION_ID.fullmatch(session_id):
        raise UserError(
            f"Invalid session id {session_id!r}: use letters, digits, '.', '_' or '-' "
            "(at most 64 characters)."
        )
    return session_id


def _file_lock(fd: int, acquire: bool) -> None:
    """Take or release an exclusive lock on an open file (no-op where unsupported)."""
    if os.name != "posix":
        return
    import fcntl  # POSIX only

    fcntl.flock(fd, fcntl.LOCK_EX if acquire else fcntl.LOCK_UN)
