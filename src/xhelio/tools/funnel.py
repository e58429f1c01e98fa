"""The ONE execution funnel every tool call goes through.

Agents, the offline interpreter, pipeline replay, the web UI, MCP and the `xhelio tool`
command all call `ToolFunnel.call(name, args)`. It validates the arguments against the
tool's schema, checks cancellation and the caller's guard, runs the tool, times it,
records the call in the session's operations log, publishes events, sanitises NaN/Inf
and turns every exception into `{"status": "error", "type", "message"}`.

`call_typed` returns the same outcome as a `ToolResult`. A `policy` (set by the servers)
refuses tools before they run, whoever the caller: e.g. model-written code without the
OS-level sandbox, or reading files outside the session folder.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from xhelio.errors import XhelioError
from xhelio.session.events import EventBus
from xhelio.sources.netguard import cancel_scope
from xhelio.tools.registry import ToolRegistry
from xhelio.tools.result import ToolResult

__all__ = ["OperationRecord", "Policy", "ToolFunnel", "error_result", "sanitize"]

Guard = Callable[[str, dict[str, Any]], str | None]
"""Called before a tool runs; returning a message blocks the call with that message."""

Policy = Callable[[str, dict[str, Any]], dict[str, Any] | None]
"""Called before every tool runs; returning an error result refuses the call with it."""


@dataclass(frozen=True)
class OperationRecord:
    """One executed tool call, as pipelines and the trace need it."""

    seq: int
    tool: str
    args: dict[str, Any]
    status: str
    caller: str
    started: float
    duration_ms: float
    result: dict[str, Any] = field(default_factory=dict[str, Any])


def error_result(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    """Build the structured error a model or person can act on."""
    return {"status": "error", "type": kind, "message": message, **extra}


def sanitize(value: Any) -> Any:
    """Make a tool result JSON-safe: NaN/Inf to None, numpy scalars to Python."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return sanitize(value.item())
    if isinstance(value, Mapping):
        return {str(k): sanitize(v) for k, v in value.items()}  # type: ignore[misc]
    if isinstance(value, list | tuple):
        return [sanitize(v) for v in value]  # type: ignore[misc]
    if isinstance(value, np.ndarray):
        return sanitize(value.tolist())
    return value


def _validation_message(tool: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


class ToolFunnel:
    """Validate, run, time, record and report every tool call."""

    def __init__(
        self,
        registry: ToolRegistry,
        context: Any,
        events: EventBus,
        cancel: threading.Event | None = None,
        operations: list[dict[str, Any]] | None = None,
    ) -> None:
        self.registry = registry
        self.context = context
        self.events = events
        self.cancel = cancel or threading.Event()
        self.operations: list[dict[str, Any]] = operations if operations is not None else []
        self.policy: Policy | None = None
        self.max_requests: int | None = None
        """A caller's cap on model requests in this turn (None: the default)."""
        self.turn_usage: Any = None
        """Model usage of the current turn, shared by all its agent runs (an
        `agents.toolbridge.TurnUsage`, set by `agents.turn.run_turn`); None outside a turn."""
        self._lock = threading.Lock()

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        caller: str = "user",
        guard: Guard | None = None,
    ) -> dict[str, Any]:
        """Run tool `name` with `args` and return its JSON-safe result or error."""
        arguments = dict(args or {})
        started = time.time()
        result = self._dispatch(name, arguments, caller, guard)
        result = sanitize(result)
        duration_ms = (time.time() - started) * 1000
        status = str(result.get("status", "ok"))
        self._record(name, arguments, status, caller, started, duration_ms, result)
        return result

    def call_typed(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        caller: str = "user",
        guard: Guard | None = None,
    ) -> ToolResult:
        """`call`, with the outcome as a typed `ToolResult`."""
        return ToolResult.from_dict(name, self.call(name, args, caller, guard))

    def _dispatch(
        self, name: str, arguments: dict[str, Any], caller: str, guard: Guard | None
    ) -> dict[str, Any]:
        t = self.registry.get(name)
        if t is None:
            return error_result(
                "UnknownTool",
                f"There is no tool named {name!r}. Available: {', '.join(self.registry.names())}.",
            )
        if self.cancel.is_set():
            return error_result("Cancelled", "The request was cancelled; the tool did not run.")
        if self.policy is not None:
            refused = self.policy(name, arguments)
            if refused is not None:
                return refused
        if guard is not None:
            blocked = guard(name, arguments)
            if blocked:
                return error_result("LoopGuard", blocked)
        try:
            validated = t.arguments.model_validate(arguments)
        except ValidationError as exc:
            return error_result("ValidationError", _validation_message(name, exc))
        self.events.publish("tool_call", agent=caller, tool=name, data={"args": arguments})
        try:
            kwargs = {key: getattr(validated, key) for key in type(validated).model_fields}
            # Network reads inside the tool stop within a fraction of a second of a cancel.
            with cancel_scope(self.cancel):
                result = t.function(self.context, **kwargs)
        except XhelioError as exc:
            return exc.to_dict()
        except Exception as exc:
            return error_result(type(exc).__name__, f"{name} failed: {exc}")
        if "status" not in result:
            result = {"status": "ok", **result}
        return result

    def _record(
        self,
        name: str,
        arguments: dict[str, Any],
        status: str,
        caller: str,
        started: float,
        duration_ms: float,
        result: dict[str, Any],
    ) -> None:
        with self._lock:
            record = OperationRecord(
                seq=len(self.operations) + 1,
                tool=name,
                args=arguments,
                status=status,
                caller=caller,
                started=started,
                duration_ms=duration_ms,
                result=result,
            )
            self.operations.append(asdict(record))
        summary = str(result.get("message", "")) if status == "error" else ""
        self.events.publish(
            "tool_error" if status == "error" else "tool_result",
            agent=caller,
            tool=name,
            status=status,
            duration_ms=round(duration_ms, 2),
            summary=summary[:500],
        )
