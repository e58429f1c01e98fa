"""The typed request and response of one turn, shared by Python, REST, MCP and `ask --json`.

`AskRequest` is what a caller asks; `AskResponse` is everything the turn produced. Their JSON
form is the contract of `docs/api.md`: fields are only ever added. `StreamEvent` is one item
of `Assistant.astream` and one SSE message of `POST /api/v1/ask/stream`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AgentName",
    "AgentResult",
    "AskRequest",
    "AskResponse",
    "DataItem",
    "ErrorInfo",
    "StreamEvent",
    "Table",
    "TraceEvent",
]

AgentName = Literal[
    "mission", "data_ops", "data_extraction", "sql", "visualization", "insight", "web_api"
]
"""The agents a request may prefer or disable (as `agents.planning.routing` names them)."""
AgentStatus = Literal["pending", "running", "succeeded", "failed", "skipped"]


class AskRequest(BaseModel):
    """One request to the assistant.

    Attributes:
        question: What the user wants, in plain language.
        session_id: Session to continue; None starts a new one.
        context: Free key/values handed to the assistant with the question.
        prefer_agents: Agents a plan should prefer.
        disable_agents: Agents the request must not use.
        max_turns: Cap on model requests in this turn (None: the configured guard only).
        include_data: Include a small table of the first data label in the response.
        trace: Include the turn's trace events in the response.
        system_prompt: Extra instructions for this request only.
        model: `provider:model` for every tier; None uses the configuration.
        deep: Deep analysis: a reviewed plan of stages with success criteria, each stage
            checked as it ends (the rest may be revised), ending in a report (HTML and
            Markdown in the session's exports; `plan["report"]` names the files).
    """

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=20_000)
    session_id: str | None = Field(default=None, max_length=64)
    context: dict[str, Any] = Field(default_factory=dict[str, Any])
    prefer_agents: list[AgentName] = Field(default_factory=list[AgentName])
    disable_agents: list[AgentName] = Field(default_factory=list[AgentName])
    max_turns: int | None = Field(default=None, ge=1, le=200)
    include_data: bool = True
    trace: bool = False
    system_prompt: str | None = Field(default=None, max_length=20_000)
    model: str | None = None
    deep: bool = False


class DataItem(BaseModel):
    """One DataStore label the turn created or updated."""

    label: str
    dataset: str | None = None
    parameter: str | None = None
    points: int = 0
    start: str | None = None
    stop: str | None = None


class Table(BaseModel):
    """A few rows of one data label (head of the data), for display."""

    label: str
    columns: list[str]
    rows: list[dict[str, Any]]
    row_count: int


class AgentResult(BaseModel):
    """What one agent did in the turn."""

    agent: str
    status: AgentStatus
    answer: str | None = None
    error: str | None = None
    latency_ms: float | None = None
    tool_calls: int = 0


class TraceEvent(BaseModel):
    """One thing that happened during the turn (a session event)."""

    id: int
    type: str
    agent: str = ""
    tool: str = ""
    status: str = ""
    timestamp: datetime
    latency_ms: float | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict[str, Any])


class ErrorInfo(BaseModel):
    """Why a request failed: the `xhelio.errors` type name and a message for people."""

    type: str
    message: str


class AskResponse(BaseModel):
    """Everything one turn produced; `xhelio ask --json` prints exactly this."""

    answer: str
    session_id: str | None
    details: list[str] = Field(default_factory=list[str])
    """Operational detail the composer took out of the answer (also in the activity)."""
    data: list[DataItem] = Field(default_factory=list[DataItem])
    table: Table | None = None
    figure: dict[str, Any] | None = None
    figure_files: list[str] = Field(default_factory=list[str])
    plan: dict[str, Any] | None = None
    agent_results: list[AgentResult] = Field(default_factory=list[AgentResult])
    trace: list[TraceEvent] = Field(default_factory=list[TraceEvent])
    usage: dict[str, Any] = Field(default_factory=dict[str, Any])
    suggestions: list[str] = Field(default_factory=list[str])
    error: ErrorInfo | None = None
    elapsed_s: float = 0.0


class StreamEvent(BaseModel):
    """One item of a stream: a session event, a derived update, or the final `done`.

    `id` is the session's event id (None for events that are not stored, such as
    `session`); a client resumes after the last id it saw.
    """

    type: str
    id: int | None = None
    data: dict[str, Any] = Field(default_factory=dict[str, Any])
    ts: datetime = Field(default_factory=lambda: datetime.now(UTC))
