"""`wal_connection`: one short SQLite transaction in WAL mode, closed afterwards.

Every embedded store (sessions, plans) opens its database this way, so concurrent readers
never block a writer and each `with` block commits or rolls back as one transaction.
Imports the standard library only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["wal_connection"]


@contextmanager
def wal_connection(path: Path) -> Generator[sqlite3.Connection, None, None]:
    """Open `path` in WAL mode and run the block as one transaction."""
    db = sqlite3.connect(path, timeout=30)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        with db:
            yield db
    finally:
        db.close()
