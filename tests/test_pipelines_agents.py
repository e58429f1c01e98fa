"""With a (scripted) LLM: the orchestrator sees and uses the pipeline tools, sub-agents do not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_script import ACE_REQUEST, Script, ace_steps, ace_week, scripted_config, user_prompts
from servers.hapi_server import HapiTestServer
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.pipeline_tools import PIPELINE_TOOL_NAMES
from xhelio.tools.toolset import default_registry
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    info, frame = ace_week()
    with HapiTestServer() as server:
        server.add_dataset("AC_H2_MFI", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        ws = open_workspace(settings=load_settings())
        yield ws
        ws.close()


def test_orchestrator_saves_the_figure_it_made_and_replay_needs_no_model(
    workspace: Workspace,
) -> None:
    steps = ace_steps()
    steps["orchestrator"][-1:] = [
        [("save_pipeline", {"name": "ACE week", "description": "ACE B in GSE"})],
        "Done, and saved as 'ACE week'.",
    ]
    script = Script(steps)
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    result = run_turn(workspace, assistant, ACE_REQUEST + " and save it as a pipeline")
    assert result.error is None, result.error
    assert script.left() == {}

    offered = {t.name for t in script.requests_of("orchestrator")[0].info.function_tools}
    assert set(PIPELINE_TOOL_NAMES) <= offered
    for agent in ("mission:ACE", "visualization"):
        tools = {t.name for s in script.requests_of(agent) for t in s.info.function_tools}
        assert tools and tools.isdisjoint(PIPELINE_TOOL_NAMES), agent

    saved = PipelineStore(load_settings()).load("ACE week")
    # list_parameters (exploration) is not a step; the fetch and the plot are
    assert [s.tool for s in saved.steps] == ["fetch_data", "render_plotly_json"]
    requests = len(script.seen)
    ws = open_workspace(settings=load_settings())
    try:
        replayed = replay_pipeline(saved, ws.funnel)
        assert replayed.status == "completed" and replayed.figure_rendered
    finally:
        ws.close()
    assert len(script.seen) == requests  # the replay asked no model anything


def test_the_planner_discovers_with_pipeline_tools() -> None:
    registry = default_registry()
    planner = {t.name for t in registry.by_category("discovery", "pipeline", "pipeline_ops")}
    assert set(PIPELINE_TOOL_NAMES) <= planner
    assert {t.category for t in registry if t.name in PIPELINE_TOOL_NAMES} == {
        "pipeline",
        "pipeline_ops",
    }


def test_data_ops_is_offered_the_library_and_reuse_is_counted(workspace: Workspace) -> None:
    library = workspace.context.ops_library
    code = "\n".join(
        [
            "b = df.astype(float)",
            "squares = b.pow(2)",
            "total = squares.sum(axis=1)",
            "magnitude = total.pow(0.5)",
            "result = magnitude.to_frame('Bmag')",
        ]
    )
    entry = library.record(code, "Magnitude of a vector", ["AC_H2_MFI.BGSEc"])
    assert entry is not None and entry.use_count == 1
    operation = {
        "source_labels": ["AC_H2_MFI.BGSEc"],
        "code": code,
        "output_label": "ACE_Bmag",
        "description": f"ACE |B| [from {entry.id}]",
    }
    steps = ace_steps()
    steps["orchestrator"] = [
        [("delegate_to_mission", {"mission_id": "ACE", "request": "magnetic field, last week"})],
        [("delegate_to_data_ops", {"request": "|B| of AC_H2_MFI.BGSEc as ACE_Bmag"})],
        "Computed ACE_Bmag.",
    ]
    steps["mission:ACE"] = [[("fetch_data", steps["mission:ACE"][1][0][1])], "Fetched."]
    steps["data_ops.think"] = ["Reuse the library's magnitude."]
    steps["data_ops"] = [[("custom_operation", operation)], "Stored ACE_Bmag."]
    del steps["visualization"]
    script = Script(steps)
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    result = run_turn(workspace, assistant, "Show ACE |B| for last week")
    assert result.error is None, result.error
    for agent in ("data_ops.think", "data_ops"):
        prompt = " ".join(user_prompts(script.requests_of(agent)[0].messages))
        # served: a summary generated from the code, never the author's description
        assert f"[{entry.id}] {entry.description} (used 1x)" in prompt, agent
        assert "Magnitude of a vector" not in prompt
        assert "sum(axis=1)" in prompt
    bumped = library.get(entry.id)
    assert bumped is not None and bumped.use_count == 2
