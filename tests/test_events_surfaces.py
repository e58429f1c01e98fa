"""Event tools on the other surfaces: a figure selection over REST, lists over the Python API."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from servers.xhelio_api import LiveServer
from xhelio.api.assistant import Assistant
from xhelio.config import load_settings
from xhelio.server import ServerConfig, create_app


@pytest.fixture(name="assistant")
def python_api() -> Iterator[Assistant]:
    with Assistant(load_settings()) as xh:
        yield xh


def test_rest_takes_a_figure_selection_as_an_event_list(assistant: Assistant) -> None:
    sid = assistant.new_session("selection")
    app = create_app(ServerConfig(), assistant=assistant)
    with LiveServer(app) as server, httpx.Client(base_url=server.url + "/api/v1") as http:
        listed = {t["name"] for t in http.get("/tools").json()}
        assert {"events_from_selection", "superposed_epoch", "detect_storms"} <= listed
        spans = [
            ["2015-03-17T04:00Z", "2015-03-17T09:00Z"],
            ["2015-03-17T12:00Z", "2015-03-17T13:00Z"],
        ]
        url = f"/sessions/{sid}/tools/events_from_selection"
        made = http.post(url, json={"name": "picked", "spans": spans})
        assert made.status_code == 200 and made.json()["label"] == "events.picked"
        assert made.json()["count"] == 2
        backwards = http.post(url, json={"name": "bad", "spans": [["2015-03-18", "2015-03-17"]]})
        assert backwards.status_code >= 400 and "end before" in backwards.text


def test_python_api_lists_shipped_lists(assistant: Assistant) -> None:
    sid = assistant.new_session("lists")
    result = assistant.call_tool(sid, "find_event_lists", {"query": "storms"})
    assert result.ok and result.payload["shipped"][0]["name"] == "omni-dst-storms-1999-2001"
    loaded = assistant.call_tool(sid, "load_event_list", {"name": "omni-dst-storms-1999-2001"})
    assert loaded.ok and loaded.labels == ["events.omni-dst-storms-1999-2001"]
