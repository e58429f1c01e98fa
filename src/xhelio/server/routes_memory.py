"""`/memory`: list, search, add, edit, enable/disable and delete long-term memories.

The same store the CLI (`xhelio memory`) and the agents use, under the server's home.
Bad input (unknown type or scope, an unknown id) is a 400/404 with a one-line message.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from xhelio.long_term_memory.model import Memory, MemoryRequestError
from xhelio.long_term_memory.search import load_embedder, search_memories
from xhelio.long_term_memory.status import memory_status
from xhelio.long_term_memory.store import MemoryStore
from xhelio.server.deps import ServerState, server_state
from xhelio.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/memory", tags=["memory"])
State = Annotated[ServerState, Depends(server_state)]
Text = Annotated[str, Field(min_length=1, max_length=2000)]
Scopes = Annotated[list[Annotated[str, Field(max_length=60)]], Field(max_length=10)]


class NewMemory(BaseModel):
    """Body of `POST /memory`."""

    model_config = ConfigDict(extra="forbid")

    content: Text
    type: str = "preference"
    scopes: Scopes = Field(default_factory=lambda: ["generic"])


class MemoryChange(BaseModel):
    """Body of `PATCH /memory/{id}`: a new text or scopes (a new version), or on/off."""

    model_config = ConfigDict(extra="forbid")

    content: Text | None = None
    scopes: Scopes | None = None
    enabled: bool | None = None


def _store(state: ServerState) -> MemoryStore:
    return MemoryStore.open(state.assistant.settings)


def _found(state: ServerState, memory_id: str) -> Memory:
    try:
        return _store(state).get(memory_id)
    except MemoryRequestError as exc:
        raise ApiError(404, "NotFound", exc.message) from None


def _listing(memories: list[Memory]) -> dict[str, Any]:
    return {"count": len(memories), "memories": [m.to_dict() for m in memories]}


@router.get("")
def list_memories(
    state: State,
    type: Annotated[str | None, Query(max_length=20)] = None,
    scope: Annotated[str | None, Query(max_length=60)] = None,
    archived: bool = False,
) -> dict[str, Any]:
    """Memories newest first (archived versions only when asked)."""
    found = _store(state).list(types=[type] if type else (), scope=scope, include_archived=archived)
    return _listing(found)


@router.get("/search")
def search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """Memories matching words, best first."""
    settings = state.assistant.settings
    found = search_memories(_store(state), q, embedder=load_embedder(settings), limit=limit)
    return _listing(found)


@router.get("/status")
def status(state: State) -> dict[str, Any]:
    """The switch, the settings, how search works here, and the counts."""
    return memory_status(state.assistant.settings)


@router.post("", status_code=201)
def add(body: NewMemory, state: State) -> dict[str, Any]:
    """Store a memory the user states (source user_explicit)."""
    return _store(state).add(body.content, body.type, body.scopes).to_dict()


@router.get("/{memory_id}")
def history(memory_id: str, state: State) -> dict[str, Any]:
    """A memory and the versions it supersedes, newest first."""
    _found(state, memory_id)
    return _listing(_store(state).history(memory_id))


@router.patch("/{memory_id}")
def change(memory_id: str, body: MemoryChange, state: State) -> dict[str, Any]:
    """Edit the text or scopes (a new version), and/or switch the memory on or off."""
    memory = _found(state, memory_id)
    store = _store(state)
    if body.content is not None or body.scopes is not None:
        memory = store.edit(memory.id, content=body.content, scopes=body.scopes)
    if body.enabled is not None:
        memory = store.set_enabled(memory.id, body.enabled)
    return memory.to_dict()


@router.delete("/{memory_id}")
def delete(memory_id: str, state: State) -> dict[str, Any]:
    """Delete a memory for good."""
    _found(state, memory_id)
    return {"deleted": _store(state).delete(memory_id).id}
