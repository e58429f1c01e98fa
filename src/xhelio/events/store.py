"""`EventStore`: a user's saved event lists in SQLite under xhelio's home.

Each list belongs to one user (a server passes the session's user; the CLI is "local"):
no query returns another user's lists. Lists are found by name or by words of their name,
description and origin ("the 2015 storms in my list": the list best matching 'storms',
with the events of 2015). The schema is versioned with `xhelio.migrations`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, make_event_list
from xhelio.migrations import Migration, migrate, sql

__all__ = ["EventStore", "StoredList"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS event_lists (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    origin TEXT NOT NULL,
    citation TEXT NOT NULL,
    method TEXT NOT NULL,
    saved TEXT NOT NULL,
    UNIQUE (user, name)
);
CREATE TABLE IF NOT EXISTS events (
    list_id INTEGER NOT NULL REFERENCES event_lists(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    start TEXT NOT NULL,
    "end" TEXT NOT NULL,
    attributes TEXT NOT NULL,
    PRIMARY KEY (list_id, position)
);
CREATE INDEX IF NOT EXISTS events_start ON events(list_id, start)
"""

_MIGRATIONS = [Migration(1, "event lists and their events, per user", sql(_SCHEMA))]
_STOP = {"the", "a", "an", "in", "of", "my", "list", "lists", "from", "with", "events", "event"}
_MY_LIST = re.compile(r"\bmy\s+(?:saved\s+|event\s+)?list\b", re.I)
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")


class StoredList(dict[str, Any]):
    """One saved list's name, description, origin, count and span (JSON)."""


class EventStore:
    """The saved event lists of one user."""

    def __init__(self, path: Path, user: str = "local") -> None:
        if not user.strip():
            raise ValueError("user must be a non-empty identifier")
        self.path = path
        self.user = user
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._open() as db:
            migrate(db, _MIGRATIONS, str(path))

    @classmethod
    def at_home(cls, home: Path, user: str = "local") -> EventStore:
        """The store of `user` in xhelio's home folder (`<home>/events.sqlite`)."""
        return cls(home / "events.sqlite", user)

    @contextmanager
    def _open(self) -> Generator[sqlite3.Connection, None, None]:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA foreign_keys = ON")
        try:
            with db:
                yield db
        finally:
            db.close()

    def save(self, events: EventList, replace: bool = False) -> StoredList:
        """Save `events` under its name; an existing list of that name needs `replace`.

        Raises:
            UserError: a list of that name exists and `replace` is false.
        """
        with self._open() as db:
            row = db.execute(
                "SELECT id FROM event_lists WHERE user = ? AND name = ?", (self.user, events.name)
            ).fetchone()
            if row is not None and not replace:
                raise UserError(
                    f"You already have an event list called '{events.name}'; choose another "
                    "name or save with replace=true."
                )
            if row is not None:
                db.execute("DELETE FROM event_lists WHERE id = ?", (row[0],))
            cursor = db.execute(
                "INSERT INTO event_lists (user, name, description, origin, citation, method, "
                "saved) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    self.user,
                    events.name,
                    events.description,
                    events.origin,
                    events.citation,
                    json.dumps(dict(events.method), default=str),
                    datetime.now(UTC).isoformat(),
                ),
            )
            db.executemany(
                'INSERT INTO events (list_id, position, start, "end", attributes) '
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (cursor.lastrowid, i, row["start"], row["end"], json.dumps(_attrs(row)))
                    for i, row in enumerate(events.records())
                ],
            )
        return self._described(events)

    def names(self) -> list[str]:
        """The names of this user's lists, alphabetically."""
        with self._open() as db:
            rows = db.execute(
                "SELECT name FROM event_lists WHERE user = ? ORDER BY name", (self.user,)
            ).fetchall()
        return [str(r[0]) for r in rows]

    def load(self, name: str) -> EventList:
        """The list called `name` (exactly, ignoring case).

        Raises:
            UserError: no list of that name (the message lists the user's lists).
        """
        with self._open() as db:
            row = db.execute(
                "SELECT id, name, description, origin, citation, method FROM event_lists "
                "WHERE user = ? AND lower(name) = lower(?)",
                (self.user, name.strip()),
            ).fetchone()
            if row is None:
                known = ", ".join(self.names()) or "none saved yet"
                raise UserError(f"No saved event list called '{name}'. Your lists: {known}.")
            events = db.execute(
                'SELECT start, "end", attributes FROM events WHERE list_id = ? ORDER BY position',
                (row[0],),
            ).fetchall()
        table = pd.DataFrame(
            [{"start": s, "end": e, **json.loads(a)} for s, e, a in events],
            columns=None if events else ["start", "end"],
        )
        return make_event_list(
            str(row[1]),
            table,
            description=str(row[2]),
            origin=str(row[3]),
            citation=str(row[4]),
            method=json.loads(str(row[5])),
        )

    def delete(self, name: str) -> bool:
        """Remove the list called `name`; whether there was one."""
        with self._open() as db:
            cursor = db.execute(
                "DELETE FROM event_lists WHERE user = ? AND lower(name) = lower(?)",
                (self.user, name.strip()),
            )
        return cursor.rowcount > 0

    def search(self, query: str = "", limit: int = 20) -> list[StoredList]:
        """This user's lists whose name, description or origin match words of `query`.

        Ranked by how many words match (an empty query lists them all).
        """
        words = _words(query)
        with self._open() as db:
            rows = db.execute(
                "SELECT l.name, l.description, l.origin, COUNT(e.position), MIN(e.start), "
                'MAX(e."end") FROM event_lists l LEFT JOIN events e ON e.list_id = l.id '
                "WHERE l.user = ? GROUP BY l.id ORDER BY l.name",
                (self.user,),
            ).fetchall()
        scored: list[tuple[int, StoredList]] = []
        for name, description, origin, count, first, last in rows:
            text = f"{name} {description} {origin}".lower()
            score = sum(1 for w in words if w in text)
            if words and not score:
                continue
            scored.append(
                (
                    score,
                    StoredList(
                        name=name,
                        description=description,
                        origin=origin,
                        count=count,
                        first_start=first,
                        last_end=last,
                    ),
                )
            )
        scored.sort(key=lambda pair: -pair[0])
        return [item for _, item in scored[: max(limit, 1)]]

    def resolve(self, phrase: str) -> EventList:
        """The list a phrase such as 'the 2015 storms in my list' means, with its years.

        The list is the best match of the phrase's words (or, for "my list", the user's
        only list); years in the phrase that its name does not contain select the events
        starting in those years.

        Raises:
            UserError: no saved list matches the phrase.
        """
        exact = [n for n in self.names() if n.lower() == phrase.strip().lower()]
        if exact:
            return self.load(exact[0])
        years = {int(y) for y in _YEAR.findall(phrase)}
        words = [w for w in _words(phrase) if not _YEAR.fullmatch(w)]
        found = self.search(" ".join(words), limit=1) if words else []
        names = self.names()
        if not found and len(names) == 1 and _MY_LIST.search(phrase):
            found = [StoredList(name=names[0])]  # "my list" when the user has one list
        if not found:
            known = ", ".join(self.names()) or "none saved yet"
            raise UserError(f"No saved event list matches '{phrase}'. Your lists: {known}.")
        events = self.load(str(found[0]["name"]))
        own_years = {int(y) for y in _YEAR.findall(events.name)}
        return events.within_years(years - own_years)

    def _described(self, events: EventList) -> StoredList:
        summary = events.summary(limit=0)
        return StoredList(
            name=events.name,
            description=events.description,
            origin=events.origin,
            count=len(events),
            first_start=summary["first_start"],
            last_end=summary["last_end"],
        )


def _attrs(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("start", "end")}


def _words(text: str) -> list[str]:
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return [_singular(t) for t in tokens if t not in _STOP]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
