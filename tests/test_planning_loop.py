"""The plan-execute-replan loop with a scripted planner and a runner over a real DataStore.

The planner is scripted here (what it decides is not under test); the loop's own duties
are: rounds, context injection, new labels, failed tasks never retried, budget warnings,
cancellation, review, success criteria, disabled agents, persistence and resumption.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xhelio.agents.planning.loop import (
    PlanLoop,
    PlannerFailedError,
    RoundFeedback,
    TaskOutcome,
)
from xhelio.agents.planning.routing import (
    AgentPreferences,
    decide_agents,
    is_complex_request,
    resolve_plan_time,
)
from xhelio.agents.planning.schema import (
    CriterionCheck,
    PlannedTask,
    PlannerOutput,
    ReviewDecision,
)
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus, Task, TaskPlan, TaskStatus
from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.errors import UserError


def fetch(mission: str, what: str = "magnetic field vector") -> PlannedTask:
    return PlannedTask(
        description=f"Fetch {mission} {what}",
        instruction=f"Fetch {what}",
        mission=mission,
        candidate_datasets=[f"{mission}_MFI"],
    )


class ScriptedPlanner:
    name = "scripted"

    def __init__(self, outputs: list[PlannerOutput], fail_start: bool = False) -> None:
        self.outputs = outputs
        self.fail_start = fail_start
        self.messages: list[str] = []
        self.feedback: list[RoundFeedback] = []
        self.revisions: list[str] = []

    def start(self, message: str) -> PlannerOutput:
        self.messages.append(message)
        if self.fail_start:
            raise RuntimeError("model returned garbage")
        return self.outputs.pop(0)

    def revise(self, output: PlannerOutput, review: ReviewDecision) -> PlannerOutput:
        self.revisions.append(review.reason)
        return self.outputs.pop(0)

    def replan(self, feedback: RoundFeedback) -> PlannerOutput:
        self.feedback.append(feedback)
        return self.outputs.pop(0)


class StoreRunner:
    """Fetch tasks store a series named after the mission; WIND fails; ops add a label."""

    def __init__(self, store: DataStore, cancel_after: int | None = None) -> None:
        self.store = store
        self.instructions: list[str] = []
        self.cancel_after = cancel_after

    def run(
        self, plan: TaskPlan, task: Task, instruction: str, cancel: threading.Event
    ) -> TaskOutcome:
        self.instructions.append(instruction)
        if self.cancel_after is not None and len(self.instructions) >= self.cancel_after:
            cancel.set()
        if task.mission == "WIND":
            return TaskOutcome("no usable data", True, ["WI_H0_MFI is all NaN", "WI_K0 failed"])
        label = (
            f"{task.mission}.B"
            if task.mission and not task.mission.startswith("__")
            else (f"derived{len(self.store)}")
        )
        index = pd.date_range("2024-01-01", periods=10, freq="1min", tz="UTC")
        self.store.put(DataEntry(label, pd.DataFrame({"B": np.arange(10.0)}, index=index)))
        return TaskOutcome(f"stored {label} (10 points)")


def make_loop(
    planner: ScriptedPlanner, tmp_path: Path, **kwargs: object
) -> tuple[PlanLoop, DataStore, StoreRunner]:
    data = DataStore()
    runner = StoreRunner(data, kwargs.pop("cancel_after", None))  # type: ignore[arg-type]
    loop = PlanLoop(
        planner,
        runner,
        TaskStore(path=tmp_path / "plans.sqlite"),
        lambda: [f"{e.label} ({', '.join(e.columns)})" for e in data],
        **kwargs,  # type: ignore[arg-type]
    )
    return loop, data, runner


def test_three_rounds_fetch_compute_plot_with_context_and_records(tmp_path: Path) -> None:
    planner = ScriptedPlanner(
        [
            PlannerOutput(
                status="continue",
                reasoning="fetch both",
                tasks=[fetch("ACE"), fetch("DSCOVR")],
                success_criteria=["both magnitudes plotted"],
            ),
            PlannerOutput(
                status="continue",
                reasoning="compute",
                tasks=[
                    PlannedTask(
                        description="Magnitudes",
                        instruction="Compute |B| of ACE.B and DSCOVR.B",
                        mission="__data_ops__",
                    )
                ],
            ),
            PlannerOutput(
                status="done",
                reasoning="plot",
                tasks=[
                    PlannedTask(
                        description="Plot", instruction="Plot both", mission="__visualization__"
                    )
                ],
                criteria_results=[
                    CriterionCheck(
                        criterion="both magnitudes plotted", met=True, evidence="2 traces"
                    )
                ],
            ),
        ]
    )
    loop, _, runner = make_loop(planner, tmp_path)
    plan = TaskPlan("Compare ACE and DSCOVR |B| for 2024-01-01", "s1", time_range="2024-01-01")
    loop.run(plan, threading.Event(), time_note="Resolved time range: 2024-01-01 to 2024-01-02.")

    assert plan.status == PlanStatus.COMPLETED
    assert plan.rounds == 3
    assert [t.round for t in plan.tasks] == [0, 0, 1, 2]
    assert [t.new_labels for t in plan.tasks] == [
        ["ACE.B"],
        ["DSCOVR.B"],
        ["derived2"],
        ["derived3"],
    ]
    assert "Resolved time range: 2024-01-01 to 2024-01-02." in planner.messages[0]
    first = runner.instructions[0]
    assert "Use this exact range for ALL fetch tasks" in first
    assert "Candidate datasets to inspect: ACE_MFI" in first
    assert "Data in memory: ACE.B (B)" in runner.instructions[1]
    assert "Candidate datasets" not in runner.instructions[2]  # not a mission task
    assert "New data labels: ACE.B" in planner.feedback[0].render()
    assert plan.criteria[0].met and plan.criteria[0].evidence == "2 traces"

    again = TaskStore(path=tmp_path / "plans.sqlite").load(plan.id)
    assert again.to_dict() == plan.to_dict()
    brief = again.brief()
    assert brief["rounds"] == 3 and brief["tasks"][2]["mission"] == "__data_ops__"


def test_failed_task_reported_and_never_retried_with_budget_warnings(tmp_path: Path) -> None:
    retry = PlannerOutput(status="continue", reasoning="again", tasks=[fetch("WIND")])
    planner = ScriptedPlanner(
        [
            PlannerOutput(status="continue", reasoning="r0", tasks=[fetch("ACE"), fetch("WIND")]),
            retry,
            retry,
            retry,
            PlannerOutput(status="done", reasoning="stop", summary="ACE only; Wind had no data"),
        ]
    )
    loop, _, runner = make_loop(planner, tmp_path)
    plan = loop.run(TaskPlan("ACE and Wind", "s1"), threading.Event())

    wind = [t for t in plan.tasks if t.mission == "WIND"]
    assert wind[0].status == TaskStatus.FAILED
    assert "WI_H0_MFI is all NaN" in (wind[0].error or "")
    assert all(
        t.status == TaskStatus.SKIPPED and "not retried" in (t.error or "") for t in wind[1:]
    )
    assert sum(1 for i in runner.instructions if "Fetch magnetic" in i) == 2  # ACE + Wind once
    rendered = [f.render() for f in planner.feedback]
    assert all("must NOT be retried" in r and "Fetch WIND" in r for r in rendered)
    assert all("Do NOT create new tasks that attempt the same searches" in r for r in rendered)
    assert "BUDGET WARNING" not in rendered[0] and "FINAL ROUND" not in rendered[0]
    assert "BUDGET WARNING: Only 2 round(s) remaining." in rendered[-2]
    assert "FINAL ROUND" in rendered[-1]
    assert plan.rounds == 4  # the closing "done" adds no round
    assert plan.status == PlanStatus.COMPLETED_WITH_WARNINGS
    assert plan.summary == "ACE only; Wind had no data"


def test_cancellation_between_tasks_skips_the_rest(tmp_path: Path) -> None:
    planner = ScriptedPlanner(
        [
            PlannerOutput(
                status="continue", reasoning="x", tasks=[fetch("ACE"), fetch("PSP"), fetch("OMNI")]
            )
        ]
    )
    loop, data, _ = make_loop(planner, tmp_path, cancel_after=1)
    plan = loop.run(TaskPlan("three", "s1"), threading.Event())
    assert plan.status == PlanStatus.CANCELLED
    assert [t.status for t in plan.tasks] == [
        TaskStatus.COMPLETED,
        TaskStatus.SKIPPED,
        TaskStatus.SKIPPED,
    ]
    assert data.labels() == ["ACE.B"]
    assert planner.feedback == []  # no replanning after a cancel


def test_planner_failure_raises_for_the_direct_path_and_saves_failed(tmp_path: Path) -> None:
    planner = ScriptedPlanner([], fail_start=True)
    loop, _, _ = make_loop(planner, tmp_path)
    plan = TaskPlan("compare things", "s1")
    with pytest.raises(PlannerFailedError, match="garbage"):
        loop.run(plan, threading.Event())
    assert TaskStore(path=tmp_path / "plans.sqlite").load(plan.id).status == PlanStatus.FAILED


def test_disabled_agent_tasks_are_skipped_with_the_reason(tmp_path: Path) -> None:
    planner = ScriptedPlanner(
        [
            PlannerOutput(
                status="done",
                reasoning="x",
                tasks=[
                    fetch("ACE"),
                    PlannedTask(
                        description="Plot", instruction="plot", mission="__visualization__"
                    ),
                ],
            )
        ]
    )
    prefs = AgentPreferences.of(disable=["visualization"])
    loop, _, runner = make_loop(planner, tmp_path, preferences=prefs)
    plan = loop.run(TaskPlan("fetch and plot ACE", "s1"), threading.Event())
    assert plan.tasks[1].status == TaskStatus.SKIPPED
    assert "visualization agent is disabled" in (plan.tasks[1].error or "")
    assert len(runner.instructions) == 1
    with pytest.raises(UserError, match="Unknown agent 'painter'"):
        AgentPreferences.of(prefer=["painter"])


def test_review_asks_for_changes_then_approves(tmp_path: Path) -> None:
    class Reviewer:
        def __init__(self) -> None:
            self.seen: list[int] = []

        def review(self, request: str, output: PlannerOutput) -> ReviewDecision:
            self.seen.append(len(output.tasks))
            if len(output.tasks) < 2:
                return ReviewDecision(exit=False, reason="the plot is missing")
            return ReviewDecision(exit=True, reason="covers fetch and plot")

    planner = ScriptedPlanner(
        [
            PlannerOutput(status="done", reasoning="x", tasks=[fetch("ACE")]),
            PlannerOutput(
                status="done",
                reasoning="y",
                tasks=[
                    fetch("ACE"),
                    PlannedTask(
                        description="Plot", instruction="plot", mission="__visualization__"
                    ),
                ],
                success_criteria=["a figure exists"],
            ),
        ]
    )
    reviewer = Reviewer()
    loop, _, _ = make_loop(planner, tmp_path, reviewer=reviewer)
    plan = loop.run(TaskPlan("fetch and plot ACE", "s1"), threading.Event())
    assert reviewer.seen == [1, 2]
    assert planner.revisions == ["the plot is missing"]
    assert [r["exit"] for r in plan.reviews] == [False, True]
    assert len(plan.tasks) == 2
    # The planner said done without judging its criterion: the status says so.
    assert plan.status == PlanStatus.COMPLETED_WITH_WARNINGS
    assert "Unmet success criteria: a figure exists" in plan.summary


def test_incomplete_plan_resumes_after_a_restart(tmp_path: Path) -> None:
    store = TaskStore(path=tmp_path / "plans.sqlite")
    plan = TaskPlan("ACE then PSP", "s9", status=PlanStatus.EXECUTING, rounds=1)
    plan.tasks = [
        Task("Fetch ACE", "Fetch B", "ACE", status=TaskStatus.COMPLETED, new_labels=["ACE.B"]),
        Task("Fetch PSP", "Fetch B", "PSP", status=TaskStatus.IN_PROGRESS),
        Task("Fetch OMNI", "Fetch B", "OMNI"),
    ]
    store.save(plan)
    assert store.incomplete("other") is None
    found = TaskStore(path=tmp_path / "plans.sqlite").incomplete("s9")  # a new process
    assert found is not None and found.id == plan.id

    planner = ScriptedPlanner([PlannerOutput(status="done", reasoning="all fetched")])
    loop, data, runner = make_loop(planner, tmp_path)
    done = loop.resume(found, threading.Event())
    assert [t.status for t in done.tasks] == [TaskStatus.COMPLETED] * 3
    assert data.labels() == ["PSP.B", "OMNI.B"]
    assert len(runner.instructions) == 2
    assert done.status == PlanStatus.COMPLETED
    assert store.incomplete("s9") is None


@pytest.mark.parametrize(
    "text",
    [
        "Compare ACE and Wind magnetic field for January 2024",
        "fetch PSP magnetic field then compute its magnitude",
        "ACE vs DSCOVR solar wind speed last week",
        "Get OMNI density and smooth it and plot it",
        "plot the ACE field and plot the Wind field",
        "show me the difference between the ACE and OMNI speed",
        "first fetch ACE density, then resample to 1 hour",
        "Fetch Wind and ACE magnetic field",
        "plot the OMNI speed after smoothing it over an hour",
    ],
)
def test_complex_requests(text: str) -> None:
    verdict = is_complex_request(text)
    assert verdict.complex, text
    assert verdict.reasons


@pytest.mark.parametrize(
    "text",
    [
        "Show me ACE magnetic field data for last week",
        "plot the solar wind speed from ACE for 2024-01-15",
        "what datasets does PSP have",
        "Wind magnetic field yesterday",
        "OMNI Dst for March 2015",
    ],
)
def test_simple_requests(text: str) -> None:
    assert not is_complex_request(text).complex, is_complex_request(text).reasons


def test_solar_wind_is_not_the_wind_spacecraft() -> None:
    assert is_complex_request("ACE solar wind speed and density").spacecraft == ("ace",)
    assert set(is_complex_request("ACE and Wind speed").spacecraft) == {"ace", "wind"}


def test_plan_time_is_resolved_once_from_the_sentence() -> None:
    now = datetime(2024, 2, 10, 12, tzinfo=UTC)
    resolved = resolve_plan_time(
        "Compare ACE and Wind magnetic field for January 2024 and plot them", now=now
    )
    assert resolved is not None
    span, words = resolved
    assert (span.start.isoformat(), span.end.isoformat()) == (
        "2024-01-01T00:00:00+00:00",
        "2024-02-01T00:00:00+00:00",
    )
    assert words == "January 2024"
    last_week = resolve_plan_time("compare ACE and OMNI speed over the last week", now=now)
    assert last_week is not None and last_week[0].end.date().isoformat() == "2024-02-10"
    assert resolve_plan_time("compare ACE and Wind", now=now) is None
    # The same sentence forms the offline parser reads: a clock range on a day, a week.
    clock = resolve_plan_time("compare ACE and Wind Bz on 2017-07-11 from 22:00 to 23:00")
    assert clock is not None and str(clock[0]).startswith("2017-07-11T22:00:00Z to 2017-07-11T23")
    week = resolve_plan_time("ACE vs Wind speed the first week of February 2024", now=now)
    assert week is not None and (week[0].end - week[0].start).days == 7


def test_decision_keeps_rationale_confidence_and_respects_disable() -> None:
    decision = decide_agents(
        "fetch ACE field, compute magnitude and plot it",
        AgentPreferences.of(prefer=["data_ops"], disable=["visualization"]),
        spacecraft=["AC"],
    )
    assert decision.chosen_agents[0] == "data_ops"
    assert "visualization" not in decision.chosen_agents
    assert "mission" in decision.chosen_agents
    assert "disabled by request: visualization" in decision.rationale
    assert 0.0 < decision.confidence <= 1.0
