"""`xhelio mcp` tested with the official SDK's own client, over stdio and streamable HTTP.

stdio runs the real `xhelio mcp` subprocess; HTTP serves `http_app` on loopback with a token.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ImageContent, TextContent

from servers.catalog_hapi import CatalogHapiServer
from servers.xhelio_api import LiveServer
from xhelio.agents import factory
from xhelio.agents.models import ModelConfig
from xhelio.errors import ConfigError, UserError
from xhelio.mcp_server import build_server, http_app
from xhelio.server.config import ServerConfig

ACE = "Show me ACE magnetic field for 2024-01-01 to 2024-01-02"
EXPECTED_TOOLS = {
    "chat",
    "reset_session",
    "get_status",
    "search_datasets",
    "list_parameters",
    "fetch_data",
    "describe_data",
    "custom_operation",
    "plot",
}


@pytest.fixture(scope="module")
def hapi() -> Iterator[CatalogHapiServer]:
    server = CatalogHapiServer()
    with server:
        yield server


def _params(home: Path, hapi_url: str) -> StdioServerParameters:
    env = {
        "XHELIO_HOME": str(home),
        "XHELIO_HAPI_URL": hapi_url,
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
    }
    script = Path(sys.executable).parent / "xhelio"
    if script.exists():
        return StdioServerParameters(command=str(script), args=["mcp"], env=env)
    code = "from xhelio.cli.main import main; main()"
    return StdioServerParameters(command=sys.executable, args=["-c", code, "mcp"], env=env)


def _texts(result: CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, TextContent)]


def _images(result: CallToolResult) -> list[ImageContent]:
    return [c for c in result.content if isinstance(c, ImageContent)]


def test_stdio_session_end_to_end(hapi: CatalogHapiServer, tmp_path: Path) -> None:
    async def main() -> None:
        async with Client(_params(tmp_path, hapi.url), read_timeout_seconds=120) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools >= EXPECTED_TOOLS

            found = await client.call_tool("search_datasets", {"query": "ACE magnetic field"})
            results = json.loads(_texts(found)[0])["results"]
            assert any(r["dataset_id"].startswith("AC_H") for r in results)

            params = await client.call_tool("list_parameters", {"dataset_id": "AC_H1_MFI"})
            assert "Magnitude" in _texts(params)[0]

            fetched = await client.call_tool(
                "fetch_data",
                {
                    "dataset_id": "AC_H1_MFI",
                    "parameter_id": "Magnitude",
                    "time_range": "2024-01-01",
                },
            )
            body = json.loads(_texts(fetched)[0])
            assert body["summary"]["points"] == 1440 and len(body["preview"]["head"]) == 5

            described = await client.call_tool("describe_data", {"label": "AC_H1_MFI.Magnitude"})
            assert json.loads(_texts(described)[0])["points"] == 1440

            plotted = await client.call_tool("plot", {"labels": ["AC_H1_MFI.Magnitude"]})
            figure = json.loads(_texts(plotted)[-1])["figure"]
            assert figure["data"]
            images = _images(plotted)
            if images:  # a PNG needs Chrome/Chromium; the figure JSON is always there
                assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"

            code = await client.call_tool(
                "custom_operation",
                {
                    "source_labels": ["AC_H1_MFI.Magnitude"],
                    "code": "result = df * 2",
                    "output_label": "x2",
                },
            )
            before = json.loads(_texts(await client.call_tool("get_status", {}))[0])
            if before["os_sandbox"]:
                # The kernel confines model-written code here: it runs and makes `x2`.
                assert not code.is_error, _texts(code)
                assert "x2" in _texts(code)[0]
            else:  # no OS layer on this machine: a server never runs such code
                assert code.is_error and "SandboxUnavailable" in _texts(code)[0]

            bad = await client.call_tool("describe_data", {"label": "NOPE"})
            assert bad.is_error and "Traceback" not in _texts(bad)[0]

            answer = await client.call_tool("chat", {"message": ACE})
            assert "ACE magnetic field" in _texts(answer)[0]
            assert not answer.is_error

            status = await client.call_tool("get_status", {})
            state = json.loads(_texts(status)[0])
            assert "AC_H1_MFI.Magnitude" in state["data"] and state["has_figure"]
            first = state["session_id"]

            await client.call_tool("reset_session", {})
            fresh = json.loads(_texts(await client.call_tool("get_status", {}))[0])
            assert fresh["session_id"] != first and fresh["data"] == []

    anyio.run(main)


def test_streamable_http_needs_the_token_and_serves_the_tools(
    hapi: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
    token = "Vb7-qK2mZx9LwR4tYp1sNd8h"
    server, state = build_server()
    app = http_app(server, ServerConfig(token=token))

    async def main(url: str) -> None:
        async with httpx2.AsyncClient(timeout=120) as anonymous:
            refused = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert refused.status_code == 401 and refused.json()["type"] == "Unauthorized"
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            assert {t.name for t in (await client.list_tools()).tools} >= EXPECTED_TOOLS
            args = {"dataset_id": "OMNI_HRO2_1MIN", "parameter_id": "flow_speed"}
            fetched = await client.call_tool("fetch_data", {**args, "time_range": "2024-01-15"})
            assert json.loads(_texts(fetched)[0])["summary"]["points"] == 1440
            status = json.loads(_texts(await client.call_tool("get_status", {}))[0])
            assert status["data"] == ["OMNI_HRO2_1MIN.flow_speed"]

    try:
        with LiveServer(app) as live:
            anyio.run(main, f"{live.url}/mcp")
    finally:
        state.assistant.close()


def test_http_on_a_public_address_needs_a_token() -> None:
    server, state = build_server()
    try:
        with pytest.raises(ConfigError, match="XHELIO_API_TOKEN"):
            http_app(server, ServerConfig(host="0.0.0.0"))
    finally:
        state.assistant.close()


def _json(result: CallToolResult) -> dict[str, object]:
    body = json.loads(_texts(result)[-1])
    assert isinstance(body, dict)
    return body  # type: ignore[return-value]


def test_each_mcp_session_over_http_has_its_own_xhelio_session(
    hapi: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
    server, state = build_server()
    app = http_app(server, ServerConfig())
    omni = {"dataset_id": "OMNI_HRO2_1MIN", "parameter_id": "flow_speed"}
    label = "OMNI_HRO2_1MIN.flow_speed"

    async def with_mcp_sessions(url: str) -> None:
        async with (
            httpx2.AsyncClient(timeout=120) as http_a,
            httpx2.AsyncClient(timeout=120) as http_b,
            Client(streamable_http_client(url, http_client=http_a), mode="legacy") as alice,
            Client(streamable_http_client(url, http_client=http_b), mode="legacy") as bob,
        ):
            fetched = await alice.call_tool("fetch_data", {**omni, "time_range": "2024-01-15"})
            assert not fetched.is_error, _texts(fetched)
            a_status = _json(await alice.call_tool("get_status", {}))
            b_status = _json(await bob.call_tool("get_status", {}))
            assert a_status["session_id"] != b_status["session_id"]
            assert a_status["data"] == [label] and b_status["data"] == []

            await bob.call_tool("reset_session", {})
            after = _json(await alice.call_tool("get_status", {}))
            assert after["session_id"] == a_status["session_id"] and after["data"] == [label]

            # While alice's session runs something else, her call is refused as on REST.
            with state.assistant.hub.checkout(str(a_status["session_id"])):
                busy = await alice.call_tool("describe_data", {"label": label})
                free = await bob.call_tool("get_status", {})
            assert busy.is_error and _json(busy)["type"] == "SessionBusy"
            assert not free.is_error

    async def without_mcp_sessions(url: str) -> None:
        # The sessionless protocol carries no MCP session: the xhelio session is named.
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as carol,
        ):
            sid = _json(await carol.call_tool("get_status", {}))["session_id"]
            fetched = await carol.call_tool(
                "fetch_data", {**omni, "time_range": "2024-01-16", "session_id": sid}
            )
            assert _json(fetched)["session_id"] == sid
            status = _json(await carol.call_tool("get_status", {"session_id": sid}))
            assert status["data"] == [label]
            other = _json(await carol.call_tool("get_status", {}))
            assert other["session_id"] != sid and other["data"] == []
            unknown = await carol.call_tool("get_status", {"session_id": "s" + "0" * 32})
            assert unknown.is_error and _json(unknown)["type"] == "NotFound"

    try:
        with LiveServer(app) as live:
            anyio.run(with_mcp_sessions, f"{live.url}/mcp")
            anyio.run(without_mcp_sessions, f"{live.url}/mcp")
    finally:
        state.assistant.close()


def test_mcp_errors_are_typed_and_arguments_described(
    hapi: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
    server, state = build_server()
    app = http_app(server, ServerConfig())

    async def main(url: str) -> None:
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for tool in tools.values():
                for name, prop in tool.input_schema.get("properties", {}).items():
                    assert prop.get("description"), f"{tool.name}.{name} has no description"
            pipeline = tools["run_pipeline"].input_schema["properties"]
            assert set(pipeline) == {
                "pipeline",
                "time_range",
                "variable_overrides",
                "modifications",
                "session_id",
            }

            empty = await client.call_tool("chat", {"message": "   "})
            assert empty.is_error
            error = _json(empty)
            assert error["type"] == "ValidationError" and "message is empty" in str(
                error["message"]
            )

            failed = await client.call_tool("chat", {"message": "fetch FAKE_DS for 2024-01-01"})
            assert failed.is_error
            error = _json(failed)
            assert error["type"] == "UserError" and "FAKE_DS" in str(error["message"])

            missing = await client.call_tool("run_pipeline", {"pipeline": "pl_nothere"})
            assert missing.is_error and _json(missing)["status"] == "error"

    class Failing:
        name = "failing"

        def respond(self, request: str, cancel: object) -> object:
            raise UserError("No dataset FAKE_DS: check the id with `catalog search`.")

    def make(
        workspace: object, model: object = None, usage: object = None
    ) -> tuple[object, object]:
        return Failing(), ModelConfig()

    monkeypatch.setattr(factory, "make_assistant", make)
    try:
        with LiveServer(app) as live:
            anyio.run(main, f"{live.url}/mcp")
    finally:
        state.assistant.close()
