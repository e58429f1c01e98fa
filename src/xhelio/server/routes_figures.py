"""The session's current figure, its exports, and the gallery of every figure it made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse

from xhelio.api.events import figure_json
from xhelio.api.turns import gallery_dir
from xhelio.server.deps import ServerState, server_state
from xhelio.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/sessions/{session_id}", tags=["figures"])
State = Annotated[ServerState, Depends(server_state)]
_MEDIA = {"png": "image/png", "pdf": "application/pdf", "html": "text/html"}


@router.get("/figure")
def figure(session_id: str, state: State) -> dict[str, Any]:
    """The current Plotly figure JSON (null before the first plot)."""
    return {"figure": figure_json(state.assistant.hub.view(session_id))}


@router.get("/figure/export", response_class=FileResponse)
def export_figure(
    session_id: str, state: State, format: Literal["png", "pdf", "html"] = "png"
) -> FileResponse:
    """Download the current figure as PNG, PDF or HTML.

    A download is not an analysis step: it is written straight from the plot state, not
    through the tool funnel, so it never enters the operations log (nor a saved pipeline).
    """
    with state.assistant.hub.checkout(session_id, wait=False) as entry:
        assert entry.workspace is not None
        plot = entry.workspace.session.plot
        if plot.current is None:
            raise ApiError(404, "NotFound", "This session has no figure yet; plot something first.")
        path = plot.export(format)
    return FileResponse(path, media_type=_MEDIA[format], filename=path.name)


def _records(state: ServerState, session_id: str) -> list[Path]:
    folder = gallery_dir(state.assistant.hub.view(session_id))
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@router.get("/gallery")
def gallery(session_id: str, state: State) -> dict[str, Any]:
    """Every figure the session produced, with the request that made it."""
    figures: list[dict[str, Any]] = []
    for path in _records(state, session_id):
        record = json.loads(path.read_text())
        figures.append({k: record.get(k) for k in ("id", "created", "request", "traces")})
    return {"figures": figures}


@router.get("/gallery/{fig_id}")
def gallery_figure(session_id: str, fig_id: int, state: State) -> dict[str, Any]:
    """One gallery figure with its Plotly JSON."""
    for path in _records(state, session_id):
        record: dict[str, Any] = json.loads(path.read_text())
        if record.get("id") == fig_id:
            return record
    raise ApiError(404, "NotFound", f"This session has no gallery figure {fig_id}.")
