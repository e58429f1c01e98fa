"""A request with no time at all: the last 7 days of data, and the answer says so.

Guards for the seed's default (issue 20): the default is used only when the request names
no time, it is always said, and time words that could not be read never fall back to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A fresh session (no earlier request to take a time from) on the loopback server."""
    with CatalogHapiServer(max_rows=500) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        workspace = open_workspace(settings=load_settings())
        try:
            yield workspace
        finally:
            workspace.close()


def _ask(workspace: Workspace, text: str) -> tuple[str, list[tuple[datetime, datetime]]]:
    answer = run_turn(workspace, OfflineAssistant(workspace), text).answer
    ops: list[dict[str, Any]] = workspace.session.operations
    windows = [
        tuple(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in w.split(" to "))
        for w in (
            op["args"]["time_range"]
            for op in ops
            if op["tool"] == "fetch_data" and op["status"] == "ok"
        )
    ]
    return answer, [(a, b) for a, b in windows]


@pytest.mark.parametrize("text", ["ACE magnetic field", "show me the Wind proton density"])
def test_no_time_gets_the_last_7_days_and_says_so(workspace: Workspace, text: str) -> None:
    answer, windows = _ask(workspace, text)
    assert windows, answer
    assert all(end - start == timedelta(days=7) for start, end in windows), windows
    assert "No time range was given, so I used the last 7 days of" in answer


def test_a_time_given_is_not_replaced_by_the_default(workspace: Workspace) -> None:
    answer, windows = _ask(workspace, "ACE magnetic field on 2015-03-17")
    assert {(f"{a:%Y-%m-%d}", f"{b:%Y-%m-%d}") for a, b in windows} == {
        ("2015-03-17", "2015-03-18")
    }
    assert "last 7 days" not in answer


def test_time_words_not_read_never_become_the_last_7_days(workspace: Workspace) -> None:
    answer, windows = _ask(workspace, "ACE magnetic field on 30 February 2015")
    assert "last 7 days" not in answer
    assert all(end - start != timedelta(days=7) for start, end in windows), answer
