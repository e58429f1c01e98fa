"""`POST /ask`, `POST /ask/stream` and `POST /sessions/{id}/cancel`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import Response, StreamingResponse

from xhelio.agents.models import normalize_model_string
from xhelio.api.hub import SessionBusyError
from xhelio.api.models import AskRequest, AskResponse
from xhelio.server.deps import ServerState, server_state
from xhelio.server.sse import sse_response

__all__ = ["router"]

router = APIRouter(tags=["ask"])
State = Annotated[ServerState, Depends(server_state)]


def _precheck(state: ServerState, request: AskRequest) -> None:
    """400 for an unusable model, 404 for an unknown session, 409 for a busy one."""
    if request.model is not None and request.model.strip():
        normalize_model_string(request.model, "model")
    if request.session_id is None:
        return
    state.assistant.hub.require(request.session_id)
    entry = state.assistant.hub.peek(request.session_id)
    if entry is not None and entry.busy:
        raise SessionBusyError(
            f"Session '{request.session_id}' is already running a request; wait or cancel it."
        )


@router.post("/ask", response_model=AskResponse)
async def ask(request: AskRequest, state: State) -> Response:
    """Answer one request (a new session when `session_id` is omitted).

    The response is already an `AskResponse`: it is written as JSON once, by pydantic's
    serializer, instead of validated again and encoded twice on the event loop (a figure
    holds thousands of points, and the loop serves every session).
    """
    _precheck(state, request)
    response = await state.assistant.arun(request, wait=False)
    return Response(response.model_dump_json(), media_type="application/json")


@router.post("/ask/stream", response_class=StreamingResponse)
async def ask_stream(request: AskRequest, state: State) -> StreamingResponse:
    """Answer one request as server-sent events, ending with `done`.

    The turn outlives its stream: a client that goes away (a reload, another page) follows
    it again on `GET /sessions/{id}/events`; only `POST /sessions/{id}/cancel` stops it.
    """
    _precheck(state, request)
    events = state.assistant.astream(request, wait=False, detach=True)
    return sse_response(events, state.config.max_stream_events)


@router.post("/sessions/{session_id}/cancel")
def cancel(session_id: str, state: State) -> dict[str, bool]:
    """Cancel the request running in the session."""
    return {"cancelled": state.assistant.cancel(session_id)}
