"""Deep-analysis mode end to end with scripted models (FunctionModels), ending in a report.

The real factory (planning wrapper, LLM planner, reviewer, reflector, sub-agents in task
mode, one funnel) runs against a loopback HAPI server and a real uploaded CSV in the
session's working folder; only the models are scripted. The reflector adds a stage after
the first one; the report is checked for what a scientist needs in it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from agent_script import Script, scripted_config, user_prompts
from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.agents import factory
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.api.models import AskRequest
from xhelio.api.turns import run_request
from xhelio.config import load_settings
from xhelio.report import DEEP_PLANS_KEY
from xhelio.tools.extraction_tools import work_folder
from xhelio.tools.workspace import Workspace, open_workspace

REQUEST = "Study the ACE magnetic field magnitude for 2024-01-10 to 2024-01-12 with my event list"
START, STOP = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
SPAN = "2024-01-10 to 2024-01-12"


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    with HapiTestServer() as server:
        info = make_info(START, STOP, [("BGSEc", "nT", 3)], cadence="PT5M")
        server.add_dataset("AC_H2_MFI", info, synthetic_frame(START, STOP, "PT5M", ["x", "y", "z"]))
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        ws = open_workspace(settings=load_settings())
        (work_folder(ws.session) / "events.csv").write_text(
            "time,speed\n2024-01-10T06:00:00Z,450\n2024-01-11T12:00:00Z,610\n"
        )
        yield ws
        ws.close()


def result(**fields: Any) -> list[tuple[str, Any]]:
    return [("final_result", fields)]


def stage(
    description: str, mission: str, criteria: list[str], instruction: str = ""
) -> dict[str, Any]:
    return {
        "description": description,
        "instruction": instruction or description,
        "mission": mission,
        "candidate_datasets": ["AC_H2_MFI"] if mission == "ACE" else [],
        "criteria": criteria,
    }


FETCH = stage("Fetch ACE magnetic field", "ACE", ["AC_H2_MFI.BGSEc stored in nT"])
LOAD = stage(
    "Load the uploaded event list",
    "__data_extraction__",
    ["events stored with times"],
    "Load events.csv from the working folder as 'events'",
)
COMPUTE = stage(
    "Compute |B|", "__data_ops__", ["ACE_Bmag stored"], "Magnitude of AC_H2_MFI.BGSEc as ACE_Bmag"
)
PLOT = stage("Plot |B|", "__visualization__", ["one panel showing ACE_Bmag"], "Plot ACE_Bmag")


def deep_script() -> tuple[Script, list[str]]:
    seen_evidence: list[str] = []

    def first_plan(messages: list[ModelMessage], info: AgentInfo) -> Any:
        prompt = user_prompts(messages)[-1]
        assert "DEEP ANALYSIS" in prompt and "events.csv" in prompt, prompt
        return result(
            status="continue",
            reasoning="three stages",
            tasks=[FETCH, COMPUTE, PLOT],
            success_criteria=["|B| of ACE plotted in nT", "event list loaded"],
        )

    def reflect(add: list[dict[str, Any]] | None, met: bool = True) -> Any:
        def step(messages: list[ModelMessage], info: AgentInfo) -> Any:
            prompt = user_prompts(messages)[-1]
            seen_evidence.append(prompt)
            criterion = re.search(r"Criteria: (.*)", prompt)
            assert criterion is not None
            return result(
                criteria_results=[
                    {"criterion": criterion.group(1), "met": met, "evidence": "see the tool calls"}
                ],
                remaining=add,
                note="the event list must be loaded before the comparison" if add else "",
            )

        return step

    def done(messages: list[ModelMessage], info: AgentInfo) -> Any:
        feedback = user_prompts(messages)[-1]
        assert "New data labels: events" in feedback, feedback
        return result(
            status="done",
            reasoning="all stages met",
            summary="ACE |B| over 2024-01-10 to 2024-01-12 peaks near 1.7 nT; 2 events loaded.",
            criteria_results=[
                {
                    "criterion": "|B| of ACE plotted in nT",
                    "met": True,
                    "evidence": "ACE_Bmag, 1 trace",
                },
                {"criterion": "event list loaded", "met": True, "evidence": "events, 2 rows"},
            ],
        )

    code = "result = np.sqrt((df**2).sum(axis=1)).to_frame('Bmag')"
    script = Script(
        {
            "planner.discovery": [[("list_parameters", {"dataset_id": "AC_H2_MFI"})], "Checked."],
            "planner": [first_plan, done],
            "reviewer": [result(exit=True, reason="stages cover the request")],
            "reflector": [
                reflect([LOAD, COMPUTE, PLOT]),
                reflect(None),
                reflect(None),
                reflect(None),
            ],
            "mission:ACE": [
                [
                    (
                        "fetch_data",
                        {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": SPAN},
                    )
                ],
                "Fetched AC_H2_MFI.BGSEc.",
            ],
            "data_extraction": [
                [("list_work_files", {})],
                [("load_work_file", {"name": "events.csv", "label": "events"})],
                "Loaded events (2 rows).",
            ],
            "data_ops.think": ["sqrt of the sum of squares"],
            "data_ops": [
                [
                    (
                        "custom_operation",
                        {
                            "source_labels": ["AC_H2_MFI.BGSEc"],
                            "code": code,
                            "output_label": "ACE_Bmag",
                            "units": "nT",
                        },
                    )
                ],
                "ACE_Bmag computed.",
            ],
            "visualization": [
                [("render_plotly_json", {"figure": {"data": [{"data_label": "ACE_Bmag"}]}})],
                "One panel with |B|.",
            ],
        }
    )
    return script, seen_evidence


def test_a_deep_request_runs_reflected_stages_and_ends_in_a_report(workspace: Workspace) -> None:
    script, evidence = deep_script()
    agent = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    assistant = factory.with_llm_planning(agent, workspace)
    response = run_request(
        workspace, assistant, AskRequest(question=REQUEST, deep=True), threading.Event()
    )
    assert response.error is None, response.answer
    assert script.left() == {}
    plan = response.plan
    assert plan is not None and plan["status"] == "completed", plan
    assert [t["description"] for t in plan["tasks"]] == [
        "Fetch ACE magnetic field",
        "Load the uploaded event list",
        "Compute |B|",
        "Plot |B|",
    ]
    assert set(workspace.session.store.labels()) == {"AC_H2_MFI.BGSEc", "ACE_Bmag", "events"}
    # The reflector judged the first stage on what it ran (the operations log) and data.
    assert "- fetch_data: ok, produced AC_H2_MFI.BGSEc" in evidence[0]
    assert "AC_H2_MFI.BGSEc: columns" in evidence[0] and "units nT" in evidence[0]
    stored = workspace.session.meta[DEEP_PLANS_KEY][-1]
    ran = [t for t in stored["tasks"] if t["status"] == "completed"]
    assert all(t["criteria_results"] and t["criteria_results"][0]["met"] for t in ran)
    assert ran[0]["reflection"] == "the event list must be loaded before the comparison"

    html_path = Path(plan["report"]["html"])
    html = html_path.read_text()
    assert REQUEST in html
    assert "peaks near 1.7 nT" in html  # the answer
    assert "<h2>Stages</h2>" in html and html.count("✔") >= 4
    assert "Plotly.newPlot('figure-1'" in html and "ACE_Bmag" in html
    citations = html.split("<h2>Data citations</h2>")[1].split("<h2>")[0]
    assert "AC_H2_MFI" in citations
    rerun = html.split("<h2>Rerun this analysis</h2>")[1]
    assert "fetch_data" in rerun and "custom_operation" in rerun
    numbers = html.split("<h2>Numbers</h2>")[1].split("<h2>")[0]
    assert re.search(r"ACE_Bmag</td><td>Bmag</td><td>nT</td>", numbers)
    md = Path(plan["report"]["md"]).read_text()
    assert md.startswith("# Analysis: Study the ACE") and "## Success criteria" in md
    assert "Report: " in response.answer


def test_offline_deep_mode_judges_stages_by_rule_and_writes_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from servers.catalog_hapi import CatalogHapiServer
    from xhelio.cli.ask_cmd import ask_once

    with CatalogHapiServer() as hapi:
        monkeypatch.setenv("XHELIO_HOME", str(tmp_path))
        monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
        response = ask_once(
            "Compare ACE and Wind magnetic field for 2024-01-01 to 2024-01-03 and plot them",
            deep=True,
        )
    assert response.error is None, response.answer
    plan = response.plan
    assert plan is not None and plan["status"] == "completed"
    html = Path(plan["report"]["html"]).read_text()
    stages = html.split("<h2>Stages</h2>")[1].split("<h2>")[0]
    assert stages.count("✔") == 3 and "✘" not in stages
    assert "Plotly.newPlot('figure-1'" in html
    assert Path(plan["report"]["md"]).read_text().count("| completed |") == 3
