"""Offline follow-ups resolve against the session.

In one live session (the REPL) and in a session resumed by `xhelio ask --session` (a new
process reads the saved history).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.cli.ask_cmd import ask_once
from xhelio.config import load_settings
from xhelio.tools.workspace import open_workspace

FIRST = "ACE |B| for 2015-03-16 to 2015-03-18"
WINDOW = "2015-03-16T00:00:00Z to 2015-03-19T00:00:00Z"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogHapiServer]:
    with CatalogHapiServer(max_rows=500) as srv:
        monkeypatch.setenv("XHELIO_HAPI_URL", srv.url)
        yield srv


def _fetch_windows(operations: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (op["args"]["dataset_id"], op["args"]["time_range"])
        for op in operations
        if op["tool"] == "fetch_data" and op["status"] == "ok"
    ]


def test_repl_follow_ups_keep_data_and_time(server: CatalogHapiServer) -> None:
    workspace = open_workspace(settings=load_settings())
    try:
        assistant, _ = make_assistant(workspace)

        def turn(text: str) -> tuple[TurnResult, list[dict[str, Any]]]:
            first = len(workspace.session.operations)
            result = run_turn(workspace, assistant, text)
            return result, workspace.session.operations[first:]

        turn(FIRST)
        result, ops = turn("now smooth it over 30 minutes")
        assert [w for _, w in _fetch_windows(ops)] == [WINDOW]
        assert any("smooth30min" in str(op["result"].get("label")) for op in ops)
        result, ops = turn("add Wind")
        assert {d[:3] for d, _ in _fetch_windows(ops)} == {"AC_", "WI_"}
        result, ops = turn("shift to the next day")
        assert {w for _, w in _fetch_windows(ops)} == {
            "2015-03-17T00:00:00Z to 2015-03-20T00:00:00Z"
        }
        assert "Shifted" in result.answer
        result, ops = turn("remove the Wind trace")
        assert {d[:3] for d, _ in _fetch_windows(ops)} == {"AC_"}
        plot = workspace.session.plot.current
        assert plot is not None and len(plot.figure["data"]) == 1
        result, ops = turn("show the density")
        assert "time range of the data already loaded" in result.answer
        assert all(d.startswith("AC_") for d, _ in _fetch_windows(ops))
    finally:
        workspace.close()


def test_ask_session_follow_up_reads_the_saved_history(server: CatalogHapiServer) -> None:
    first = ask_once(FIRST)
    assert first.error is None and first.session_id
    second = ask_once("same for Wind", session_id=first.session_id)
    assert second.error is None, second.answer
    assert [d.dataset[:3] for d in second.data if d.dataset] == ["WI_"]
    assert {(d.start or "")[:10] for d in second.data if d.dataset} == {"2015-03-16"}
    # A request standing on its own is not merged into the last one.
    third = ask_once("OMNI Dst for 2003-10-29", session_id=first.session_id)
    assert [d.dataset[:4] for d in third.data if d.dataset] == ["OMNI"]


def test_bare_follow_ups_change_form_and_step_the_time(server: CatalogHapiServer) -> None:
    workspace = open_workspace(settings=load_settings())
    try:
        assistant, _ = make_assistant(workspace)

        def turn(text: str) -> list[dict[str, Any]]:
            first = len(workspace.session.operations)
            run_turn(workspace, assistant, text)
            return workspace.session.operations[first:]

        turn(FIRST)
        # The frame and form a follow-up names apply to the last quantities.
        assert [p for _, p in _fetch_params(turn("same thing in GSM components"))] == ["BGSM"]
        # "go forward a day" names nothing but a step in time.
        assert {w for _, w in _fetch_windows(turn("go forward a day"))} == {
            "2015-03-17T00:00:00Z to 2015-03-20T00:00:00Z"
        }
    finally:
        workspace.close()


def _fetch_params(operations: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (op["args"]["dataset_id"], op["args"]["parameter_id"])
        for op in operations
        if op["tool"] == "fetch_data" and op["status"] == "ok"
    ]


@pytest.mark.parametrize("then", ["sdo aia 171 lightcurve 2015-03-16", "same for hinode"])
def test_a_mission_the_catalog_lacks_is_no_follow_up_of_the_last_one(
    server: CatalogHapiServer, then: str
) -> None:
    # The last request's data is never shown for a mission the catalog does not hold.
    workspace = open_workspace(settings=load_settings())
    try:
        assistant, _ = make_assistant(workspace)
        run_turn(workspace, assistant, FIRST)
        first = len(workspace.session.operations)
        result = run_turn(workspace, assistant, then)
        fetched = _fetch_windows(workspace.session.operations[first:])
    finally:
        workspace.close()
    assert fetched == [], result.answer
    assert "no mission by that name" in result.answer, result.answer
