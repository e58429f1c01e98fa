"""The data-ops agent: computations on data in memory, thinking first, then executing.

Think phase: a short run with read-only tools (describe, preview, list, function docs)
that ends with a plan (inputs, columns, units, approach, output label). Execute phase: a
fresh run with `custom_operation`, describe, preview, save and list, and the standard
analysis methods (`tools.analysis_tools`), given the request plus that plan. Both phases
run under their own LoopGuard and share the cancellation event; a think phase that fails
for a model reason or is cancelled ends the request. Imports `agents.subagent` and
`agents.prompts`; never the orchestrator.
"""

from __future__ import annotations

import threading

from xhelio.agents.guard import GuardLimits
from xhelio.agents.prompts import DATA_OPS_EXECUTE_PROMPT, DATA_OPS_THINK_PROMPT
from xhelio.agents.subagent import AgentEnv, AgentMode, DelegationResult, SubAgent, memory_note
from xhelio.pipelines.library import library_note
from xhelio.tools.analysis_tools import ANALYSIS_TOOLS

__all__ = ["THINK_LIMITS", "DataOpsAgent"]

THINK_LIMITS = GuardLimits(max_calls=6, max_iterations=3)
"""The think phase only inspects: a few calls in at most three rounds."""

_THINK_TOOLS = (
    "list_fetched_data",
    "describe_data",
    "preview_data",
    "search_function_docs",
    "get_function_docs",
    "find_event_lists",
)
_EXECUTE_TOOLS = ("custom_operation", "describe_data", "preview_data", "save_data")
_EVENT_TOOLS = (
    "import_events",
    "events_from_selection",
    "find_event_lists",
    "load_event_list",
    "save_event_list",
    "export_event_list",
    "detect_storms",
    "detect_shocks",
    "detect_stream_interactions",
    "detect_sep_onsets",
    "fetch_for_events",
    "superposed_epoch",
)
"""Event lists, detection and superposed epoch (tools/event_tools.py, event_analysis_tools.py)."""
_ANALYSIS_TOOLS = tuple(t.name for t in ANALYSIS_TOOLS)
"""The standard analysis methods (issue 23), offered where the registry has them."""


class DataOpsAgent:
    """Compute derived data: think (inspect, research) then execute (custom_operation)."""

    name = "data_ops"

    def __init__(self, env: AgentEnv) -> None:
        self.env = env
        self.think = SubAgent(
            env,
            "data_ops.think",
            DATA_OPS_THINK_PROMPT,
            [env.tool(name) for name in _THINK_TOOLS],
        )
        registry = env.workspace.funnel.registry
        analysis = [env.tool(n) for n in _ANALYSIS_TOOLS if registry.get(n) is not None]
        self.execute = SubAgent(
            env,
            "data_ops",
            DATA_OPS_EXECUTE_PROMPT,
            [
                *(env.tool(name) for name in (*_EXECUTE_TOOLS, *_EVENT_TOOLS)),
                *analysis,
            ],
        )

    async def compute(
        self, request: str, cancel: threading.Event, mode: AgentMode = "conversational"
    ) -> DelegationResult:
        """Plan the computation with read-only tools, then run it."""
        context = memory_note(self.env.workspace)
        library = library_note(self.env.workspace.context.ops_library)
        context = f"{context}\n\n{library}" if library else context
        plan = await self.think.arun(f"{request.strip()}\n\n{context}", cancel, limits=THINK_LIMITS)
        if plan.cancelled or (plan.failed and not plan.tools):
            return plan
        prompt = f"{request.strip()}\n\nPlan:\n{plan.text.strip() or '(none)'}\n\n{context}"
        done = await self.execute.arun(prompt, cancel, mode)
        done.tools = plan.tools + done.tools
        return done
