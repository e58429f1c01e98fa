"""Tasks and plans: what a multi-step request was broken into and how each step went.

A `TaskPlan` is one request's plan; it grows round by round as the planner adds task
batches. Each `Task` records where it was routed (`mission`: a mission id, one of the
`ROLE_*` markers, or None for the orchestrator), the round it belongs to, the labels it
created and a short result summary. Records are plain dataclasses with a JSON form, so
the store, the CLI and `xhelio ask --json` all read the same thing. Imports nothing from
xhelio.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "ROLE_DATA_EXTRACTION",
    "ROLE_DATA_OPS",
    "ROLE_SQL",
    "ROLE_VISUALIZATION",
    "ROLE_WEB_API",
    "CriterionResult",
    "PlanStatus",
    "Task",
    "TaskPlan",
    "TaskStatus",
    "new_id",
    "utc_stamp",
]

ROLE_DATA_OPS = "__data_ops__"
ROLE_SQL = "__sql__"
ROLE_VISUALIZATION = "__visualization__"
ROLE_DATA_EXTRACTION = "__data_extraction__"
ROLE_WEB_API = "__web_api__"

RESULT_SUMMARY_CHARS = 500


class TaskStatus(StrEnum):
    """Where a task stands."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


class PlanStatus(StrEnum):
    """Where a plan stands; the last four are final.

    `INTERRUPTED`: the process running the plan ended mid-plan (killed, crashed, quit); the
    plan is not final, it waits to be resumed or cancelled.
    """

    PLANNING = "planning"
    EXECUTING = "executing"
    INTERRUPTED = "interrupted"
    COMPLETED = "completed"
    COMPLETED_WITH_WARNINGS = "completed_with_warnings"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        """Whether the plan has ended."""
        return self not in (PlanStatus.PLANNING, PlanStatus.EXECUTING, PlanStatus.INTERRUPTED)

    @property
    def running(self) -> bool:
        """Whether a process is (or should be) working on the plan right now."""
        return self in (PlanStatus.PLANNING, PlanStatus.EXECUTING)


def utc_stamp() -> str:
    """Now, UTC, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id(prefix: str) -> str:
    """A short unique id: `prefix` + UTC time + random suffix."""
    return f"{prefix}{datetime.now(UTC).strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"


@dataclass
class Task:
    """One step of a plan, routed to one agent."""

    description: str
    instruction: str
    mission: str | None = None
    candidate_datasets: list[str] = field(default_factory=list[str])
    round: int = 0
    status: TaskStatus = TaskStatus.PENDING
    new_labels: list[str] = field(default_factory=list[str])
    result_summary: str = ""
    error: str | None = None
    id: str = field(default_factory=lambda: new_id("t"))
    criteria: list[str] = field(default_factory=list[str])
    """Deep analysis: what this stage's result must meet."""
    criteria_results: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Deep analysis: the reflector's verdict per criterion (criterion, met, evidence)."""
    reflection: str = ""

    def finish(self, status: TaskStatus, summary: str, error: str | None = None) -> None:
        """Record how the task ended; the summary is cut to 500 characters."""
        self.status = status
        self.result_summary = summary[:RESULT_SUMMARY_CHARS]
        self.error = error

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "status": self.status.value}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Task:
        """Rebuild from `to_dict` output."""
        return cls(
            description=str(raw["description"]),
            instruction=str(raw["instruction"]),
            mission=raw.get("mission"),
            candidate_datasets=list(raw.get("candidate_datasets") or []),
            round=int(raw.get("round", 0)),
            status=TaskStatus(raw["status"]),
            new_labels=list(raw.get("new_labels") or []),
            result_summary=str(raw.get("result_summary", "")),
            error=raw.get("error"),
            id=str(raw["id"]),
            criteria=list(raw.get("criteria") or []),
            criteria_results=list(raw.get("criteria_results") or []),
            reflection=str(raw.get("reflection", "")),
        )


@dataclass
class CriterionResult:
    """A success criterion and the evidence that it was (or was not) met."""

    criterion: str
    met: bool
    evidence: str


@dataclass
class TaskPlan:
    """A request's plan: its tasks across rounds, its status and how it was decided."""

    request: str
    session_id: str
    time_range: str | None = None
    tasks: list[Task] = field(default_factory=list[Task])
    status: PlanStatus = PlanStatus.PLANNING
    rounds: int = 0
    summary: str = ""
    decision: dict[str, Any] = field(default_factory=dict[str, Any])
    criteria: list[CriterionResult] = field(default_factory=list[CriterionResult])
    reviews: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    planner: str = ""
    id: str = field(default_factory=lambda: new_id("p"))
    created: str = field(default_factory=utc_stamp)
    updated: str = field(default_factory=utc_stamp)

    def pending(self) -> list[Task]:
        """Tasks not started yet, in order."""
        return [t for t in self.tasks if t.status == TaskStatus.PENDING]

    def failed(self) -> list[Task]:
        """Tasks that failed, in order."""
        return [t for t in self.tasks if t.status == TaskStatus.FAILED]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the one `xhelio plan show --json` prints)."""
        return {
            "id": self.id,
            "request": self.request,
            "session_id": self.session_id,
            "status": self.status.value,
            "rounds": self.rounds,
            "time_range": self.time_range,
            "summary": self.summary,
            "planner": self.planner,
            "decision": self.decision,
            "criteria": [asdict(c) for c in self.criteria],
            "reviews": self.reviews,
            "created": self.created,
            "updated": self.updated,
            "tasks": [t.to_dict() for t in self.tasks],
        }

    def brief(self) -> dict[str, Any]:
        """The plan as `xhelio ask --json` reports it."""
        return {
            "id": self.id,
            "status": self.status.value,
            "rounds": self.rounds,
            "tasks": [
                {
                    "description": t.description,
                    "mission": t.mission,
                    "status": t.status.value,
                    "round": t.round,
                    "new_labels": t.new_labels,
                }
                for t in self.tasks
            ],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TaskPlan:
        """Rebuild from `to_dict` output."""
        return cls(
            id=raw["id"],
            request=raw["request"],
            session_id=raw["session_id"],
            time_range=raw.get("time_range"),
            tasks=[Task.from_dict(t) for t in raw.get("tasks", [])],
            status=PlanStatus(raw["status"]),
            rounds=int(raw.get("rounds", 0)),
            summary=raw.get("summary", ""),
            planner=raw.get("planner", ""),
            decision=dict(raw.get("decision") or {}),
            criteria=[CriterionResult(**c) for c in raw.get("criteria", [])],
            reviews=list(raw.get("reviews") or []),
            created=raw.get("created", utc_stamp()),
            updated=raw.get("updated", utc_stamp()),
        )
