"""Numbered schema migrations for every SQLite store, recorded in one version table.

A store lists its `Migration`s (versions 1, 2, 3... in order) and calls `migrate` each time
it opens its database. The table `schema_migrations` keeps one row per applied migration
(version, what it did, when). The pending ones run in one `BEGIN IMMEDIATE` transaction:
two processes opening the same file at once apply each migration exactly once, and a
migration that fails leaves the file as it was.

A file written before the version table existed has no rows, so every migration runs on
it: the first ones of each store accept what such files hold (`CREATE ... IF NOT EXISTS`,
a column added only when it is missing), so they are adopted as they are, nothing lost.
A file whose table records a version this code does not know was written by a newer
xhelio: `migrate` refuses it instead of guessing. Imports the standard library and
`xhelio.errors` only, so every layer may use it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from xhelio.errors import XhelioError

__all__ = ["Migration", "SchemaVersionError", "applied_versions", "columns", "migrate", "sql"]

_TABLE = "schema_migrations"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} "
    "(version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied TEXT NOT NULL)"
)

Step = Callable[[sqlite3.Connection], None]


class SchemaVersionError(XhelioError):
    """The database was written by a newer xhelio (its schema version is unknown here)."""


@dataclass(frozen=True)
class Migration:
    """One numbered change of a store's schema.

    Attributes:
        version: Its number: 1 for the first, then each next one by one.
        description: What it changes, kept in the version table.
        apply: Runs the change on the open connection (inside the migration transaction;
            it must not commit).
    """

    version: int
    description: str
    apply: Step


def sql(script: str) -> Step:
    """A step running the `;`-separated statements of `script` one by one.

    One at a time because `executescript` would commit the migration transaction. The
    statements must not contain `;` themselves (no triggers).
    """
    statements = [s.strip() for s in script.split(";") if s.strip()]

    def run(db: sqlite3.Connection) -> None:
        for statement in statements:
            db.execute(statement)

    return run


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The column names of `table` (empty when there is no such table)."""
    return {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}


def applied_versions(db: sqlite3.Connection) -> list[int]:
    """The versions recorded in the file's version table, in order (none: empty)."""
    if not columns(db, _TABLE):
        return []
    return [int(r[0]) for r in db.execute(f"SELECT version FROM {_TABLE} ORDER BY version")]


def _check(migrations: Sequence[Migration]) -> None:
    numbers = [m.version for m in migrations]
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"migrations must be numbered 1, 2, 3... in order, not {numbers}")


def _refuse_newer(done: list[int], migrations: Sequence[Migration], what: str) -> None:
    newest = max(done, default=0)
    if newest > len(migrations):
        raise SchemaVersionError(
            f"The database {what or 'file'} has schema version {newest}, newer than this "
            f"xhelio knows ({len(migrations)}): it was written by a newer xhelio. Upgrade "
            "xhelio, or point XHELIO_HOME at another folder."
        )


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration], what: str = "") -> int:
    """Apply the migrations `db` has not had yet; return its schema version after.

    An up-to-date file is only read. Otherwise the migrations run in the caller's
    transaction when one is open, else in their own `BEGIN IMMEDIATE` transaction,
    committed at the end (rolled back, and the error raised, on failure).

    Args:
        db: The open database.
        migrations: The store's migrations, numbered from 1.
        what: The database's name for messages, e.g. the file path.

    Raises:
        SchemaVersionError: The file records a version newer than the last migration.
        sqlite3.Error: A migration failed; nothing of this call was kept.
    """
    _check(migrations)
    if set(applied_versions(db)) >= {m.version for m in migrations}:
        _refuse_newer(applied_versions(db), migrations, what)
        return len(migrations)  # up to date: no write lock (the file may be read-only)
    own = not db.in_transaction
    if own:
        db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(_CREATE)
        done = applied_versions(db)
        _refuse_newer(done, migrations, what)
        for migration in migrations:
            if migration.version in done:
                continue
            migration.apply(db)
            db.execute(
                f"INSERT INTO {_TABLE} (version, description, applied) VALUES (?, ?, ?)",
                (migration.version, migration.description, datetime.now(UTC).isoformat()),
            )
    except BaseException:
        if own:
            db.execute("ROLLBACK")
        raise
    if own:
        db.execute("COMMIT")
    return len(migrations)
