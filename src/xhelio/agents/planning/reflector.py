"""Stage reflection for deep analysis: judge a stage on what it produced, revise the rest.

Both reflectors read the same evidence: the operations the stage ran (typed `Operation`s
from the operations log since the previous stage: tool, status, labels produced, error),
the data in memory (label, columns, units, points) and the current figure's traces.
`RuleReflector` (offline, and the fallback) judges a stage met when it completed and made
what its agent makes (data for fetches and computations, a figure for plots), and never
changes the plan. `LLMReflector` asks the planner-tier model for a `StageReflection`: each
criterion with evidence, and, when the results call for it, the remaining stages revised.
Imports pydantic-ai, the planning records and `agents.models`, `tools.workspace`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.usage import RunUsage

from xhelio.agents.models import ModelRouter
from xhelio.agents.planning.schema import CriterionCheck, PlannedTask, StageReflection
from xhelio.agents.planning.tasks import ROLE_VISUALIZATION, Task, TaskPlan, TaskStatus
from xhelio.agents.toolbridge import run_coroutine
from xhelio.operations import Operation
from xhelio.tools.workspace import Workspace

__all__ = ["LLMReflector", "RuleReflector", "stage_evidence"]

REFLECT_PROMPT = """\
You check one stage of a multi-stage space physics analysis. From the evidence (the tool \
calls the stage ran, the data in memory, the figure), judge each of the stage's success \
criteria: met or not, with concrete evidence (labels, point counts, units, traces, values). \
Then look at the stages still to run: keep them (remaining = null) unless the results call \
for a change; otherwise give the full revised list of remaining stages, in order (add a \
stage for something missing, change one whose input changed, drop one that is no longer \
needed or cannot work). Never repeat a stage that failed the same way."""

UsageRecorder = Callable[[str, RunUsage], None]


class _Evidence:
    """The operations log position where the current stage began."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.since = len(workspace.session.operations)

    def take(self) -> list[Operation]:
        """The operations run since the last call (this stage's)."""
        ops = self.workspace.session.operations
        taken = [Operation.of(op) for op in ops[self.since :]]
        self.since = len(ops)
        return taken


def stage_evidence(workspace: Workspace, ops: Sequence[Operation]) -> str:
    """What a stage produced, as text for a reflector."""
    lines = ["Tool calls of this stage:"]
    for op in ops:
        line = f"- {op.tool}: {op.status}"
        if op.produced:
            line += f", produced {', '.join(op.produced)}"
        if not op.ok and op.error:
            line += f", error: {op.error[:200]}"
        lines.append(line)
    if not ops:
        lines.append("- none")
    lines.append("Data in memory:")
    for entry in workspace.session.store:
        units = sorted({u for u in entry.units.values() if u})
        lines.append(
            f"- {entry.label}: columns {', '.join(map(str, entry.columns[:6]))}; "
            f"units {'/'.join(units) or 'none'}; {entry.points} points"
        )
    current = workspace.session.plot.current
    traces = len(current.figure.get("data") or []) if current is not None else 0
    lines.append(f"Current figure: {traces} trace(s)" if traces else "Current figure: none")
    return "\n".join(lines)


def _criteria(stage: Task) -> list[str]:
    return stage.criteria or [f"{stage.description} is done and its result is usable"]


class RuleReflector:
    """Judges a stage by what it made; keeps the remaining stages as planned."""

    def __init__(self, workspace: Workspace) -> None:
        self.evidence = _Evidence(workspace)

    def reflect(self, plan: TaskPlan, stage: Task, remaining: Sequence[Task]) -> StageReflection:
        """Met when the stage completed and made data (or, for a plot, a figure)."""
        ops = self.evidence.take()
        drew = any(op.ok and op.phase == "render" for op in ops)
        made = drew if stage.mission == ROLE_VISUALIZATION else bool(stage.new_labels) or drew
        met = stage.status == TaskStatus.COMPLETED and made
        what = ", ".join(stage.new_labels) or ("a figure" if drew else "nothing usable")
        evidence = f"{stage.status.value}; produced {what} in {len(ops)} tool call(s)"
        if stage.error:
            evidence += f"; error: {stage.error[:160]}"
        return StageReflection(
            criteria_results=[
                CriterionCheck(criterion=c, met=met, evidence=evidence) for c in _criteria(stage)
            ],
            note=""
            if met
            else "The stage did not produce what it should; later stages may lack input.",
        )


class LLMReflector:
    """Asks the planner-tier model to judge the stage and revise the remaining stages."""

    def __init__(
        self, workspace: Workspace, router: ModelRouter, record_usage: UsageRecorder | None = None
    ) -> None:
        self.evidence = _Evidence(workspace)
        self.workspace = workspace
        self.router = router
        self.record_usage = record_usage
        self.agent: Agent[None, StageReflection] = Agent(
            output_type=StageReflection, instructions=REFLECT_PROMPT, name="reflector"
        )

    def _prompt(self, plan: TaskPlan, stage: Task, remaining: Sequence[Task]) -> str:
        ahead = [
            PlannedTask(
                description=t.description,
                instruction=t.instruction,
                mission=t.mission,
                candidate_datasets=t.candidate_datasets,
                criteria=t.criteria,
            ).model_dump()
            for t in remaining
        ]
        return "\n".join(
            [
                f"Request: {plan.request}",
                f"Stage: {stage.description} ({stage.status.value})",
                f"Result: {stage.result_summary or stage.error or 'none'}",
                "Criteria: " + "; ".join(_criteria(stage)),
                stage_evidence(self.workspace, self.evidence.take()),
                f"Remaining stages: {ahead}",
            ]
        )

    def reflect(self, plan: TaskPlan, stage: Task, remaining: Sequence[Task]) -> StageReflection:
        """The model's verdict on the stage and, if needed, the revised remaining stages."""
        prompt = self._prompt(plan, stage, remaining)

        async def call(model: Any) -> Any:
            return await self.agent.run(
                prompt, model=model, model_settings=self.router.settings_for("planner")
            )

        result = run_coroutine(lambda: self.router.run_with_fallback(call, "planner"))
        if self.record_usage is not None:
            self.record_usage("reflector", result.usage)
        return result.output
