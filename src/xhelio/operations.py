"""What a tool call means, in the words every layer shares: phases, results, operations.

A tool's spec (`xhelio.tools.registry.tool`) says its `Phase`, which labels it produces
and reads and which arguments are time ranges. The funnel turns each call into a
`ToolResult` (what the caller gets back) and an `Operation` (what the operations log
keeps). Pipelines, turns, events and the web app read these fields; none of them needs to
know a tool's name. `ToolCaller` is what a lower layer (pipeline replay, the DAG) may call
tools through without importing the funnel.

Imports pydantic and the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DATA_PHASES",
    "DOWNLOAD_CALLER",
    "Operation",
    "Phase",
    "ToolCaller",
    "ToolResult",
    "label_mentions",
    "label_references",
]

Phase = Literal["discover", "fetch", "compute", "render", "export", "conversation", "pipeline"]
"""What a tool does: find (discover), bring data in (fetch), derive data (compute), show it
(render), write files (export), talk (conversation) or handle saved pipelines (pipeline)."""

DATA_PHASES: frozenset[Phase] = frozenset({"fetch", "compute"})
"""The phases whose tools create labelled data (a pipeline's appropriation)."""

_ERROR_FIELDS = frozenset({"type", "message"})


class ToolResult(BaseModel):
    """One tool call's outcome, as the funnel returns it to every caller.

    Attributes:
        tool: The tool that ran.
        status: "ok" or "error".
        error_type: The error's type name (an `xhelio.errors` class, `ValidationError`,
            `LoopGuard`, `Cancelled`, `SandboxUnavailable`, ...) when status is "error".
        error: The error message for people and models.
        labels: DataStore labels the call created or replaced (from the tool's spec).
        phase: The tool's phase (None for an unknown tool).
        payload: Everything else the tool returned (its JSON fields).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: str
    status: Literal["ok", "error"] = "ok"
    error_type: str | None = None
    error: str | None = None
    labels: list[str] = Field(default_factory=list[str])
    phase: Phase | None = None
    payload: dict[str, Any] = Field(default_factory=dict[str, Any])
    output: BaseModel | None = Field(default=None, exclude=True, repr=False)
    """The successful result as the tool's declared result model (None on error)."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "ok"

    @classmethod
    def from_dict(
        cls,
        tool: str,
        result: dict[str, Any],
        labels: list[str] | None = None,
        phase: Phase | None = None,
    ) -> ToolResult:
        """Type a result dict (`to_dict` gives the same dict back).

        Args:
            tool: The tool that ran.
            result: Its JSON result (`status` missing means ok).
            labels: Labels it created (kept only on success).
            phase: The tool's phase.
        """
        status = "error" if result.get("status") == "error" else "ok"
        # `type` and `message` are the error's own fields only on an error: a successful
        # result may carry fields of those names (an entry's "type", a note for the model).
        own = _ERROR_FIELDS if status == "error" else frozenset[str]()
        # A tool's own success status ("completed", "partial") stays in its JSON.
        own |= {"status"} if result.get("status", "ok") in ("ok", "error") else set()
        payload = {k: v for k, v in result.items() if k not in own}
        return cls(
            tool=tool,
            status=status,
            error_type=str(result.get("type") or "error") if status == "error" else None,
            error=str(result.get("message") or "") if status == "error" else None,
            labels=list(labels or []) if status == "ok" else [],
            phase=phase,
            payload=payload,
        )

    @classmethod
    def failure(cls, tool: str, error_type: str, error: str, **payload: Any) -> ToolResult:
        """An error result (a refused call, or a caller's verdict on what a tool returned)."""
        return cls(tool=tool, status="error", error_type=error_type, error=error, payload=payload)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the model, REST, MCP and the operations log see."""
        out: dict[str, Any] = {"status": self.status}
        if self.status == "error":
            out["type"] = self.error_type or "error"
            out["message"] = self.error or ""
        out.update(self.payload)
        return out


DOWNLOAD_CALLER = "download"
"""The caller of calls made only to hand a file to the user (the web app's download buttons):
logged and traced like any call, but no step of the analysis, so pipelines skip them."""


class Operation(BaseModel):
    """One executed tool call in a session's operations log, with what it meant.

    Attributes:
        seq: Position in the log (1-based).
        tool: The tool's name (for display and for calling it again, never to branch on).
        args: The arguments as given.
        status: "ok" or "error".
        caller: Who called (an agent's name, "offline", "pipeline", "cli", ...).
        started: Unix time the call started.
        duration_ms: How long it took.
        result: The JSON result the caller saw.
        error: The error message when status is "error".
        phase: The tool's phase (None: the tool is unknown).
        produced: DataStore labels the call created or replaced.
        read: DataStore labels its arguments name (whole, or as `label.column`).
        time_ranges: Its time-range arguments (name -> text as given).
        edits_figure: It acts on the current figure (rather than drawing a new one).
    """

    model_config = ConfigDict(extra="ignore")

    seq: int = 0
    tool: str
    args: dict[str, Any] = Field(default_factory=dict[str, Any])
    status: Literal["ok", "error"] = "ok"
    caller: str = "user"
    started: float = 0.0
    duration_ms: float = 0.0
    result: dict[str, Any] = Field(default_factory=dict[str, Any])
    error: str | None = None
    phase: Phase | None = None
    produced: list[str] = Field(default_factory=list[str])
    read: list[str] = Field(default_factory=list[str])
    time_ranges: dict[str, str] = Field(default_factory=dict[str, str])
    edits_figure: bool = False

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "ok"

    @property
    def in_analysis(self) -> bool:
        """Whether the call is part of the analysis (a download for the user is not)."""
        return self.caller != DOWNLOAD_CALLER

    @field_validator("status", mode="before")
    @classmethod
    def _ok_unless_error(cls, value: Any) -> str:
        """Older logs kept a tool's own success status ("completed", "partial")."""
        return "error" if value == "error" else "ok"

    @classmethod
    def of(cls, record: Operation | dict[str, Any]) -> Operation:
        """The operation of a log record (the log keeps JSON records)."""
        return record if isinstance(record, Operation) else cls.model_validate(record)

    def record(self) -> dict[str, Any]:
        """The JSON record the operations log keeps."""
        return self.model_dump()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(item)
    elif isinstance(value, Mapping):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(item)


def label_references(values: Iterable[Any], known: Iterable[str]) -> list[str]:
    """Labels of `known` that the strings inside `values` name, whole or as `label.column`.

    The longest known label wins, so `AC.B` is found in "AC.B.x" even when `AC` exists.
    """
    ordered = sorted(set(known), key=len, reverse=True)
    found: list[str] = []
    for text in _strings(list(values)):
        for label in ordered:
            if text == label or text.startswith(label + "."):
                if label not in found:
                    found.append(label)
                break
    return found


def label_mentions(values: Iterable[Any], known: Iterable[str]) -> list[str]:
    """Labels of `known` written inside the strings of `values` (SQL, a formula...).

    A label counts where it stands alone: not inside a longer name (letters, digits, `_`
    or `.` on either side), so `"OMNI.DST"` and `FROM OMNI.DST` name `OMNI.DST` while
    `OMNI.DST_2` does not. The longest label wins where two overlap.
    """
    ordered = sorted(set(known), key=len, reverse=True)
    found: list[str] = []
    for text in _strings(list(values)):
        taken: list[tuple[int, int]] = []
        for label in ordered:
            pattern = re.compile(rf"(?<![\w.]){re.escape(label)}(?![\w.])")
            for match in pattern.finditer(text):
                span = match.span()
                if any(a < span[1] and span[0] < b for a, b in taken):
                    continue
                taken.append(span)
                if label not in found:
                    found.append(label)
    return found


class ToolCaller(Protocol):
    """Anything that runs a registry tool by name and says how it went (the funnel)."""

    def call(
        self, name: str, args: dict[str, Any] | None = None, caller: str = "user"
    ) -> ToolResult:
        """Run tool `name` with `args` on behalf of `caller`."""
        ...
