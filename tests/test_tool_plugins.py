"""Capabilities register themselves: a tool group and an offline skill from a separate package.

`tests/plugins/xhelio_demo_tools` declares a public tool (`demo_points`) in the
``xhelio.tools`` entry points and an offline skill in ``xhelio.offline_skills``. With the
folder on `sys.path` (as after ``pip install``) the tool is in the registry, offered by MCP,
REST and the Python API with no code of theirs, and offline mode answers through the skill.
A group holding something other than tools is reported and left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from servers.xhelio_api import LiveServer
from xhelio.agents.offline import skills
from xhelio.api.assistant import Assistant
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.mcp_server import build_server, http_app
from xhelio.server import ServerConfig, create_app
from xhelio.tools import toolset

PLUGINS = Path(__file__).parent / "plugins"
ROWS = {"time": ["2024-01-01T00:00Z", "2024-01-01T01:00Z", "2024-01-01T02:00Z"], "v": [1, 2, 3]}


def _clear() -> None:
    toolset.default_registry.cache_clear()
    toolset._loaded.cache_clear()  # pyright: ignore[reportPrivateUsage]
    skills.offline_skills.cache_clear()


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(PLUGINS))
    _clear()
    yield
    monkeypatch.undo()
    _clear()


@pytest.fixture
def assistant(plugins: None) -> Iterator[Assistant]:
    with Assistant(load_settings()) as xh:
        yield xh


def _session_with_table(xh: Assistant) -> str:
    sid = xh.new_session("plugin test")
    stored = xh.hub
    with stored.checkout(sid) as entry:
        assert entry.workspace is not None
        args = {"label": "table", "columns": ROWS}
        assert entry.workspace.funnel.call("store_dataframe", args, caller="test").ok
    return sid


def test_the_group_joins_the_registry_and_a_bad_group_is_reported(plugins: None) -> None:
    registry = toolset.default_registry()
    demo = registry.get("demo_points")
    assert demo is not None and demo.public and demo.phase == "compute"
    assert demo in registry.public()
    assert "not-tools" in toolset.tool_group_problems()
    assert "not a sequence of tools" in toolset.tool_group_problems()["not-tools"]


def test_without_the_plugin_there_is_no_such_tool() -> None:
    _clear()
    assert toolset.default_registry().get("demo_points") is None


def test_python_api_runs_a_public_tool_through_the_funnel(assistant: Assistant) -> None:
    sid = _session_with_table(assistant)
    result = assistant.call_tool(sid, "demo_points", {"label": "table", "scale": 2})
    assert result.ok and result.payload["points"] == 6
    failed = assistant.call_tool(sid, "demo_points", {"label": "nothing"})
    assert not failed.ok and "nothing" in (failed.error or "")
    with pytest.raises(UserError, match="no public tool"):
        assistant.call_tool(sid, "store_dataframe", {"label": "x"})
    with assistant.hub.checkout(sid) as entry:
        assert entry.workspace is not None
        logged = [op["tool"] for op in entry.workspace.session.operations]
    assert logged.count("demo_points") == 2  # traced like every call, failures included


def test_rest_lists_and_runs_public_tools(assistant: Assistant) -> None:
    sid = _session_with_table(assistant)
    app = create_app(ServerConfig(), assistant=assistant)
    with LiveServer(app) as server, httpx.Client(base_url=server.url + "/api/v1") as http:
        listed = {t["name"]: t for t in http.get("/tools").json()}
        assert "demo_points" in listed and "store_dataframe" not in listed
        assert set(listed["demo_points"]["parameters"]["properties"]) == {"label", "scale"}
        ran = http.post(f"/sessions/{sid}/tools/demo_points", json={"label": "table"})
        assert ran.status_code == 200 and ran.json()["points"] == 3
        missing = http.post(f"/sessions/{sid}/tools/demo_points", json={"label": "nothing"})
        assert missing.status_code == 404 and missing.json()["status"] == "error"
        bad = http.post(f"/sessions/{sid}/tools/demo_points", json={"label": 5, "x": 1})
        assert bad.status_code == 422 and bad.json()["type"] == "ValidationError"
        unknown = http.post(f"/sessions/{sid}/tools/store_dataframe", json={"label": "t"})
        assert unknown.status_code == 404
        nosession = http.post("/sessions/nope/tools/demo_points", json={"label": "table"})
        assert nosession.status_code == 404


def test_mcp_offers_public_tools_with_their_schema(assistant: Assistant) -> None:
    sid = _session_with_table(assistant)
    server, _state = build_server(assistant=assistant)
    app = http_app(server, ServerConfig())

    async def main(url: str) -> None:
        async with (
            httpx2.AsyncClient(timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema: dict[str, Any] = tools["demo_points"].input_schema
            assert set(schema["properties"]) == {"label", "scale", "session_id"}
            assert schema["required"] == ["label"]
            assert all(p.get("description") for p in schema["properties"].values())
            args = {"label": "table", "scale": 3, "session_id": sid}
            result = await client.call_tool("demo_points", args)
            assert not result.is_error
            assert json.loads(result.content[0].text)["points"] == 9  # type: ignore[union-attr]
            failed = await client.call_tool("demo_points", {"label": "nothing", "session_id": sid})
            assert failed.is_error

    with LiveServer(app) as live:
        anyio.run(main, f"{live.url}/mcp")


def test_an_offline_skill_answers_before_the_ordinary_reading(assistant: Assistant) -> None:
    sid = _session_with_table(assistant)
    said = assistant.run("how many points in table?", session_id=sid)
    assert said.error is None and "table has 3 points" in said.answer
    other = assistant.run("how many points in nothing", session_id=sid)
    assert other.error and "Could not count" in other.answer
