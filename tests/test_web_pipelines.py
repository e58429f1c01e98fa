"""The Pipelines page's routes over the app (no browser): list, search, detail, export, replay.

A pipeline is made the way a session makes one (a messy analysis through the funnel, then
`save_pipeline`), against the loopback catalog HAPI server; the replay runs as a turn of a
new session and is read back through the session routes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pipeline_support import make_session
from servers.catalog_hapi import CatalogHapiServer
from xhelio.server import ServerConfig, create_app
from xhelio.tools.workspace import Workspace

BASE = "http://127.0.0.1"


@pytest.fixture
def saved(pl_workspace: Workspace) -> str:
    """The id of a saved pipeline: fetches, a smoothing in the sandbox, a two-panel plot."""
    make_session(pl_workspace)
    result = pl_workspace.funnel.call(
        "save_pipeline", {"name": "ACE smoothing"}, caller="test"
    ).to_dict()
    assert result["status"] == "ok", result
    pl_workspace.save()
    return str(result["id"])


@pytest.fixture
def client(pl_hapi_env: CatalogHapiServer) -> Iterator[TestClient]:
    config = ServerConfig(allow_unsandboxed_code=True)
    with TestClient(create_app(config), base_url=BASE) as c:
        yield c


def _wait_idle(client: TestClient, sid: str, messages: int = 2) -> dict[str, Any]:
    """The session once it is idle with `messages` in its history (a generous bound)."""
    deadline = time.monotonic() + 120
    while True:
        detail = client.get(f"/api/v1/sessions/{sid}").json()
        done = not detail["busy"] and len(detail["history"]) >= messages
        if done or time.monotonic() > deadline:
            return detail
        time.sleep(0.1)


def test_list_search_and_detail(client: TestClient, saved: str) -> None:
    listed = client.get("/api/v1/pipelines").json()["families"]
    assert [v["id"] for f in listed for v in f["variants"]] == [saved]
    found = client.get("/api/v1/pipelines", params={"q": "smoothing"}).json()["families"]
    assert found and found[0]["variants"][0]["id"] == saved
    assert client.get("/api/v1/pipelines", params={"q": "dst index"}).json()["families"] == []
    by_mission = client.get("/api/v1/pipelines", params={"mission": "ace"}).json()["families"]
    assert by_mission and by_mission[0]["variants"][0]["id"] == saved

    info = client.get(f"/api/v1/pipelines/{saved}").json()
    tools = [s["tool"] for s in info["pipeline"]["steps"]]
    assert (
        "fetch_data" in tools and "custom_operation" in tools and tools[-1] == "render_plotly_json"
    )
    # The exploratory and failed calls of the session are not steps.
    assert "search_datasets" not in tools and "describe_data" not in tools
    ids = {s["step_id"] for s in info["pipeline"]["steps"]}
    assert info["edges"] and all(a in ids and b in ids for a, b in info["edges"])
    assert "rolling" in info["code"][0]["code"]
    assert info["time_range"].startswith("2001-01-01")
    # By name too, as the CLI accepts.
    assert client.get("/api/v1/pipelines/ACE smoothing").json()["pipeline"]["id"] == saved


def test_export_unknown_and_delete(client: TestClient, saved: str) -> None:
    script = client.get(f"/api/v1/pipelines/{saved}/export", params={"format": "py"})
    assert script.status_code == 200
    assert "attachment" in script.headers["content-disposition"]
    assert "rolling" in script.text and "AC_H2_MFI" in script.text
    notebook = client.get(f"/api/v1/pipelines/{saved}/export", params={"format": "ipynb"})
    assert notebook.json()["cells"]
    missing = client.get("/api/v1/pipelines/pl_nothing")
    assert missing.status_code == 404 and missing.json()["status"] == "error"
    assert client.post("/api/v1/pipelines/pl_nothing/run", json={}).status_code == 404
    assert client.delete(f"/api/v1/pipelines/{saved}").json()["deleted"] == saved
    assert client.get("/api/v1/pipelines").json()["families"] == []


def test_a_bad_time_range_is_refused_before_anything_runs(client: TestClient, saved: str) -> None:
    before = len(client.get("/api/v1/sessions").json()["sessions"])
    response = client.post(f"/api/v1/pipelines/{saved}/run", json={"time_range": "2001-13-45"})
    assert response.status_code == 400
    assert response.json()["type"] == "BadTimeRangeError"
    assert "month" in response.json()["message"]
    assert len(client.get("/api/v1/sessions").json()["sessions"]) == before


def test_replay_runs_as_a_turn_of_a_new_session(client: TestClient, saved: str) -> None:
    started = client.post(f"/api/v1/pipelines/{saved}/run", json={"time_range": "2001-03-01"})
    assert started.status_code == 200, started.text
    body = started.json()
    assert body["time_range"].startswith("2001-03-01T00:00:00Z")
    detail = _wait_idle(client, body["session_id"])
    assert "pipeline ACE smoothing" in detail["title"]
    request, answer = detail["history"][0], detail["history"][-1]
    assert "run pipeline ACE smoothing" in request["content"]
    # Every step ran, the smoothing too (this server allows code without the OS sandbox).
    assert re.search(r"(\d+) of \1 steps completed", answer["content"]), answer["content"]
    assert not answer.get("error")
    figure = client.get(f"/api/v1/sessions/{body['session_id']}/figure").json()
    assert "2001-03-01" in str(figure)
    ops = client.get(f"/api/v1/sessions/{body['session_id']}/operations").json()["operations"]
    fetched = [op for op in ops if op["tool"] == "fetch_data"]
    assert fetched and all("2001-03-01" in op["args"]["time_range"] for op in fetched)
    assert all(op["caller"] == "pipeline" for op in ops)
    # Replayed into an existing session when one is named.
    again = client.post(
        f"/api/v1/pipelines/{saved}/run",
        json={"time_range": "2001-03-02", "session_id": body["session_id"]},
    ).json()
    assert again["session_id"] == body["session_id"]
    assert len(_wait_idle(client, body["session_id"], 4)["history"]) == 4
