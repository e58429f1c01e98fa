"""`GET /sessions/{id}/files/{folder}/{path}`: download a file a session wrote or received.

The URLs clients see in place of server paths (`client_paths`) point here. Only files
inside the session's `exports/` and `uploads/` folders are served; hidden files and
anything resolving outside them are not.
"""

from __future__ import annotations

import mimetypes
from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse

from xhelio.server.deps import ServerState, server_state
from xhelio.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/sessions/{session_id}", tags=["files"])
State = Annotated[ServerState, Depends(server_state)]


@router.get("/files/{folder}/{path:path}", response_class=FileResponse)
def session_file(
    session_id: str, folder: Literal["exports", "uploads"], path: str, state: State
) -> FileResponse:
    """One file of the session's exports or uploads, as a download."""
    root = (state.assistant.hub.view(session_id).session.folder / folder).resolve()
    target = (root / path).resolve()
    parts = path.split("/")
    if (
        any(not p or p.startswith(".") for p in parts)
        or not target.is_relative_to(root)
        or not target.is_file()
    ):
        raise ApiError(404, "NotFound", f"This session has no file {folder}/{path}.")
    media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    return FileResponse(target, media_type=media, filename=target.name)
