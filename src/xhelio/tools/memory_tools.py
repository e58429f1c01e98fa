"""Long-term memory tools: agents rate injected memories; users and agents manage them.

`review_memory` is offered to every sub-agent (and the reviewer is the agent the memory
was injected into, read from the session's ``memory_injected`` events). The others are
the management surface shared by MCP, REST and the Python API (see docs/memory.md).
Imports `tools.{context,registry}` and `long_term_memory`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from xhelio.long_term_memory.model import Memory
from xhelio.long_term_memory.search import load_embedder, search_memories
from xhelio.long_term_memory.status import memory_status
from xhelio.long_term_memory.store import MemoryStore
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool

__all__ = ["MEMORY_TOOLS"]


def _shown(memories: list[Memory]) -> dict[str, Any]:
    return {"count": len(memories), "memories": [m.to_dict() for m in memories]}


def _reviewer(ctx: ToolContext, memory_id: str) -> str:
    """The agent whose prompt last held `memory_id` in this session ("user" if none)."""
    for event in reversed(ctx.session.events.events(types={"memory_injected"})):
        if memory_id in event.data.get("ids", []):
            return event.agent or "agent"
    return "user"


@tool("conversation", public=True)
def review_memory(
    ctx: ToolContext,
    memory_id: str,
    stars: Annotated[int, Field(ge=1, le=5)],
    comment: str = "",
) -> dict[str, Any]:
    """Rate a long-term memory you were shown: did it help with this task?

    Args:
        memory_id: The id shown with the memory (id=...).
        stars: 5 prevented a mistake, 4 useful context, 3 relevant but no impact,
            2 irrelevant, 1 misleading.
        comment: One sentence on why.
    """
    store = MemoryStore.open(ctx.settings)
    review = store.review(memory_id, stars, comment, _reviewer(ctx, memory_id), ctx.session.id)
    return {"memory_id": memory_id, "stars": review.stars, "agent": review.agent}


@tool("conversation", public=True)
def remember(
    ctx: ToolContext,
    content: str,
    type: str = "preference",
    scopes: list[str] | None = None,
) -> dict[str, Any]:
    """Store a long-term memory the user asked for (kept across sessions).

    Args:
        content: One self-contained sentence, e.g. 'Plot particle fluxes on a log scale'.
        type: preference, pitfall, reflection or summary.
        scopes: Where it applies: generic, data_ops, visualization, mission:<ID>.
    """
    memory = MemoryStore.open(ctx.settings).add(
        content, type, scopes or ["generic"], source="user_explicit", session_id=ctx.session.id
    )
    return memory.to_dict()


@tool("conversation", public=True)
def search_memory(
    ctx: ToolContext, query: str, scope: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Search the long-term memories by words (ids such as BGSEc match exactly).

    Args:
        query: Words to look for.
        scope: Only memories of this scope (generic, data_ops, visualization, mission:<ID>).
        limit: Maximum results (1-50).
    """
    found = search_memories(
        MemoryStore.open(ctx.settings),
        query,
        embedder=load_embedder(ctx.settings),
        limit=max(1, min(limit, 50)),
        scope=scope,
    )
    return _shown(found)


@tool("conversation", public=True)
def list_memories(
    ctx: ToolContext, type: str | None = None, scope: str | None = None, archived: bool = False
) -> dict[str, Any]:
    """List the long-term memories, newest first.

    Args:
        type: Only this type (preference, summary, pitfall, reflection).
        scope: Only this scope.
        archived: Include archived (superseded or consolidated) versions.
    """
    store = MemoryStore.open(ctx.settings)
    return _shown(store.list(types=[type] if type else (), scope=scope, include_archived=archived))


@tool("conversation", public=True)
def edit_memory(
    ctx: ToolContext,
    memory_id: str,
    content: str | None = None,
    scopes: list[str] | None = None,
    enabled: bool | None = None,
) -> dict[str, Any]:
    """Change a memory's text or scopes (a new version), or switch it on or off.

    Args:
        memory_id: The memory's id.
        content: The new text.
        scopes: The new scopes.
        enabled: False keeps it but never injects it; True switches it back on.
    """
    store = MemoryStore.open(ctx.settings)
    memory = store.get(memory_id)
    if content is not None or scopes is not None:
        memory = store.edit(memory.id, content=content, scopes=scopes)
    if enabled is not None:
        memory = store.set_enabled(memory.id, enabled)
    return memory.to_dict()


@tool("conversation", public=True)
def delete_memory(ctx: ToolContext, memory_id: str) -> dict[str, Any]:
    """Delete a long-term memory for good.

    Args:
        memory_id: The memory's id.
    """
    return {"deleted": MemoryStore.open(ctx.settings).delete(memory_id).id}


@tool("conversation", name="memory_status", public=True)
def memory_status_tool(ctx: ToolContext) -> dict[str, Any]:
    """Whether long-term memory is on, how it searches, and how many memories it holds."""
    return memory_status(ctx.settings)


MEMORY_TOOLS = (
    review_memory,
    remember,
    search_memory,
    list_memories,
    edit_memory,
    delete_memory,
    memory_status_tool,
)
