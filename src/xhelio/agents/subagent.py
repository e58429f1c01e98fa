"""What every sub-agent shares: the session's agent environment, one guarded run, its result.

A `SubAgent` is a pydantic-ai agent with a lean prompt and a few registry tools (bridged
through the workspace's funnel). Each request gets a fresh conversation and a fresh
`LoopGuard`: conversational mode (delegations, 20 calls / 8 rounds) or task mode (planner
tasks, 12 calls / 5 rounds, the first request forced to call a tool). The model comes from
the session's `ModelRouter` at every run, so a 429 anywhere moves later runs to the
fallback. A run never raises for model or tool trouble: it returns a `DelegationResult`
whose `failed`/`errors` the orchestrator reads. Imports pydantic-ai and, from xhelio,
`agents.{guard,models,toolbridge,usage}`, `tools` and `errors`; never the orchestrator.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import UserContent
from pydantic_ai.usage import RunUsage

from xhelio.agents.context import session_history
from xhelio.agents.guard import GuardLimits, LoopGuard
from xhelio.agents.memory_context import MemoryContext
from xhelio.agents.models import ModelRouter, Tier
from xhelio.agents.toolbridge import FunnelToolset, GuardedRun, ToolCallState, run_guarded
from xhelio.agents.usage import UsageTracker
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.registry import Tool
from xhelio.tools.workspace import Workspace

__all__ = ["AgentEnv", "AgentMode", "DelegationResult", "SubAgent", "memory_note"]

AgentMode = Literal["conversational", "task"]

_ERRORS_SHOWN = 3


@dataclass
class AgentEnv:
    """What the agents of one session share: workspace, model router and usage trackers."""

    workspace: Workspace
    router: ModelRouter
    usage: UsageTracker | None = None
    turn_usage: UsageTracker = field(default_factory=UsageTracker)
    memory: MemoryContext | None = None
    """Long-term memory blocks for the prompts (None: no long-term memory)."""

    def record_usage(self, agent: str, usage: RunUsage) -> None:
        """Add one run's token usage to the session's and the current turn's totals."""
        if usage.requests == 0 and usage.input_tokens == 0:
            return
        self.turn_usage.add(agent, usage)
        if self.usage is not None:
            self.usage.add(agent, usage)

    def history(self, agent: str) -> ProcessHistory[Any]:
        """The capability that keeps `agent`'s history within the session's context budget."""
        return session_history(self.workspace, self.router, agent, self.record_usage)

    def tool(self, name: str) -> Tool:
        """A registry tool of the workspace by name."""
        found = self.workspace.funnel.registry.get(name)
        if found is None:
            raise KeyError(f"No tool {name!r} in the registry.")
        return found


@dataclass
class DelegationResult:
    """What a sub-agent did for one request: its reply, whether it failed, and why."""

    agent: str
    text: str
    failed: bool = False
    errors: list[str] = field(default_factory=list[str])
    labels: list[str] = field(default_factory=list[str])
    tools: list[str] = field(default_factory=list[str])
    stopped: str | None = None
    cancelled: bool = False

    def for_model(self) -> dict[str, Any]:
        """The tool result the orchestrator's model sees; a failure summarises the last errors."""
        if self.failed:
            recent = self.errors[-_ERRORS_SHOWN:]
            message = f"{self.agent} failed: " + ("; ".join(recent) or self.text or "no result")
            return {
                "status": "error",
                "type": "DelegationFailed",
                "message": message,
                "errors": recent,
                "text": self.text,
            }
        result: dict[str, Any] = {"status": "ok", "text": self.text}
        if self.labels:
            result["labels"] = self.labels
        if self.stopped:
            result["note"] = self.stopped
        return result


def memory_note(workspace: Workspace, limit: int = 12) -> str:
    """One line per stored entry (label, columns, units, points, span) for a sub-agent's request."""
    lines: list[str] = []
    for entry in list(workspace.session.store)[-limit:]:
        info = entry_summary(entry)
        units = sorted({u for u in entry.units.values() if u})
        span = f", {info['start']} to {info['stop']}" if info.get("start") else ""
        lines.append(
            f"- {entry.label}: {len(entry.columns)} col, {'/'.join(units) or 'no units'}, "
            f"{entry.points} pts{span}"
        )
    return "Data in memory:\n" + "\n".join(lines) if lines else "Data in memory: none."


def judge(name: str, run: GuardedRun, state: ToolCallState, error: str | None) -> DelegationResult:
    """Decide whether a run failed (the seed's status rules) and collect what it did."""
    errors = list(state.errors)
    if error is not None:
        errors.append(error)
    nothing_worked = state.successes == 0 and bool(state.calls)
    failed = (
        error is not None
        or run.cancelled
        or (run.stop_reason is not None and state.successes == 0)
        or nothing_worked
    )
    text = run.text
    if run.cancelled:
        text = "Cancelled before finishing."
    elif not text and error is not None:
        text = error
    return DelegationResult(
        agent=name,
        text=text,
        failed=failed,
        errors=errors,
        labels=list(state.new_labels),
        tools=list(state.calls),
        stopped=run.stop_reason,
        cancelled=run.cancelled,
    )


class SubAgent:
    """One specialist: a prompt, a few registry tools, and a guarded run per request."""

    tier: Tier = "sub_agent"

    def __init__(self, env: AgentEnv, name: str, instructions: str, tools: Sequence[Tool]) -> None:
        self.env = env
        self.name = name
        review = env.workspace.funnel.registry.get("review_memory")
        if env.memory is not None and env.memory.settings.memory_enabled and review is not None:
            tools = [*tools, review]
        self.tool_names = [t.name for t in tools]
        self._memory_block = ""
        self.agent: Agent[ToolCallState, str] = Agent(
            deps_type=ToolCallState,
            output_type=str,
            instructions=[instructions, lambda: self._memory_block],
            toolsets=[FunnelToolset(tools)],
            name=name.replace(":", "_").replace(".", "_"),
            capabilities=[env.history(name)],
        )

    async def arun(
        self,
        request: str | Sequence[UserContent],
        cancel: threading.Event,
        mode: AgentMode = "conversational",
        *,
        limits: GuardLimits | None = None,
    ) -> DelegationResult:
        """Answer one request in a fresh conversation under a LoopGuard of `mode`."""
        repeats = self.env.workspace.context.settings.loop_repeat_limit
        chosen = limits or GuardLimits.for_mode(mode)
        guard = LoopGuard(replace(chosen, repeat_limit=repeats), cancel)
        state = ToolCallState(
            self.env.workspace.funnel, self.name, guard, force_first_tool=mode == "task"
        )
        router = self.env.router
        if self.env.memory is not None:  # fresh at every delegation
            self._memory_block = self.env.memory.block(self.name)
        run = await run_guarded(
            self.agent,
            request,
            state,
            settings=lambda: router.settings_for(self.tier),
            model=router.model_for(self.tier),
        )
        self.env.record_usage(self.name, run.usage)
        error = router.explain(run.error, self.tier).message if run.error is not None else None
        return judge(self.name, run, state, error)
