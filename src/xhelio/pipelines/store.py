"""`PipelineStore`: saved pipelines in the state folder, searchable, grouped into families.

Layout under `settings.home / "pipelines"`: one JSON document per pipeline (`pl_*.json`,
written atomically: a crash mid-save leaves the previous file) and `index.sqlite` (WAL),
a metadata index rebuilt from the documents whenever its schema version changes, so the
JSON files are the source of truth. Search covers names, descriptions, step intents,
datasets and missions; vanilla pipelines (fewer than 3 fetches, no transform) are saved
and listed but not indexed for search. Pipelines with the same appropriation fingerprint
(SHA-256 of their data logic) form one family whose variants search returns together.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
import tempfile
import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.migrations import Migration, migrate, sql
from xhelio.pipelines.model import Pipeline
from xhelio.session.db import wal_connection

__all__ = ["INDEX_VERSION", "FamilyHit", "PipelineRow", "PipelineStore"]

INDEX_VERSION = 1
_ID = re.compile(r"pl_[A-Za-z0-9_-]{1,64}")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pipelines (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL,
    created TEXT NOT NULL, family_id TEXT NOT NULL, parent_id TEXT,
    vanilla INTEGER NOT NULL, steps INTEGER NOT NULL,
    missions TEXT NOT NULL, datasets TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pipelines_by_family ON pipelines (family_id, created);
"""
_MIGRATIONS = (Migration(1, "meta and pipelines tables", sql(_SCHEMA)),)


@dataclass(frozen=True)
class PipelineRow:
    """What the index knows about one saved pipeline."""

    id: str
    name: str
    description: str
    created: str
    family_id: str
    parent_id: str | None
    vanilla: bool
    steps: int
    missions: list[str]
    datasets: list[str]

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON (`indexed` is false for vanilla pipelines)."""
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "created": self.created,
            "family_id": self.family_id,
            "parent_id": self.parent_id,
            "indexed": not self.vanilla,
            "steps": self.steps,
            "missions": self.missions,
            "datasets": self.datasets,
        }


@dataclass
class FamilyHit:
    """A search result: one family of variants sharing the same data logic."""

    family_id: str
    score: float
    variants: list[PipelineRow] = field(default_factory=list[PipelineRow])

    def to_dict(self) -> dict[str, Any]:
        """The family as JSON: its first pipeline's name and every variant."""
        return {
            "family_id": self.family_id,
            "name": self.variants[0].name,
            "score": round(self.score, 3),
            "variant_ids": [v.id for v in self.variants],
            "variants": [v.to_dict() for v in self.variants],
        }


def _row(r: sqlite3.Row) -> PipelineRow:
    return PipelineRow(
        id=r["id"],
        name=r["name"],
        description=r["description"],
        created=r["created"],
        family_id=r["family_id"],
        parent_id=r["parent_id"],
        vanilla=bool(r["vanilla"]),
        steps=int(r["steps"]),
        missions=r["missions"].split(),
        datasets=r["datasets"].split(),
    )


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class PipelineStore:
    """Save, load, list, search and delete pipelines under the state folder."""

    def __init__(self, settings: Settings) -> None:
        self.root = settings.home / "pipelines"
        self.root.mkdir(parents=True, exist_ok=True)
        self.db_path = self.root / "index.sqlite"
        self._lock = threading.Lock()
        with self._db() as db:
            migrate(db, _MIGRATIONS, str(self.db_path))
            found = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if found is None or int(found["value"]) != INDEX_VERSION:
            self.reindex()

    @contextmanager
    def _db(self) -> Generator[sqlite3.Connection, None, None]:
        with wal_connection(self.db_path) as db:
            db.row_factory = sqlite3.Row
            yield db

    def _path(self, pipeline_id: str) -> Path:
        if not _ID.fullmatch(pipeline_id):
            raise UserError(f"{pipeline_id!r} is not a pipeline id (they look like pl_1a2b3c).")
        return self.root / f"{pipeline_id}.json"

    # -- writing ---------------------------------------------------------------------------

    def save(self, pipeline: Pipeline, missions: Sequence[str] = ()) -> PipelineRow:
        """Write the document atomically and (re)index it; return its index row.

        `missions` adds mission names (e.g. from the catalog) to the pipeline's searchable
        missions, beside the dataset-id prefixes.
        """
        path = self._path(pipeline.id)
        text = json.dumps(pipeline.to_dict(), indent=2, default=str)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        with self._lock, self._db() as db:
            self._index(db, pipeline, missions)
        return self.row(pipeline.id)

    def _index(self, db: sqlite3.Connection, pipeline: Pipeline, missions: Sequence[str]) -> None:
        names = sorted({m.lower() for m in [*pipeline.missions, *missions] if m})
        blob = " ".join(
            [
                pipeline.name,
                pipeline.description,
                *(s.intent for s in pipeline.steps),
                *pipeline.datasets,
                *names,
                *(p for s in pipeline.steps for p in s.produces),
            ]
        )
        db.execute(
            "INSERT OR REPLACE INTO pipelines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pipeline.id,
                pipeline.name,
                pipeline.description,
                pipeline.created_at,
                pipeline.appropriation_fingerprint(),
                pipeline.parent_id,
                int(pipeline.is_vanilla()),
                len(pipeline.steps),
                " ".join(names),
                " ".join(pipeline.datasets),
                " ".join(_words(blob)),
            ),
        )

    def reindex(self) -> int:
        """Rebuild the index from the JSON documents; return how many were indexed."""
        count = 0
        with self._lock, self._db() as db:
            db.execute("DELETE FROM pipelines")
            for path in sorted(self.root.glob("pl_*.json")):
                try:
                    pipeline = Pipeline.from_dict(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, ValueError, UserError):
                    continue  # an unreadable document must not hide the others
                self._index(db, pipeline, ())
                count += 1
            db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (str(INDEX_VERSION),))
        return count

    def delete(self, ref: str) -> PipelineRow:
        """Delete a pipeline by id or name; return what was deleted."""
        row = self.resolve(ref)
        with self._lock, self._db() as db:
            db.execute("DELETE FROM pipelines WHERE id = ?", (row.id,))
        self._path(row.id).unlink(missing_ok=True)
        return row

    # -- reading ---------------------------------------------------------------------------

    def load(self, ref: str) -> Pipeline:
        """The pipeline with this id or name, read from its document (vanilla ones too)."""
        row = self.resolve(ref)
        path = self._path(row.id)
        try:
            return Pipeline.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise UserError(f"Pipeline {row.id}'s file is missing ({path}).") from exc

    def row(self, pipeline_id: str) -> PipelineRow:
        """The index row of an id.

        Raises:
            UserError: no pipeline has this id.
        """
        with self._db() as db:
            found = db.execute("SELECT * FROM pipelines WHERE id = ?", (pipeline_id,)).fetchone()
        if found is None:
            raise UserError(f"No saved pipeline has id {pipeline_id}.")
        return _row(found)

    def resolve(self, ref: str) -> PipelineRow:
        """Find a pipeline by id, by name (case-insensitive; newest wins) or id prefix.

        Raises:
            UserError: nothing matches (with the closest names), or a prefix is ambiguous.
        """
        ref = ref.strip()
        rows = self.list()
        for r in rows:
            if r.id == ref:
                return r
        by_name = [r for r in rows if r.name.lower() == ref.lower()]
        if by_name:
            return max(by_name, key=lambda r: r.created)
        prefixed = [r for r in rows if r.id.startswith(ref)] if ref.startswith("pl_") else []
        if len(prefixed) == 1:
            return prefixed[0]
        if len(prefixed) > 1:
            raise UserError(
                f"{ref!r} matches several pipelines: {', '.join(r.id for r in prefixed)}."
            )
        close = difflib.get_close_matches(ref.lower(), [r.name.lower() for r in rows], n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = "" if rows else " There are no saved pipelines yet."
        raise UserError(f"No saved pipeline is called {ref!r}.{hint}{listing}")

    def list(self) -> list[PipelineRow]:
        """Every saved pipeline, newest first (vanilla ones included)."""
        with self._db() as db:
            found = db.execute("SELECT * FROM pipelines ORDER BY created DESC, id").fetchall()
        return [_row(r) for r in found]

    def family(self, family_id: str) -> list[PipelineRow]:
        """The variants of one family, oldest first."""
        with self._db() as db:
            found = db.execute(
                "SELECT * FROM pipelines WHERE family_id = ? ORDER BY created, id", (family_id,)
            ).fetchall()
        return [_row(r) for r in found]

    def search(
        self,
        query: str = "",
        mission: str | None = None,
        dataset: str | None = None,
        limit: int = 20,
    ) -> list[FamilyHit]:
        """Indexed (non-vanilla) pipelines matching every word of `query`, by family.

        A family's score is its best variant's: words found in the name count triple.
        """
        where = ["vanilla = 0"]
        args: list[Any] = []
        words = _words(query)
        for word in words:
            where.append("(' ' || text || ' ') LIKE ?")
            args.append(f"% {word}%")
        if mission:
            where.append("(' ' || missions || ' ') LIKE ?")
            args.append(f"% {mission.lower()} %")
        if dataset:
            where.append("(' ' || datasets || ' ') LIKE ?")
            args.append(f"% {dataset.upper()} %")
        sql = f"SELECT * FROM pipelines WHERE {' AND '.join(where)} ORDER BY created, id"
        with self._db() as db:
            found = db.execute(sql, args).fetchall()
            families: dict[str, FamilyHit] = {}
            for r in found:
                row = _row(r)
                name_words = set(_words(row.name))
                score = float(sum(3 if w in name_words else 1 for w in words)) if words else 1.0
                hit = families.setdefault(row.family_id, FamilyHit(row.family_id, 0.0))
                hit.score = max(hit.score, score)
                hit.variants.append(row)
            ranked = sorted(families.values(), key=lambda h: (-h.score, h.variants[-1].created))
            ranked = ranked[: max(limit, 1)]
            # Every indexed variant of a matching family is listed, not only those whose
            # text matched: they share the data logic. One query for all of them.
            marks = ",".join("?" * len(ranked))
            members = db.execute(
                f"SELECT * FROM pipelines WHERE vanilla = 0 AND family_id IN ({marks}) "
                "ORDER BY created, id",
                [h.family_id for h in ranked],
            ).fetchall()
        by_family: dict[str, list[PipelineRow]] = {}
        for r in members:
            by_family.setdefault(r["family_id"], []).append(_row(r))
        for hit in ranked:
            hit.variants = by_family.get(hit.family_id, hit.variants)
        return ranked
