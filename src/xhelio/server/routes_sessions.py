"""Sessions: create, list, get, rename, delete; their event stream and operations log."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from xhelio.agents.planning.store import TaskStore
from xhelio.api.events import event_payload, figure_json, stream_events
from xhelio.api.models import StreamEvent
from xhelio.server.deps import ServerState, server_state
from xhelio.server.sse import sse_response
from xhelio.session.events import Event
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.funnel import sanitize

__all__ = ["router"]

router = APIRouter(tags=["sessions"])
State = Annotated[ServerState, Depends(server_state)]
POLL_S = 0.1


class SessionInfo(BaseModel):
    """A row of the session list."""

    id: str
    title: str
    created: str
    updated: str
    turns: int


class NewSession(BaseModel):
    """Body of `POST /sessions`."""

    title: str | None = Field(default=None, max_length=200)


class Rename(BaseModel):
    """Body of `PATCH /sessions/{id}`."""

    title: str = Field(max_length=200)


def _info(state: ServerState, session_id: str) -> SessionInfo:
    return SessionInfo(**asdict(state.assistant.hub.summary(session_id)))


@router.post("/sessions", status_code=201, response_model=SessionInfo)
def create_session(state: State, body: NewSession | None = None) -> SessionInfo:
    """Create an empty session with an unguessable id."""
    sid = state.assistant.hub.create((body.title if body else None) or None)
    return _info(state, sid)


@router.get("/sessions")
def list_sessions(
    state: State, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, list[SessionInfo]]:
    """Sessions, most recently updated first."""
    rows = state.assistant.hub.list(limit)
    return {"sessions": [SessionInfo(**asdict(r)) for r in rows]}


def _last_plan(state: ServerState, session_id: str) -> dict[str, Any] | None:
    plans = TaskStore(state.assistant.settings).list(limit=1, session_id=session_id)
    return sanitize(plans[0].to_dict()) if plans else None


@router.get("/sessions/{session_id}")
def get_session(session_id: str, state: State) -> dict[str, Any]:
    """Everything about a session: history, data entries, current figure, last plan."""
    hub = state.assistant.hub
    info = _info(state, session_id)
    workspace = hub.view(session_id)
    entry = hub.peek(session_id)
    events = workspace.session.events.events()
    busy = bool(entry and entry.busy)
    return {
        **info.model_dump(),
        "history": sanitize(list(workspace.session.history)),
        "entries": sanitize([entry_summary(e) for e in workspace.session.store]),
        "figure": figure_json(workspace),
        "plan": _last_plan(state, session_id),
        "busy": busy,
        "last_event_id": events[-1].id if events else _stored_last_id(state, session_id),
        "turn_after_event_id": _turn_start(events) if busy else None,
    }


def _turn_start(events: list[Event]) -> int | None:
    """The event id just before the running turn's request: follow from it to see it all."""
    for event in reversed(events):
        if event.type == "user_request":
            return event.id - 1
    return None


def _stored_last_id(state: ServerState, session_id: str) -> int:
    stored = state.assistant.hub.store.events(session_id)
    return int(stored[-1]["id"]) if stored else 0


@router.patch("/sessions/{session_id}", response_model=SessionInfo)
def rename_session(session_id: str, body: Rename, state: State) -> SessionInfo:
    """Set a session's title."""
    state.assistant.hub.rename(session_id, body.title)
    return _info(state, session_id)


@router.delete("/sessions/{session_id}", status_code=204)
def delete_session(session_id: str, state: State) -> Response:
    """Delete a session and its folder (refused while it runs a request)."""
    state.assistant.hub.delete(session_id)
    return Response(status_code=204)


@router.get("/sessions/{session_id}/operations")
def operations(session_id: str, state: State) -> dict[str, Any]:
    """The session's operations log (every tool call and what it meant, without results)."""
    workspace = state.assistant.hub.view(session_id)
    keys = (
        "seq",
        "tool",
        "args",
        "status",
        "caller",
        "started",
        "duration_ms",
        "phase",
        "produced",
        "read",
        "edits_figure",
    )
    ops = [{k: op.get(k) for k in keys} for op in workspace.session.operations]
    return {"operations": sanitize(ops)}


async def _session_events(
    state: ServerState, session_id: str, after: int, follow: bool
) -> AsyncIterator[StreamEvent]:
    hub = state.assistant.hub
    workspace = hub.view(session_id)
    bus = workspace.session.events
    live = bus.events()
    first_live = live[0].id if live else None
    stored = [e for e in hub.store.events(session_id) if int(e["id"]) > after]
    if first_live is not None:
        stored = [e for e in stored if int(e["id"]) < first_live]
    lowest = int(stored[0]["id"]) if stored else first_live
    if after and lowest is not None and lowest > after + 1:
        yield StreamEvent(
            type="resume_unavailable",
            data={
                "last_event_id": after,
                "message": "Events after this id are no longer available; reload the session.",
            },
        )
    last = after
    for record in stored:
        last = int(record["id"])
        yield StreamEvent(type=str(record.get("type")), id=last, data=event_payload(record))
    while True:
        for event in bus.events(since_id=last):
            last = event.id
            for item in stream_events(event, workspace):  # with its `figure` and `data`
                yield item
        entry = hub.peek(session_id)
        if not follow or entry is None or not entry.busy:
            break
        await asyncio.sleep(POLL_S)
    for event in bus.events(since_id=last):
        for item in stream_events(event, workspace):
            yield item
    yield StreamEvent(type="done", data={})


@router.get("/sessions/{session_id}/events", response_class=StreamingResponse)
def session_events(
    session_id: str,
    state: State,
    after: Annotated[int | None, Query(ge=0)] = None,
    follow: bool = False,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """The session's events after `Last-Event-ID` (or `after`), then live ones if `follow`."""
    state.assistant.hub.require(session_id)
    start = after or 0
    if last_event_id is not None and last_event_id.strip().isdigit():
        start = int(last_event_id.strip())
    stream = _session_events(state, session_id, start, follow)
    return sse_response(stream, state.config.max_stream_events)
