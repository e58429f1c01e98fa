"""The one turn path: run an `AskRequest` in a session and build the `AskResponse`.

`run_request` runs one turn of an assistant in a workspace the caller holds; every turn of
every interface goes through it: `execute` (a hub session: the Python API, REST and MCP),
`xhelio ask`, the chat REPL and the web app's background turns (replays, plan retries).
Neither raises for a failed turn: the failure is the response's `error`. `execute` raises
only for what is not a turn at all (unknown session, busy session), so a server can answer
those with 404/409.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from xhelio.agents import factory
from xhelio.agents.models import ModelConfig
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.planning.deep import deep_analysis
from xhelio.agents.planning.routing import AgentPreferences
from xhelio.agents.turn import Assistant, TurnResult, run_turn
from xhelio.agents.usage import UsageTracker
from xhelio.api.compose import ComposedAnswer, compose_answer
from xhelio.api.error_types import error_type
from xhelio.api.events import figure_json, trace_event
from xhelio.api.hub import SessionHub
from xhelio.api.key_numbers import key_numbers
from xhelio.api.models import (
    AgentResult,
    AskRequest,
    AskResponse,
    DataItem,
    ErrorInfo,
    Table,
)
from xhelio.errors import XhelioError
from xhelio.report import gallery_folder
from xhelio.session.events import Event
from xhelio.timerange import readable_iso_ranges
from xhelio.tools.data_tools import frame_of
from xhelio.tools.funnel import sanitize
from xhelio.tools.workspace import Workspace

__all__ = [
    "build_response",
    "execute",
    "failed_before_turn",
    "gallery_dir",
    "make_assistant",
    "run_request",
    "save_gallery_figure",
    "suggestions",
]

Listener = Callable[[Event, Workspace], None]
ModelBuilder = Callable[[str], Model]
_TABLE_ROWS = 20


def gallery_dir(workspace: Workspace) -> Path:
    """The folder holding every figure the session produced (one JSON file each)."""
    return gallery_folder(workspace.session)


def save_gallery_figure(workspace: Workspace, request: str) -> int | None:
    """Keep the current figure with the request that made it; returns its gallery id."""
    figure = figure_json(workspace)
    if figure is None:
        return None
    folder = gallery_dir(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    fig_id = len(list(folder.glob("*.json"))) + 1
    record = {
        "id": fig_id,
        "created": datetime.now(UTC).isoformat(),
        "request": request,
        "traces": len(figure.get("data") or []),
        "figure": figure,
    }
    (folder / f"{fig_id:05d}.json").write_text(json.dumps(record))
    return fig_id


def _question(request: AskRequest, offline: bool) -> str:
    """The text the assistant gets: the question, plus context and instructions online."""
    if offline or not (request.context or request.system_prompt):
        return request.question
    parts: list[str] = []
    if request.system_prompt:
        parts.append(f"Instructions for this request: {request.system_prompt}")
    if request.context:
        parts.append("Context: " + json.dumps(request.context, default=str))
    parts.append(f"Request: {request.question}")
    return "\n\n".join(parts)


def _table(workspace: Workspace, label: str) -> Table | None:
    store = workspace.session.store
    if not store.has(label):
        return None
    frame = frame_of(store.get(label))
    head = frame.head(_TABLE_ROWS).reset_index()
    columns = [str(c) for c in head.columns]
    rows = [
        {str(k): (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
        for row in head.to_dict(orient="records")
    ]
    return Table(label=label, columns=columns, rows=sanitize(rows), row_count=len(frame))


def _agent_results(
    events: list[Event], answered_by: str, failed: bool, usage: dict[str, Any]
) -> list[AgentResult]:
    """Per-agent status and latency, from the turn's events and its usage record."""
    seen: dict[str, dict[str, Any]] = {}
    for event in events:
        if not event.agent or event.type in {"user_request", "turn_done"}:
            continue
        info = seen.setdefault(
            event.agent, {"first": event.ts, "last": event.ts, "ok": 0, "err": 0}
        )
        info["last"] = event.ts
        if event.type == "tool_result":
            info["ok"] += 1
        elif event.type == "tool_error":
            info["err"] += 1
    results: list[AgentResult] = []
    for agent, info in seen.items():
        calls = info["ok"] + info["err"]
        status = "failed" if info["err"] and not info["ok"] else "succeeded"
        latency = (info["last"] - info["first"]) * 1000
        results.append(
            AgentResult(agent=agent, status=status, latency_ms=latency, tool_calls=calls)
        )
    per_agent = usage.get("agents") if isinstance(usage.get("agents"), dict) else {}
    for agent in per_agent or {}:
        if agent not in seen:
            results.append(AgentResult(agent=str(agent), status="succeeded"))
            seen[str(agent)] = {}
    if not results:
        results.append(AgentResult(agent=answered_by, status="succeeded"))
    if failed:
        for result in results:
            if result.agent in {answered_by, "orchestrator"} or len(results) == 1:
                result.status = "failed"
    return results


def _error_type(workspace: Workspace, first_op: int, message: str) -> str:
    """The type behind a failed turn the assistant did not raise: the last failed tool's."""
    if message == "Cancelled.":
        return "Cancelled"
    for op in reversed(workspace.session.operations[first_op:]):
        result = op.get("result") or {}
        if op.get("status") == "error" and isinstance(result, dict):
            kind = result.get("type")  # type: ignore[union-attr]
            if isinstance(kind, str) and kind not in {"LoopGuard", "Cancelled"}:
                return kind
    return "TurnError"


def suggestions(data: list[DataItem], has_figure: bool) -> list[str]:
    """Follow-up requests that make sense after this turn."""
    out: list[str] = []
    labels = [d.label for d in data]
    if labels and not has_figure:
        out.append(f"Plot {' and '.join(labels[:2])}")
    if labels:
        out.append(f"Describe {labels[0]}")
        out.append(f"Compute the 1-hour running mean of {labels[0]}")
    if has_figure:
        out.append("Export the figure as PNG")
        out.append("Zoom the plot to the first day")
    if not out:
        out = ["List missions", "Search datasets for solar wind speed"]
    return out[:4]


def _composed(workspace: Workspace, result: TurnResult) -> tuple[ComposedAnswer, list[Event]]:
    """The turn's answer through the composer, its detail published to the activity.

    The key numbers are those of the figure the turn drew, else of the data it stored;
    earlier answers of the session are not repeated. The chat history keeps the composed
    text, so a reloaded conversation reads as the live one did.
    """
    session = workspace.session
    figure = session.plot.current if result.figures else None
    numbers = key_numbers(session.store, figure, [d.label for d in result.data[:4]])
    answers = [str(m.get("content", "")) for m in session.history if m.get("role") == "assistant"]
    composed = compose_answer(result.answer, numbers, answers[:-1], result.error)
    last = session.history[-1] if session.history else None
    if (
        last is not None
        and last.get("role") == "assistant"
        and last.get("content") == result.answer
    ):
        last["content"] = composed.text
    published = [
        session.events.publish("detail", agent="answer", summary=detail)
        for detail in composed.details
    ]
    return composed, published


def build_response(
    request: AskRequest,
    workspace: Workspace,
    result: TurnResult,
    events: list[Event],
    first_op: int,
    answered_by: str,
) -> AskResponse:
    """The `AskResponse` of a finished turn.

    Args:
        request: What was asked.
        workspace: The session the turn ran in.
        result: What `run_turn` returned.
        events: The session events of the turn.
        first_op: Index of the turn's first record in the operations log.
        answered_by: Name of the assistant that answered.
    """
    data = [DataItem(**vars(d)) for d in result.data]
    figure = figure_json(workspace) if result.figures else None
    error = None
    if result.error is not None:
        kind = result.error_type or _error_type(workspace, first_op, result.error)
        error = ErrorInfo(type=kind, message=readable_iso_ranges(result.error))
    composed, published = _composed(workspace, result)
    return AskResponse(
        answer=composed.text,
        details=list(composed.details),
        session_id=result.session_id,
        data=data,
        table=_table(workspace, data[0].label) if request.include_data and data else None,
        figure=figure,
        figure_files=result.figures,
        plan=sanitize(result.plan) if result.plan else None,
        agent_results=_agent_results(events, answered_by, result.error is not None, result.usage),
        trace=[trace_event(e) for e in [*events, *published]] if request.trace else [],
        usage=sanitize(result.usage),
        suggestions=suggestions(data, figure is not None),
        error=error,
        elapsed_s=round(result.elapsed_s, 4),
    )


def make_assistant(
    workspace: Workspace,
    model: str | None = None,
    usage: UsageTracker | None = None,
    preferences: AgentPreferences | None = None,
    build_model: ModelBuilder | None = None,
) -> tuple[Assistant, ModelConfig]:
    """The assistant that answers in `workspace` (with the agent preferences applied).

    Raises:
        XhelioError: The model string or an agent preference is not usable.
    """
    extra = {"build_model": build_model} if build_model is not None else {}
    assistant, config = factory.make_assistant(workspace, model, usage, **extra)
    if preferences is not None and isinstance(assistant, PlanningAssistant):
        assistant.set_preferences(preferences)
    return assistant, config


def run_request(
    workspace: Workspace,
    assistant: Assistant,
    request: AskRequest,
    cancel: threading.Event,
    *,
    offline: bool = False,
    usage: UsageTracker | None = None,
) -> AskResponse:
    """Run `request` as one turn of `assistant` in `workspace` and build its response.

    The one place a turn runs (`execute`, `xhelio ask`, the chat REPL and the web app's
    background turns all call it): the turn is recorded and saved, a figure goes into the
    gallery, and a failure is the response's `error`; it never raises for a failed turn.

    Args:
        workspace: The session, held by the caller for the whole turn.
        assistant: What answers (an agent, the offline interpreter, a plan action).
        request: What was asked.
        cancel: Set to stop the turn at its next step.
        offline: The assistant is the offline one (it gets the bare question).
        usage: The tracker the assistant counts tokens in, when the reply carries none.
    """
    bus = workspace.session.events
    last_id = max((e.id for e in bus.events()), default=0)
    first_op = len(workspace.session.operations)
    started = time.time()
    if request.deep:
        try:
            assistant = deep_analysis(assistant)
        except XhelioError as exc:
            return failed_before_turn(exc, workspace.session.id)
    result = run_turn(
        workspace,
        assistant,
        _question(request, offline),
        cancel,
        max_requests=request.max_turns,
    )
    if not result.usage and usage is not None and usage.per_agent():
        result.usage = usage.to_dict()
    result.elapsed_s = time.time() - started
    if result.figures:
        save_gallery_figure(workspace, request.question)
    events = bus.events(since_id=last_id)
    response = build_response(request, workspace, result, events, first_op, assistant.name)
    if response.answer != result.answer:
        # The history now holds the composed answer. run_turn saved the turn already:
        # if this save fails, only the composed wording is not kept.
        with contextlib.suppress(OSError, XhelioError):
            workspace.save(title=request.question[:80])
    return response


def failed_before_turn(exc: XhelioError, session_id: str | None) -> AskResponse:
    """The response for a request that could not start a turn (bad model, bad session)."""
    error = ErrorInfo(type=error_type(exc), message=exc.message)
    return AskResponse(answer="", session_id=session_id, error=error)


def execute(
    hub: SessionHub,
    request: AskRequest,
    *,
    wait: bool = True,
    listener: Listener | None = None,
    on_session: Callable[[str], None] | None = None,
    build_model: ModelBuilder | None = None,
) -> AskResponse:
    """Run `request` in its session (a new one when it names none) and return the response.

    Args:
        hub: The open sessions.
        request: What to do.
        wait: Wait while the session runs another request (else `SessionBusyError`).
        listener: Called with every event the session publishes during the turn.
        on_session: Called with the session id before the turn starts.
        build_model: Turns model strings into pydantic-ai models (tests script them).

    Raises:
        SessionNotFoundError: `request.session_id` names no session.
        SessionBusyError: The session is busy and `wait` is False.
    """
    sid = request.session_id or hub.create(title=request.question[:80])
    with hub.checkout(sid, wait=wait) as entry:
        workspace = entry.workspace
        assert workspace is not None
        if on_session is not None:
            on_session(sid)
        bus = workspace.session.events
        unsubscribe = bus.subscribe(lambda e: listener(e, workspace)) if listener else None
        try:
            usage = UsageTracker()
            try:
                prefs = AgentPreferences.of(request.prefer_agents, request.disable_agents)
                assistant, config = make_assistant(
                    workspace, request.model, usage, prefs, build_model
                )
            except XhelioError as exc:
                return failed_before_turn(exc, sid)
            return run_request(
                workspace, assistant, request, entry.cancel, offline=config.offline, usage=usage
            )
        finally:
            if unsubscribe is not None:
                unsubscribe()
