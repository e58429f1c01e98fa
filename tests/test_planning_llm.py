"""The LLM planner end to end: the seed's concrete example with scripted models.

"Compare ACE and Wind magnetic field, compute the magnitude of each, plot them" goes
through the real factory (planning wrapper, LLM planner, sub-agents in task mode, the one
funnel) against a loopback HAPI server; only the models are scripted. Also: planner
failure falls back to the orchestrator's direct path, and the reviewer's decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from agent_script import Script, scripted_config, user_prompts
from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.agents import factory
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

REQUEST = (
    "Compare ACE and Wind magnetic field for 2024-01-10 to 2024-01-12, "
    "compute the magnitude of each, and plot them"
)
START, STOP = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    with HapiTestServer() as server:
        for dataset, name in (("AC_H2_MFI", "BGSEc"), ("WI_H2_MFI", "BGSE")):
            info = make_info(START, STOP, [(name, "nT", 3)], cadence="PT5M")
            server.add_dataset(dataset, info, synthetic_frame(START, STOP, "PT5M", ["x", "y", "z"]))
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        ws = open_workspace(settings=load_settings())
        yield ws
        ws.close()


def planned(status: str, tasks: list[dict[str, Any]], **extra: Any) -> list[tuple[str, Any]]:
    return [("final_result", {"status": status, "reasoning": "scripted", "tasks": tasks, **extra})]


def fetch_task(mission: str, dataset: str) -> dict[str, Any]:
    return {
        "description": f"Fetch {mission} magnetic field",
        "instruction": "Fetch the magnetic field vector",
        "mission": mission,
        "candidate_datasets": [dataset],
    }


def last_prompt(messages: list[ModelMessage]) -> str:
    return user_prompts(messages)[-1]


def seed_script() -> Script:
    def compute(messages: list[ModelMessage], info: AgentInfo) -> Any:
        feedback = last_prompt(messages)
        assert "New data labels: AC_H2_MFI.BGSEc" in feedback, feedback
        assert "New data labels: WI_H2_MFI.BGSE" in feedback, feedback
        return planned(
            "continue",
            [
                {
                    "description": f"|B| of {label}",
                    "instruction": f"Compute the magnitude of {label}, save as {out}",
                    "mission": "__data_ops__",
                }
                for label, out in (("AC_H2_MFI.BGSEc", "ACE_Bmag"), ("WI_H2_MFI.BGSE", "Wind_Bmag"))
            ],
        )

    def plot(messages: list[ModelMessage], info: AgentInfo) -> Any:
        assert "ACE_Bmag" in last_prompt(messages) and "Wind_Bmag" in last_prompt(messages)
        return planned(
            "continue",
            [
                {
                    "description": "Plot both magnitudes",
                    "instruction": "Plot ACE_Bmag and Wind_Bmag overlaid",
                    "mission": "__visualization__",
                }
            ],
        )

    def done(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return planned(
            "done",
            [],
            summary="ACE and Wind |B| compared in one panel.",
            criteria_results=[
                {"criterion": "both |B| plotted", "met": True, "evidence": "2 traces, nT"}
            ],
        )

    def magnitude(label: str, out: str) -> list[tuple[str, Any]]:
        code = "result = np.sqrt((df**2).sum(axis=1)).to_frame('Bmag')"
        args = {"source_labels": [label], "code": code, "output_label": out, "units": "nT"}
        return [("custom_operation", args)]

    span = "2024-01-10 to 2024-01-12"
    return Script(
        {
            "planner.discovery": [
                [
                    ("list_parameters", {"dataset_id": "AC_H2_MFI"}),
                    ("list_parameters", {"dataset_id": "WI_H2_MFI"}),
                    ("get_data_availability", {"dataset_id": "AC_H2_MFI"}),
                ],
                "Checked AC_H2_MFI and WI_H2_MFI.",
            ],
            "planner": [
                planned(
                    "continue",
                    [fetch_task("ACE", "AC_H2_MFI"), fetch_task("Wind", "WI_H2_MFI")],
                    success_criteria=["both |B| plotted"],
                ),
                compute,
                plot,
                done,
            ],
            "mission:ACE": [
                [("list_parameters", {"dataset_id": "AC_H2_MFI"})],
                [
                    (
                        "fetch_data",
                        {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": span},
                    )
                ],
                "Fetched AC_H2_MFI.BGSEc.",
            ],
            "mission:Wind": [
                [
                    (
                        "fetch_data",
                        {"dataset_id": "WI_H2_MFI", "parameter_id": "BGSE", "time_range": span},
                    )
                ],
                "Fetched WI_H2_MFI.BGSE.",
            ],
            "data_ops.think": ["sqrt of the sum of squares", "sqrt of the sum of squares"],
            "data_ops": [
                magnitude("AC_H2_MFI.BGSEc", "ACE_Bmag"),
                "ACE_Bmag computed.",
                magnitude("WI_H2_MFI.BGSE", "Wind_Bmag"),
                "Wind_Bmag computed.",
            ],
            "visualization": [
                [
                    (
                        "render_plotly_json",
                        {
                            "figure": {
                                "data": [{"data_label": "ACE_Bmag"}, {"data_label": "Wind_Bmag"}]
                            }
                        },
                    )
                ],
                "Both magnitudes in one panel.",
            ],
        }
    )


def make(workspace: Workspace, script: Script) -> PlanningAssistant:
    agent = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    return factory.with_llm_planning(agent, workspace)


def test_seed_concrete_example_three_rounds(workspace: Workspace) -> None:
    script = seed_script()
    assistant = make(workspace, script)
    result = run_turn(workspace, assistant, REQUEST)
    assert result.error is None, result.answer
    assert script.left() == {}
    plan = result.plan
    assert plan is not None and plan["status"] == "completed", plan
    assert plan["rounds"] == 3
    assert [(t["round"], t["mission"], t["status"]) for t in plan["tasks"]] == [
        (0, "ACE", "completed"),
        (0, "Wind", "completed"),
        (1, "__data_ops__", "completed"),
        (1, "__data_ops__", "completed"),
        (2, "__visualization__", "completed"),
    ]
    assert [t["new_labels"] for t in plan["tasks"]] == [
        ["AC_H2_MFI.BGSEc"],
        ["WI_H2_MFI.BGSE"],
        ["ACE_Bmag"],
        ["Wind_Bmag"],
        [],
    ]
    # The planner saw the resolved range and the verified reference built from real results.
    first = user_prompts(script.requests_of("planner")[0].messages)[0]
    assert "Resolved time range: 2024-01-10T00:00:00Z to 2024-01-13T00:00:00Z" in first
    assert "## VERIFIED PARAMETER REFERENCE" in first
    assert "Dataset AC_H2_MFI (available:" in first and "- BGSEc (nT" in first
    # The mission agent got its candidates and the canonical range (task mode).
    mission_prompt = user_prompts(script.requests_of("mission:ACE")[0].messages)[0]
    assert "Candidate datasets to inspect: AC_H2_MFI" in mission_prompt
    assert "Use this exact range for ALL fetch tasks" in mission_prompt
    current = workspace.session.plot.current
    assert current is not None and [t.data_label for t in current.traces] == [
        "ACE_Bmag",
        "Wind_Bmag",
    ]
    saved = TaskStore(load_settings()).load(plan["id"])
    assert saved.planner == "llm" and saved.criteria[0].met
    assert result.answer == "ACE and Wind |B| compared in one panel."


def test_planner_failure_falls_back_to_the_direct_path(workspace: Workspace) -> None:
    script = Script(
        {
            "planner.discovery": [RuntimeError("planner model crashed")],
            "orchestrator": ["I could not plan this; here is what I can say directly."],
        }
    )
    assistant = make(workspace, script)
    result = run_turn(workspace, assistant, REQUEST)
    assert result.error is None, result.answer
    assert "Planning failed, answered directly" in result.answer
    assert "here is what I can say directly" in result.answer
    (failed,) = TaskStore(workspace.context.settings).list()
    assert failed.status == PlanStatus.FAILED and failed.id in result.answer
    assert failed.summary.startswith("The planner failed")
    assert script.left() == {}


def test_reviewer_asks_for_a_plot_then_approves(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_PLAN_REVIEW", "true")
    workspace.context.settings = load_settings()
    ace_only = [fetch_task("ACE", "AC_H2_MFI")]
    script = Script(
        {
            "planner.discovery": ["No discovery needed."],
            "planner": [
                planned("done", ace_only),
                planned(
                    "done",
                    [
                        *ace_only,
                        {
                            "description": "Plot",
                            "instruction": "Plot it",
                            "mission": "__visualization__",
                        },
                    ],
                ),
            ],
            "reviewer": [
                [("final_result", {"exit": False, "reason": "the plot is missing"})],
                [("final_result", {"exit": True, "reason": "fetch and plot covered"})],
            ],
            "mission:ACE": [
                [
                    (
                        "fetch_data",
                        {
                            "dataset_id": "AC_H2_MFI",
                            "parameter_id": "BGSEc",
                            "time_range": "2024-01-10",
                        },
                    )
                ],
                "done",
            ],
            "visualization": [
                [("render_plotly_json", {"figure": {"data": [{"data_label": "AC_H2_MFI.BGSEc"}]}})],
                "plotted",
            ],
        }
    )
    assistant = make(workspace, script)
    result = run_turn(
        workspace, assistant, "fetch ACE magnetic field on 2024-01-10 and then plot it"
    )
    plan = TaskStore(load_settings()).load(result.plan["id"])  # type: ignore[index]
    assert [r["exit"] for r in plan.reviews] == [False, True]
    assert plan.reviews[0]["reason"] == "the plot is missing"
    assert [t.mission for t in plan.tasks] == ["ACE", "__visualization__"]
    assert plan.status.value == "completed"
    assert (
        json.loads(json.dumps(plan.to_dict()))["reviews"][1]["reason"] == "fetch and plot covered"
    )
