"""The ONE execution funnel every tool call goes through.

Agents, the offline interpreter, pipeline replay, the web UI, MCP and the `xhelio tool`
command all call `ToolFunnel.call(name, args)` (usually through the wrappers of
`xhelio.tools.wrappers`). It validates the arguments against the tool's schema, checks
cancellation and the one pre-run `Check` (the wrappers' policy and loop guard), runs the
tool, times it, validates its result against the tool's result model, records an
`Operation` (with the labels produced and read and the phase, from the tool's spec) in
the session's operations log, publishes events, sanitises NaN/Inf and turns every
exception into a `ToolResult` error. Its one result form is `ToolResult`; `to_dict()` is
the JSON the model and the servers see.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from xhelio.errors import XhelioError
from xhelio.operations import Operation, ToolResult
from xhelio.session.events import EventBus
from xhelio.sources.netguard import cancel_scope
from xhelio.tools.registry import Tool, ToolRegistry

__all__ = ["Check", "ToolFunnel", "sanitize"]

Check = Callable[[Tool, dict[str, Any]], ToolResult | None]
"""The one pre-run hook: returning a result refuses the call with it (policy, loop guard)."""


_PLAIN: frozenset[type] = frozenset({str, int, bool, type(None)})
_PLAIN_OR_FLOAT = _PLAIN | {float}


def sanitize(value: Any) -> Any:
    """Make a tool result JSON-safe: NaN/Inf to None, numpy scalars to Python."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return sanitize(value.item())
    if isinstance(value, Mapping):
        return {str(k): sanitize(v) for k, v in value.items()}  # type: ignore[misc]
    if isinstance(value, list | tuple):
        items: list[Any] | tuple[Any, ...] = value  # type: ignore[assignment]
        # A figure's columns: thousands of plain values, checked by exact type at once.
        kinds = set(map(type, items))
        if kinds <= _PLAIN:
            return list(items)
        if kinds <= _PLAIN_OR_FLOAT:
            return [v if type(v) is not float or math.isfinite(v) else None for v in items]
        return [sanitize(v) for v in items]
    if isinstance(value, np.ndarray):
        return sanitize(value.tolist())
    return value


def _validation_message(tool: str, exc: ValidationError) -> str:
    problems: list[str] = []
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
        labels: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        """Run `registry`'s tools on `context`.

        Args:
            registry: The tools.
            context: What each tool gets as its first argument.
            events: Where calls and results are published.
            cancel: The cancellation event checked before each call.
            operations: The operations log to append to (the session's).
            labels: The stored labels before a call (which labels its arguments read);
                default: those the operations log says were produced.
        """
        self.registry = registry
        self.context = context
        self.events = events
        self.cancel = cancel or threading.Event()
        self.operations: list[dict[str, Any]] = operations if operations is not None else []
        self._labels = labels
        self._lock = threading.Lock()

    @property
    def funnel(self) -> ToolFunnel:
        """The funnel itself (the innermost toolset of any wrapper chain)."""
        return self

    @property
    def turn(self) -> None:
        """No turn: a turn's usage lives in the `TurnToolset` wrapping the funnel."""
        return None

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        caller: str = "user",
        check: Check | None = None,
    ) -> ToolResult:
        """Run tool `name` with `args`; every outcome, error included, is a `ToolResult`."""
        arguments = dict(args or {})
        spec = self.registry.get(name)
        read = self._read(spec, arguments)
        started = time.time()
        result = self._dispatch(name, spec, arguments, caller, check)
        duration_ms = (time.time() - started) * 1000
        self._record(spec, name, arguments, result, caller, started, duration_ms, read)
        return result

    def _read(self, spec: Tool | None, arguments: dict[str, Any]) -> list[str]:
        if spec is None or not (spec.reads or spec.mentions):
            return []
        if self._labels is not None:
            known = list(self._labels())
        else:
            known = [label for op in self.operations for label in op.get("produced") or []]
        return spec.read_labels(arguments, known)

    def _dispatch(
        self,
        name: str,
        spec: Tool | None,
        arguments: dict[str, Any],
        caller: str,
        check: Check | None,
    ) -> ToolResult:
        if spec is None:
            available = ", ".join(self.registry.names())
            return ToolResult.failure(
                name, "UnknownTool", f"There is no tool named {name!r}. Available: {available}."
            )
        if self.cancel.is_set():
            return ToolResult.failure(
                name, "Cancelled", "The request was cancelled; the tool did not run."
            )
        refused = check(spec, arguments) if check is not None else None
        if refused is not None:
            return refused
        try:
            validated = spec.arguments.model_validate(arguments)
        except ValidationError as exc:
            return ToolResult.failure(name, "ValidationError", _validation_message(name, exc))
        self.events.publish("tool_call", agent=caller, tool=name, data={"args": arguments})
        try:
            kwargs = {key: getattr(validated, key) for key in type(validated).model_fields}
            # Network reads inside the tool stop within a fraction of a second of a cancel.
            with cancel_scope(self.cancel):
                raw = spec.function(self.context, **kwargs)
        except XhelioError as exc:
            return ToolResult.from_dict(name, sanitize(exc.to_dict()), phase=spec.phase)
        except Exception as exc:
            return ToolResult.failure(name, type(exc).__name__, f"{name} failed: {exc}")
        return self._typed(spec, arguments, raw)

    def _typed(
        self, spec: Tool, arguments: dict[str, Any], raw: dict[str, Any] | BaseModel
    ) -> ToolResult:
        """The tool's return value as a `ToolResult`, checked against its result model."""
        data: dict[str, Any] = sanitize(raw.model_dump() if isinstance(raw, BaseModel) else raw)
        result = ToolResult.from_dict(spec.name, data, phase=spec.phase)
        if not result.ok:
            return result
        try:
            output = spec.result.model_validate(result.payload)
        except ValidationError as exc:
            return ToolResult.failure(
                spec.name,
                "ResultError",
                f"{spec.name} returned a result that does not match its declared model "
                f"{spec.result.__name__}: {exc.errors()[0]['msg']}.",
            )
        labels = spec.produced(arguments, data)
        return result.model_copy(update={"labels": labels, "output": output})

    def _record(
        self,
        spec: Tool | None,
        name: str,
        arguments: dict[str, Any],
        result: ToolResult,
        caller: str,
        started: float,
        duration_ms: float,
        read: list[str],
    ) -> None:
        with self._lock:
            operation = Operation(
                seq=len(self.operations) + 1,
                tool=name,
                args=arguments,
                status=result.status,
                caller=caller,
                started=started,
                duration_ms=duration_ms,
                result=result.to_dict(),
                error=result.error,
                phase=spec.phase if spec is not None else None,
                produced=result.labels,
                read=read,
                time_ranges=spec.time_ranges(arguments) if spec is not None else {},
                edits_figure=spec.edits_figure if spec is not None else False,
            )
            self.operations.append(operation.record())
        self.events.publish(
            "tool_result" if result.ok else "tool_error",
            agent=caller,
            tool=name,
            status=result.status,
            duration_ms=round(duration_ms, 2),
            summary=(result.error or "")[:500],
        )
