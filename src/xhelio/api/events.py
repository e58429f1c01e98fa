"""Session events as stream events: the SSE and `astream` vocabulary of `docs/api.md`.

A session's `EventBus` publishes `tool_call`, `tool_result`, `plan`, `render_executed`, ...
`stream_events` turns one bus event into the stream events a client sees: the event itself,
plus a `data` event when a tool created a label and a `figure` event when the figure changed
(both derived here from the call's `Operation`, so the tools need not know about clients).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from xhelio.api.models import StreamEvent, TraceEvent
from xhelio.operations import Operation
from xhelio.session.events import Event
from xhelio.tools.funnel import sanitize
from xhelio.tools.workspace import Workspace

__all__ = ["event_payload", "figure_json", "stream_events", "trace_event"]


def figure_json(workspace: Workspace) -> dict[str, Any] | None:
    """The current Plotly figure of the session as JSON-safe data, or None."""
    current = workspace.session.plot.current
    if current is None:
        return None
    figure: dict[str, Any] = sanitize(current.figure)
    return figure


def event_payload(event: Event | dict[str, Any]) -> dict[str, Any]:
    """The `data` of the stream event for a bus event (live or as stored)."""
    record = event.to_dict() if isinstance(event, Event) else event
    payload: dict[str, Any] = {
        "agent": record.get("agent", ""),
        "tool": record.get("tool", ""),
        "status": record.get("status", ""),
        "duration_ms": record.get("duration_ms"),
        "summary": record.get("summary", ""),
    }
    if record.get("type") == "tool_error":
        payload["message"] = record.get("summary", "")
    extra = record.get("data") or {}
    if extra:
        payload["data"] = sanitize(extra)
        if record.get("type") == "tool_call":
            payload["args"] = payload["data"].get("args", {})
    return payload


def _operation(workspace: Workspace, event: Event) -> Operation | None:
    """The operation a `tool_result` event reports (the latest call of its tool)."""
    for record in reversed(workspace.session.operations[-20:]):
        if record.get("tool") == event.tool:
            return Operation.of(record)
    return None


def _data_item(workspace: Workspace, label: str) -> dict[str, Any] | None:
    store = workspace.session.store
    if not store.has(label):
        return None
    entry = store.get(label)
    return {
        "label": label,
        "dataset": entry.source_dataset,
        "parameter": entry.source_parameter,
        "points": entry.points,
    }


def stream_events(event: Event, workspace: Workspace) -> list[StreamEvent]:
    """The stream events a client sees for one bus event of `workspace`'s session."""
    out = [StreamEvent(type=event.type, id=event.id, data=event_payload(event))]
    op = _operation(workspace, event) if event.type == "tool_result" else None
    if op is not None and op.ok:
        label = op.produced[0] if op.produced else None
        item = _data_item(workspace, label) if label else None
        if item is not None:
            out[0].data["labels"] = [label]
            out.append(StreamEvent(type="data", id=event.id, data=item))
        if op.phase == "render":
            figure = figure_json(workspace)
            if figure is not None:
                out.append(StreamEvent(type="figure", id=event.id, data={"figure": figure}))
    return out


def trace_event(event: Event) -> TraceEvent:
    """A bus event as a `TraceEvent` of the response."""
    return TraceEvent(
        id=event.id,
        type=event.type,
        agent=event.agent,
        tool=event.tool,
        status=event.status,
        timestamp=datetime.fromtimestamp(event.ts, UTC),
        latency_ms=event.duration_ms,
        message=event.summary,
        data=sanitize(dict(event.data)),
    )
