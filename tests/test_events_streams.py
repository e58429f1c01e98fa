"""Stream interaction regions and interfaces: planted ones found, look-alikes not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from events_synthetic import solar_wind_with_stream_interactions
from xhelio.agents.offline.events_skill import parse_event_request
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.events.streams import detect_stream_interactions
from xhelio.tools.workspace import Workspace, open_workspace


def _near(found: pd.Series, planted: pd.Timestamp, hours: float) -> bool:
    return bool((abs(found - planted) <= pd.Timedelta(hours=hours)).any())


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_every_planted_stream_interface_is_found_and_nothing_else(seed: int) -> None:
    wind, interfaces, lookalikes = solar_wind_with_stream_interactions(seed)
    found = detect_stream_interactions(wind["B"], wind["V"], wind["n"], wind["T"]).frame
    assert len(found) == len(interfaces)
    for planted in interfaces:
        assert _near(found["stream_interface"], planted, 2), planted
        row = found.loc[abs(found["stream_interface"] - planted) <= pd.Timedelta(hours=2)].iloc[0]
        assert row["start"] <= planted <= row["end"] and row["dv"] >= 100 and row["pt_ratio"] >= 2
    for decoy in lookalikes:
        assert not _near(found["pt_peak_time"], decoy, 24), decoy


def test_the_thresholds_are_arguments_and_stated() -> None:
    wind, _, _ = solar_wind_with_stream_interactions()
    strict = detect_stream_interactions(wind["B"], wind["V"], wind["n"], wind["T"], dv_kms=400)
    assert strict.frame.empty and strict.method["dV_min_km_s"] == 400
    assert "Jian" in strict.citation and "Pt" in strict.method
    with pytest.raises(UserError, match="Too little data"):
        detect_stream_interactions(*(wind[k].iloc[:30] for k in ("B", "V", "n", "T")))


@pytest.fixture(name="ws")
def workspace() -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings(), ephemeral=True)
    yield ws
    ws.close()


def test_the_tool_converts_an_ev_temperature_and_keeps_the_list(ws: Workspace) -> None:
    wind, interfaces, _ = solar_wind_with_stream_interactions()
    wind["T"] = wind["T"] / 11604.518
    for name, unit in (("B", "nT"), ("V", "km/s"), ("n", "cm^-3"), ("T", "eV")):
        ws.session.store.put(DataEntry(f"W.{name}", wind[[name]], {name: unit}))
    args = {"field": "W.B", "speed": "W.V", "density": "W.n", "temperature": "W.T"}
    result = ws.funnel.call("detect_stream_interactions", args)
    assert result.ok, result.error
    payload: dict[str, Any] = result.payload
    assert payload["count"] == len(interfaces) and "Jian" in str(payload["citation"])


@pytest.mark.parametrize(
    "text",
    [
        "find stream interaction regions in 2008",
        "list the SIRs in Wind data for March 2008",
        "detect corotating interaction regions during 2008",
        "find CIRs in 2008",
        "which stream interfaces were in January 2008",
    ],
)
def test_stream_interaction_requests_are_understood(text: str) -> None:
    asked = parse_event_request(text)
    assert asked is not None and asked.kind == "streams" and asked.time_text


def test_a_polite_sir_is_no_stream_interaction() -> None:
    asked = parse_event_request("find shocks in 2015, sir")
    assert asked is not None and asked.kind == "shocks"
