"""`TaskStore`: plans and their tasks in SQLite (WAL), saved after every task.

One row per plan (its JSON record plus indexed columns) and one row per task with its
round, so `xhelio plan list` and the REPL's resumption check need no JSON parsing. A save
replaces a plan's rows in one transaction: a crash leaves the previous save readable.
Imports only `config`, `errors` and the task records.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from xhelio.agents.planning.tasks import PlanStatus, TaskPlan, utc_stamp
from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.migrations import Migration, migrate, sql
from xhelio.session.db import wal_connection

__all__ = ["TaskStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, request TEXT NOT NULL,
    status TEXT NOT NULL, rounds INTEGER NOT NULL, created TEXT NOT NULL,
    updated TEXT NOT NULL, record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS plans_by_session ON plans (session_id, updated);
CREATE TABLE IF NOT EXISTS tasks (
    plan_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, round INTEGER NOT NULL,
    mission TEXT, status TEXT NOT NULL, description TEXT NOT NULL,
    PRIMARY KEY (plan_id, seq)
);
"""

_MIGRATIONS = (Migration(1, "plans and tasks tables", sql(_SCHEMA)),)
_OPEN = tuple(s.value for s in PlanStatus if not s.final)


class TaskStore:
    """Save, load and list plans under `$XHELIO_HOME/plans.sqlite`."""

    def __init__(self, settings: Settings | None = None, path: Path | None = None) -> None:
        if path is None:
            if settings is None:
                raise ValueError("TaskStore needs settings or a path")
            path = settings.home / "plans.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self._db() as db:
            migrate(db, _MIGRATIONS, str(path))

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return wal_connection(self.path)

    def save(self, plan: TaskPlan) -> None:
        """Write the plan and its tasks, replacing any earlier save."""
        plan.updated = utc_stamp()
        record = json.dumps(plan.to_dict(), default=str)
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    plan.id,
                    plan.session_id,
                    plan.request,
                    plan.status.value,
                    plan.rounds,
                    plan.created,
                    plan.updated,
                    record,
                ),
            )
            db.execute("DELETE FROM tasks WHERE plan_id = ?", (plan.id,))
            db.executemany(
                "INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (plan.id, seq, t.id, t.round, t.mission, t.status.value, t.description)
                    for seq, t in enumerate(plan.tasks)
                ],
            )

    def load(self, plan_id: str) -> TaskPlan:
        """The plan saved under `plan_id`; a clear error when there is none."""
        with self._db() as db:
            row = db.execute("SELECT record FROM plans WHERE id = ?", (plan_id,)).fetchone()
        if row is None:
            recent = ", ".join(p.id for p in self.list(5)) or "none yet"
            raise UserError(f"No plan '{plan_id}'. Recent plans: {recent}.")
        return TaskPlan.from_dict(json.loads(row[0]))

    def list(self, limit: int = 20, session_id: str | None = None) -> list[TaskPlan]:
        """The most recently updated plans, newest first (optionally of one session)."""
        sql = "SELECT record FROM plans"
        args: tuple[object, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            args = (session_id,)
        sql += " ORDER BY updated DESC, rowid DESC LIMIT ?"
        with self._db() as db:
            rows = db.execute(sql, (*args, limit)).fetchall()
        return [TaskPlan.from_dict(json.loads(r[0])) for r in rows]

    def incomplete(self, session_id: str) -> TaskPlan | None:
        """The session's latest plan that did not end (a crash or quit mid-plan), if any."""
        marks = ",".join("?" for _ in _OPEN)
        with self._db() as db:
            row = db.execute(
                f"SELECT record FROM plans WHERE session_id = ? AND status IN ({marks}) "
                "ORDER BY updated DESC, rowid DESC LIMIT 1",
                (session_id, *_OPEN),
            ).fetchone()
        return TaskPlan.from_dict(json.loads(row[0])) if row else None
