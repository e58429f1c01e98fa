"""Saved-pipeline routes for the web app's Pipelines page, all under /api/v1.

- `GET /pipelines?q=&mission=`: saved pipelines grouped into families (variants sharing
  the same data logic). With `q` or `mission` it is the store's search (indexed pipelines
  only); without, every saved pipeline, newest family first.
- `GET /pipelines/{ref}`: one pipeline (id or name): its steps, variables, the DAG's edges
  (from each step's `depends_on`), its family and the code of its compute steps.
- `GET /pipelines/{ref}/export?format=py|ipynb`: the standalone script or notebook.
- `POST /pipelines/{ref}/run` `{"time_range": "...", "session_id": "..."}`: replay with a
  new time range, no model, as a turn of a session (a new one unless given), in the
  background; answers at once with the session id and the event id to follow
  (`GET /sessions/{id}/events?follow=true&after=N`), so the chat page can show it live.
- `DELETE /pipelines/{ref}`.

Errors use the contract's shape `{"status": "error", "type", "message"}`. A bad time range
is refused before anything runs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from xhelio.agents.turn import AssistantReply
from xhelio.api.assistant import Assistant
from xhelio.errors import UserError, XhelioError
from xhelio.pipelines.export import dataset_citations, export_text
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineRow, PipelineStore
from xhelio.server.background import start_turn
from xhelio.server.deps import server_state
from xhelio.server.errors import error_for
from xhelio.server.errors import error_response as _error
from xhelio.timerange import parse_time_range
from xhelio.tools.workspace import Workspace
from xhelio.tools.wrappers import Toolset

__all__ = ["router"]

router = APIRouter(prefix="/api/v1")


def _assistant(request: Request) -> Assistant:
    return server_state(request).assistant


def _store(request: Request) -> PipelineStore:
    # Opening is cheap (one SQLite connection per call) and keeps no state between
    # requests, so pipelines saved by the CLI or by a chat turn show up at once.
    return PipelineStore(_assistant(request).settings)


def _families(rows: list[PipelineRow]) -> list[dict[str, Any]]:
    grouped: OrderedDict[str, list[PipelineRow]] = OrderedDict()
    for row in rows:
        grouped.setdefault(row.family_id, []).append(row)
    return [
        {"family_id": fid, "name": variants[0].name, "variants": [v.to_dict() for v in variants]}
        for fid, variants in grouped.items()
    ]


@router.get("/pipelines")
def list_pipelines(request: Request, q: str = "", mission: str = "") -> Response:
    """Saved pipelines by family; searched when `q` or `mission` is given."""
    store = _store(request)
    if q.strip() or mission.strip():
        hits = store.search(q, mission=mission.strip() or None, limit=100)
        families = [h.to_dict() for h in hits]
        return JSONResponse({"query": q, "mission": mission, "families": families})
    return JSONResponse({"query": "", "mission": "", "families": _families(store.list())})


def _compute_code(pipeline: Pipeline) -> list[dict[str, str]]:
    """The code of each compute step (what a reviewer wants to read first)."""
    found: list[dict[str, str]] = []
    for step in pipeline.steps:
        code = step.args.get("code")
        if step.tool_phase == "compute" and isinstance(code, str):
            found.append({"step_id": step.step_id, "tool": step.tool, "code": code})
    return found


@router.get("/pipelines/{ref}")
def get_pipeline(request: Request, ref: str) -> Response:
    """One saved pipeline with its steps, DAG edges, family and compute code."""
    store = _store(request)
    try:
        pipeline = store.load(ref)
        row = store.row(pipeline.id)
    except UserError as exc:
        return _error(404, "NotFound", exc.message)
    known = {s.step_id for s in pipeline.steps}
    edges = [[dep, s.step_id] for s in pipeline.steps for dep in s.depends_on if dep in known]
    return JSONResponse(
        {
            "pipeline": pipeline.to_dict(),
            "row": row.to_dict(),
            "family": [r.to_dict() for r in store.family(row.family_id)],
            "edges": edges,
            "code": _compute_code(pipeline),
            "time_range": pipeline.values().get(TIME_RANGE_VAR, ""),
        }
    )


@router.get("/pipelines/{ref}/export")
def export_pipeline(request: Request, ref: str, format: Literal["py", "ipynb"] = "py") -> Response:
    """The pipeline as a standalone Python script or Jupyter notebook (with citations)."""
    xh = _assistant(request)
    try:
        pipeline = _store(request).load(ref)
        citations = dataset_citations(pipeline, xh.settings)
        text = export_text(pipeline, format, citations)
    except XhelioError as exc:
        return _error(
            404 if "no pipeline" in exc.message.lower() else 400, type(exc).__name__, exc.message
        )
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in pipeline.name) or pipeline.id
    media = "text/x-python" if format == "py" else "application/x-ipynb+json"
    return Response(
        text,
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{safe}.{format}"'},
    )


@router.delete("/pipelines/{ref}")
def delete_pipeline(request: Request, ref: str) -> Response:
    """Delete a saved pipeline (its family's other variants stay)."""
    try:
        row = _store(request).delete(ref)
    except UserError as exc:
        return _error(404, "NotFound", exc.message)
    return JSONResponse({"deleted": row.id, "name": row.name})


class RunBody(BaseModel):
    """What to replay: a new time range (CLI grammar) and optionally the session to use."""

    time_range: str = Field(default="", max_length=200)
    session_id: str | None = Field(default=None, max_length=80)


class _Replay:
    """A replay as a turn: `run_turn` records, saves and publishes it like any request."""

    name = "pipeline"

    def __init__(self, pipeline: Pipeline, funnel: Toolset, overrides: dict[str, str]) -> None:
        self.pipeline = pipeline
        self.funnel = funnel
        self.overrides = overrides

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Run every step; a run where nothing could be made is the turn's error."""
        del request, cancel  # run_turn hands the funnel the same cancel event
        result = replay_pipeline(self.pipeline, self.funnel, self.overrides)
        failed = result.status == "failed"
        return AssistantReply(result.summary(), error=result.summary() if failed else None)


@router.post("/pipelines/{ref}/run")
def run_pipeline(request: Request, ref: str, body: RunBody) -> Response:
    """Replay a pipeline for a time range in a session; follow it on the events route."""
    xh = _assistant(request)
    try:
        pipeline = _store(request).load(ref)
    except UserError as exc:
        return _error(404, "NotFound", exc.message)
    overrides: dict[str, str] = {}
    text = body.time_range.strip()
    if text:
        if TIME_RANGE_VAR not in pipeline.variables:
            return _error(
                400, "UserError", f"Pipeline {pipeline.name} has no time range to change."
            )
        try:
            overrides[TIME_RANGE_VAR] = str(parse_time_range(text))
        except XhelioError as exc:
            return error_for(exc)
    shown = overrides.get(TIME_RANGE_VAR) or pipeline.values().get(TIME_RANGE_VAR, "")
    sid = body.session_id
    if sid is None:
        sid = xh.hub.create(title=f"pipeline {pipeline.name}: {shown}"[:120])
    elif not xh.hub.exists(sid):
        return _error(404, "NotFound", f"No session '{sid}'.")

    def prepare(workspace: Workspace) -> tuple[_Replay, str]:
        replay = _Replay(pipeline, workspace.funnel, overrides)
        return replay, f"run pipeline {pipeline.name} for {shown}"

    started = start_turn(xh.hub, sid, prepare, "replay")
    failure = started.error_response()
    if failure is not None:
        return failure
    return JSONResponse(
        {
            "started": True,
            "session_id": sid,
            "pipeline_id": pipeline.id,
            "time_range": shown,
            "after_event_id": started.after_event_id,
        }
    )
