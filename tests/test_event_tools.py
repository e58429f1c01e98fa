"""Event tools through the session funnel: lists in and out, per-user store, detection, SEA."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from events_synthetic import dst_with_storms, solar_wind_with_shocks
from servers.catalog_hapi import CatalogHapiServer
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.events.formats import FORMATS, write_events
from xhelio.events.model import make_event_list
from xhelio.tools.workspace import Workspace, open_workspace

LIST = make_event_list(
    "three",
    pd.DataFrame(
        {
            "start": ["2015-03-17T04:00Z", "2015-06-22T18:00Z", "2015-12-20T03:00Z"],
            "end": ["2015-03-18T12:00Z", "2015-06-23T12:00Z", "2015-12-21T00:00Z"],
            "minimum": [-222.0, -204.0, -155.0],
        }
    ),
)


@pytest.fixture(name="ws")
def workspace() -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def _ok(ws: Workspace, tool: str, **args: object) -> dict[str, Any]:
    result = ws.funnel.call(tool, args)
    assert result.ok, result.error
    return {**result.payload, "labels": result.labels}


@pytest.mark.parametrize("fmt", FORMATS)
def test_import_any_format_as_an_entry(ws: Workspace, fmt: str) -> None:
    text = write_events(LIST, fmt)  # pyright: ignore[reportArgumentType]
    done = _ok(ws, "import_events", content=text, name=f"from-{fmt}")
    assert done["label"] == f"events.from-{fmt}" and done["count"] == 3
    assert ws.session.store.get(f"events.from-{fmt}").data["start"].dt.year.tolist() == [2015] * 3
    assert done["labels"] == [f"events.from-{fmt}"]  # the funnel knows what it made


def test_import_refuses_a_file_the_user_did_not_name(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "secret.csv"
    path.write_text(write_events(LIST, "csv"), encoding="utf-8")
    result = ws.funnel.call("import_events", {"path": str(path)})
    assert not result.ok and "named in the conversation" in (result.error or "")
    result = ws.funnel.call("import_events", {})
    assert not result.ok and "exactly one of path or content" in (result.error or "")


def test_selection_saved_then_used_by_phrase_in_another_session_not_by_another_user(
    ws: Workspace,
) -> None:
    spans = [["2015-03-17T04:00", "2015-03-18T00:00"], ["2016-01-01T00:00", "2016-01-01T06:00"]]
    _ok(ws, "events_from_selection", name="my storms", spans=spans, save=True)
    other = open_workspace(settings=load_settings())  # a second session of the same user
    try:
        found = _ok(other, "find_event_lists", query="storms")
        assert [s["name"] for s in found["saved"]] == ["my storms"]
        assert any("omni" in s["name"] for s in found["shipped"])
        loaded = _ok(other, "load_event_list", name="the 2016 storms in my list")
        assert loaded["count"] == 1 and str(loaded["first_start"]).startswith("2016-01-01")
    finally:
        other.close()
    stranger = open_workspace(settings=load_settings())
    stranger.context.library_user = "someone-else"  # as a server sets per session
    try:
        refused = stranger.funnel.call("load_event_list", {"name": "my storms"})
        assert not refused.ok and "No saved event list" in (refused.error or "")
        assert _ok(stranger, "find_event_lists", query="storms")["saved"] == []
    finally:
        stranger.close()


def test_export_round_trips_through_the_export_folder(ws: Workspace) -> None:
    _ok(ws, "load_event_list", name="omni-dst-storms-1999-2001")
    for fmt in FORMATS:
        done = _ok(ws, "export_event_list", name="omni-dst-storms-1999-2001", format=fmt)
        text = Path(str(done["path"])).read_text(encoding="utf-8")
        back = _ok(ws, "import_events", content=text, name=f"back-{fmt}")
        assert back["count"] == done["count"] == 85
    bad = ws.funnel.call("export_event_list", {"name": "three-x", "filename": "../x.csv"})
    assert not bad.ok


def test_detect_storms_and_shocks_state_their_method(ws: Workspace) -> None:
    dst, planted, _ = dst_with_storms()
    ws.session.store.put(DataEntry("OMNI.DST", dst.to_frame("DST"), {"DST": "nT"}))
    storms = _ok(ws, "detect_storms", label="OMNI.DST", threshold=-100)
    assert storms["count"] == sum(1 for s in planted if s.minimum <= -100)
    assert storms["method"]["threshold_nT"] == -100
    assert "Gonzalez" in str(storms["citation"])
    wind, shocks = solar_wind_with_shocks()
    for name in ("B", "V", "n", "T"):
        ws.session.store.put(DataEntry(f"W.{name}", wind[[name]], {name: ""}))
    found = _ok(ws, "detect_shocks", field="W.B", speed="W.V", density="W.n", temperature="W.T")
    assert found["count"] == len(shocks) and "Kilpua" in str(found["citation"])


def test_superposed_epoch_stores_table_and_figure(ws: Workspace) -> None:
    dst, planted, _ = dst_with_storms(cadence="1min")
    ws.session.store.put(DataEntry("SYM.H", dst.to_frame("SYM_H"), {"SYM_H": "nT"}))
    _ok(ws, "detect_storms", label="SYM.H", name="planted")
    done = _ok(
        ws,
        "superposed_epoch",
        events="planted",
        label="SYM.H",
        epoch="minimum_time",
        before_hours=12,
        after_hours=24,
        bin_minutes=30,
    )
    table = ws.session.store.get(str(done["label"])).data
    assert list(table.columns) == ["mean", "median", "q25", "q75", "count"]
    assert done["events_with_data"] == len(planted)
    zero = done["at_epoch_zero"]
    assert zero["count"] == len(planted) and zero["mean"] < -80
    assert Path(str(done["figure_file"])).is_file()
    assert {t.get("name") for t in done["figure"]["data"]} >= {"mean", "median"}
    bad = ws.funnel.call(
        "superposed_epoch", {"events": "planted", "label": "SYM.H", "epoch": "peak"}
    )
    assert not bad.ok and "no 'peak'" in (bad.error or "")


def test_fetch_for_each_event(monkeypatch: pytest.MonkeyPatch) -> None:
    with CatalogHapiServer(max_rows=500) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        ws = open_workspace(settings=load_settings())
        try:
            _ok(ws, "import_events", content=write_events(LIST, "csv"), name="three")
            done = _ok(
                ws,
                "fetch_for_events",
                events="three",
                dataset_id="OMNI2_H0_MRG1HR",
                parameter_id="BZ_GSM",
                before_hours=6,
                after_hours=12,
            )
            assert done["fetched"] == 3 and done["label"] == "events.three.OMNI2_H0_MRG1HR.BZ_GSM"
            data = ws.session.store.get(str(done["label"])).data
            for start in LIST.frame["start"]:
                near = data.loc[start - pd.Timedelta("6h") : start + pd.Timedelta("12h")]
                assert len(near) >= 17
            assert data.index.is_monotonic_increasing and data.index.is_unique
        finally:
            ws.close()


def test_an_event_list_survives_reopening_its_session() -> None:
    ws = open_workspace(settings=load_settings())
    _ok(ws, "load_event_list", name="omni-dst-storms-1999-2001", as_name="solarmax")
    sid = ws.session.id
    ws.close()
    again = open_workspace(session_id=sid, settings=load_settings())
    try:
        listed = _ok(again, "load_event_list", name="events.solarmax")  # from the session
        assert listed["count"] == 85 and listed["method"]["threshold_nT"] == -50.0
        assert "Gonzalez" in listed["citation"]
    finally:
        again.close()
