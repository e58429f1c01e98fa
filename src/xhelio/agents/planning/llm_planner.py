"""The LLM planner and reviewer: discovery, then structured plans round by round.

Phase 1 (discovery) is a guarded tool loop (20 calls / 8 iterations) with the discovery
tools and `list_fetched_data`; from the raw `list_parameters` and
`get_data_availability` results it ran, the planner builds the VERIFIED PARAMETER
REFERENCE. Phase 2 is an agent whose output type is `PlannerOutput`: the first batch from
the request plus the reference, then one structured answer per round, continuing the
same message history so the planner remembers what it planned. `LLMReviewer` returns a
`ReviewDecision`. Model errors become `XhelioError`s through the `ModelRouter`, which also
switches to the fallback model after a 429. Imports pydantic-ai, `agents` foundations and
`tools`; nothing above them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.usage import RunUsage

from xhelio.agents.context import session_history
from xhelio.agents.guard import GuardLimits, LoopGuard
from xhelio.agents.models import ModelRouter, Tier
from xhelio.agents.planning.loop import RoundFeedback
from xhelio.agents.planning.schema import PlannerOutput, ReviewDecision
from xhelio.agents.toolbridge import FunnelToolset, ToolCallState, run_coroutine, run_guarded
from xhelio.agents.usage import UsageTracker
from xhelio.operations import Operation
from xhelio.tools.results import DatasetSummary, ParameterList
from xhelio.tools.workspace import Workspace

__all__ = ["LLMPlanner", "LLMReviewer", "verified_reference"]

DISCOVERY_PROMPT = """\
You prepare a plan for a space physics data request. Find the spacecraft and datasets \
that hold the quantities asked for: search_datasets or browse_datasets, then \
list_parameters and get_data_availability for the best 1-3 candidates per spacecraft. \
Do not fetch data. Stop after at most a few calls and list the candidates you checked."""

PLANNER_PROMPT = """\
You plan multi-step space physics requests for specialist agents. Each task has a \
description, an instruction, a mission and candidate_datasets. mission is a mission id \
(e.g. "ACE") for fetching that spacecraft's data, "__data_ops__" for computations on data \
in memory, "__sql__" for selections and aggregations of data in memory as a table \
(thresholds, per-day or per-hour statistics), "__visualization__" for plots and exports, \
"__data_extraction__" for turning text or documents into data, "__web_api__" for NOAA \
SWPC / NASA DONKI products and paper or web searches, or null for anything else. Fetch \
instructions state physics intent (e.g. "magnetic field vector"), never parameter names; \
give verified dataset ids as candidate_datasets. Later tasks name the actual labels \
reported by earlier rounds. Plan one round at a time: fetches first, then computations, \
then the plot. With the first plan, give 1-4 checkable success_criteria. Set status "done" \
only when everything asked is in memory and plotted; then give criteria_results with \
evidence and a summary. Never retry a task listed as FAILED."""

REVIEW_PROMPT = """\
You review a task plan against the user's request. Approve (exit=true) when the tasks \
cover everything asked, in a workable order, with the right missions; otherwise \
exit=false and say exactly what must change."""

UsageRecorder = Callable[[str, RunUsage], None]
"""Adds one run's token usage under an agent name (the session's tracker)."""


def _dataset_result(op: Operation) -> DatasetSummary | None:
    """A successful discovery result about one dataset, typed (None for any other)."""
    if op.phase != "discover" or not op.ok:
        return None
    for model in (ParameterList, DatasetSummary):
        try:
            return model.model_validate(op.result)
        except ValidationError:
            continue
    return None


def verified_reference(operations: Sequence[Operation | dict[str, Any]]) -> str:
    """The VERIFIED PARAMETER REFERENCE from raw discovery results ('' if none).

    Every successful discovery call about one dataset counts: its coverage, and its
    parameters when it lists them.
    """
    coverage: dict[str, str] = {}
    params: dict[str, list[str]] = {}
    for op in map(Operation.of, operations):
        found = _dataset_result(op)
        if found is None:
            continue
        if found.start or found.stop:
            coverage[found.id] = f"{found.start or '?'} to {found.stop or '?'}"
        if isinstance(found, ParameterList):
            params[found.id] = [
                f"  - {p.name} ({p.units or 'no units'}, {p.type or '?'}"
                + (f", size={p.size}" if p.size else "")
                + ")"
                for p in found.parameters
            ]
    if not params:
        return ""
    out = [
        "## VERIFIED PARAMETER REFERENCE",
        "Verified parameters per dataset. Recommend these dataset IDs as candidates; "
        "the mission agent selects specific parameters.",
    ]
    for dataset, lines in params.items():
        span = f" (available: {coverage[dataset]})" if dataset in coverage else ""
        out.append(f"Dataset {dataset}{span}:")
        out.extend(lines)
    return "\n".join(out)


class LLMPlanner:
    """Discovery, then structured planning and replanning, with one model history."""

    name = "llm"

    def __init__(
        self,
        workspace: Workspace,
        router: ModelRouter,
        record_usage: UsageRecorder | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.workspace = workspace
        self.router = router
        self.record_usage: UsageRecorder = record_usage or UsageTracker().add
        self.cancel = cancel or threading.Event()
        self.history: list[ModelMessage] = []
        self.reference = ""

    def _discover(self, message: str) -> str:
        registry = self.workspace.funnel.registry
        tools = [*registry.by_category("discovery", "pipeline", "pipeline_ops")]
        listed = registry.get("list_fetched_data")
        if listed is not None:
            tools.append(listed)
        agent = Agent[ToolCallState, str](
            self.router.model_for("planner"),
            deps_type=ToolCallState,
            instructions=DISCOVERY_PROMPT,
            toolsets=[FunnelToolset(tools)],
            capabilities=[session_history(self.workspace, self.router, "planner")],
        )
        state = ToolCallState(
            self.workspace.funnel,
            "planner",
            LoopGuard(GuardLimits.for_mode("planner_discovery"), self.cancel),
        )
        first = len(self.workspace.session.operations)
        run = run_coroutine(
            lambda: run_guarded(
                agent, message, state, settings=lambda: self.router.settings_for("planner")
            )
        )
        self.record_usage("planner", run.usage)
        if run.error is not None:
            raise self.router.explain(run.error, "planner") from run.error
        return verified_reference(self.workspace.session.operations[first:])

    def _structured(self, prompt: str, tier: Tier = "planner") -> PlannerOutput:
        agent = Agent(
            output_type=PlannerOutput,
            instructions=PLANNER_PROMPT,
            capabilities=[
                session_history(self.workspace, self.router, "planner", self.record_usage)
            ],
        )

        async def call(model: Any) -> Any:
            return await agent.run(
                prompt,
                model=model,
                message_history=self.history or None,
                model_settings=self.router.settings_for(tier),
            )

        result = run_coroutine(lambda: self.router.run_with_fallback(call, tier))
        self.record_usage("planner", result.usage)
        self.history = result.all_messages()
        return result.output

    def start(self, message: str) -> PlannerOutput:
        """Discover candidates, then produce the first batch."""
        self.reference = self._discover(message)
        prompt = f"{message}\n\n{self.reference}" if self.reference else message
        return self._structured(prompt)

    def revise(self, output: PlannerOutput, review: ReviewDecision) -> PlannerOutput:
        """Rework the first batch after review feedback."""
        return self._structured(f"A reviewer asked for changes: {review.reason}\nRevise the plan.")

    def replan(self, feedback: RoundFeedback) -> PlannerOutput:
        """Next batch (or done) from a round's results."""
        return self._structured(feedback.render())


class LLMReviewer:
    """Reviews a plan against the request with a structured exit decision."""

    def __init__(self, router: ModelRouter, record_usage: UsageRecorder | None = None) -> None:
        self.router = router
        self.record_usage: UsageRecorder = record_usage or UsageTracker().add

    def review(self, request: str, output: PlannerOutput) -> ReviewDecision:
        """Approve or ask for changes."""
        agent = Agent(output_type=ReviewDecision, instructions=REVIEW_PROMPT)
        prompt = f"Request: {request}\n\nPlan:\n{output.model_dump_json(indent=1)}"

        async def call(model: Any) -> Any:
            return await agent.run(
                prompt, model=model, model_settings=self.router.settings_for("planner")
            )

        result = run_coroutine(lambda: self.router.run_with_fallback(call, "planner"))
        self.record_usage("reviewer", result.usage)
        return result.output
