"""API routes the web app needs beyond the v1 contract (docs/api.md), all under /api/v1.

- `GET /sessions/{id}/gallery/{fig_id}/export?format=png|pdf|html`: one gallery figure as
  a file (the contract exports only the session's current figure).
- `POST /sessions/{id}/plan/retry`: run the first failed task of the session's latest plan
  again, in the background; answers at once with the event id to follow
  (`GET /sessions/{id}/events?follow=true&after=N` streams the run and ends with `done`).
- `POST /sessions/{id}/plan/resume`: run what the session's unfinished plan has left (a
  plan whose process was killed is `interrupted`), in the background, like a retry.
- `POST /sessions/{id}/plan/cancel`: skip the remaining tasks of the session's unfinished
  plan (or cancel the running request).

Errors use the contract's shape `{"status": "error", "type", "message"}`. Reaches the
server's `Assistant` through `app.state`; imports the API hub, planning and render export.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from xhelio.agents import factory
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.turn import AssistantReply
from xhelio.api.assistant import Assistant
from xhelio.errors import XhelioError
from xhelio.render.export import shared_exporter, write_html
from xhelio.server.background import start_turn
from xhelio.server.deps import server_state
from xhelio.server.errors import error_for
from xhelio.server.errors import error_response as _error
from xhelio.tools.workspace import Workspace

__all__ = ["router"]

router = APIRouter(prefix="/api/v1")

_MEDIA = {"png": "image/png", "pdf": "application/pdf", "html": "text/html; charset=utf-8"}


def _assistant(request: Request) -> Assistant:
    """The server's `Assistant` (its hub of sessions and model builder)."""
    return server_state(request).assistant


def _gallery_file(xh: Assistant, session_id: str, fig_id: int) -> Path | None:
    folder = xh.hub.store.root / session_id / "gallery"
    path = folder / f"{fig_id:05d}.json"
    return path if path.is_file() else None


@router.get("/sessions/{session_id}/gallery/{fig_id}/export", include_in_schema=True)
def export_gallery_figure(
    request: Request, session_id: str, fig_id: int, format: Literal["png", "pdf", "html"] = "png"
) -> Response:
    """One figure of the session's gallery as a PNG, PDF or self-contained HTML file."""
    xh = _assistant(request)
    if not xh.hub.exists(session_id):
        return _error(404, "NotFound", f"No session '{session_id}'.")
    path = _gallery_file(xh, session_id, fig_id)
    if path is None:
        return _error(404, "NotFound", f"Session '{session_id}' has no figure {fig_id}.")
    figure: dict[str, Any] = json.loads(path.read_text())["figure"]
    name = f"xhelio-figure-{fig_id}.{format}"
    try:
        if format == "html":
            out = path.with_suffix(".export.html")
            write_html(figure, out)
            payload = out.read_bytes()
            out.unlink(missing_ok=True)
        else:
            payload = shared_exporter().to_bytes(figure, format)
    except XhelioError as exc:
        return error_for(exc)
    return Response(
        payload,
        media_type=_MEDIA[format],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


class _PlanRun:
    """Work on a session's plan run as a turn: `run_turn` records, saves and publishes it."""

    def __init__(
        self, planning: PlanningAssistant, work: Callable[[threading.Event], AssistantReply]
    ) -> None:
        self.name = planning.name
        self.work = work

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        del request
        return self.work(cancel)


# What to run on the session's plan: (work, question, reply fields), or why there is nothing.
PlanPick = Callable[[PlanningAssistant], "tuple[_PlanRun, str, dict[str, Any]] | str"]


def _start_plan_run(request: Request, session_id: str, name: str, pick: PlanPick) -> Response:
    """Start `pick`'s work on the session's plan in the background; answer at once."""
    xh = _assistant(request)
    if not xh.hub.exists(session_id):
        return _error(404, "NotFound", f"No session '{session_id}'.")
    fields: dict[str, Any] = {}

    def prepare(workspace: Workspace) -> tuple[_PlanRun, str] | str:
        assistant, _ = factory.make_assistant(workspace, xh.model, None, xh.build_model)
        if not isinstance(assistant, PlanningAssistant):
            return "Nothing to do: this session's assistant makes no plans."
        picked = pick(assistant)
        if isinstance(picked, str):
            return picked
        run, question, reply = picked
        fields.update(reply)
        return run, question

    started = start_turn(xh.hub, session_id, prepare, name)
    failure = started.error_response()
    if failure is not None:
        return failure
    if not started.running:
        return JSONResponse({"started": False, "message": started.message})
    return JSONResponse({"started": True, **fields, "after_event_id": started.after_event_id})


def _retry_pick(planning: PlanningAssistant) -> tuple[_PlanRun, str, dict[str, Any]] | str:
    plan = planning.latest_plan()
    failed = plan.failed() if plan is not None else []
    if not failed:
        return "Nothing to retry: the latest plan has no failed task."

    def work(cancel: threading.Event) -> AssistantReply:
        reply = planning.retry_failed(cancel)
        return reply or AssistantReply("Nothing to do: the plan has no failed task.")

    task = failed[0].description
    return _PlanRun(planning, work), f"retry: {task}", {"task": task}


def _resume_pick(planning: PlanningAssistant) -> tuple[_PlanRun, str, dict[str, Any]] | str:
    plan = planning.incomplete_plan()
    if plan is None:
        return "Nothing to resume: the session has no unfinished plan."
    run = _PlanRun(planning, lambda cancel: planning.resume(plan, cancel))
    return run, f"resume: {plan.request}", {"plan_id": plan.id}


@router.post("/sessions/{session_id}/plan/retry")
def retry_plan(request: Request, session_id: str) -> Response:
    """Start the retry of the latest plan's first failed task; follow it on /events."""
    return _start_plan_run(request, session_id, "retry", _retry_pick)


@router.post("/sessions/{session_id}/plan/resume")
def resume_plan(request: Request, session_id: str) -> Response:
    """Resume the session's unfinished (e.g. interrupted) plan; follow it on /events."""
    return _start_plan_run(request, session_id, "resume", _resume_pick)


@router.post("/sessions/{session_id}/plan/cancel")
def cancel_plan(request: Request, session_id: str) -> Response:
    """Cancel the running request, or skip the remaining tasks of an unfinished plan."""
    xh = _assistant(request)
    if not xh.hub.exists(session_id):
        return _error(404, "NotFound", f"No session '{session_id}'.")
    if xh.hub.cancel(session_id):
        return JSONResponse({"cancelled": True, "message": "Cancelling the running request."})
    try:
        with xh.hub.checkout(session_id, wait=False) as entry:
            workspace = entry.workspace
            assert workspace is not None
            assistant, _ = factory.make_assistant(workspace, xh.model, None, xh.build_model)
            plan = assistant.cancel_plan() if isinstance(assistant, PlanningAssistant) else None
    except XhelioError as exc:
        return error_for(exc)
    if plan is None:
        return JSONResponse({"cancelled": False, "message": "No unfinished plan to cancel."})
    return JSONResponse({"cancelled": True, "plan": plan.brief()})
