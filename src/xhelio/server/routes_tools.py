"""Public tools over REST: list them, and run one in a session through its funnel.

`GET /tools` lists every tool declared `public=True` with its argument schema;
`POST /sessions/{id}/tools/{name}` runs one with the JSON body as its arguments and
answers with the tool's result (a failure is an error response with the tool's own error
type). A new capability that marks its tools public is reachable here with no more code.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends

from xhelio.api.direct import as_exception
from xhelio.server.deps import ServerState, server_state
from xhelio.server.errors import ApiError
from xhelio.tools.funnel import sanitize

__all__ = ["router"]

router = APIRouter(tags=["tools"])
State = Annotated[ServerState, Depends(server_state)]


@router.get("/tools")
def list_public_tools(state: State) -> list[dict[str, Any]]:
    """The public tools: name, category, phase, description and argument schema."""
    return [{**t.describe(), "phase": t.phase} for t in state.assistant.public_tools()]


@router.post("/sessions/{session_id}/tools/{name}")
def call_public_tool(
    session_id: str,
    name: str,
    state: State,
    arguments: Annotated[dict[str, Any] | None, Body()] = None,
) -> dict[str, Any]:
    """Run public tool `name` in the session with the body as its arguments."""
    if name not in {t.name for t in state.assistant.public_tools()}:
        raise ApiError(404, "not_found", f"There is no public tool named {name!r}.")
    result = state.assistant.call_tool(session_id, name, arguments, wait=False, caller="rest")
    if not result.ok:
        raise as_exception(result)  # its status follows the tool's error type
    return sanitize({**result.to_dict(), "labels": result.labels})
