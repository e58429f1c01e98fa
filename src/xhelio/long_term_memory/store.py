"""`MemoryStore`: every long-term memory in one SQLite file under xhelio's home.

`$XHELIO_HOME/memory.sqlite`, migrated with `xhelio.migrations`. Two sessions (or a
session and the CLI) may write at once: the file is in WAL mode, waits up to 30 s for a
lock, and every change is one `BEGIN IMMEDIATE` transaction, so no write is lost or half
done. The FTS5 table `memory_fts` (content and tags; rowid = the memory's rowid) is kept
in step inside the same transactions. An edit never overwrites: it archives the old row
and adds version + 1 whose `supersedes` names it. Imports the standard library,
`xhelio.config`, `xhelio.migrations` and this package.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from xhelio.config import Settings
from xhelio.long_term_memory.model import (
    MAX_CONTENT,
    Memory,
    MemoryRequestError,
    Review,
    check_scopes,
    check_source,
    check_type,
    make_tags,
)
from xhelio.migrations import Migration, migrate, sql

__all__ = ["MemoryStore", "memory_db_path"]

_MEMORIES = """
CREATE TABLE IF NOT EXISTS memories (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
    content TEXT NOT NULL, scopes TEXT NOT NULL, tags TEXT NOT NULL, source TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 0.8, created TEXT NOT NULL, updated TEXT NOT NULL,
    session_id TEXT, access_count INTEGER NOT NULL DEFAULT 0, last_accessed TEXT,
    version INTEGER NOT NULL DEFAULT 1, supersedes TEXT, archived INTEGER NOT NULL DEFAULT 0,
    enabled INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS memories_by_type ON memories (type, archived);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (content, tags)
"""
_REVIEWS = """
CREATE TABLE IF NOT EXISTS memory_reviews (
    memory_id TEXT NOT NULL, stars INTEGER NOT NULL, comment TEXT NOT NULL,
    agent TEXT NOT NULL, session_id TEXT, created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reviews_by_memory ON memory_reviews (memory_id, created)
"""
_VECTORS = """
CREATE TABLE IF NOT EXISTS memory_vectors (
    memory_rowid INTEGER NOT NULL, model TEXT NOT NULL, vector TEXT NOT NULL,
    PRIMARY KEY (memory_rowid, model)
)
"""
MIGRATIONS = (
    Migration(1, "memories and their FTS5 index", sql(_MEMORIES)),
    Migration(2, "memory_reviews: agents' and users' ratings", sql(_REVIEWS)),
    Migration(3, "memory_vectors: embeddings per model (only with an embedder)", sql(_VECTORS)),
)
_COLUMNS = (
    "id, type, content, scopes, tags, source, confidence, created, updated, session_id, "
    "access_count, last_accessed, version, supersedes, archived, enabled, rowid"
)


def memory_db_path(settings: Settings) -> Path:
    """Where the long-term memory of `settings.home` lives."""
    return settings.home / "memory.sqlite"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _content(text: str) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    if not text:
        raise MemoryRequestError("A memory needs some text.")
    if len(text) > MAX_CONTENT:
        raise MemoryRequestError(
            f"A memory holds at most {MAX_CONTENT} characters (this one has {len(text)}); "
            "shorten it."
        )
    return text


class MemoryStore:
    """Add, edit, archive, enable/disable, review and search long-term memories."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self._connect() as db:
            migrate(db, MIGRATIONS, str(path))

    @classmethod
    def open(cls, settings: Settings) -> MemoryStore:
        """The store of `settings.home`."""
        return cls(memory_db_path(settings))

    @contextmanager
    def _connect(self) -> Generator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=30000")
            yield db
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection]:
        """One write transaction, taken with the write lock at once (no upgrade deadlock)."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- reading -------------------------------------------------------------------------

    def _rows(
        self, db: sqlite3.Connection, where: str = "1", args: Sequence[Any] = ()
    ) -> list[Memory]:
        rows = db.execute(f"SELECT {_COLUMNS} FROM memories WHERE {where}", args).fetchall()
        reviews = _latest_reviews(db, [str(r[0]) for r in rows])
        return [_memory(row, reviews.get(str(row[0]))) for row in rows]

    def get(self, memory_id: str) -> Memory:
        """The memory `memory_id` (archived ones too); `MemoryRequestError` when unknown."""
        with self._connect() as db:
            found = self._rows(db, "id = ?", (memory_id.strip(),))
        if not found:
            raise MemoryRequestError(
                f"No memory {memory_id!r}; `xhelio memory list` shows the ids."
            )
        return found[0]

    def list(
        self,
        *,
        types: Iterable[str] = (),
        scope: str | None = None,
        include_archived: bool = False,
        include_disabled: bool = True,
    ) -> list[Memory]:
        """Memories newest first, filtered by type, one scope, archiving and enabling."""
        clauses = ["1"]
        if not include_archived:
            clauses.append("archived = 0")
        if not include_disabled:
            clauses.append("enabled = 1")
        wanted = [check_type(t) for t in types]
        if wanted:
            clauses.append(f"type IN ({', '.join('?' * len(wanted))})")
        with self._connect() as db:
            found = self._rows(
                db, " AND ".join(clauses) + " ORDER BY updated DESC, rowid DESC", wanted
            )
        if scope is not None:
            (wanted_scope,) = check_scopes(scope)
            found = [m for m in found if wanted_scope in m.scopes]
        return found

    def history(self, memory_id: str) -> list[Memory]:
        """`memory_id` and the versions it supersedes, newest first."""
        chain = [self.get(memory_id)]
        while chain[-1].supersedes:
            try:
                chain.append(self.get(chain[-1].supersedes or ""))
            except MemoryRequestError:
                break
        return chain

    def lexical(self, match: str, limit: int) -> list[tuple[str, float]]:
        """(id, bm25) of active memories matching the FTS5 query `match`, best first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT m.id, bm25(memory_fts) AS score FROM memory_fts JOIN memories m "
                "ON m.rowid = memory_fts.rowid WHERE memory_fts MATCH ? AND m.archived = 0 "
                "ORDER BY score LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    def vectors(self, model: str) -> dict[str, list[float]]:
        """The stored embeddings of active memories made by `model`, by memory id."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT m.id, v.vector FROM memory_vectors v JOIN memories m "
                "ON m.rowid = v.memory_rowid WHERE v.model = ? AND m.archived = 0",
                (model,),
            ).fetchall()
        return {str(r[0]): [float(x) for x in json.loads(r[1])] for r in rows}

    def save_vectors(self, model: str, vectors: dict[str, list[float]]) -> None:
        """Keep the embeddings `model` made of the memories `vectors` names."""
        with self._write() as db:
            for memory_id, vector in vectors.items():
                db.execute(
                    "INSERT OR REPLACE INTO memory_vectors (memory_rowid, model, vector) "
                    "SELECT rowid, ?, ? FROM memories WHERE id = ?",
                    (model, json.dumps(vector), memory_id),
                )

    def counts(self) -> dict[str, Any]:
        """Active memories per type, and how many are disabled and archived."""
        with self._connect() as db:
            per_type = dict(
                db.execute(
                    "SELECT type, COUNT(*) FROM memories WHERE archived = 0 GROUP BY type"
                ).fetchall()
            )
            disabled = db.execute(
                "SELECT COUNT(*) FROM memories WHERE archived = 0 AND enabled = 0"
            ).fetchone()[0]
            archived = db.execute("SELECT COUNT(*) FROM memories WHERE archived = 1").fetchone()[0]
        return {"by_type": per_type, "disabled": int(disabled), "archived": int(archived)}

    # -- writing -------------------------------------------------------------------------

    def add(
        self,
        content: str,
        type: str,
        scopes: object = ("generic",),
        *,
        tags: Iterable[str] | None = None,
        source: str = "user_explicit",
        confidence: float = 0.8,
        session_id: str | None = None,
        supersedes: Memory | None = None,
    ) -> Memory:
        """Store a new memory (or the next version of `supersedes`, which is archived)."""
        text = _content(content)
        kind = check_type(type)
        where = check_scopes(scopes)
        keywords = tuple(dict.fromkeys(t.strip() for t in tags if t.strip())) if tags else ()
        keywords = keywords or make_tags(text, where)
        now = _now()
        memory = Memory(
            id=secrets.token_hex(4),
            type=kind,
            content=text,
            scopes=where,
            tags=keywords,
            source=check_source(source),
            confidence=min(max(float(confidence), 0.0), 1.0),
            created=now,
            updated=now,
            session_id=session_id,
            version=supersedes.version + 1 if supersedes else 1,
            supersedes=supersedes.id if supersedes else None,
            enabled=supersedes.enabled if supersedes else True,  # an edit keeps it off
        )
        with self._write() as db:
            if supersedes is not None:
                current = db.execute(
                    "SELECT archived FROM memories WHERE id = ?", (supersedes.id,)
                ).fetchone()
                if current is None or current[0]:
                    raise MemoryRequestError(
                        f"Memory {supersedes.id} was changed or removed meanwhile; edit the "
                        "current version (see `xhelio memory list`)."
                    )
                db.execute("UPDATE memories SET archived = 1 WHERE id = ?", (supersedes.id,))
            cursor = db.execute(
                "INSERT INTO memories (id, type, content, scopes, tags, source, confidence, "
                "created, updated, session_id, version, supersedes, enabled) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    memory.id,
                    memory.type,
                    memory.content,
                    json.dumps(memory.scopes),
                    json.dumps(memory.tags),
                    memory.source,
                    memory.confidence,
                    now,
                    now,
                    session_id,
                    memory.version,
                    memory.supersedes,
                    int(memory.enabled),
                ),
            )
            db.execute(
                "INSERT INTO memory_fts (rowid, content, tags) VALUES (?, ?, ?)",
                (cursor.lastrowid, memory.content, " ".join(memory.tags)),
            )
        return memory

    def edit(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        scopes: object = None,
        tags: Iterable[str] | None = None,
        type: str | None = None,
        source: str | None = None,
    ) -> Memory:
        """A new version of `memory_id` with the given changes; the old one is archived."""
        old = self.get(memory_id)
        if old.archived:
            raise MemoryRequestError(
                f"Memory {old.id} is archived (an older version); edit the current one."
            )
        new_content = content if content is not None else old.content
        new_scopes = scopes if scopes is not None else old.scopes
        new_tags = tags if tags is not None else (old.tags if content is None else None)
        return self.add(
            new_content,
            type or old.type,
            new_scopes,
            tags=new_tags,
            source=source or old.source,
            confidence=old.confidence,
            session_id=old.session_id,
            supersedes=old,
        )

    def _set(self, memory_id: str, column: str, value: int) -> Memory:
        self.get(memory_id)
        with self._write() as db:
            db.execute(
                f"UPDATE memories SET {column} = ?, updated = ? WHERE id = ?",
                (value, _now(), memory_id.strip()),
            )
        return self.get(memory_id)

    def set_enabled(self, memory_id: str, enabled: bool) -> Memory:
        """Switch a memory on or off (off: never injected nor searched by agents)."""
        return self._set(memory_id, "enabled", int(enabled))

    def archive(self, memory_id: str) -> Memory:
        """Retire a memory, keeping it for history."""
        return self._set(memory_id, "archived", 1)

    def delete(self, memory_id: str) -> Memory:
        """Remove a memory, its index entry, embeddings and reviews for good."""
        memory = self.get(memory_id)
        with self._write() as db:
            row = db.execute("SELECT rowid FROM memories WHERE id = ?", (memory.id,)).fetchone()
            if row is not None:
                db.execute("DELETE FROM memory_fts WHERE rowid = ?", (row[0],))
                db.execute("DELETE FROM memory_vectors WHERE memory_rowid = ?", (row[0],))
            db.execute("DELETE FROM memory_reviews WHERE memory_id = ?", (memory.id,))
            db.execute("DELETE FROM memories WHERE id = ?", (memory.id,))
        return memory

    def touch(self, memory_ids: Sequence[str]) -> None:
        """Count one more use (injection) of each memory."""
        if not memory_ids:
            return
        with self._write() as db:
            db.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed = ? "
                "WHERE id = ?",
                [(_now(), i) for i in memory_ids],
            )

    def review(
        self,
        memory_id: str,
        stars: int,
        comment: str,
        agent: str,
        session_id: str | None = None,
    ) -> Review:
        """Record a rating (5 prevented a mistake ... 1 misleading)."""
        memory = self.get(memory_id)
        if not 1 <= int(stars) <= 5:
            raise MemoryRequestError("Stars go from 1 (misleading) to 5 (prevented a mistake).")
        review = Review(int(stars), comment.strip()[:500], agent, session_id, _now())
        with self._write() as db:
            db.execute(
                "INSERT INTO memory_reviews (memory_id, stars, comment, agent, session_id, "
                "created) VALUES (?, ?, ?, ?, ?, ?)",
                (memory.id, review.stars, review.comment, agent, session_id, review.created),
            )
        return review


def _latest_reviews(db: sqlite3.Connection, ids: list[str]) -> dict[str, Review]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = db.execute(
        "SELECT memory_id, stars, comment, agent, session_id, created FROM memory_reviews "
        f"WHERE memory_id IN ({marks}) ORDER BY created, rowid",
        ids,
    ).fetchall()
    return {str(r[0]): Review(int(r[1]), str(r[2]), str(r[3]), r[4], str(r[5])) for r in rows}


def _memory(row: Sequence[Any], review: Review | None) -> Memory:
    return Memory(
        id=str(row[0]),
        type=str(row[1]),
        content=str(row[2]),
        scopes=tuple(json.loads(row[3])),
        tags=tuple(json.loads(row[4])),
        source=str(row[5]),
        confidence=float(row[6]),
        created=str(row[7]),
        updated=str(row[8]),
        session_id=row[9],
        access_count=int(row[10]),
        last_accessed=row[11],
        version=int(row[12]),
        supersedes=row[13],
        archived=bool(row[14]),
        enabled=bool(row[15]),
        review=review,
    )
