"""`AgentAssistant`: the LLM orchestrator that routes a request to its sub-agents.

The orchestrator model sees the discovery tools, `list_fetched_data`, the pipeline tools
(`tools.pipeline_tools`), the routing tools
(`delegate_to_*`, `request_planning`) and `ask_clarification`; never `fetch_data`,
`custom_operation`, `render_plotly_json` or `manage_plot`, which belong to sub-agents.
One turn is a conversation loop of at most 10 rounds under a LoopGuard: a clarification
ends it at once, each delegation returns `{text, failed, errors}` (a failure summarises
its last three errors), and two delegation failures in a row end it (the model gets one
last request to explain). Export requests ("export the plot as png") skip the model.

Sub-agents run on the orchestrator's event loop: a routing tool runs in pydantic-ai's
worker thread and hands the sub-agent's coroutine back to the loop, so HTTP clients are
never shared across loops. The model conversation persists in `session.meta` as JSON
(`ModelMessagesTypeAdapter`), so a resumed session continues it; display history is kept
by `run_turn`. Model errors become an `XhelioError` via `ModelRouter.explain`.

`build_model` is the seam for tests and benchmarks: it turns a model string into a
pydantic-ai `Model` (a `FunctionModel`, say). Imports the agents and tools layers only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models import Model

from xhelio.agents.api_agent import ApiAgent
from xhelio.agents.data_ops import DataOpsAgent
from xhelio.agents.guard import GuardLimits, LoopGuard
from xhelio.agents.insight import InsightAgent, PngRenderer
from xhelio.agents.memory_context import MemoryContext, start_memory_agent
from xhelio.agents.mission import MissionAgents
from xhelio.agents.models import ModelConfig, ModelRouter
from xhelio.agents.prompts import ORCHESTRATOR_PROMPT
from xhelio.agents.routing import ROUTING_TOOLS, routing_registry
from xhelio.agents.specialists import (
    VisualizationAgent,
    export_figure,
    export_request,
    extraction_agent,
)
from xhelio.agents.sql_agent import SqlAgent
from xhelio.agents.subagent import AgentEnv, DelegationResult, SubAgent, memory_note
from xhelio.agents.toolbridge import (
    FunnelToolset,
    GuardedRun,
    ToolCallState,
    run_coroutine,
    run_guarded,
    settle_history,
)
from xhelio.agents.turn import AssistantReply
from xhelio.agents.usage import UsageTracker
from xhelio.errors import XhelioError
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.pipeline_tools import PIPELINE_TOOL_NAMES
from xhelio.tools.workspace import Workspace

__all__ = ["HISTORY_KEY", "ORCHESTRATOR_LIMITS", "AgentAssistant"]

logger = logging.getLogger(__name__)

ORCHESTRATOR_LIMITS = GuardLimits(max_calls=25, max_iterations=10)
"""At most 10 rounds per turn (the seed's loop limit); calls capped as a backstop."""
HISTORY_KEY = "model_messages"
"""The conversation, kept within the context budget by the history capability (agents.context)."""
MAX_DELEGATION_FAILURES = 2

_ORCHESTRATOR_TOOLS = (
    "search_datasets",
    "list_parameters",
    "get_data_availability",
    "browse_datasets",
    "list_missions",
    "list_fetched_data",
    "compose_answer",
    *PIPELINE_TOOL_NAMES,
)
PlanHook = Callable[[str, threading.Event], AssistantReply]

_PLANNING_NOTE = (
    "No planner is available in this version. Work through the request step by step: one "
    "delegate_to_mission per spacecraft, then delegate_to_data_ops for each computation, "
    "then one delegate_to_visualization; use the labels each step reports."
)


@dataclass
class _Turn:
    """The request in progress: its tool state, event loop and delegation failure streak."""

    state: ToolCallState
    loop: asyncio.AbstractEventLoop
    loop_thread: int
    failures: int = 0


class AgentAssistant:
    """The LLM assistant: an orchestrator model routing work to cached sub-agents."""

    name = "xhelio"

    def __init__(
        self,
        workspace: Workspace,
        config: ModelConfig,
        usage: UsageTracker | None = None,
        *,
        build_model: Callable[[str], Model] | None = None,
        render_png: PngRenderer | None = None,
    ) -> None:
        self.workspace = workspace
        self.router = ModelRouter(config, build=build_model, on_switch=self._switched)
        self.env = AgentEnv(workspace, self.router, usage, memory=MemoryContext(workspace))
        self.memory_agent = start_memory_agent(workspace, self.router, self.env.record_usage)
        self._memory_block = ""
        self.missions = MissionAgents(self.env)
        self._render_png = render_png
        self._turn: _Turn | None = None
        self.planner: PlanHook | None = None
        """Runs a request through the plan loop (set by the factory); `request_planning`."""
        self.last_plan: dict[str, Any] | None = None
        self.disabled_agents: set[str] = set()
        """Agent kinds this request must not delegate to (seed 003's disable_agents)."""
        session = workspace.session
        self._routing = ToolFunnel(
            routing_registry(), self, session.events, operations=session.operations
        )
        registry_tools = [self.env.tool(name) for name in _ORCHESTRATOR_TOOLS]
        remember = workspace.funnel.registry.get("remember")  # "remember that I prefer ..."
        if remember is not None and workspace.context.settings.memory_enabled:
            registry_tools.append(remember)
        self.agent: Agent[ToolCallState, str] = Agent(
            deps_type=ToolCallState,
            output_type=str,
            instructions=[ORCHESTRATOR_PROMPT, lambda: self._memory_block],
            toolsets=[
                FunnelToolset(registry_tools, id="registry"),
                FunnelToolset(ROUTING_TOOLS, self._routing, id="routing", offload=True),
            ],
            name="orchestrator",
            capabilities=[self.env.history("orchestrator")],
        )

    def _switched(self, fallback: str) -> None:
        self.workspace.session.events.publish(
            "model_fallback",
            agent="orchestrator",
            summary=f"Rate limit: every agent now uses {fallback} for the rest of the session.",
        )

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Answer one request: export shortcut, else the orchestrator's conversation loop."""
        self._routing.cancel = cancel
        self.env.turn_usage = UsageTracker()
        self.last_plan = None
        export = export_request(request)
        if export is not None:
            return AssistantReply(export_figure(self.workspace, export, "orchestrator").text)
        repeats = self.workspace.context.settings.loop_repeat_limit
        limits = replace(ORCHESTRATOR_LIMITS, repeat_limit=repeats)
        state = ToolCallState(self.workspace.funnel, "orchestrator", LoopGuard(limits, cancel))
        history = self._load_history()
        self._memory_block = self.env.memory.block("orchestrator") if self.env.memory else ""

        async def main() -> GuardedRun:
            self._turn = _Turn(state, asyncio.get_running_loop(), threading.get_ident())
            try:
                return await run_guarded(
                    self.agent,
                    request,
                    state,
                    settings=lambda: self.router.settings_for("orchestrator"),
                    message_history=history,
                    model=self.router.model_for("orchestrator"),
                )
            finally:
                self._turn = None

        run = run_coroutine(main)
        self.env.record_usage("orchestrator", run.usage)
        if run.error is not None:
            error = self.router.explain(run.error, "orchestrator")
            self._save_history(run.messages, f"(This request failed: {error.message})")
            raise error from run.error
        if state.clarification is not None:
            text = state.clarification
        elif run.cancelled:
            text = "Cancelled."
        else:
            text = run.text or f"I stopped before finishing: {run.stop_reason or 'no answer'}"
        self._save_history(run.messages, text)
        return AssistantReply(
            text,
            plan=self.last_plan,
            usage=self.env.turn_usage.to_dict(),
            clarification=state.clarification is not None,
        )

    # -- routing tools (the `Router` protocol of agents.routing) ---------------------------

    def delegate(self, kind: str, request: str, mission_id: str | None = None) -> dict[str, Any]:
        """Run the sub-agent of `kind` on `request` and wrap its result for the model."""
        turn = self._turn
        if turn is None:
            raise RuntimeError("delegate_* tools run only inside an orchestrator turn.")
        if kind in self.disabled_agents:
            message = f"The {kind} agent is disabled for this request; do without it."
            return {"status": "error", "type": "AgentDisabled", "message": message}
        cancel = turn.state.cancel
        if kind == "mission":
            agent = self.missions.get(mission_id or "")
            result = self._wait(turn, agent.fetch(request, cancel))
        elif kind == "data_ops":
            result = self._wait(turn, self.data_ops.compute(request, cancel))
        elif kind == "data_extraction":
            prompt = f"{request.strip()}\n\n{memory_note(self.workspace)}"
            result = self._wait(turn, self.extraction.arun(prompt, cancel))
        elif kind == "sql":
            result = self._wait(turn, self.sql.query(request, cancel))
        elif kind == "visualization":
            result = self._wait(turn, self.visualization.draw(request, cancel))
        elif kind == "insight":
            result = self._wait(turn, self.insight.analyze(request, cancel))
        elif kind == "web_api":
            result = self._wait(turn, self.web_api.answer(request, cancel))
        else:
            raise ValueError(f"Unknown delegation kind {kind!r}.")
        self._count_failure(turn, result)
        return result.for_model()

    def plan(self, request: str) -> dict[str, Any]:
        """Run `request` through the planner when one is attached, else say how to proceed."""
        if self.planner is None or self._turn is None:
            return {"status": "ok", "planned": False, "message": _PLANNING_NOTE}
        reply = self.planner(request, self._turn.state.cancel)
        self.last_plan = reply.plan
        plan = reply.plan or {}
        return {
            "status": "ok",
            "planned": True,
            "plan_status": plan.get("status"),
            "summary": reply.text[:2000],
            "labels": [lb for t in plan.get("tasks", []) for lb in t.get("new_labels", [])],
        }

    def run_task(
        self,
        kind: str,
        instruction: str,
        cancel: threading.Event,
        mission_id: str | None = None,
        candidates: Sequence[str] = (),
    ) -> DelegationResult:
        """Run one planner task on its sub-agent in task mode, inside a turn or not."""
        make: Callable[[], Coroutine[Any, Any, DelegationResult]]
        if kind == "mission":
            try:
                agent = self.missions.get(mission_id or "")
            except XhelioError as exc:
                name = f"mission:{mission_id}"
                return DelegationResult(name, exc.message, failed=True, errors=[exc.message])
            make = lambda: agent.fetch(instruction, cancel, "task", candidates)  # noqa: E731
        elif kind == "data_ops":
            make = lambda: self.data_ops.compute(instruction, cancel, "task")  # noqa: E731
        elif kind == "data_extraction":
            make = lambda: self.extraction.arun(instruction, cancel, "task")  # noqa: E731
        elif kind == "sql":
            make = lambda: self.sql.query(instruction, cancel, "task")  # noqa: E731
        elif kind == "visualization":
            make = lambda: self.visualization.draw(instruction, cancel, "task")  # noqa: E731
        elif kind == "web_api":
            make = lambda: self.web_api.answer(instruction, cancel, "task")  # noqa: E731
        else:
            make = lambda: self.insight.analyze(instruction, cancel)  # noqa: E731
        turn = self._turn
        return self._wait(turn, make()) if turn is not None else run_coroutine(make)

    def clarify(self, question: str) -> dict[str, Any]:
        """End the turn with `question` for the user."""
        if self._turn is not None:
            self._turn.state.clarification = question
        return {"status": "ok", "message": "The question goes to the user; stop here."}

    # -- internals -------------------------------------------------------------------------

    @cached_property
    def data_ops(self) -> DataOpsAgent:
        """The session's data-ops agent (built on first use)."""
        return DataOpsAgent(self.env)

    @cached_property
    def extraction(self) -> SubAgent:
        """The session's data-extraction agent."""
        return extraction_agent(self.env)

    @cached_property
    def sql(self) -> SqlAgent:
        """The session's SQL agent."""
        return SqlAgent(self.env)

    @cached_property
    def visualization(self) -> VisualizationAgent:
        """The session's visualization agent."""
        return VisualizationAgent(self.env)

    @cached_property
    def web_api(self) -> ApiAgent:
        """The session's web-API and search agent."""
        return ApiAgent(self.env)

    @cached_property
    def insight(self) -> InsightAgent:
        """The session's insight agent."""
        return InsightAgent(self.env, self._render_png)

    @staticmethod
    def _wait(turn: _Turn, coroutine: Coroutine[Any, Any, DelegationResult]) -> DelegationResult:
        """Run a sub-agent coroutine on the turn's loop from a routing tool's worker thread.

        The sub-agent must share the turn's loop: the model clients' connections are bound
        to it. (Called on the loop thread itself, it falls back to a private loop.)
        """
        if threading.get_ident() == turn.loop_thread:
            return run_coroutine(lambda: coroutine)
        return asyncio.run_coroutine_threadsafe(coroutine, turn.loop).result()

    @staticmethod
    def _count_failure(turn: _Turn, result: DelegationResult) -> None:
        if not result.failed or result.cancelled:
            turn.failures = 0
            return
        turn.failures += 1
        if turn.failures >= MAX_DELEGATION_FAILURES:
            turn.state.stop_request = (
                f"{turn.failures} delegations in a row failed; stop delegating and tell the user "
                "what failed and what they could try instead."
            )

    def _load_history(self) -> list[ModelMessage]:
        raw = self.workspace.session.meta.get(HISTORY_KEY)
        if not raw:
            return []
        try:
            return ModelMessagesTypeAdapter.validate_python(raw)
        except ValidationError as exc:
            logger.warning("Discarding unreadable model history of this session: %s", exc)
            return []

    def _save_history(self, messages: Sequence[ModelMessage], closing_text: str) -> None:
        settled = settle_history(messages, closing_text)
        self.workspace.session.meta[HISTORY_KEY] = ModelMessagesTypeAdapter.dump_python(
            settled, mode="json"
        )
