"""Offline planning: a multi-step request becomes a deterministic plan run by `PlanLoop`.

`OfflinePlanning` is both the `Planner` and the `TaskRunner` of offline mode. It parses
the request with the offline interpreter and builds its `OfflinePlan`, then hands the
loop one round per stage: the fetches (one task per series, routed to its mission, with
its candidate datasets), the computations (`__data_ops__`), and the figure and exports
(`__visualization__`). Each task runs its plan step through `OfflineAssistant` and so
through the one funnel, with the same candidate fallback. When the last round is done it
checks the success criteria against the session itself (labels stored, points, figure
traces) and reports them with that evidence. After a restart, a resumed plan rebuilds its
steps from the request and recovers finished steps' labels from the DataStore.
Imports the offline package and the planning records; no LLM.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from xhelio.agents.offline.assistant import OfflineAssistant, StepRun
from xhelio.agents.offline.derived import understood_with_derived
from xhelio.agents.offline.plan import OfflinePlan, PlanStep
from xhelio.agents.planning.loop import NothingToPlanError, RoundFeedback, TaskOutcome
from xhelio.agents.planning.schema import (
    CriterionCheck,
    PlannedTask,
    PlannerOutput,
    ReviewDecision,
)
from xhelio.agents.planning.tasks import Task, TaskPlan
from xhelio.language.intent import MissionRef, describe_quantity

__all__ = ["OfflinePlanning"]

_STAGES = (("fetch",), ("compute",), ("plot", "export", "save"))
_STAGE_NAMES = ("fetch the data", "compute", "plot and export")


@dataclass
class _Prepared:
    """One request's offline plan, its stages and what running it produced."""

    plan: OfflinePlan
    stages: list[list[int]]
    run: StepRun = field(default_factory=StepRun)
    next_stage: int = 0


def _task_for(index: int, step: PlanStep) -> PlannedTask:
    return PlannedTask(
        description=step.description,
        instruction=f"step {index}: {step.description}",
        mission=None if step.role == "__discovery__" else step.role,
        candidate_datasets=list(dict.fromkeys(c.dataset_id for c in step.candidates)),
    )


def _unserved(plan: OfflinePlan) -> list[MissionRef]:
    """Missions the request named that no fetch of the plan is routed to (no dataset)."""
    routed = {step.role for step in plan.steps if step.kind == "fetch"}
    return [m for m in plan.intent.missions if m.mission_id not in routed]


def _step_index(task: Task) -> int | None:
    head = task.instruction.split(":", 1)[0]
    number = head.removeprefix("step ").strip()
    return int(number) if head.startswith("step ") and number.isdigit() else None


class OfflinePlanning:
    """Plans and runs multi-step requests without a model, through the offline executor."""

    name = "offline"

    def __init__(self, assistant: OfflineAssistant) -> None:
        self.assistant = assistant
        self._prepared: dict[str, _Prepared] = {}

    # Planner -----------------------------------------------------------------------------

    def _prepare(self, request: str, fresh: bool = False) -> _Prepared:
        """The request's prepared plan; `fresh` starts over (a new ask of the same text)."""
        if fresh or request not in self._prepared:
            _, plan, _ = self.assistant.interpret(request)
            stages = [
                [i for i, step in enumerate(plan.steps) if step.kind in kinds] for kinds in _STAGES
            ]
            prepared = _Prepared(plan, [s for s in stages if s])
            if not fresh:
                self._recover(prepared)
            self._prepared[request] = prepared
        return self._prepared[request]

    def _recover(self, prepared: _Prepared) -> None:
        """Labels of steps an earlier process finished, found in the DataStore."""
        store = self.assistant.workspace.session.store
        for step in prepared.plan.steps:
            if step.output is None:
                continue
            if step.kind == "compute" and store.has(step.output):
                prepared.run.refs[step.output] = step.output
            elif step.kind == "fetch":
                for call in step.calls:
                    label = f"{call.args['dataset_id']}.{call.args['parameter_id']}"
                    if store.has(label):
                        prepared.run.refs[step.output] = label
                        prepared.run.vector[step.output] = len(store.get(label).columns) > 1
                        break

    def _next_output(self, prepared: _Prepared) -> PlannerOutput:
        if prepared.next_stage >= len(prepared.stages):
            return self._done(prepared)
        stage = prepared.stages[prepared.next_stage]
        name = _STAGE_NAMES[min(prepared.next_stage, len(_STAGE_NAMES) - 1)]
        prepared.next_stage += 1
        return PlannerOutput(
            status="continue",
            reasoning=f"Offline plan, stage {prepared.next_stage}: {name}.",
            tasks=[_task_for(i, prepared.plan.steps[i]) for i in stage],
            success_criteria=self._criteria(prepared) if prepared.next_stage == 1 else [],
        )

    def _criteria(self, prepared: _Prepared) -> list[str]:
        steps = prepared.plan.steps
        criteria = [f"{s.series or s.description} is in memory" for s in steps if s.kind == "fetch"]
        criteria += [f"{m.name} data as asked" for m in _unserved(prepared.plan)]
        if any(s.kind == "plot" for s in steps):
            criteria.append("a figure shows the requested series")
        return criteria

    def _done(self, prepared: _Prepared) -> PlannerOutput:
        store = self.assistant.workspace.session.store
        checks: list[CriterionCheck] = []
        for step in prepared.plan.steps:
            if step.kind != "fetch" or step.output is None:
                continue
            label = prepared.run.refs.get(step.output)
            met = label is not None and store.has(label) and store.get(label).points > 0
            evidence = (
                f"{label}: {store.get(label).points} points" if met and label else "not fetched"
            )
            checks.append(
                CriterionCheck(
                    criterion=f"{step.series or step.description} is in memory",
                    met=met,
                    evidence=evidence,
                )
            )
        plan = prepared.plan
        asked = ", ".join(describe_quantity(q) for q in plan.intent.quantities) or "it"
        unserved = _unserved(plan)
        for mission in unserved:
            checks.append(
                CriterionCheck(
                    criterion=f"{mission.name} data as asked",
                    met=False,
                    evidence=f"the offline plan found no {mission.name} dataset for {asked}",
                )
            )
        if any(s.kind == "plot" for s in prepared.plan.steps):
            current = self.assistant.workspace.session.plot.current
            traces = len(current.traces) if current is not None else 0
            checks.append(
                CriterionCheck(
                    criterion="a figure shows the requested series",
                    met=traces > 0,
                    evidence=f"figure with {traces} trace(s)" if traces else "no figure",
                )
            )
        lines = [f"Offline mode understood: {'; '.join(understood_with_derived(plan.intent))}."]
        if plan.time_range is not None:
            lines.append(f"Time range: {plan.time_range.readable()}.")
        lines += [*prepared.run.shown, *prepared.run.lines, *plan.notes, *prepared.run.problems]
        lines += [
            f"Not done: no {m.name} dataset was found for {asked}, so the result has no "
            f"{m.name} data."
            for m in unserved
        ]
        if plan.missing:
            lines.append(f"Not done: still need {' and '.join(plan.missing)}.")
        return PlannerOutput(
            status="done",
            reasoning="Every stage of the offline plan ran.",
            summary="\n".join(lines),
            criteria_results=checks,
        )

    def start(self, message: str) -> PlannerOutput:
        """The first stage of the offline plan (the request is the message's first block)."""
        request = message.split("\n\n", 1)[0]
        prepared = self._prepare(request, fresh=True)
        if not prepared.plan.steps:
            missing = " and ".join(prepared.plan.missing) or "a mission and a quantity"
            raise NothingToPlanError(f"offline mode cannot plan this request: it needs {missing}")
        return self._next_output(prepared)

    def needs_plan(self, request: str) -> bool:
        """Whether the offline plan of a request the heuristics passed is multi-step.

        Offline mode's stand-in for the orchestrator's `request_planning`: several series
        ("density and speed from OMNI ... along with") or a real computation.
        """
        intent = self.assistant.parse(request)
        if intent.discovery is not None:
            return False
        steps = self.assistant.interpret(request, intent)[1].steps
        fetches = sum(1 for s in steps if s.kind == "fetch")
        computes = sum(1 for s in steps if s.kind == "compute" and not s.only_if_vector)
        return fetches >= 2 or computes >= 1

    def revise(self, output: PlannerOutput, review: ReviewDecision) -> PlannerOutput:
        """Offline plans are deterministic: a revision is the same plan."""
        return output

    def replan(self, feedback: RoundFeedback) -> PlannerOutput:
        """The stage after the one that just ran, or done with criteria checked.

        Counting from the tasks that ran (not from a counter) makes a resumed plan go on
        where it stopped after a restart, and a retried fetch redo what depends on it
        (its computations and the figure) instead of ending with the old figure.
        """
        prepared = self._prepare(feedback.request)
        ran = [self._stage_of(prepared, task) for task in feedback.results]
        stages = [stage for stage in ran if stage is not None]
        if stages:
            prepared.next_stage = max(stages) + 1
        return self._next_output(prepared)

    @staticmethod
    def _stage_of(prepared: _Prepared, task: Task) -> int | None:
        index = _step_index(task)
        return next((n for n, stage in enumerate(prepared.stages) if index in stage), None)

    # TaskRunner --------------------------------------------------------------------------

    def run(
        self, plan: TaskPlan, task: Task, instruction: str, cancel: threading.Event
    ) -> TaskOutcome:
        """Run the plan step behind `task` through the offline executor and the funnel."""
        prepared = self._prepare(plan.request)
        index = _step_index(task)
        if index is None or index >= len(prepared.plan.steps):
            return TaskOutcome(f"Unknown offline step: {task.instruction!r}.", True, ["bad step"])
        if plan.time_range is None and prepared.plan.time_range is not None:
            # No range in the request: record the window the offline plan chose.
            plan.time_range = str(prepared.plan.time_range)
        run = prepared.run
        step = prepared.plan.steps[index]
        lines, shown, problems = len(run.lines), len(run.shown), len(run.problems)
        inputs_missing = step.kind != "plot" and any(r not in run.refs for r in step.inputs)
        self.assistant.execute_step(step, run)
        text = " ".join([*run.shown[shown:], *run.lines[lines:]]) or task.description
        new_problems = run.problems[problems:]
        return TaskOutcome(
            text + (" " + " ".join(new_problems) if new_problems else ""),
            bool(new_problems),
            new_problems,
            skipped="its input was not produced by an earlier task" if inputs_missing else None,
        )
