"""Offline follow-ups that restrict or take back: zoom to a clock range, undo.

A zoom restricts the data already loaded (the server is not asked again); "undo", "go
back" and "revert that" restore the figure of the request before and say what was undone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Workspace, CatalogHapiServer]]:
    with CatalogHapiServer(max_rows=600) as srv:
        monkeypatch.setenv("XHELIO_HAPI_URL", srv.url)
        ws = open_workspace(settings=load_settings(), ephemeral=True)
        try:
            yield ws, srv
        finally:
            ws.close()


def _turn(ws: Workspace, text: str) -> tuple[str, list[dict[str, Any]]]:
    assistant, _ = make_assistant(ws)
    first = len(ws.session.operations)
    result = run_turn(ws, assistant, text)
    return result.answer, ws.session.operations[first:]


def _windows(ops: list[dict[str, Any]]) -> set[str]:
    return {
        op["args"]["time_range"]
        for op in ops
        if op["tool"] == "fetch_data" and op["status"] == "ok"
    }


def _trace_names(ws: Workspace) -> list[str]:
    plot = ws.session.plot.current
    assert plot is not None
    return [str(t.get("name", "")) for t in plot.figure["data"]]


@pytest.mark.parametrize(
    ("zoom", "window"),
    [
        ("zoom in on 06:00 to 12:00", "2016-02-10T06:00:00Z to 2016-02-10T12:00:00Z"),
        ("zoom to 3am-9am", "2016-02-10T03:00:00Z to 2016-02-10T09:00:00Z"),
        ("only show 14:30 to 18:00", "2016-02-10T14:30:00Z to 2016-02-10T18:00:00Z"),
        ("restrict it to between 0900 and 1030 UT", "2016-02-10T09:00:00Z to 2016-02-10T10:30:00Z"),
    ],
)
def test_zoom_restricts_the_loaded_day_without_asking_the_server(
    served: tuple[Workspace, CatalogHapiServer], zoom: str, window: str
) -> None:
    ws, srv = served
    _turn(ws, "OMNI Dst on 2016-02-10")
    asked = len(srv.data_requests())
    answer, ops = _turn(ws, zoom)
    assert _windows(ops) == {window}, answer
    assert len(srv.data_requests()) == asked, "a zoom must not fetch from the server again"
    assert "Zoomed" in answer


@pytest.mark.parametrize("undo", ["undo", "go back", "revert that", "undo that please"])
def test_undo_restores_the_figure_before_and_says_what(
    served: tuple[Workspace, CatalogHapiServer], undo: str
) -> None:
    ws, _ = served
    _turn(ws, "ACE |B| on 2016-02-10")
    before = _trace_names(ws)
    _turn(ws, "smooth it over 1 hour")
    assert _trace_names(ws) != before
    answer, ops = _turn(ws, undo)
    assert _trace_names(ws) == before, answer
    assert not any("rolling" in str(op["args"].get("code", "")) for op in ops)
    assert "Undid" in answer and "smooth it over 1 hour" in answer, answer


def test_undo_steps_back_one_change_at_a_time(
    served: tuple[Workspace, CatalogHapiServer],
) -> None:
    ws, _ = served
    _turn(ws, "ACE |B| on 2016-02-10")
    first = _trace_names(ws)
    _turn(ws, "add Wind")
    second = _trace_names(ws)
    _turn(ws, "now smooth it over 30 minutes")
    _turn(ws, "undo")
    assert _trace_names(ws) == second
    answer, _ = _turn(ws, "undo")
    assert _trace_names(ws) == first, answer
    assert "add Wind" in answer
    # A later request builds on what is shown after the undo, not on what was undone.
    _, ops = _turn(ws, "same for the next day")
    assert {op["args"]["dataset_id"][:3] for op in ops if op["tool"] == "fetch_data"} == {"AC_"}


def test_undo_with_nothing_to_undo_says_so(
    served: tuple[Workspace, CatalogHapiServer],
) -> None:
    ws, _ = served
    answer, ops = _turn(ws, "undo")
    assert "nothing to undo" in answer.lower(), answer
    assert not [op for op in ops if op["tool"] == "fetch_data"]
    _turn(ws, "ACE |B| on 2016-02-10")
    answer, _ = _turn(ws, "undo")
    assert "nothing to undo" in answer.lower(), answer


def test_same_for_another_probe_and_all_probes_still_follow(
    served: tuple[Workspace, CatalogHapiServer],
) -> None:
    ws, _ = served
    _turn(ws, "THEMIS-A magnetic field on 2016-02-10")
    _, ops = _turn(ws, "same for probe D")
    assert {op["args"]["dataset_id"][:5] for op in ops if op["tool"] == "fetch_data"} == {"THD_L"}
    _, ops = _turn(ws, "MMS2 FGM magnetic field 2016-02-10")
    _, ops = _turn(ws, "now all four spacecraft")
    probes = {op["args"]["dataset_id"][:4] for op in ops if op["tool"] == "fetch_data"}
    assert probes == {"MMS1", "MMS2", "MMS3", "MMS4"}
