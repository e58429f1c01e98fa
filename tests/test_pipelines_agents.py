"""With a (scripted) LLM: the orchestrator sees and uses the pipeline tools, sub-agents do not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_script import ACE_REQUEST, Script, ace_steps, ace_week, scripted_config
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
