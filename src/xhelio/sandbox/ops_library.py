"""Library of proven custom operations, so the model can reuse code that worked.

Successful `custom_operation` code of 5+ meaningful lines is kept (short operations such
as a magnitude are cheap to regenerate). Entries are deduplicated by normalised
description (a repeat bumps `use_count`), capped (default 50) with least-used eviction,
ties broken by the oldest `last_used_at`; the entry just recorded is never the one
evicted. A description containing `[from <id>]` marks reuse of that entry and bumps it.
Stored in SQLite (WAL) at `settings.home / "ops_library.sqlite"`; never pickle.
Imports nothing from xhelio but `config`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from xhelio.config import Settings

__all__ = ["MIN_CODE_LINES", "OpsEntry", "OpsLibrary", "normalize_description"]

MIN_CODE_LINES = 5
DEFAULT_MAX_ENTRIES = 50
_REUSE_MARK = re.compile(r"\[from\s+([0-9a-f]{6,32})\]", re.IGNORECASE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ops (
    id TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    normalized TEXT NOT NULL UNIQUE,
    code TEXT NOT NULL,
    source_labels TEXT NOT NULL,
    use_count INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT NOT NULL,
    last_used_seq INTEGER NOT NULL
)
"""


@dataclass(frozen=True)
class OpsEntry:
    """One saved operation: its code, what it does, and how often it was used."""

    id: str
    description: str
    code: str
    source_labels: tuple[str, ...]
    use_count: int
    created_at: str
    last_used_at: str


def normalize_description(description: str) -> str:
    """Lower-case words only, without reuse marks, so rephrasings of case/space match."""
    text = _REUSE_MARK.sub(" ", description.lower())
    return " ".join(re.findall(r"[a-z0-9]+", text))


def _meaningful_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip() and not line.strip().startswith("#"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _entry(row: sqlite3.Row) -> OpsEntry:
    return OpsEntry(
        id=row["id"],
        description=row["description"],
        code=row["code"],
        source_labels=tuple(json.loads(row["source_labels"])),
        use_count=int(row["use_count"]),
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
    )


class OpsLibrary:
    """The persistent library of proven custom-operation code."""

    def __init__(self, settings: Settings, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.path = settings.home / "ops_library.sqlite"
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)

    @contextmanager
    def _connect(self) -> Generator[sqlite3.Connection, None, None]:
        """A connection committed on success, rolled back on error, always closed."""
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            with db:
                yield db
        finally:
            db.close()

    def record(self, code: str, description: str, source_labels: list[str]) -> OpsEntry | None:
        """Save successful code; return its entry, or None when it is too short to keep."""
        reused = _REUSE_MARK.search(description)
        if reused:
            self.bump(reused.group(1).lower())
        if _meaningful_lines(code) < MIN_CODE_LINES:
            return None
        normalized = normalize_description(description)
        if not normalized:
            return None
        with self._lock, self._connect() as db:
            row = db.execute("SELECT id FROM ops WHERE normalized = ?", (normalized,)).fetchone()
            if row is not None:
                self._touch(db, row["id"])
                entry_id = str(row["id"])
            else:
                entry_id = uuid.uuid4().hex[:12]
                now = _now()
                db.execute(
                    "INSERT INTO ops VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)",
                    (
                        entry_id,
                        _REUSE_MARK.sub("", description).strip(),
                        normalized,
                        code,
                        json.dumps([str(label) for label in source_labels]),
                        now,
                        now,
                        self._next_seq(db),
                    ),
                )
                self._evict(db, keep=entry_id)
            found = db.execute("SELECT * FROM ops WHERE id = ?", (entry_id,)).fetchone()
        return _entry(found)

    def top(self, n: int = 20) -> list[OpsEntry]:
        """The most used entries (most recently used first among equals)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT * FROM ops ORDER BY use_count DESC, last_used_seq DESC LIMIT ?",
                (max(n, 0),),
            ).fetchall()
        return [_entry(row) for row in rows]

    def bump(self, entry_id: str) -> OpsEntry | None:
        """Count one more use of an entry; None when no such entry exists."""
        with self._lock, self._connect() as db:
            if not self._touch(db, entry_id):
                return None
            row = db.execute("SELECT * FROM ops WHERE id = ?", (entry_id,)).fetchone()
        return _entry(row)

    def get(self, entry_id: str) -> OpsEntry | None:
        """One entry by id, or None."""
        with self._connect() as db:
            row = db.execute("SELECT * FROM ops WHERE id = ?", (entry_id,)).fetchone()
        return None if row is None else _entry(row)

    def _next_seq(self, db: sqlite3.Connection) -> int:
        (current,) = db.execute("SELECT COALESCE(MAX(last_used_seq), 0) FROM ops").fetchone()
        return int(current) + 1

    def _touch(self, db: sqlite3.Connection, entry_id: str) -> bool:
        cursor = db.execute(
            "UPDATE ops SET use_count = use_count + 1, last_used_at = ?, last_used_seq = ? "
            "WHERE id = ?",
            (_now(), self._next_seq(db), entry_id),
        )
        return cursor.rowcount > 0

    def _evict(self, db: sqlite3.Connection, keep: str) -> None:
        (count,) = db.execute("SELECT COUNT(*) FROM ops").fetchone()
        excess = int(count) - self.max_entries
        if excess > 0:
            db.execute(
                "DELETE FROM ops WHERE id IN (SELECT id FROM ops WHERE id != ? "
                "ORDER BY use_count ASC, last_used_seq ASC LIMIT ?)",
                (keep, excess),
            )
