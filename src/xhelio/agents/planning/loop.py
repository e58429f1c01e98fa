"""The plan-execute-replan loop, the same for the LLM planner and the offline planner.

`PlanLoop.run` asks a `Planner` for a first batch (optionally reviewed by a `Reviewer`
until it gives a structured exit decision), then for at most `max_rounds` rounds runs each
task through a `TaskRunner`: cancellation is checked first (the rest become SKIPPED),
labels are snapshotted before and after, the instruction gets the canonical time range,
the data in memory and the candidate datasets, and the outcome is summarised (500
characters at most). The planner then sees the round's results, the data in memory, every
task that failed so far ("must NOT be retried"; the loop also refuses to rerun one) and
budget warnings in the last two rounds, and says "continue" with a new batch or "done".
Tasks routed to an agent the request disabled are SKIPPED with the reason. The plan is
saved to the `TaskStore` after every change, so a crash leaves a resumable record, and
`resume` runs what an interrupted plan had left. With a `Reflector` (deep analysis), each
stage is judged against its own criteria as soon as it ends, and the reflector may add,
change or drop the stages still to run in its batch (dropped ones become SKIPPED with the
reason). Imports only the planning records.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from xhelio.agents.planning.routing import AgentName, AgentPreferences
from xhelio.agents.planning.schema import (
    PlannedTask,
    PlannerOutput,
    ReviewDecision,
    StageReflection,
)
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import (
    ROLE_DATA_EXTRACTION,
    ROLE_DATA_OPS,
    ROLE_SQL,
    ROLE_VISUALIZATION,
    ROLE_WEB_API,
    CriterionResult,
    PlanStatus,
    Task,
    TaskPlan,
    TaskStatus,
)

__all__ = [
    "MAX_ROUNDS",
    "NothingToPlanError",
    "PlanLoop",
    "Planner",
    "PlannerFailedError",
    "Reflector",
    "Reviewer",
    "RoundFeedback",
    "TaskOutcome",
    "TaskRunner",
    "agent_of",
]

MAX_ROUNDS = 5
_RESULT_CHARS = 500


class PlannerFailedError(Exception):
    """The planner could not produce a plan; the caller falls back to the direct path."""


class NothingToPlanError(ValueError):
    """The request lacks what a plan needs (a mission, a quantity): the direct path asks."""


@dataclass
class TaskOutcome:
    """What running one task produced: text, whether it failed or was skipped, errors."""

    text: str
    failed: bool = False
    errors: list[str] = field(default_factory=list[str])
    skipped: str | None = None
    """Why the task did not run (e.g. its input was never produced); not a failure."""


@dataclass
class RoundFeedback:
    """What the planner sees after a round."""

    request: str
    round: int
    rounds_left: int
    results: list[Task]
    data_in_memory: list[str]
    failed_tasks: list[Task]

    def render(self) -> str:
        """The replanning message, with the seed's failed-task and budget sections."""
        lines = [f"Request: {self.request}", f"Round {self.round} results:"]
        for task in self.results:
            line = f"- Task: {task.description} | Status: {task.status.value}"
            line += f" | Result: {task.result_summary}"
            if task.new_labels:
                line += f" | New data labels: {', '.join(task.new_labels)}"
            if task.error:
                line += f" | Error: {task.error}"
            unmet = [str(c.get("criterion")) for c in task.criteria_results if not c.get("met")]
            if unmet:
                line += f" | Criteria NOT met: {'; '.join(unmet)}"
            if task.reflection:
                line += f" | Reflection: {task.reflection}"
            lines.append(line)
        lines.append("Data in memory: " + (", ".join(self.data_in_memory) or "none"))
        if self.failed_tasks:
            lines.append("## IMPORTANT: The following tasks FAILED and must NOT be retried:")
            lines += [f"- {t.description}: {t.error or 'failed'}" for t in self.failed_tasks]
            lines.append("Do NOT create new tasks that attempt the same searches.")
        if self.rounds_left == 1:
            lines.append(
                "## FINAL ROUND: This is the last round. "
                "Set status='done' unless critical work remains."
            )
        elif self.rounds_left == 2:
            lines.append("## BUDGET WARNING: Only 2 round(s) remaining.")
        lines.append("Reply with the next batch (status 'continue') or status 'done'.")
        return "\n".join(lines)


class Planner(Protocol):
    """Decides what to do: a first batch, revisions after review, then round by round."""

    name: str

    def start(self, message: str) -> PlannerOutput:
        """The first batch for the planning message (request + resolved time range)."""
        ...

    def revise(self, output: PlannerOutput, review: ReviewDecision) -> PlannerOutput:
        """A revised first batch after a reviewer asked for changes."""
        ...

    def replan(self, feedback: RoundFeedback) -> PlannerOutput:
        """The next batch, or done, after seeing a round's results."""
        ...


class Reviewer(Protocol):
    """Checks a plan against the request and returns a structured exit decision."""

    def review(self, request: str, output: PlannerOutput) -> ReviewDecision:
        """Approve (`exit=True`) or ask for changes, with the reason."""
        ...


class Reflector(Protocol):
    """Judges a finished stage against its criteria and may revise the stages still to run."""

    def reflect(self, plan: TaskPlan, stage: Task, remaining: Sequence[Task]) -> StageReflection:
        """The stage's criteria judged on what it produced, and the remaining stages."""
        ...


class TaskRunner(Protocol):
    """Runs one task on the agent its `mission` routes to."""

    def run(
        self, plan: TaskPlan, task: Task, instruction: str, cancel: threading.Event
    ) -> TaskOutcome:
        """Run `plan`'s `task` with the context-injected `instruction`."""
        ...


def agent_of(mission: str | None) -> AgentName | None:
    """The agent kind a task's `mission` routes to (None: the orchestrator itself)."""
    roles: dict[str, AgentName] = {
        ROLE_DATA_OPS: "data_ops",
        ROLE_SQL: "sql",
        ROLE_VISUALIZATION: "visualization",
        ROLE_DATA_EXTRACTION: "data_extraction",
        ROLE_WEB_API: "web_api",
    }
    if mission is None:
        return None
    return roles.get(mission, "mission")


def _task_key(task: Task) -> tuple[str | None, str]:
    return (task.mission, " ".join(task.instruction.lower().split()))


LabelSource = Callable[[], Sequence[str]]
"""Returns the data in memory, one 'label (columns)' line per entry."""


@dataclass
class PlanLoop:
    """Runs plans: planning, review, the execute-replan rounds and finalisation."""

    planner: Planner
    runner: TaskRunner
    store: TaskStore
    data_in_memory: LabelSource
    reviewer: Reviewer | None = None
    review_iterations: int = 2
    max_rounds: int = MAX_ROUNDS
    preferences: AgentPreferences = field(default_factory=AgentPreferences)
    reflector: Reflector | None = None
    """Deep analysis: after each stage, judge its criteria and revise the remaining stages."""
    on_change: Callable[[TaskPlan, Task | None], None] = lambda plan, task: None

    def run(
        self, plan: TaskPlan, cancel: threading.Event, time_note: str | None = None
    ) -> TaskPlan:
        """Plan `plan.request`, run it round by round, finalise and save it.

        Raises:
            PlannerFailedError: the planner failed before any task ran (the plan is saved
                as FAILED; the caller should answer on the direct path).
        """
        plan.planner = self.planner.name
        self._save(plan)
        message = plan.request if not time_note else f"{plan.request}\n\n{time_note}"
        try:
            output = self._reviewed(plan, self.planner.start(message))
        except Exception as exc:
            plan.status = PlanStatus.FAILED
            plan.summary = f"The planner failed ({type(exc).__name__}: {exc})."
            self._save(plan)
            raise PlannerFailedError(plan.summary) from exc
        plan.criteria = [
            CriterionResult(c, False, "not checked yet") for c in output.success_criteria
        ]
        return self._rounds(plan, output, cancel)

    def resume(self, plan: TaskPlan, cancel: threading.Event) -> TaskPlan:
        """Finish an interrupted plan: its pending tasks, then replanning as usual."""
        for task in plan.tasks:
            if task.status == TaskStatus.IN_PROGRESS:
                task.status = TaskStatus.PENDING
        pending = plan.pending()
        output = PlannerOutput(status="continue", reasoning="resumed", tasks=[])
        return self._rounds(plan, output, cancel, resume_batch=pending)

    def _reviewed(self, plan: TaskPlan, output: PlannerOutput) -> PlannerOutput:
        if self.reviewer is None:
            return output
        for iteration in range(1, self.review_iterations + 1):
            decision = self.reviewer.review(plan.request, output)
            plan.reviews.append(
                {"iteration": iteration, "exit": decision.exit, "reason": decision.reason}
            )
            self._save(plan)
            if decision.exit or iteration == self.review_iterations:
                break
            output = self.planner.revise(output, decision)
        return output

    def _rounds(
        self,
        plan: TaskPlan,
        output: PlannerOutput,
        cancel: threading.Event,
        resume_batch: list[Task] | None = None,
    ) -> TaskPlan:
        plan.status = PlanStatus.EXECUTING
        batch = resume_batch if resume_batch is not None else self._add_batch(plan, output.tasks)
        while True:
            index = 0
            while index < len(batch) and not cancel.is_set():
                task = batch[index]
                ran = task.status == TaskStatus.PENDING
                self._run_task(plan, task, cancel)
                index += 1
                if ran and self.reflector is not None and not cancel.is_set():
                    batch[index:] = self._reflect(plan, task, batch[index:])
            if cancel.is_set():
                return self._finish(plan, output, cancelled=True)
            rounds_left = self.max_rounds - plan.rounds
            if output.status == "done" or rounds_left <= 0:
                return self._finish(plan, output)
            feedback = RoundFeedback(
                plan.request,
                plan.rounds - 1,
                rounds_left,
                batch,
                list(self.data_in_memory()),
                plan.failed(),
            )
            try:
                output = self.planner.replan(feedback)
            except Exception as exc:
                plan.summary = f"Replanning failed ({type(exc).__name__}: {exc}); stopped."
                return self._finish(plan, output, replan_failed=True)
            batch = self._add_batch(plan, output.tasks)
            if not batch:
                return self._finish(plan, output)

    def _reflect(self, plan: TaskPlan, stage: Task, rest: list[Task]) -> list[Task]:
        """Record the reflector's verdict on `stage`; return the stages to run next."""
        assert self.reflector is not None
        pending = [t for t in rest if t.status == TaskStatus.PENDING]
        try:
            verdict = self.reflector.reflect(plan, stage, pending)
        except Exception as exc:  # a failing reflector leaves the plan as it was
            stage.reflection = f"Reflection failed ({type(exc).__name__}: {exc})."
            self._save(plan, stage)
            return rest
        stage.criteria_results = [c.model_dump() for c in verdict.criteria_results]
        stage.reflection = verdict.note
        if verdict.remaining is None:
            self._save(plan, stage)
            return rest
        keep: list[Task] = []
        waiting = {_task_key(t): t for t in pending}
        for item in verdict.remaining:
            task = self._task(item, stage.round)
            keep.append(waiting.pop(_task_key(task), None) or task)
        for dropped in waiting.values():
            dropped.finish(
                TaskStatus.SKIPPED, "", f"dropped after reflection: {verdict.note}"[:200]
            )
        # The plan lists stages in the order they run: the revised ones right after this one.
        ids = {t.id for t in keep}
        others = [t for t in plan.tasks if t.id not in ids]
        at = next(i for i, t in enumerate(others) if t.id == stage.id) + 1
        plan.tasks = [*others[:at], *keep, *others[at:]]
        self._save(plan, stage)
        return [t for t in rest if t.status != TaskStatus.PENDING] + keep

    def _task(self, item: PlannedTask, round_number: int) -> Task:
        return Task(
            description=item.description,
            instruction=item.instruction,
            mission=item.mission,
            candidate_datasets=list(item.candidate_datasets),
            round=round_number,
            criteria=list(item.criteria),
        )

    def _add_batch(self, plan: TaskPlan, planned: Sequence[PlannedTask]) -> list[Task]:
        if not planned:
            return []
        round_number = plan.rounds
        plan.rounds += 1
        tried = {_task_key(t) for t in plan.tasks if t.status == TaskStatus.FAILED}
        batch: list[Task] = []
        for item in planned:
            task = self._task(item, round_number)
            agent = agent_of(task.mission)
            if agent is not None and not self.preferences.allows(agent):
                task.finish(TaskStatus.SKIPPED, "", f"the {agent} agent is disabled by request")
            elif _task_key(task) in tried:
                task.finish(TaskStatus.SKIPPED, "", "this task already failed; not retried")
            plan.tasks.append(task)
            batch.append(task)
        self._save(plan)
        return batch

    def _instruction(self, plan: TaskPlan, task: Task) -> str:
        parts = [task.instruction.strip()]
        if plan.time_range:
            parts.append(
                f"Time range: {plan.time_range}. Use this exact range for ALL fetch tasks."
            )
        memory = list(self.data_in_memory())
        parts.append("Data in memory: " + ("; ".join(memory) if memory else "none"))
        if task.candidate_datasets and agent_of(task.mission) == "mission":
            parts.append("Candidate datasets to inspect: " + ", ".join(task.candidate_datasets))
        return "\n".join(parts)

    def _run_task(self, plan: TaskPlan, task: Task, cancel: threading.Event) -> None:
        if task.status != TaskStatus.PENDING:
            return
        before = {line.split(" ", 1)[0] for line in self.data_in_memory()}
        task.status = TaskStatus.IN_PROGRESS
        self._save(plan, task)
        try:
            outcome = self.runner.run(plan, task, self._instruction(plan, task), cancel)
        except Exception as exc:
            outcome = TaskOutcome(f"{type(exc).__name__}: {exc}", True, [str(exc)])
        after = [line.split(" ", 1)[0] for line in self.data_in_memory()]
        task.new_labels = [label for label in after if label not in before]
        if outcome.skipped is not None:
            task.finish(TaskStatus.SKIPPED, outcome.text, outcome.skipped)
        elif cancel.is_set() and outcome.failed:
            task.finish(TaskStatus.SKIPPED, outcome.text, "cancelled")
        elif outcome.failed:
            error = "; ".join(outcome.errors[-3:]) or outcome.text or "failed"
            task.finish(TaskStatus.FAILED, outcome.text, error[:_RESULT_CHARS])
        else:
            task.finish(TaskStatus.COMPLETED, outcome.text)
        self._save(plan, task)

    def _finish(
        self,
        plan: TaskPlan,
        output: PlannerOutput,
        *,
        cancelled: bool = False,
        replan_failed: bool = False,
    ) -> TaskPlan:
        for task in plan.pending():
            task.finish(TaskStatus.SKIPPED, "", "cancelled" if cancelled else "plan ended")
        completed = [t for t in plan.tasks if t.status == TaskStatus.COMPLETED]
        if output.criteria_results:
            plan.criteria = [
                CriterionResult(c.criterion, c.met, c.evidence) for c in output.criteria_results
            ]
        if cancelled:
            plan.status = PlanStatus.CANCELLED
        elif not completed:
            plan.status = PlanStatus.FAILED
        elif plan.failed() or replan_failed or any(not c.met for c in plan.criteria):
            plan.status = PlanStatus.COMPLETED_WITH_WARNINGS
        else:
            plan.status = PlanStatus.COMPLETED
        if not plan.summary:
            plan.summary = output.summary or summarize(plan)
        self._save(plan)
        return plan

    def _save(self, plan: TaskPlan, task: Task | None = None) -> None:
        self.store.save(plan)
        self.on_change(plan, task)


def summarize(plan: TaskPlan) -> str:
    """A plain account of what the plan did, task by task."""
    done = [t for t in plan.tasks if t.status == TaskStatus.COMPLETED]
    lines = [f"Plan {plan.status.value}: {len(done)} of {len(plan.tasks)} task(s) completed"]
    for task in plan.tasks:
        mark = {"completed": "done", "failed": "FAILED", "skipped": "skipped"}.get(
            task.status.value, task.status.value
        )
        line = f"- [{mark}] {task.description}"
        if task.new_labels:
            line += f" -> {', '.join(task.new_labels)}"
        if task.error:
            line += f" ({task.error})"
        lines.append(line)
    unmet = [c for c in plan.criteria if not c.met]
    if unmet:
        lines.append("Unmet success criteria: " + "; ".join(c.criterion for c in unmet))
    return "\n".join(lines)
