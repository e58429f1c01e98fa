"""Offline multi-step requests through the plan loop, end to end on a catalog-wide server.

`make_assistant` without a model gives the offline assistant wrapped for planning; these
tests go through `run_turn` (and the CLI) and check the plan records: rounds, routing,
new labels, statuses, criteria with evidence, persistence, cancel and resume.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from rich.console import Console
from typer.testing import CliRunner

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents import factory
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.planning.routing import AgentPreferences
from xhelio.agents.planning.schema import PlannerOutput
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus, TaskStatus
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.cli.chat_cmd import ChatOptions, ChatRepl
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.timerange import parse_time_range
from xhelio.tools.workspace import Workspace, open_workspace

runner = CliRunner()


@dataclass
class Env:
    server: CatalogHapiServer
    workspace: Workspace
    assistant: PlanningAssistant

    def ask(self, text: str, cancel: threading.Event | None = None) -> TurnResult:
        return run_turn(self.workspace, self.assistant, text, cancel)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    server = CatalogHapiServer()
    with server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        workspace = open_workspace(settings=load_settings())
        assistant, config = factory.make_assistant(workspace)
        assert config.offline and isinstance(assistant, PlanningAssistant)
        try:
            yield Env(server, workspace, assistant)
        finally:
            workspace.close()


def test_seed_example_runs_in_three_rounds(env: Env) -> None:
    result = env.ask(
        "Compare ACE and Wind magnetic field for 2024-01-10 to 2024-01-12, "
        "compute the magnitude of each, and plot them"
    )
    assert result.error is None, result.answer
    plan = result.plan
    assert plan is not None and plan["status"] == "completed", result.answer
    assert plan["rounds"] == 3
    tasks = plan["tasks"]
    fetches = [t for t in tasks if t["round"] == 0]
    assert sorted(t["mission"] for t in fetches) == ["ace", "wind"]
    assert all(t["status"] == "completed" and t["new_labels"] for t in fetches)
    assert {t["new_labels"][0].split(".")[0][:2] for t in fetches} == {"AC", "WI"}
    computes = [t for t in tasks if t["round"] == 1]
    assert len(computes) == 2 and all(t["mission"] == "__data_ops__" for t in computes)
    # |B| is computed from a vector, or the magnitude parameter was fetched directly.
    assert all(len(t["new_labels"]) <= 1 for t in computes)
    (plot,) = [t for t in tasks if t["round"] == 2]
    assert plot["mission"] == "__visualization__" and plot["status"] == "completed"
    current = env.workspace.session.plot.current
    assert current is not None and len(current.traces) == 2
    assert all(t.unit.startswith("nT") for t in current.traces), current.traces
    saved = TaskStore(load_settings()).load(plan["id"])
    assert [c.met for c in saved.criteria] == [True, True, True]
    assert "points" in saved.criteria[0].evidence
    assert saved.decision["routing_reasons"] and 0 < saved.decision["confidence"] <= 1
    assert saved.time_range and saved.time_range.startswith("2024-01-10")


@pytest.mark.parametrize(
    ("text", "missions", "min_rounds"),
    [
        ("ACE vs Wind solar wind speed on 2024-03-01", {"ace", "wind"}, 2),
        ("compare the ACE and OMNI density for 2024-02-01 to 2024-02-03", {"ace", "omni"}, 2),
        (
            "Get ACE magnetic field for 2024-01-15 and smooth it over 30 minutes and plot it",
            {"ace"},
            3,
        ),
        ("fetch Wind density on 2024-05-02, then resample it to 1 hour", {"wind"}, 3),
        (
            "PSP and Solar Orbiter magnetic field magnitude, 2022-03-01 to 2022-03-03",
            {"psp", "solar-orbiter"},
            2,
        ),
        ("plot the difference between ACE and Wind |B| on 2024-01-20", {"ace", "wind"}, 3),
        ("Compare OMNI and Wind proton density, January 5-7 2024", {"omni", "wind"}, 2),
        ("ACE versus DSCOVR magnetic field magnitude for 2024-04-02", {"ace", "dscovr"}, 2),
        (
            "first get ACE speed for 2024-06-01, then smooth it over 1 hour, finally plot it",
            {"ace"},
            3,
        ),
        ("MMS1 and THEMIS-A magnetic field on 2019-02-03 in separate panels", {"mms", "themis"}, 2),
        (
            "show ACE density and temperature for 2024-01-11 and plot them on a log scale",
            {"ace"},
            2,
        ),
        ("ratio of ACE to Wind density on 2024-02-10", {"ace", "wind"}, 3),
    ],
)
def test_offline_multi_step_phrasings(
    env: Env, text: str, missions: set[str], min_rounds: int
) -> None:
    result = env.ask(text)
    plan = result.plan
    assert plan is not None, result.answer
    assert plan["status"] in ("completed", "completed_with_warnings"), result.answer
    fetch_missions = {t["mission"] for t in plan["tasks"] if t["round"] == 0}
    assert fetch_missions == missions
    assert min_rounds <= plan["rounds"] <= 3
    assert [t["round"] for t in plan["tasks"]] == sorted(t["round"] for t in plan["tasks"])
    assert all(t["status"] == "completed" for t in plan["tasks"]), plan["tasks"]
    assert env.workspace.session.plot.current is not None


@pytest.mark.parametrize(
    ("text", "series", "traces"),
    [
        # "measured by" is English, not the By component: speed only, no magnetic field.
        (
            "Compare the solar wind speed measured by ACE and DSCOVR on 2018-02-05",
            ["Fetch ACE solar wind speed", "Fetch DSCOVR solar wind speed"],
            2,
        ),
        # The same quantity named per mission is one series per mission, not two.
        (
            "Plot ACE Bz and Wind Bz together on 2024-01-25",
            ["Fetch ACE magnetic field (z)", "Fetch Wind magnetic field (z)"],
            2,
        ),
        (
            "Compute ACE |B| for 2024-06-06, smooth it over 1 hour and compare with OMNI |B|",
            ["Fetch ACE magnetic field (magnitude)", "Fetch OMNI magnetic field (magnitude)"],
            2,
        ),
        # "magnitude" qualifies the field it follows, not the speed after it.
        (
            "Plot ACE magnetic field magnitude and solar wind speed on 2024-05-11, "
            "after that export the plot as pdf",
            ["Fetch ACE magnetic field (magnitude)", "Fetch ACE solar wind speed"],
            2,
        ),
        # "components" does not overwrite the explicit Bx.
        (
            "Fetch Wind B components in GSM for 2024-02-28 then plot Bx, By and Bz "
            "in separate panels",
            ["Bx of Wind magnetic field", "By of Wind magnetic field", "Bz of Wind magnetic field"],
            3,
        ),
        # No indicator fires, but the offline plan has two series: planned all the same.
        (
            "Fetch the solar wind density from OMNI for 2024-05-10 and plot it along with "
            "the wind speed",
            ["Fetch OMNI density", "Fetch OMNI solar wind speed"],
            2,
        ),
    ],
)
def test_offline_plans_have_one_task_per_series_asked_for(
    env: Env, text: str, series: list[str], traces: int
) -> None:
    result = env.ask(text)
    plan = result.plan
    assert plan is not None and plan["status"] == "completed", result.answer
    described = [t["description"] for t in plan["tasks"]]
    for want in series:
        assert sum(1 for d in described if d.startswith(want)) == 1, (want, described)
    if series[0].startswith("Fetch"):
        assert len([t for t in plan["tasks"] if t["round"] == 0]) == len(series), described
    current = env.workspace.session.plot.current
    assert current is not None and len(current.traces) == traces
    assert result.answer.startswith("Offline mode understood:")
    assert "Time range: 20" in result.answer


def test_all_nan_first_candidate_falls_back_inside_the_task(env: Env) -> None:
    first = env.assistant.inner.respond  # the direct path is not used here
    del first
    env.server.nan_datasets.add("AC_H0_MFI")
    env.server.nan_datasets.add("AC_H2_MFI")
    result = env.ask("compare ACE and Wind magnetic field on 2024-01-10")
    plan = result.plan
    assert plan is not None
    ace = next(t for t in plan["tasks"] if t["mission"] == "ace")
    assert ace["status"] == "completed"
    assert ace["new_labels"][0].split(".")[0] not in {"AC_H0_MFI", "AC_H2_MFI"}


def test_cancel_between_tasks_then_resume_after_restart(env: Env) -> None:
    cancel = threading.Event()
    calls = {"n": 0}
    funnel_call = env.workspace.funnel.call

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = funnel_call(*args, **kwargs)
        calls["n"] += 1
        if args[0] == "fetch_data" and result.ok:
            cancel.set()  # Ctrl-C right after the first successful fetch
        return result

    env.workspace.funnel.call = counting  # type: ignore[method-assign]
    result = env.ask("compare ACE and Wind density on 2024-02-05 and plot them", cancel)
    env.workspace.funnel.call = funnel_call  # type: ignore[method-assign]
    plan = result.plan
    assert plan is not None and plan["status"] == "cancelled"
    statuses = [t["status"] for t in plan["tasks"]]
    assert statuses[0] == "completed" and set(statuses[1:]) == {"skipped"}

    # A crash mid-plan leaves it EXECUTING with pending tasks: simulate and resume it in a
    # new workspace (a restart), where the assistant offers and finishes it.
    store = TaskStore(load_settings())
    saved = store.load(plan["id"])
    saved.status = PlanStatus.EXECUTING
    for task in saved.tasks[1:]:
        task.status, task.error = TaskStatus.PENDING, None
    store.save(saved)
    session_id = env.workspace.session.id
    env.workspace.close()

    workspace = open_workspace(session_id, settings=load_settings())
    try:
        assistant, _ = factory.make_assistant(workspace)
        assert isinstance(assistant, PlanningAssistant)
        unfinished = assistant.incomplete_plan()
        assert unfinished is not None and unfinished.id == plan["id"]
        reply = assistant.resume(unfinished, threading.Event())
        assert reply.plan is not None and reply.plan["status"] == "completed", reply.text
        assert all(t["status"] == "completed" for t in reply.plan["tasks"])
        # It goes on from the stage that ran (the plot), not from the fetches again.
        assert [t["mission"] for t in reply.plan["tasks"]] == ["ace", "wind", "__visualization__"]
        assert workspace.session.plot.current is not None
        assert assistant.incomplete_plan() is None
    finally:
        workspace.close()
    env.workspace = open_workspace(session_id, settings=load_settings())


def test_the_same_request_twice_plans_twice(env: Env) -> None:
    text = "ACE vs Wind solar wind speed on 2024-03-04"
    first, second = env.ask(text).plan, env.ask(text).plan
    assert first is not None and second is not None and first["id"] != second["id"]
    assert second["rounds"] == first["rounds"] >= 2
    assert [t["status"] for t in second["tasks"]] == [t["status"] for t in first["tasks"]]


def test_plan_without_a_time_records_the_window_the_offline_plan_chose(env: Env) -> None:
    result = env.ask("compare ACE and Wind density and plot them")
    assert result.plan is not None and result.plan["status"] == "completed", result.answer
    saved = TaskStore(load_settings()).load(result.plan["id"])
    assert saved.time_range is not None and " to " in saved.time_range
    assert f"Time range: {parse_time_range(saved.time_range).readable()}." in result.answer


def test_a_named_mission_without_data_makes_the_status_truthful(env: Env) -> None:
    # Dst comes from OMNI only: the ACE half of the comparison cannot be done.
    result = env.ask("compare the Dst index from OMNI and ACE for 2024-01-01")
    assert result.plan is not None
    assert result.plan["status"] == "completed_with_warnings", result.answer
    assert "Not done: no ACE dataset was found for Dst index" in result.answer
    saved = TaskStore(load_settings()).load(result.plan["id"])
    unmet = [c for c in saved.criteria if not c.met]
    assert [c.criterion for c in unmet] == ["ACE data as asked"]
    assert "no ACE dataset" in unmet[0].evidence


def test_a_task_whose_input_never_came_is_skipped_not_failed(env: Env) -> None:
    # Helios 1 has no data in 2024: its fetch fails, its |B| has no input and is skipped.
    result = env.ask("compare ACE and Helios 1 magnetic field magnitude for 2024-01-01")
    assert result.plan is not None
    assert result.plan["status"] == "completed_with_warnings", result.answer
    saved = TaskStore(load_settings()).load(result.plan["id"])
    helios = [t for t in saved.tasks if "Helios" in t.description]
    fetch = next(t for t in helios if t.mission == "helios")
    assert fetch.status == TaskStatus.FAILED and "no data" in (fetch.error or "")
    derived = [t for t in helios if t.mission == "__data_ops__"]
    assert derived and all(t.status == TaskStatus.SKIPPED for t in derived)
    assert all("input was not produced" in (t.error or "") for t in derived)
    assert [t.description for t in saved.failed()] == [fetch.description]


def test_simple_request_is_not_planned(env: Env) -> None:
    result = env.ask("Show me ACE magnetic field for 2024-01-01")
    assert result.error is None and "rounds" not in (result.plan or {})  # no TaskPlan
    assert TaskStore(load_settings()).list() == []


def test_ask_json_reports_the_plan_and_plan_cli_shows_it(env: Env) -> None:
    out = runner.invoke(
        app, ["ask", "Compare ACE and Wind speed on 2024-03-02 and plot them", "--json"]
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    plan = payload["plan"]
    assert set(plan) == {"id", "status", "rounds", "tasks"}
    assert plan["status"] == "completed"
    assert {"description", "mission", "status", "round", "new_labels"} == set(plan["tasks"][0])
    labels = {d["label"] for d in payload["data"]}
    assert {lb for t in plan["tasks"] for lb in t["new_labels"]} <= labels

    listed = runner.invoke(app, ["plan", "list", "--json"])
    assert [p["id"] for p in json.loads(listed.stdout)] == [plan["id"]]
    # In an 80-column terminal the table keeps the id whole and the request's words.
    table = runner.invoke(app, ["plan", "list"], env={"COLUMNS": "80"}).stdout
    assert plan["id"] in table and "completed" in table
    assert all(word in table for word in ["Compare", "ACE", "and", "Wind", "speed", "on"])
    shown = runner.invoke(app, ["plan", "show", plan["id"]], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "__visualization__" in shown.stdout
    assert "met" in shown.stdout
    as_json = json.loads(runner.invoke(app, ["plan", "show", plan["id"], "--json"]).stdout)
    assert as_json["id"] == plan["id"] and len(as_json["tasks"]) == len(plan["tasks"])
    missing = runner.invoke(app, ["plan", "show", "p-nope"])
    assert missing.exit_code == 1 and "No plan 'p-nope'" in missing.stderr


def _died_before_the_plot(env: Env, day: str) -> tuple[str, str]:
    """Plan a compare-and-plot, then mark it as if the process died before the plot task."""
    first = env.ask(f"compare ACE and Wind density on {day} and plot them")
    assert first.plan is not None
    store = TaskStore(load_settings())
    saved = store.load(first.plan["id"])
    saved.status = PlanStatus.EXECUTING
    saved.tasks[-1].status = TaskStatus.PENDING
    store.save(saved)
    env.workspace.close()
    return env.workspace.session.id, saved.id


def test_repl_offers_resume_and_shows_status_of_the_plan(env: Env) -> None:
    session_id, plan_id = _died_before_the_plot(env, "2024-02-06")

    out = io.StringIO()
    repl = ChatRepl(Console(file=out, width=200), ChatOptions(session_id=session_id))
    repl.start()
    try:
        assert f"Unfinished plan {plan_id} (1 task(s) left)" in out.getvalue()
        repl.handle("resume")
        result = repl.last_result
        assert (
            result is not None and result.plan is not None and result.plan["status"] == "completed"
        ), result and result.answer
        repl.handle("status")
        text = out.getvalue()
        assert f"Plan {plan_id}: completed" in text and "__visualization__" in text
        repl.handle("cancel")
        assert "Nothing to cancel" in out.getvalue()
    finally:
        repl.close()
    env.workspace = open_workspace(session_id, settings=load_settings())


def _repl(session_id: str) -> tuple[ChatRepl, io.StringIO]:
    out = io.StringIO()
    repl = ChatRepl(Console(file=out, width=200), ChatOptions(session_id=session_id))
    repl.start()
    return repl, out


def test_repl_retry_reruns_the_failed_fetch_then_redoes_the_figure(env: Env) -> None:
    for dataset in env.workspace.context.catalog.dataset_ids():
        if dataset.startswith("WI_"):
            env.server.fail_next("1406", dataset=dataset)  # every Wind candidate fails once
    first = env.ask("compare ACE and Wind density on 2024-02-06 and plot them")
    assert first.plan is not None and first.plan["status"] == "completed_with_warnings"
    assert [t["status"] for t in first.plan["tasks"]] == ["completed", "failed", "completed"]
    session_id = env.workspace.session.id
    env.workspace.close()

    repl, out = _repl(session_id)
    try:
        repl.handle("retry")
        assert "Retrying failed task: Fetch Wind density" in out.getvalue()
        result = repl.last_result
        assert result is not None and result.plan is not None, out.getvalue()
        plan = result.plan
        assert plan["id"] == first.plan["id"] and plan["status"] == "completed"
        wind = plan["tasks"][1]
        assert wind["status"] == "completed" and wind["round"] == 0 and wind["new_labels"]
        # The figure is redone after the retried fetch, in a new round, with both series.
        replot = plan["tasks"][-1]
        assert replot["mission"] == "__visualization__" and replot["round"] == 2
        assert plan["rounds"] == 3
        current = repl.workspace.session.plot.current
        assert current is not None and len(current.traces) == 2
    finally:
        repl.close()
    env.workspace = open_workspace(session_id, settings=load_settings())


def test_repl_cancel_skips_the_unfinished_plans_remaining_tasks(env: Env) -> None:
    session_id, plan_id = _died_before_the_plot(env, "2024-02-07")

    repl, out = _repl(session_id)
    try:
        assert f"Unfinished plan {plan_id}" in out.getvalue()
        repl.handle("cancel")
    finally:
        repl.close()
    cancelled = TaskStore(load_settings()).load(plan_id)
    assert cancelled.status == PlanStatus.CANCELLED
    assert cancelled.tasks[-1].status == TaskStatus.SKIPPED
    assert cancelled.tasks[-1].error == "cancelled by the user"
    assert [t.status for t in cancelled.tasks[:-1]] == [TaskStatus.COMPLETED] * 2
    env.workspace = open_workspace(session_id, settings=load_settings())


def test_the_planner_is_told_the_agent_preferences(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    planner = env.assistant.make_planner(threading.Event())
    messages: list[str] = []
    start = planner.start

    def recording(message: str) -> PlannerOutput:
        messages.append(message)
        return start(message)

    monkeypatch.setattr(planner, "start", recording)
    env.assistant.set_preferences(AgentPreferences.of(prefer=["data_ops"], disable=["insight"]))
    result = env.ask("compare ACE and Wind speed on 2024-03-05 and plot them")
    assert result.plan is not None and result.plan["status"] == "completed", result.answer
    (message,) = messages
    assert "Use this exact range for ALL fetch tasks" in message
    assert "Preferred agents (route tasks to them where they can do the work): __data_ops__." in (
        message
    )
    assert "Disabled agents (plan no task for them; such tasks are skipped): insight" in message


def test_ask_disable_skips_the_disabled_agent(env: Env) -> None:
    out = runner.invoke(
        app,
        [
            "ask",
            "compare ACE and Wind speed on 2024-03-03 and plot them",
            "--json",
            "--disable",
            "visualization",
        ],
    )
    payload = json.loads(out.stdout)
    plot = [t for t in payload["plan"]["tasks"] if t["mission"] == "__visualization__"]
    assert plot and all(t["status"] == "skipped" for t in plot)
    saved = TaskStore(load_settings()).load(payload["plan"]["id"])
    assert (
        "disabled by request" in saved.decision["rationale"]
        or "visualization" not in (saved.decision["chosen_agents"])
    )
    bad = runner.invoke(app, ["ask", "x", "--json", "--disable", "painter"])
    error = json.loads(bad.stdout)["error"]
    assert bad.exit_code == 1 and "Unknown agent 'painter'" in error["message"]
