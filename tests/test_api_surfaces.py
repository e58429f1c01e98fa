"""The web-API and search tools on every surface: funnel, CLI, offline skill, the agents."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pandas as pd
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo
from typer.testing import CliRunner

from agent_script import Script, scripted_config, tool_returns
from servers.json_api_server import Answer, JsonApiServer
from servers.xhelio_api import LiveServer
from webapi_fixtures import KP_FORECAST_PATH, kp_forecast_rows, serve_all
from xhelio.agents.offline.assistant import OfflineAssistant
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.planning.loop import agent_of
from xhelio.agents.planning.routing import AgentPreferences, decide_agents
from xhelio.agents.turn import run_turn
from xhelio.api.assistant import Assistant
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.server import ServerConfig, create_app
from xhelio.tools.toolset import default_registry
from xhelio.tools.workspace import Workspace, open_workspace

API_TOOL_NAMES = {"list_apis", "describe_api", "call_api", "search_literature", "search_web"}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JsonApiServer]:
    """The stand-in, configured the way a user would: base addresses and keys in settings."""
    with JsonApiServer() as stand_in:
        serve_all(stand_in)
        for key, value in {
            "SWPC_URL": stand_in.url,
            "DONKI_URL": f"{stand_in.url}/DONKI",
            "ADS_URL": f"{stand_in.url}/v1",
            "ADS_TOKEN": "ads-secret",
            "DONKI_API_KEY": "donki-secret",
            "HTTP_RETRIES": "0",
        }.items():
            monkeypatch.setenv(f"XHELIO_{key}", value)
        yield stand_in


@pytest.fixture
def workspace(server: JsonApiServer) -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def test_the_tools_are_registered_and_public() -> None:
    registry = default_registry()
    assert {t.name for t in registry.public()} >= API_TOOL_NAMES
    assert registry.get("compose_answer") is not None


def test_call_api_stores_a_cited_entry(workspace: Workspace) -> None:
    args = {"api": "donki", "endpoint": "CME", "params": {"startDate": "2024-05-08"}}
    result = workspace.funnel.call("call_api", args, caller="test")
    assert result.ok and result.labels == ["donki.CME.2024-05-08"]
    entry = workspace.session.store.get("donki.CME.2024-05-08")
    assert entry.is_timeseries and entry.units["speed"] == "km/s"
    assert entry.citation["url"].endswith("api_key=***")
    assert "donki-secret" not in str(result.to_dict())


def test_a_refused_address_is_a_tool_error_not_a_crash(
    workspace: Workspace, server: JsonApiServer
) -> None:
    server.route("/DONKI/CME", Answer(b"", 302, {"Location": "http://169.254.169.254/latest"}))
    result = workspace.funnel.call("call_api", {"api": "donki", "endpoint": "CME"}, caller="t")
    assert not result.ok and result.error_type == "BlockedAddressError"
    assert workspace.session.store.labels() == []


def test_search_off_says_how_to_turn_it_on(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = workspace.funnel.call("search_web", {"query": "storm"}, caller="test")
    assert not result.ok and "XHELIO_WEB_SEARCH_URL" in (result.error or "")


def test_cli_api_commands(server: JsonApiServer) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["api", "list"])
    assert listed.exit_code == 0 and "donki" in listed.output and "search ads" in listed.output
    described = runner.invoke(app, ["api", "describe", "donki"])
    assert described.exit_code == 0 and "CME(startDate?, endDate?)" in described.output
    called = runner.invoke(app, ["api", "call", "donki", "FLR", "-p", "startDate=2024-05-10"])
    assert called.exit_code == 0, called.output
    assert "Stored donki.FLR.2024-05-10: 1 rows" in called.output and "X3.9" in called.output
    bad = runner.invoke(app, ["api", "call", "donki", "FLR", "-p", "startDate"])
    assert bad.exit_code != 0 and "key=value" in bad.output


def test_cli_search_papers(server: JsonApiServer) -> None:
    found = CliRunner().invoke(app, ["search-papers", "May 2024 storm", "-n", "2"])
    assert found.exit_code == 0, found.output
    assert "ui.adsabs.harvard.edu/abs/2024GeoRL..5112345H" in found.output


# --- offline skill -----------------------------------------------------------------------


def _offline(workspace: Workspace, request: str) -> str:
    reply = OfflineAssistant(workspace).respond(request, threading.Event())
    return reply.text


def test_offline_kp_forecast_for_yesterday(workspace: Workspace, server: JsonApiServer) -> None:
    today = datetime.now(UTC).date()
    days = [str(today - timedelta(days=n)) for n in (2, 1, 0)]
    server.route(KP_FORECAST_PATH, Answer.json(kp_forecast_rows(days)))
    text = _offline(workspace, "what did NOAA SWPC forecast for Kp yesterday")
    assert f"{days[1]} 09:00 UTC: Kp 5 (estimated, G1)" in text
    assert days[0] not in text and days[2] not in text
    assert "Sources:" in text and "services.swpc.noaa.gov" not in text  # the stand-in's URL
    assert server.url + KP_FORECAST_PATH in text


def test_offline_current_kp(workspace: Workspace) -> None:
    text = _offline(workspace, "current Kp index")
    assert "Latest planetary Kp from NOAA SWPC: 9 for the 3 hours from 2024-05-10 21:00" in text


def test_offline_solar_wind_now_skips_gaps(workspace: Workspace) -> None:
    text = _offline(workspace, "what is the solar wind right now?")
    assert "2024-05-10 17:02 UTC): speed 731.4 km/s, density 13.1 cm^-3" in text


def test_offline_swpc_alerts_in_a_range(workspace: Workspace) -> None:
    text = _offline(workspace, "NOAA space weather alerts on 2024-05-10")
    assert "NOAA SWPC issued 1 message:" in text
    assert "K07A: ALERT: Geomagnetic K-index of 7" in text and "G3" not in text


def test_offline_donki_cmes_in_a_week(workspace: Workspace, server: JsonApiServer) -> None:
    text = _offline(workspace, "which CMEs did DONKI list in the week of 2024-05-08")
    assert server.seen[-1].query["startDate"] == "2024-05-08"
    assert server.seen[-1].query["endDate"] == "2024-05-14"
    assert "NASA DONKI lists 2 CMEs" in text and "1200 km/s" in text and "from S17W13" in text
    assert "Sources:" in text and "NASA DONKI" in text


def test_offline_donki_flares_last_week(workspace: Workspace, server: JsonApiServer) -> None:
    text = _offline(workspace, "solar flares last week from DONKI")
    end = datetime.now(UTC).date()
    assert server.seen[-1].query["endDate"] == str(end)
    assert server.seen[-1].query["startDate"] == str(end - timedelta(days=7))
    assert "class X3.9" in text


def test_offline_that_week_reuses_the_session_time(
    workspace: Workspace, server: JsonApiServer
) -> None:
    _offline(workspace, "which CMEs did DONKI list in the week of 2024-05-08")
    _offline(workspace, "and which flares did DONKI list that week")
    assert server.seen[-1].path == "/DONKI/FLR"
    assert server.seen[-1].query["startDate"] == "2024-05-08"


def test_offline_no_events_is_said(workspace: Workspace, server: JsonApiServer) -> None:
    server.route("/DONKI/SEP", Answer(b"", 200))
    text = _offline(workspace, "SEP events from DONKI in March 2023")
    assert "lists nothing" in text and "2023-03-01" in text


@pytest.mark.parametrize(
    "request_text",
    ["Kp index yesterday", "ACE magnetic field last week", "CMEs in May 2024", "plot the flares"],
)
def test_the_skill_leaves_other_requests_alone(request_text: str) -> None:
    from xhelio.agents.offline.space_weather_skill import answer

    class Refuses:
        def call_tool(self, *_a: Any) -> Any:
            raise AssertionError("the skill must not claim this request")

    assert answer(Refuses(), request_text) is None  # type: ignore[arg-type]


# --- agents: routing and scripted end-to-end turns -----------------------------------------


def test_planner_routes_web_api_work_and_honours_disable() -> None:
    decision = decide_agents("which CMEs did DONKI list that week")
    assert "web_api" in decision.chosen_agents
    off = decide_agents("find papers about this event", AgentPreferences.of(disable=["web_api"]))
    assert "web_api" not in off.chosen_agents
    first = AgentPreferences.of(prefer=["web_api"])
    assert decide_agents("Kp forecast", first).chosen_agents[0] == "web_api"
    assert agent_of("__web_api__") == "web_api"


def _answer_with_composed(messages: list[ModelMessage], _info: AgentInfo) -> str:
    import json

    return json.loads(tool_returns(messages, "compose_answer")[-1])["answer"]


def test_scripted_models_answer_cmes_then_papers(workspace: Workspace) -> None:
    cme_args = {
        "api": "donki",
        "endpoint": "CME",
        "params": {"startDate": "2024-05-08", "endDate": "2024-05-14"},
    }
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_api", {"request": "CMEs DONKI listed 2024-05-08 to 2024-05-14"})],
                "DONKI listed two CMEs that week (donki.CME.2024-05-08_2024-05-14).",
                [("delegate_to_api", {"request": "papers about the May 2024 CMEs and storm"})],
                [
                    (
                        "compose_answer",
                        {
                            "answer": "Two CMEs; papers below.",
                            "labels": ["donki.CME.2024-05-08_2024-05-14", "papers.may_2024_cme"],
                        },
                    )
                ],
                _answer_with_composed,
            ],
            "web_api": [
                [("call_api", cme_args)],
                "DONKI listed 2 CMEs, the first at 1200 km/s.",
                [("search_literature", {"query": "May 2024 CME", "rows": 2})],
                "Found 2 papers.",
            ],
        }
    )
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    cancel = threading.Event()
    first = assistant.respond("which CMEs did DONKI list that week", cancel)
    assert "two CMEs" in first.text
    delegated = tool_returns(script.requests_of("orchestrator")[1].messages, "delegate_to_api")
    assert "Sources:" in delegated[-1] and "api_key=***" in delegated[-1]
    second = assistant.respond("find papers about this event", cancel)
    assert second.text.startswith("Two CMEs; papers below.\n\nSources:")
    assert "https://ui.adsabs.harvard.edu/abs/2024GeoRL..5112345H/abstract" in second.text
    assert "NASA DONKI" in second.text
    frame = workspace.session.store.get("papers.may_2024_cme").data
    assert isinstance(frame, pd.DataFrame) and len(frame) == 2
    assert script.left() == {}


def test_a_disabled_api_agent_is_not_run(workspace: Workspace) -> None:
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_api", {"request": "Kp forecast"})],
                "The API agent is disabled.",
            ]
        }
    )
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    assistant.disabled_agents.add("web_api")
    assistant.respond("what is the Kp forecast", threading.Event())
    returned = tool_returns(script.requests_of("orchestrator")[1].messages, "delegate_to_api")
    assert "disabled" in returned[-1]


# --- the web app's REST API and the Python API -------------------------------------------


def test_python_api_and_rest_answer_and_store_entries(server: JsonApiServer) -> None:
    with Assistant(load_settings()) as xh:
        sid = xh.new_session("space weather")
        said = xh.run("which CMEs did DONKI list in the week of 2024-05-08", session_id=sid)
        assert said.error is None and "NASA DONKI lists 2 CMEs" in said.answer
        called = xh.call_tool(sid, "call_api", {"api": "swpc", "endpoint": "planetary_k_index"})
        assert called.ok and called.labels == ["swpc.planetary_k_index"]
        with xh.hub.checkout(sid) as entry:
            assert entry.workspace is not None
            labels = entry.workspace.session.store.labels()
        assert {"donki.CME.2024-05-08_2024-05-14", "swpc.planetary_k_index"} <= set(labels)
        app = create_app(ServerConfig(), assistant=xh)
        with LiveServer(app) as live, httpx.Client(base_url=live.url + "/api/v1") as http:
            listed = {t["name"] for t in http.get("/tools").json()}
            assert listed >= API_TOOL_NAMES
            body = {"api": "donki", "endpoint": "FLR", "params": {"startDate": "2024-05-10"}}
            ran = http.post(f"/sessions/{sid}/tools/call_api", json=body)
            assert ran.status_code == 200 and ran.json()["label"] == "donki.FLR.2024-05-10"
            refused = http.post(
                f"/sessions/{sid}/tools/call_api", json={"api": "nope", "endpoint": "x"}
            )
            assert refused.json()["status"] == "error" and "known: swpc, donki" in refused.text


def test_a_web_api_turn_is_not_checked_as_a_catalog_fetch(workspace: Workspace) -> None:
    result = run_turn(workspace, OfflineAssistant(workspace), "solar flares in May 2024 from DONKI")
    assert "NASA DONKI lists 1 solar flare:" in result.answer
    assert "Differs from the request" not in result.answer


def test_a_planned_web_api_task_runs_on_the_api_agent(workspace: Workspace) -> None:
    args = {"api": "donki", "endpoint": "FLR", "params": {"startDate": "2024-05-10"}}
    script = Script({"web_api": [[("call_api", args)], "One X3.9 flare."]})
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    kind = agent_of("__web_api__")
    assert kind == "web_api"
    result = assistant.run_task(kind, "Flares DONKI listed since 2024-05-10", threading.Event())
    assert not result.failed and result.labels == ["donki.FLR.2024-05-10"]
    assert result.text.startswith("One X3.9 flare.\n\nSources:\n1. [donki.FLR.2024-05-10]")
    assert script.left() == {}


def test_api_entries_work_with_the_data_tools(workspace: Workspace) -> None:
    args = {"api": "donki", "endpoint": "CME", "params": {"startDate": "2024-05-08"}}
    label = workspace.funnel.call("call_api", args, caller="test").labels[0]
    for tool, extra in (
        ("list_fetched_data", {}),
        ("preview_data", {"label": label}),
        ("describe_data", {"label": label}),
        ("save_data", {"label": label, "format": "csv"}),
    ):
        result = workspace.funnel.call(tool, {**extra}, caller="test")
        assert result.ok, (tool, result.error)
    plot = {"figure": {"data": [{"type": "scatter", "data_label": f"{label}.speed"}]}}
    assert workspace.funnel.call("render_plotly_json", plot, caller="test").ok
