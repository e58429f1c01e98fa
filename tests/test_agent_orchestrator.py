"""The LLM orchestrator end to end: scripted models drive the real agents, funnel and data.

Models are FunctionModels following a per-agent script (`agent_script.Script`) and are
injected through `AgentAssistant(build_model=...)`; everything else is real: the catalog,
the HAPI client against a loopback server, the DataStore, the renderer, the session store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from agent_script import (
    ACE_REQUEST,
    BACKUP,
    FETCH,
    PRIMARY,
    Script,
    ace_steps,
    ace_week,
    scripted_config,
    tool_returns,
    user_prompts,
)
from servers.hapi_server import HapiTestServer
from xhelio.agents.orchestrator import HISTORY_KEY, AgentAssistant
from xhelio.agents.turn import run_turn
from xhelio.agents.usage import UsageTracker
from xhelio.config import load_settings
from xhelio.render.export import find_browser
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    info, frame = ace_week()
    with HapiTestServer() as server:
        server.add_dataset("AC_H2_MFI", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


@pytest.fixture
def workspace(hapi: HapiTestServer) -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def assistant_for(
    workspace: Workspace, script: Script, usage: UsageTracker | None = None
) -> AgentAssistant:
    return AgentAssistant(workspace, scripted_config(), usage, build_model=script.build)


def calls_by(workspace: Workspace) -> dict[str, list[str]]:
    """Tool names each caller ran through the funnel, in order."""
    out: dict[str, list[str]] = {}
    for op in workspace.session.operations:
        out.setdefault(op["caller"], []).append(op["tool"])
    return out


def test_show_me_ace_magnetic_field_for_last_week(workspace: Workspace) -> None:
    script = Script(ace_steps())
    usage = UsageTracker()
    result = run_turn(workspace, assistant_for(workspace, script, usage), ACE_REQUEST)

    assert result.error is None, result.error
    assert result.answer == "Here is ACE's magnetic field (GSE) for last week."
    assert script.left() == {}
    assert workspace.session.store.labels() == ["AC_H2_MFI.BGSEc"]
    assert [d.label for d in result.data] == ["AC_H2_MFI.BGSEc"]
    assert result.data[0].points > 7 * 24 * 12 - 2  # a week of 5-minute samples
    assert calls_by(workspace) == {
        "mission:ace": ["list_parameters", "fetch_data"],
        "orchestrator": ["delegate_to_mission", "delegate_to_visualization"],
        "visualization": ["render_plotly_json"],
    }
    figure = workspace.session.plot.current
    assert figure is not None
    assert [t.data_label for t in figure.traces] == ["AC_H2_MFI.BGSEc"] * 3
    assert len(result.figures) == 1 and result.figures[0].endswith(".html")

    # What each model was offered and told.
    orchestrator = script.requests_of("orchestrator")
    offered = {t.name for t in orchestrator[0].info.function_tools}
    assert {"delegate_to_mission", "ask_clarification", "search_datasets"} <= offered
    assert offered.isdisjoint({"fetch_data", "custom_operation", "render_plotly_json"})
    assert "manage_plot" not in offered
    mission = script.requests_of("mission:ACE")
    assert "AC_H2_MFI" in (mission[0].info.instructions or "")
    first_prompt = user_prompts(mission[0].messages)[0]
    assert first_prompt.startswith("magnetic field, last week")
    assert "Data in memory: none." in first_prompt
    delegated = tool_returns(orchestrator[1].messages, "delegate_to_mission")
    assert '"labels":["AC_H2_MFI.BGSEc"]' in delegated[0]
    viz_prompt = user_prompts(script.requests_of("visualization")[0].messages)[0]
    assert "- AC_H2_MFI.BGSEc: 3 col, nT" in viz_prompt

    per_agent = usage.per_agent()
    assert {k: v.requests for k, v in per_agent.items()} == {
        "mission:ace": 3,
        "visualization": 2,
        "orchestrator": 3,
    }
    assert per_agent["mission:ace"].tool_calls == 2
    assert result.usage["agents"]["orchestrator"]["requests"] == 3


def test_failing_sub_agent_is_reported_and_two_failures_end_the_loop(
    workspace: Workspace, hapi: HapiTestServer
) -> None:
    hapi.fail_next("http500", count=20, dataset="AC_H2_MFI")
    fetch_b = {**FETCH, "parameter_id": "Magnitude"}
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "ACE", "request": "B, last week"})],
                [("delegate_to_mission", {"mission_id": "ACE", "request": "|B|, last week"})],
                "ACE data could not be fetched: the server answered HTTP 500.",
            ],
            "mission:ACE": [
                [("fetch_data", FETCH)],
                "The fetch failed.",
                [("fetch_data", fetch_b)],
                "That failed too.",
            ],
        }
    )
    result = run_turn(workspace, assistant_for(workspace, script), ACE_REQUEST)

    assert result.error is None
    assert result.answer.startswith("ACE data could not be fetched")
    assert script.left() == {}
    assert workspace.session.store.labels() == []
    orchestrator = script.requests_of("orchestrator")
    reports = tool_returns(orchestrator[-1].messages, "delegate_to_mission")
    assert len(reports) == 2
    assert all('"status":"error"' in r and "mission:ace failed: fetch_data:" in r for r in reports)
    # The second failure in a row ends the loop: the last request may not call tools.
    assert orchestrator[-1].info.model_settings is not None
    assert orchestrator[-1].info.model_settings.get("tool_choice") == "none"
    assert (orchestrator[1].info.model_settings or {}).get("tool_choice") is None


def test_clarification_is_returned_at_once(workspace: Workspace) -> None:
    question = "Which spacecraft do you mean: ACE or Wind?"
    script = Script({"orchestrator": [[("ask_clarification", {"question": question})]]})
    assistant = assistant_for(workspace, script)
    reply = assistant.respond("show me the field", threading.Event())
    assert reply.clarification and reply.text == question
    assert len(script.seen) == 1 and script.left() == {}


@pytest.mark.skipif(find_browser() is None, reason="no Chrome/Chromium for PNG export")
def test_export_request_skips_the_model(workspace: Workspace) -> None:
    script = Script(ace_steps())
    assistant = assistant_for(workspace, script)
    run_turn(workspace, assistant, ACE_REQUEST)
    before = len(script.seen)
    result = run_turn(workspace, assistant, "export the plot as png")
    assert result.error is None and len(script.seen) == before
    assert "Exported the figure to" in result.answer
    export = workspace.session.operations[-1]
    assert (export["tool"], export["caller"], export["args"]) == (
        "manage_plot",
        "orchestrator",
        {"action": "export", "format": "png"},
    )
    assert Path(export["result"]["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_429_switches_every_agent_to_the_fallback(workspace: Workspace) -> None:
    steps = ace_steps()
    steps["mission:ACE"].insert(0, ModelHTTPError(429, "primary", {"error": "RESOURCE_EXHAUSTED"}))
    script = Script(steps)
    switched: list[str] = []
    workspace.session.events.subscribe(
        lambda e: switched.append(e.summary or "") if e.type == "model_fallback" else None
    )
    assistant = assistant_for(workspace, script)
    result = run_turn(workspace, assistant, ACE_REQUEST)

    assert result.error is None and script.left() == {}
    assert workspace.session.store.labels() == ["AC_H2_MFI.BGSEc"]
    models = [(s.agent, s.model) for s in script.seen]
    assert models[:3] == [
        ("orchestrator", PRIMARY),
        ("mission:ACE", PRIMARY),  # the 429
        ("mission:ACE", BACKUP),
    ]
    assert all(model == BACKUP for _, model in models[3:])  # the orchestrator too, mid-run
    assert assistant.router.switched and len(switched) == 1 and BACKUP in switched[0]


def test_cancellation_mid_request_stops_tools_and_model(
    workspace: Workspace, hapi: HapiTestServer
) -> None:
    cancel = threading.Event()

    def cancel_then_fetch(messages: Any, info: Any) -> list[tuple[str, dict[str, Any]]]:
        cancel.set()  # Ctrl-C while the mission agent's model is answering
        return [("fetch_data", FETCH)]

    script = Script(
        {
            "orchestrator": [[("delegate_to_mission", {"mission_id": "ACE", "request": "B"})]],
            "mission:ACE": [cancel_then_fetch],
        }
    )
    result = run_turn(workspace, assistant_for(workspace, script), ACE_REQUEST, cancel)

    assert result.error == "Cancelled."
    assert [s.agent for s in script.seen] == ["orchestrator", "mission:ACE"]
    assert hapi.data_requests() == [] and workspace.session.store.labels() == []
    # The proposed fetch never ran; the delegation reports the cancellation.
    assert [op["tool"] for op in workspace.session.operations] == ["delegate_to_mission"]
    assert "Cancelled" in workspace.session.operations[0]["result"]["text"]


def test_resumed_session_continues_the_conversation(workspace: Workspace) -> None:
    run_turn(workspace, assistant_for(workspace, Script(ace_steps())), ACE_REQUEST)
    session_id = workspace.session.id
    workspace.close()
    resumed = open_workspace(session_id, settings=load_settings())
    try:
        script = Script({"orchestrator": ["You asked for ACE's field; it is in memory."]})
        result = run_turn(resumed, assistant_for(resumed, script), "what did I ask before?")
        assert result.error is None
        messages = script.seen[0].messages
        assert user_prompts(messages) == [ACE_REQUEST, "what did I ask before?"]
        earlier = [m for m in messages if isinstance(m, ModelResponse)]
        assert isinstance(earlier[-1].parts[-1], TextPart)
        assert earlier[-1].parts[-1].content == "Here is ACE's magnetic field (GSE) for last week."
        # Only the current request carries instructions; stored ones were dropped.
        requests = [m for m in messages if isinstance(m, ModelRequest)]
        assert all(not m.instructions for m in requests[:-1])
        assert resumed.session.store.labels() == ["AC_H2_MFI.BGSEc"]
        saved = resumed.session.meta[HISTORY_KEY]
        assert saved[-1]["parts"][0]["content"] == "You asked for ACE's field; it is in memory."
        first = saved[0]["parts"][0]
        assert first["part_kind"] == "user-prompt" and first["content"] == ACE_REQUEST
    finally:
        resumed.close()


def test_model_errors_become_clear_messages_and_the_session_keeps_working(
    workspace: Workspace,
) -> None:
    script = Script(
        {"orchestrator": [ModelHTTPError(401, "primary", {"error": "bad key"}), "Hello again."]}
    )
    assistant = assistant_for(workspace, script)
    failed = run_turn(workspace, assistant, "hi")
    assert failed.error is not None and "rejected the credentials" in failed.error
    assert "OPENAI_API_KEY" in failed.error
    again = run_turn(workspace, assistant, "hi again")
    assert again.error is None and again.answer == "Hello again."
    prompts = [p for p in user_prompts(script.seen[-1].messages)]
    assert prompts == ["hi", "hi again"]


def test_request_planning_says_honestly_how_to_proceed(workspace: Workspace) -> None:
    script = Script(
        {
            "orchestrator": [
                [("request_planning", {"request": "compare ACE and Wind"})],
                "I'll go step by step.",
            ]
        }
    )
    reply = assistant_for(workspace, script).respond("compare ACE and Wind", threading.Event())
    assert reply.text == "I'll go step by step."
    note = tool_returns(script.seen[-1].messages, "request_planning")[0]
    assert "No planner is available" in note and "delegate_to_mission" in note


def test_unknown_mission_is_a_tool_error_the_model_can_fix(workspace: Workspace) -> None:
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "Voyager 9", "request": "B"})],
                "There is no such mission.",
            ]
        }
    )
    reply = assistant_for(workspace, script).respond("Voyager 9 field", threading.Event())
    assert reply.text == "There is no such mission."
    error = tool_returns(script.seen[-1].messages, "delegate_to_mission")[0]
    assert "Unknown mission 'Voyager 9'" in error
    assert [p for p in script.seen[-1].messages if isinstance(p, ModelRequest)]
    assert isinstance(script.seen[0].messages[0].parts[-1], UserPromptPart)
