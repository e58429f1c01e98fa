"""`TaskStore`: plans and their tasks in SQLite (WAL), saved after every task.

One row per plan (its JSON record plus indexed columns) and one row per task with its
round, so `xhelio plan list` and the REPL's resumption check need no JSON parsing. A save
replaces a plan's rows in one transaction: a crash leaves the previous save readable.

A running plan also records which process runs it (host, pid and the process's start
time, so a reused pid is not mistaken for it). Opening the store marks the running plans
of processes that are gone (`kill -9`, a crash, a closed terminal) `interrupted`: they are
then offered for resume instead of staying in `planning` forever. Plans run from another
host are left alone (their process cannot be checked from here).
Imports only `config`, `errors` and the task records.
"""

from __future__ import annotations

import json
import os
import socket
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
_RUNNERS = """
CREATE TABLE IF NOT EXISTS plan_runners (
    plan_id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, started TEXT NOT NULL
);
"""

_MIGRATIONS = (
    Migration(1, "plans and tasks tables", sql(_SCHEMA)),
    Migration(2, "plan_runners: which process runs each plan", sql(_RUNNERS)),
)
_OPEN = tuple(s.value for s in PlanStatus if not s.final)
_RUNNING = tuple(s.value for s in PlanStatus if s.running)


def _process_started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), or None when it is gone/unknown.

    A zombie counts as gone. Without /proc (not Linux) the start time is "" when the
    process exists, so only the pid is compared.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    return fields[19] if len(fields) > 19 else ""


def _this_runner() -> tuple[str, int, str]:
    """(host, pid, start time) of this process (read each time: a fork has its own)."""
    return socket.gethostname(), os.getpid(), _process_started(os.getpid()) or ""


def _runner_alive(host: str, pid: int, started: str) -> bool:
    if host != socket.gethostname():
        return True  # another machine's process: assume it runs
    now = _process_started(pid)
    return now is not None and (not started or not now or now == started)


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
        self.interrupted = self.mark_interrupted()
        """Plans this opening found abandoned by their process and marked interrupted."""

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
            if plan.status.running:
                host, pid, started = _this_runner()
                db.execute(
                    "INSERT OR REPLACE INTO plan_runners VALUES (?, ?, ?, ?)",
                    (plan.id, host, pid, started),
                )
            else:
                db.execute("DELETE FROM plan_runners WHERE plan_id = ?", (plan.id,))
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

    def mark_interrupted(self) -> list[TaskPlan]:
        """Mark running plans whose process is gone `interrupted`; return them."""
        marks = ",".join("?" for _ in _RUNNING)
        with self._db() as db:
            rows = db.execute(
                "SELECT p.record, r.host, r.pid, r.started FROM plans p "
                "LEFT JOIN plan_runners r ON r.plan_id = p.id "
                f"WHERE p.status IN ({marks})",
                _RUNNING,
            ).fetchall()
        abandoned = [
            TaskPlan.from_dict(json.loads(record))
            for record, host, pid, started in rows
            if host is None or not _runner_alive(str(host), int(pid), str(started))
        ]
        for plan in abandoned:
            plan.status = PlanStatus.INTERRUPTED
            if not plan.summary:
                plan.summary = "Interrupted: the process running this plan ended; resume it."
            self._save_if_still_running(plan)
        return abandoned

    def _save_if_still_running(self, plan: TaskPlan) -> None:
        """Save `plan` unless its process saved a newer state meanwhile."""
        with self._db() as db:
            row = db.execute("SELECT status FROM plans WHERE id = ?", (plan.id,)).fetchone()
        if row is not None and row[0] in _RUNNING:
            self.save(plan)
