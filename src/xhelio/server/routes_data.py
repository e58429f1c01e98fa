"""Data in a session, no LLM: fetch, entries, plot, compute and uploads.

Entries can be listed, previewed, described and exported. Writes go through the session
funnel, so they appear in its operations log and events.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel, Field

from xhelio.api.direct import (
    build_figure,
    checked_call,
    read_tool,
    safe_upload_name,
    uploads_dir,
)
from xhelio.api.events import stream_events
from xhelio.api.models import StreamEvent
from xhelio.api.turns import save_gallery_figure
from xhelio.operations import DOWNLOAD_CALLER
from xhelio.server.deps import ServerState, server_state
from xhelio.server.errors import ApiError, error_kind, error_message
from xhelio.server.sse import sse_response
from xhelio.session.events import Event
from xhelio.sources.registry import SourceName
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.funnel import sanitize
from xhelio.tools.workspace import Workspace

__all__ = ["router"]

router = APIRouter(prefix="/sessions/{session_id}", tags=["data"])
State = Annotated[ServerState, Depends(server_state)]
_MEDIA = {
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
    "netcdf": "application/x-netcdf",
    "png": "image/png",
    "pdf": "application/pdf",
    "html": "text/html",
}


class FetchBody(BaseModel):
    """Body of `POST /fetch`."""

    dataset_id: str = Field(min_length=1, max_length=100)
    parameter_id: str = Field(min_length=1, max_length=200)
    time_range: str = Field(min_length=1, max_length=200)
    source: SourceName | None = None


class PlotBody(BaseModel):
    """Body of `POST /plot`."""

    labels: list[str] = Field(min_length=1, max_length=20)
    title: str | None = Field(default=None, max_length=200)
    overlay: bool = False
    log_y: bool = False


class ComputeBody(BaseModel):
    """Body of `POST /compute` (custom_operation)."""

    code: str = Field(min_length=1, max_length=50_000)
    inputs: list[str] = Field(min_length=1, max_length=20)
    label: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    units: dict[str, str] | str | None = None


def _write(state: ServerState, session_id: str, work: Callable[[Workspace], Any]) -> Any:
    """Run `work` holding the session (409 while a request runs in it)."""
    with state.assistant.hub.checkout(session_id, wait=False) as entry:
        assert entry.workspace is not None
        return work(entry.workspace)


def _fetch_args(body: FetchBody) -> dict[str, Any]:
    return body.model_dump(exclude_none=True)


@router.post("/fetch")
def fetch(session_id: str, body: FetchBody, state: State) -> dict[str, Any]:
    """Fetch one parameter into the session; returns the fetch summary."""
    result = _write(state, session_id, lambda ws: checked_call(ws, "fetch_data", _fetch_args(body)))
    return {**result.to_dict(), "labels": result.labels}


async def _streamed(
    state: ServerState, session_id: str, work: Callable[[Workspace], dict[str, Any]]
) -> AsyncIterator[StreamEvent]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()

    def run() -> dict[str, Any]:
        def body(ws: Workspace) -> dict[str, Any]:
            def listener(event: Event) -> None:
                for item in stream_events(event, ws):
                    loop.call_soon_threadsafe(queue.put_nowait, item)

            unsubscribe = ws.session.events.subscribe(listener)
            try:
                return work(ws)
            finally:
                unsubscribe()

        try:
            return _write(state, session_id, body)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    future = loop.run_in_executor(None, run)
    while (item := await queue.get()) is not None:
        yield item
    try:
        result = await future
    except Exception as exc:
        error = {"type": error_kind(exc), "message": error_message(exc)}
        yield StreamEvent(type="error", data=error)
        result = {"status": "error", **error}
    yield StreamEvent(type="done", data={"result": result})


@router.post("/fetch/stream", response_class=StreamingResponse)
def fetch_stream(session_id: str, body: FetchBody, state: State) -> StreamingResponse:
    """Fetch as server-sent events (tool_call, progress, tool_result, data, done)."""
    state.assistant.hub.require(session_id)

    def work(ws: Workspace) -> dict[str, Any]:
        result = checked_call(ws, "fetch_data", _fetch_args(body))
        return {**result.to_dict(), "labels": result.labels}

    return sse_response(_streamed(state, session_id, work), state.config.max_stream_events)


@router.get("/entries")
def entries(session_id: str, state: State) -> dict[str, Any]:
    """Every data entry of the session."""
    workspace = state.assistant.hub.view(session_id)
    return {"entries": sanitize([entry_summary(e) for e in workspace.session.store])}


@router.get("/entries/{label}/preview")
def preview(
    session_id: str, label: str, state: State, n: Annotated[int, Query(ge=1, le=50)] = 5
) -> dict[str, Any]:
    """First and last `n` rows of an entry."""
    workspace = state.assistant.hub.view(session_id)
    return sanitize(read_tool(workspace, "preview_data", {"label": label, "n": n}))


@router.get("/entries/{label}/describe")
def describe(session_id: str, label: str, state: State) -> dict[str, Any]:
    """Statistics of an entry."""
    workspace = state.assistant.hub.view(session_id)
    return sanitize(read_tool(workspace, "describe_data", {"label": label}))


def _file(path: Path, fmt: str) -> FileResponse:
    return FileResponse(path, media_type=_MEDIA[fmt], filename=path.name)


@router.get("/entries/{label}/export", response_class=FileResponse)
def export_entry(
    session_id: str,
    label: str,
    state: State,
    format: Literal["csv", "parquet", "netcdf"] = "csv",
) -> FileResponse:
    """Download an entry as CSV, parquet or netCDF (a download: never a pipeline step)."""
    args = {"label": label, "format": format}
    result = _write(
        state, session_id, lambda ws: checked_call(ws, "save_data", args, DOWNLOAD_CALLER)
    )
    return _file(Path(str(result.payload["path"])), format)


@router.post("/plot")
def plot(session_id: str, body: PlotBody, state: State) -> dict[str, Any]:
    """Plot stored labels (one panel each, or overlaid) as the session's figure."""
    spec = build_figure(body.labels, body.overlay, body.log_y, body.title)

    def work(ws: Workspace) -> dict[str, Any]:
        result = checked_call(ws, "render_plotly_json", {"figure": spec})
        fig_id = save_gallery_figure(ws, f"plot {' '.join(body.labels)}")
        current = ws.session.plot.current
        figure = sanitize(current.figure) if current is not None else None
        return {**result.to_dict(), "figure": figure, "gallery_id": fig_id}

    return _write(state, session_id, work)


@router.post("/compute")
def compute(session_id: str, body: ComputeBody, state: State) -> dict[str, Any]:
    """Run code on stored labels in the sandbox (refused without OS isolation unless opted in)."""
    args: dict[str, Any] = {
        "source_labels": body.inputs,
        "code": body.code,
        "output_label": body.label,
        "description": body.description,
    }
    if body.units is not None:
        args["units"] = body.units
    result = _write(state, session_id, lambda ws: checked_call(ws, "custom_operation", args))
    return sanitize({**result.to_dict(), "labels": result.labels})


@router.put("/uploads/{filename}")
async def upload(session_id: str, filename: str, request: Request, state: State) -> dict[str, Any]:
    """Store the raw request body as a file in the session's own upload folder.

    Each upload streams into its own temporary file, renamed over the target only when
    complete: parallel uploads of one name all succeed and the last one to finish wins,
    whole.
    """
    name = safe_upload_name(filename)
    state.assistant.hub.require(session_id)
    workspace = state.assistant.hub.view(session_id)
    target = uploads_dir(workspace) / name
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.", suffix=".part")
    partial = Path(temp)
    limit = state.config.max_upload_bytes
    size = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError(
                        413, "PayloadTooLarge", f"The upload is larger than {limit} bytes."
                    )
                fh.write(chunk)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return {"name": name, "bytes": size}
