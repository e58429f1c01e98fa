"""No response or event of a whole session names a server path; files come as URLs."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from server_fixtures import ACE, Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer
from servers.xhelio_api import LiveServer
from xhelio.mcp_server import build_server, http_app
from xhelio.server.client_paths import PathMap
from xhelio.server.config import ServerConfig


@pytest.fixture(scope="module")
def api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("paths-home"), hapi.url)


def _server_paths(api: Api) -> list[str]:
    folders = [api.home, Path(tempfile.gettempdir()), Path.home()]
    return sorted({str(p) for f in folders for p in (f, f.resolve())})


def _no_server_path(api: Api, response: httpx.Response) -> None:
    for path in _server_paths(api):
        assert path not in response.text, f"{response.request.url} leaks {path}"
        escaped = path.replace("/", "\\/")
        assert escaped not in response.text


def test_a_whole_session_names_no_server_path(api: Api) -> None:
    client = api.client
    seen: list[httpx.Response] = []

    def keep(response: httpx.Response) -> httpx.Response:
        seen.append(response)
        return response

    asked = keep(client.post("/ask", json={"question": ACE, "trace": True})).json()
    sid = asked["session_id"]
    assert asked["figure_files"], asked
    follow = keep(
        client.post("/ask", json={"question": "Export the figure as HTML", "session_id": sid})
    ).json()
    keep(client.post("/ask/stream", json={"question": "Describe it", "session_id": sid}))
    for path in (
        f"/sessions/{sid}",
        f"/sessions/{sid}/events",
        f"/sessions/{sid}/operations",
        f"/sessions/{sid}/entries",
        f"/sessions/{sid}/gallery",
        f"/sessions/{sid}/gallery/1",
        f"/sessions/{sid}/figure",
        "/settings",
        "/status",
        "/sessions",
    ):
        assert keep(client.get(path)).status_code == 200, path
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-05"}
    keep(client.post(f"/sessions/{sid}/fetch/stream", json=body))
    keep(client.put(f"/sessions/{sid}/uploads/notes.txt", content=b"hello"))
    keep(client.get(f"/sessions/{sid}/entries/NOPE/preview"))
    (api.home / "config.toml").write_text("[[[ broken\n")
    broken = keep(client.get("/settings"))
    (api.home / "config.toml").unlink()
    assert broken.status_code == 400 and "$XHELIO_HOME/config.toml" in broken.json()["message"]
    for response in seen:
        _no_server_path(api, response)
    assert client.get("/settings").json()["config_file"] == "$XHELIO_HOME/config.toml"
    # Every file a client is told about is a URL it can download.
    files = asked["figure_files"] + follow["figure_files"]
    for url in files:
        assert url.startswith(f"/api/v1/sessions/{sid}/files/exports/"), url
        download = httpx.get(api.url + url)
        assert download.status_code == 200 and download.content
    assert httpx.get(api.url + f"/api/v1/sessions/{sid}/files/uploads/notes.txt").text == "hello"


@pytest.mark.parametrize(
    "path",
    ["..%2F..%2Fconfig.toml", ".hidden", "a/../../x", "nothing.png", "%2e%2e/sessions.sqlite"],
)
def test_file_urls_serve_only_the_session_folders(api: Api, path: str) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    (api.home / "config.toml").write_text("http_retries = 3\n")
    response = httpx.get(api.url + f"/api/v1/sessions/{sid}/files/exports/{path}")
    assert response.status_code != 200 and "http_retries" not in response.text
    assert api.client.get(f"/sessions/{sid}/files/data/index.json").status_code == 422
    assert api.client.get("/sessions/snope/files/exports/x.png").status_code == 404


def test_path_map_rewrites_paths_inside_text_and_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / "sessions"
    paths = PathMap(home, sessions, "/api/v1/sessions")
    exported = sessions / "sabc" / "exports" / "fig one.png"
    exported.parent.mkdir(parents=True)
    exported.write_bytes(b"png")
    assert paths.text(f"Saved to {sessions}/sabc/exports/fig.png.") == (
        "Saved to /api/v1/sessions/sabc/files/exports/fig.png."
    )
    assert paths.value({"files": [str(exported)]}) == {
        "files": ["/api/v1/sessions/sabc/files/exports/fig%20one.png"]
    }
    assert paths.text(f"Config file {home}/config.toml is bad") == (
        "Config file $XHELIO_HOME/config.toml is bad"
    )
    assert paths.text(f"({sessions}/sabc/data/x.parquet)") == (
        "($XHELIO_HOME/sessions/sabc/data/x.parquet)"
    )
    other = Path(tempfile.gettempdir()) / "elsewhere" / "x.csv"
    assert paths.text(str(other)) == "$TMPDIR/elsewhere/x.csv"
    assert paths.text(f"{home}2/x") == f"$TMPDIR/{home.relative_to(tempfile.gettempdir())}2/x"
    assert paths.text("no paths here /usr/lib") == "no paths here /usr/lib"
    assert PathMap(home).text(str(exported)).startswith("$XHELIO_HOME/sessions/sabc/exports/")


def test_mcp_over_http_names_no_server_path(
    hapi: CatalogHapiServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("XHELIO_HOME", str(tmp_path))
    monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
    server, state = build_server()
    app = http_app(server, ServerConfig())
    texts: list[str] = []

    async def main(url: str) -> None:
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            for message in (ACE, "Export the figure as HTML", "Describe it"):
                result = await client.call_tool("chat", {"message": message})
                texts.extend(c.text for c in result.content if isinstance(c, TextContent))
            status = await client.call_tool("get_status", {})
            texts.extend(c.text for c in status.content if isinstance(c, TextContent))

    try:
        with LiveServer(app) as live:
            anyio.run(main, f"{live.url}/mcp")
    finally:
        state.assistant.close()
    joined = "\n".join(texts)
    assert "$XHELIO_HOME/sessions/" in joined  # the export is named, without the server path
    for folder in (tmp_path, Path(tempfile.gettempdir()), Path.home()):
        assert str(folder) not in joined
