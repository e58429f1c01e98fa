"""Earth orbiters without kernels: SSCWeb over HAPI, the missions' orbit datasets, errors.

A loopback HAPI server serves SSCWeb-like datasets (one per spacecraft, positions in
several frames in Earth radii, day-of-year times) and another stands in for CDAWeb (the
missions' orbit datasets, the Earth's heliocentric positions); NAIF is unreachable.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sunpy")

from orbit_support import EARTH_RADIUS_KM, orbit_gse_re, serve_orbit
from servers.hapi_server import HapiTestServer, make_info
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

DAY = "2017-07-11"


@dataclass
class Stands:
    workspace: Workspace
    sscweb: HapiTestServer
    cdaweb: HapiTestServer
    served: dict[str, pd.DataFrame]


def _earth_positions(server: HapiTestServer) -> None:
    times = pd.date_range("2017-07-10", "2017-07-14", freq="1h", tz="UTC", name="time")
    lon = np.linspace(290.0, 294.0, len(times))
    frame = pd.DataFrame({"RAD_AU": 1.0166, "HGI_LAT": 0.0, "HGI_LON": lon}, index=times)
    info = make_info(
        "2017-07-10T00:00:00Z",
        "2017-07-14T00:00:00Z",
        [("RAD_AU", "AU", None), ("HGI_LAT", "deg", None), ("HGI_LON", "deg", None)],
        cadence="PT1H",
    )
    server.add_dataset("EARTH_HELIO1HR_POSITION", info, frame.astype(float))


def _mission_orbit(server: HapiTestServer, dataset: str, parameter: str, units: str) -> None:
    start = pd.Timestamp(DAY, tz="UTC")
    times = pd.date_range(start, periods=2 * 1440, freq="60s", name="time")
    gse = orbit_gse_re(times, 12.0, 90.0) * (EARTH_RADIUS_KM if units == "km" else 1.0)
    frame = pd.DataFrame(gse, index=times, columns=[f"{parameter}_{k}" for k in range(3)])
    info = make_info(
        start.isoformat(), (start + pd.Timedelta(days=2)).isoformat(), [(parameter, units, 3)]
    )
    server.add_dataset(dataset, info, frame)


@pytest.fixture
def stands(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stands]:
    with (
        HapiTestServer(version="2.0", formats=("csv",)) as sscweb,
        HapiTestServer(version="2.0") as cdaweb,
    ):
        served = {
            "mms1": serve_orbit(sscweb, "mms1", "MMS 1", DAY, 10.0, 0.0),
            "themisa": serve_orbit(sscweb, "themisa", "THEMIS-A (P5)", DAY, 13.0, 45.0),
        }
        _earth_positions(cdaweb)
        _mission_orbit(cdaweb, "THD_OR_SSC", "XYZ_GSE", "RE")
        monkeypatch.setenv("XHELIO_HAPI_SERVERS", f"sscweb={sscweb.url}")
        monkeypatch.setenv("XHELIO_HAPI_URL", cdaweb.url)
        monkeypatch.setenv("XHELIO_NAIF_URL", "http://127.0.0.1:9/naif")
        monkeypatch.setenv("XHELIO_HTTP_RETRIES", "0")
        workspace = open_workspace(settings=load_settings(), ephemeral=True)
        yield Stands(workspace, sscweb, cdaweb, served)
        workspace.close()


def _served_km(served: pd.DataFrame, frame: str, times: pd.DatetimeIndex) -> np.ndarray:
    columns = [f"{axis}_{frame}" for axis in "XYZ"]
    return served.loc[times, columns].to_numpy(float) * EARTH_RADIUS_KM


def test_mms1_in_gsm_from_sscweb_without_kernels(stands: Stands) -> None:
    result = stands.workspace.funnel.call(
        "get_ephemeris",
        {"target": "MMS1", "time_range": DAY, "frame": "GSM", "step": "10min"},
    )
    assert result.status == "ok", result.error
    assert result.labels == ["ephemeris.MMS1.GSM"]
    entry = stands.workspace.context.store.get("ephemeris.MMS1.GSM")
    table = entry.data
    assert isinstance(table, pd.DataFrame) and len(table) == 145
    times = pd.DatetimeIndex(table.index)
    expected = _served_km(stands.served["mms1"], "GSM", times)
    assert np.allclose(table[["x", "y", "z"]].to_numpy(), expected, atol=1.0)  # km
    assert entry.units["x"] == "km" and entry.units["vx"] == "km/s"
    assert "seen from EARTH in GSM" in entry.description
    payload = result.payload
    assert payload["sources"] == ["sscweb mms1 (geocentric GSE orbit, interpolated)"]
    assert any("MMS1: no kernel covered" in n and "NAIF assigns" in n for n in payload["notes"])
    cited = entry.citations
    assert cited and cited[0]["dataset"] == "mms1" and stands.sscweb.url in cited[0]["url"]
    # An orbit of 10 Earth radii with a one-day period: speed 2 pi r / T.
    speed = np.linalg.norm(table[["vx", "vy", "vz"]].to_numpy(), axis=1)
    assert np.median(speed) == pytest.approx(2 * np.pi * 10 * EARTH_RADIUS_KM / 86400, rel=0.05)
    data_requests = [r for r in stands.sscweb.requests if r.path.endswith("/data")]
    assert data_requests and data_requests[0].query["parameters"] == "X_GSE,Y_GSE,Z_GSE"


def test_the_orbit_rotates_into_j2000_and_defaults_to_gse(stands: Stands) -> None:
    funnel = stands.workspace.funnel
    inertial = funnel.call(
        "get_ephemeris",
        {"target": "mms 1", "time_range": DAY, "frame": "J2000", "observer": "Earth"},
    )
    assert inertial.status == "ok", inertial.error
    table = stands.workspace.context.store.get(inertial.labels[0]).data
    assert isinstance(table, pd.DataFrame)
    times = pd.DatetimeIndex(table.index)
    expected = _served_km(stands.served["mms1"], "J2K", times)
    assert np.allclose(table[["x", "y", "z"]].to_numpy(), expected, atol=1.0)
    default = funnel.call("get_ephemeris", {"target": "THEMIS-A", "time_range": DAY})
    assert default.status == "ok", default.error
    assert default.labels == ["ephemeris.THEMIS_A.GSE"]
    gse = stands.workspace.context.store.get(default.labels[0]).data
    assert isinstance(gse, pd.DataFrame)
    served = _served_km(stands.served["themisa"], "GSE", pd.DatetimeIndex(gse.index))
    assert np.allclose(gse[["x", "y", "z"]].to_numpy(), served, atol=1.0)


def test_an_orbiter_about_the_sun_adds_the_earths_position(stands: Stands) -> None:
    result = stands.workspace.funnel.call(
        "get_ephemeris", {"target": "MMS1", "time_range": DAY, "frame": "HCI", "step": "1h"}
    )
    assert result.status == "ok", result.error
    table = stands.workspace.context.store.get(result.labels[0]).data
    assert isinstance(table, pd.DataFrame)
    assert np.allclose(table["distance_au"], 1.0166, atol=10 * EARTH_RADIUS_KM / 1.496e8)
    sources = " ".join(result.payload["sources"])
    assert "sscweb mms1" in sources and "EARTH_HELIO1HR_POSITION" in sources


def test_the_missions_own_orbit_dataset_when_sscweb_has_none(stands: Stands) -> None:
    result = stands.workspace.funnel.call(
        "get_ephemeris", {"target": "THEMIS-D", "time_range": DAY, "step": "30min"}
    )
    assert result.status == "ok", result.error
    table = stands.workspace.context.store.get(result.labels[0]).data
    assert isinstance(table, pd.DataFrame)
    times = pd.DatetimeIndex(table.index)
    expected = orbit_gse_re(times, 12.0, 90.0) * EARTH_RADIUS_KM  # served from DAY 00:00
    assert np.allclose(table[["x", "y", "z"]].to_numpy(), expected, atol=1.0)
    assert any("THD_OR_SSC" in s for s in result.payload["sources"])
    note = " ".join(result.payload["notes"])
    assert "THEMIS-D" in note


def test_server_down_or_spacecraft_unknown_is_said(stands: Stands) -> None:
    funnel = stands.workspace.funnel
    stands.sscweb.stop()
    down = funnel.call("get_ephemeris", {"target": "MMS2", "time_range": DAY})
    assert down.status == "error"
    message = down.error or ""
    assert "Cannot locate MMS2" in message
    assert "sscweb mms2: the server did not answer" in message
    assert "MMS2_MEC_SRVY_L2_EPHT89D" in message  # the mission dataset was asked too
    unknown = funnel.call("get_ephemeris", {"target": "MMS7", "time_range": DAY})
    assert unknown.status == "error"
    assert "Unknown body or spacecraft 'MMS7'" in (unknown.error or "")
    assert "MMS1" in (unknown.error or "")  # the known ones are listed


def test_sscweb_without_the_spacecraft_is_said(stands: Stands) -> None:
    result = stands.workspace.funnel.call(
        "get_ephemeris", {"target": "Cluster 3", "time_range": DAY}
    )
    assert result.status == "error"
    assert "Cannot locate CLUSTER-3" in (result.error or "")
    assert "sscweb cluster3" in (result.error or "")


def test_the_cli_locates_an_orbiter_in_gsm(stands: Stands, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xhelio.cli.main import app

    out = tmp_path / "mms1.csv"
    runner = CliRunner(env={"COLUMNS": "200"})
    result = runner.invoke(
        app, ["ephemeris", "MMS1", "--time", DAY, "--frame", "GSM", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "ephemeris.MMS1.GSM" in result.output and "sscweb mms1" in result.output
    written = pd.read_csv(out, comment="#")
    assert {"x [km]", "distance [km]"} <= set(written.columns)
    radius = written["distance [km]"].to_numpy() / EARTH_RADIUS_KM
    assert np.allclose(radius, 10.0, atol=0.01)
    unknown = runner.invoke(app, ["ephemeris", "MMS9", "--time", DAY])
    assert unknown.exit_code != 0 and "Unknown body or spacecraft 'MMS9'" in unknown.output


def _offline(workspace: Workspace, request: str) -> str:
    from xhelio.agents.offline.assistant import OfflineAssistant

    return OfflineAssistant(workspace).respond(request, threading.Event()).text


def test_offline_where_was_an_earth_orbiter(stands: Stands) -> None:
    where = _offline(stands.workspace, f"where was THEMIS-A on {DAY}")
    assert "THEMIS-A seen from EARTH in GSE" in where
    assert "13.00 Earth radii" in where  # the served orbit's radius
    assert "sscweb themisa" in where
    in_gsm = _offline(stands.workspace, f"position of MMS1 in GSM on {DAY}")
    assert "MMS1 seen from EARTH in GSM" in in_gsm and "10.00 Earth radii" in in_gsm
    apart = _offline(stands.workspace, f"where was MMS1 relative to THEMIS-A on {DAY}")
    first = pd.DatetimeIndex([pd.Timestamp(DAY, tz="UTC")])
    gap = orbit_gse_re(first, 10.0, 0.0) - orbit_gse_re(first, 13.0, 45.0)
    assert "MMS1 seen from THEMIS-A in GSE" in apart
    assert f"{np.linalg.norm(gap):.2f} Earth radii" in apart
