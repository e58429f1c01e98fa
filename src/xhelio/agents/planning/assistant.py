"""`PlanningAssistant`: routes complex requests through the plan loop, the rest directly.

It wraps any `Assistant` (the LLM orchestrator or the offline interpreter). A request that
`is_complex_request` flags (or one the inner assistant hands over: the orchestrator's
`request_planning` calls `plan_request`, the offline interpreter answers `wants_plan`)
gets its time range resolved once, a heuristic `PlannerDecision` under the request's
agent preferences, and a `PlanLoop` run with this mode's planner and task runner. If the
planner fails, the request goes to the inner assistant's direct path, with a note. It
also serves the REPL's plan commands: the latest plan, retry of its first failed task,
cancel of its remaining tasks, and resumption of a plan a crash or quit left unfinished.
Imports the planning package, `turn` and `tools.workspace`; no interface.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from xhelio.agents.planning.loop import (
    NothingToPlanError,
    PlanLoop,
    Planner,
    PlannerFailedError,
    Reflector,
    Reviewer,
    TaskRunner,
)
from xhelio.agents.planning.routing import (
    AgentName,
    AgentPreferences,
    Complexity,
    decide_agents,
    is_complex_request,
    resolve_plan_time,
)
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus, Task, TaskPlan, TaskStatus
from xhelio.agents.turn import Assistant, AssistantReply
from xhelio.tools.workspace import Workspace

__all__ = ["DeepHooks", "PlanningAssistant"]

PlannerFactory = Callable[[threading.Event], Planner]


class DeepHooks:
    """What deep-analysis mode adds to a planning assistant: a stage reflector, a reviewer."""

    def __init__(
        self, make_reflector: Callable[[], Reflector], reviewer: Reviewer | None = None
    ) -> None:
        self.make_reflector = make_reflector
        self.reviewer = reviewer


_ROUTES: dict[AgentName, str] = {
    "mission": "mission ids (fetching)",
    "data_ops": "__data_ops__",
    "data_extraction": "__data_extraction__",
    "sql": "__sql__",
    "visualization": "__visualization__",
    "insight": "insight (figure interpretation)",
    "web_api": "__web_api__",
}


def _preference_notes(preferences: AgentPreferences) -> list[str]:
    """The request's agent preferences, told to the planner in its own routing terms."""
    notes: list[str] = []
    if preferences.prefer:
        routes = ", ".join(_ROUTES[a] for a in preferences.prefer)
        notes.append(
            f"Preferred agents (route tasks to them where they can do the work): {routes}."
        )
    if preferences.disable:
        routes = ", ".join(_ROUTES[a] for a in preferences.disable)
        notes.append(f"Disabled agents (plan no task for them; such tasks are skipped): {routes}.")
    return notes


class PlanningAssistant:
    """An assistant that plans multi-step requests and answers simple ones directly."""

    def __init__(
        self,
        inner: Assistant,
        workspace: Workspace,
        make_planner: PlannerFactory,
        runner: TaskRunner,
        *,
        reviewer: Reviewer | None = None,
        review_iterations: int = 2,
        preferences: AgentPreferences | None = None,
        store: TaskStore | None = None,
        wants_plan: Callable[[str], bool] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.workspace = workspace
        self.make_planner = make_planner
        self.runner = runner
        self.reviewer = reviewer
        self.review_iterations = review_iterations
        self.preferences = preferences or AgentPreferences()
        self.store = store or TaskStore(workspace.context.settings)
        self.wants_plan = wants_plan
        self.reflector: Reflector | None = None
        """Judges each stage as it ends (set for the length of a deep analysis)."""
        self.deep: DeepHooks | None = None
        """Deep-analysis mode's reflector and reviewer (set by the factory)."""

    def _memory(self) -> list[str]:
        return [f"{e.label} ({', '.join(e.columns)})" for e in self.workspace.session.store]

    def _loop(self, cancel: threading.Event) -> PlanLoop:
        events = self.workspace.session.events

        def publish(plan: TaskPlan, task: Task | None) -> None:
            if task is None:
                summary = f"plan {plan.id}: {plan.status.value}, round {plan.rounds}"
                events.publish("plan", agent="planner", status=plan.status.value, summary=summary)
                return
            events.publish(
                "plan_task",
                agent=task.mission or "orchestrator",
                status=task.status.value,
                summary=task.description[:200],
            )

        return PlanLoop(
            self.make_planner(cancel),
            self.runner,
            self.store,
            self._memory,
            reviewer=self.reviewer,
            review_iterations=self.review_iterations,
            preferences=self.preferences,
            reflector=self.reflector,
            on_change=publish,
        )

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Plan and run a complex request; pass a simple one to the inner assistant."""
        verdict = is_complex_request(request, self.workspace.context.catalog.aliases)
        if not verdict.complex and self.wants_plan is not None and self.wants_plan(request):
            verdict = Complexity(True, ("several steps in the offline plan",), verdict.spacecraft)
        if not verdict.complex:
            return self.inner.respond(request, cancel)
        return self.plan_request(request, cancel, verdict)

    def plan_request(
        self,
        request: str,
        cancel: threading.Event,
        verdict: Complexity | None = None,
        note: str | None = None,
    ) -> AssistantReply:
        """Run `request` through the plan loop (the orchestrator's request_planning too).

        `note` is told to the planner with the request (deep analysis asks for stages).
        """
        if verdict is None:
            verdict = is_complex_request(request, self.workspace.context.catalog.aliases)
        reasons = verdict.reasons or ("requested",)
        resolved = resolve_plan_time(request)
        decision = decide_agents(request, self.preferences, verdict.spacecraft)
        plan = TaskPlan(
            request=request,
            session_id=self.workspace.session.id,
            time_range=str(resolved[0]) if resolved else None,
            decision={**decision.to_dict(), "routing_reasons": list(reasons)},
        )
        notes: list[str] = []
        if resolved is not None:
            notes.append(
                f"Resolved time range: {resolved[0]!s}. Use this exact range for ALL fetch tasks."
            )
        notes += _preference_notes(self.preferences)
        if note:
            notes.append(note)
        try:
            self._loop(cancel).run(plan, cancel, time_note="\n".join(notes) or None)
        except PlannerFailedError as exc:
            # The direct path answers; the abandoned plan stays in the store as FAILED
            # (`xhelio plan show ID`) and is not this turn's plan record.
            reply = self.inner.respond(request, cancel)
            if isinstance(exc.__cause__, NothingToPlanError):
                return reply  # the direct answer says what it still needs
            reply.text = (
                f"(Planning failed, answered directly; plan {plan.id}: {exc})\n\n{reply.text}"
            )
            return reply
        return AssistantReply(
            text=plan.summary, plan=plan.brief(), follow_up=self._follows_up(request)
        )

    def _follows_up(self, request: str) -> bool:
        """Whether the direct assistant reads `request` as a follow-up of the session.

        The request-vs-data check then judges only what the follow-up names, not the
        earlier series drawn again beside the new one.
        """
        interpret: Any = getattr(self.inner, "interpret", None)
        return False if interpret is None else bool(interpret(request)[2])

    def set_preferences(self, preferences: AgentPreferences) -> None:
        """Constrain routing: plans skip disabled agents, and so does direct delegation."""
        self.preferences = preferences
        disabled = getattr(self.inner, "disabled_agents", None)
        if isinstance(disabled, set):
            disabled.clear()
            disabled.update(preferences.disable)

    # The REPL's plan commands ------------------------------------------------------------

    def latest_plan(self) -> TaskPlan | None:
        """The session's most recent plan, if any."""
        plans = self.store.list(1, session_id=self.workspace.session.id)
        return plans[0] if plans else None

    def incomplete_plan(self) -> TaskPlan | None:
        """A plan of this session that a crash or quit left unfinished."""
        return self.store.incomplete(self.workspace.session.id)

    def resume(self, plan: TaskPlan, cancel: threading.Event) -> AssistantReply:
        """Finish an unfinished plan."""
        self._loop(cancel).resume(plan, cancel)
        return AssistantReply(text=plan.summary, plan=plan.brief())

    def retry_failed(self, cancel: threading.Event) -> AssistantReply | None:
        """Run the first failed task of the latest plan again; None when none failed."""
        plan = self.latest_plan()
        failed = plan.failed() if plan else []
        if plan is None or not failed:
            return None
        task = failed[0]
        task.status, task.error = TaskStatus.PENDING, None
        plan.summary = ""
        self._loop(cancel).resume(plan, cancel)
        return AssistantReply(text=plan.summary, plan=plan.brief())

    def cancel_plan(self) -> TaskPlan | None:
        """Mark the unfinished plan's remaining tasks SKIPPED and the plan CANCELLED."""
        plan = self.incomplete_plan()
        if plan is None:
            return None
        for task in plan.tasks:
            if task.status in (TaskStatus.PENDING, TaskStatus.IN_PROGRESS):
                task.finish(TaskStatus.SKIPPED, "", "cancelled by the user")
        plan.status = PlanStatus.CANCELLED
        self.store.save(plan)
        return plan
