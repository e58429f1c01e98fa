"""Long-term memory for the LLM agents of one session: prompt blocks and the memory agent.

`MemoryContext.block(agent)` reads the store afresh at every run (so a memory added a
moment ago by the memory agent or the user is seen at the next delegation), picks the
agent's scope (``mission:<ID>`` for a mission agent, ``data_ops``, ``visualization``,
``generic`` for the orchestrator) and its budget (the orchestrator's
`memory_injection_tokens`, half of it for each sub-agent). With memory switched off, or a
store that cannot be read, the block is empty and the run goes on (the failure is logged
and published as a ``memory_agent`` error event). `start_memory_agent` attaches the
background `MemoryScheduler`. Imports `agents.{memory_agent,models}`, `long_term_memory`
and `tools.workspace`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

from pydantic_ai.usage import RunUsage

from xhelio.agents.memory_agent import MemoryAgent, MemoryScheduler
from xhelio.agents.models import ModelRouter
from xhelio.errors import XhelioError
from xhelio.long_term_memory.inject import inject
from xhelio.long_term_memory.model import MemoryRequestError, check_scopes
from xhelio.long_term_memory.store import MemoryStore
from xhelio.tools.workspace import Workspace

__all__ = ["MemoryContext", "agent_scope", "start_memory_agent"]

logger = logging.getLogger(__name__)


def agent_scope(agent: str) -> str:
    """The memory scope an agent reads, from its name."""
    if agent.startswith("mission:"):
        try:
            return check_scopes(agent)[0]  # mission ids are matched in upper case
        except MemoryRequestError:
            return "generic"
    if agent in ("data_ops", "data_extraction"):
        return "data_ops"
    if agent == "visualization":
        return "visualization"
    return "generic"


class MemoryContext:
    """Fresh, budgeted memory blocks for the agents of one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.settings = workspace.context.settings

    def block(self, agent: str) -> str:
        """The memory block for `agent` now ("" when off, empty or unreadable)."""
        if not self.settings.memory_enabled:
            return ""
        orchestrator = agent == "orchestrator"
        budget = self.settings.memory_injection_tokens
        try:
            return inject(
                MemoryStore.open(self.settings),
                self.workspace.session.events,
                agent,
                agent_scope(agent),
                budget if orchestrator else budget // 2,
                include_summaries=orchestrator,
            )
        except (sqlite3.Error, OSError, XhelioError) as exc:
            logger.warning("Long-term memory could not be read: %s", exc)
            self.workspace.session.events.publish(
                "memory_agent", agent=agent, status="error", summary=f"memory not read: {exc}"
            )
            return ""


def start_memory_agent(
    workspace: Workspace, router: ModelRouter, record_usage: Callable[[str, RunUsage], None]
) -> MemoryScheduler | None:
    """Run the memory agent after every `memory_every_turns` turns (None when off)."""
    settings = workspace.context.settings
    if not settings.memory_enabled or settings.memory_every_turns <= 0:
        return None
    try:
        store = MemoryStore.open(settings)
    except (sqlite3.Error, OSError, XhelioError) as exc:
        logger.warning("Long-term memory is unavailable: %s", exc)
        return None
    agent = MemoryAgent(store, router, settings, workspace.session.id, record_usage)
    return MemoryScheduler(agent, workspace.session.events, settings.memory_every_turns)
