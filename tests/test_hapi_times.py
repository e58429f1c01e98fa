"""HAPI time forms, leap seconds and bins over a loopback HAPI server and the CLI.

Covers every time form of the spec, startDate/stopDate, constant, time-varying and
per-dimension bins, and the valid-range option.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer
from xhelio.catalog.hapi_info import hapi_times_to_ns, parse_hapi_time
from xhelio.cli.main import app
from xhelio.errors import ServerError
from xhelio.tools.workspace import open_workspace

runner = CliRunner(env={"COLUMNS": "200"})
DAY_NS = 86_400_000_000_000


def _info(start: str, stop: str, parameters: list[dict[str, Any]]) -> dict[str, Any]:
    time = {"name": "Time", "type": "isotime", "units": "UTC", "fill": None}
    return {
        "startDate": start,
        "stopDate": stop,
        "cadence": "PT1M",
        "parameters": [time, *parameters],
    }


def _ns(text: str) -> int:
    return int(pd.Timestamp(text).as_unit("ns").value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-01-01Z", "2020-01-01T00:00:00"),
        ("2020-01-01", "2020-01-01T00:00:00"),
        ("2020-001T00:00Z", "2020-01-01T00:00:00"),
        ("2020-366T23Z", "2020-12-31T23:00:00"),
        ("2020-060T12:30:15.5Z", "2020-02-29T12:30:15.5"),
        ("2020-02-29T12:30:15.123456789Z", "2020-02-29T12:30:15.123456789"),
        ("2016-12-31T23:59:60.500Z", "2017-01-01T00:00:00.5"),
        ("1970-01-01Z", "1970-01-01T00:00:00"),
    ],
)
def test_every_hapi_time_form(text: str, expected: str) -> None:
    times, leap = hapi_times_to_ns([text])
    assert int(times[0]) == _ns(expected)
    assert leap == (1 if ":60" in text else 0)
    floored = pd.Timestamp(expected, tz="UTC").floor("us")
    assert parse_hapi_time(text) == datetime.fromisoformat(floored.isoformat())


FORMS = {
    "date_only": ["2020-01-01Z", "2020-01-02Z", "2020-01-03Z"],
    "ordinal_minutes": ["2020-001T00:00Z", "2020-001T00:01Z", "2020-001T00:02Z"],
    "nanoseconds": [
        "2020-01-01T00:00:00.000000001Z",
        "2020-01-01T00:00:00.000000002Z",
        "2020-01-01T00:00:00.000000003Z",
    ],
    "leap_second": [
        "2016-12-31T23:59:59.500Z",
        "2016-12-31T23:59:60.500Z",
        "2017-01-01T00:00:01.500Z",
    ],
}


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with HapiTestServer(version="3.3") as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def _refresh(server: HapiTestServer) -> None:
    result = runner.invoke(app, ["catalog", "refresh", "--server", server.url])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("form", sorted(FORMS))
def test_cli_fetch_reads_every_time_form(form: str, hapi: HapiTestServer, tmp_path: Path) -> None:
    rows = FORMS[form]
    expected = hapi_times_to_ns(rows)[0]
    info = _info(
        "1970-01-01Z",
        "2021-001Z",
        [{"name": "B", "type": "double", "units": "nT", "fill": "-1e31"}],
    )
    hapi.add_raw_csv(
        f"T_{form.upper()}", info, [f"{t},{k + 1}.5" for k, t in enumerate(rows)], expected
    )
    _refresh(hapi)
    out = tmp_path / "b.csv"
    result = runner.invoke(
        app,
        [
            "fetch",
            f"T_{form.upper()}",
            "B",
            "--source",
            "hapi",
            "-t",
            "2016-12-31 to 2020-01-04",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert table["B [nT]"].tolist() == [1.5, 2.5, 3.5]
    got = pd.DatetimeIndex(pd.to_datetime(table["time"], utc=True)).as_unit("ns").asi8
    if form != "nanoseconds":  # CSV writes microseconds; the nanoseconds are checked below
        np.testing.assert_array_equal(got, expected)
    if form == "leap_second":
        assert "leap second" in result.output.replace("\n", " ")


def test_nanoseconds_kept_in_memory(hapi: HapiTestServer) -> None:
    rows = FORMS["nanoseconds"]
    info = _info("2020-01-01Z", "2020-01-02Z", [{"name": "B", "type": "double", "units": "nT"}])
    hapi.add_raw_csv("T_NS", info, [f"{t},1" for t in rows], hapi_times_to_ns(rows)[0])
    _refresh(hapi)
    workspace = open_workspace(None, ephemeral=True)
    try:
        workspace.context.fetcher("hapi").fetch("T_NS", ["B"], "2020-01-01 to 2020-01-02")
        frame = workspace.session.store.get("T_NS.B").data
        assert isinstance(frame, pd.DataFrame)
        stamps = pd.DatetimeIndex(frame.index).as_unit("ns").asi8
        assert (stamps - stamps[0]).tolist() == [0, 1, 2]
    finally:
        workspace.close()


def test_start_date_1970_is_a_start_not_none(hapi: HapiTestServer) -> None:
    info = _info("1970-01-01Z", "1970-002T00:00Z", [{"name": "B", "type": "double", "units": "nT"}])
    hapi.add_raw_csv("T_EPOCH", info, ["1970-01-01T00:00Z,1"], [0])
    _refresh(hapi)
    shown = runner.invoke(app, ["catalog", "show", "T_EPOCH"])
    assert shown.exit_code == 0, shown.output
    assert "1970-01-01" in shown.output and "1970-01-02" in shown.output


def _frame(start: str, periods: int, columns: list[str], values: np.ndarray) -> pd.DataFrame:
    index = pd.date_range(start, periods=periods, freq="1min", tz="UTC")
    return pd.DataFrame(values, index=index, columns=columns)


def test_time_varying_bins_and_two_dimensional_bins(hapi: HapiTestServer, tmp_path: Path) -> None:
    n, m = 120, 5
    energies = np.tile(np.geomspace(10, 1e4, m), (n, 1))
    energies[n // 2 :] *= 3
    flux = np.outer(np.arange(1, n + 1), np.arange(1, m + 1)).astype(float)
    pitch = np.arange(n * 2 * 3, dtype=float).reshape(n, 6)
    info = _info(
        "2020-01-01Z",
        "2020-01-02Z",
        [
            {
                "name": "Flux",
                "type": "double",
                "units": "1/(cm^2 s sr eV)",
                "size": [m],
                "fill": "-1e31",
                "description": "Electron flux",
                "bins": [{"name": "energy", "units": "eV", "centers": "Energy"}],
            },
            {"name": "Energy", "type": "double", "units": "eV", "size": [m], "fill": "-1e31"},
            {
                "name": "PAD",
                "type": "double",
                "units": "counts",
                "size": [2, 3],
                "fill": "-1e31",
                "bins": [
                    {"name": "species", "units": "", "centers": [1, 2]},
                    {
                        "name": "pitch_angle",
                        "units": "deg",
                        "ranges": [[0, 60], [60, 120], [120, 180]],
                    },
                ],
            },
        ],
    )
    columns = (
        [f"F{i}" for i in range(m)] + [f"E{i}" for i in range(m)] + [f"P{i}" for i in range(6)]
    )
    hapi.add_dataset(
        "T_BINS", info, _frame("2020-01-01", n, columns, np.hstack([flux, energies, pitch]))
    )
    _refresh(hapi)
    workspace = open_workspace(None, ephemeral=True)
    try:
        workspace.context.fetcher("hapi").fetch(
            "T_BINS", ["Flux", "PAD"], "2020-01-01 to 2020-01-02"
        )
        flux_entry = workspace.session.store.get("T_BINS.Flux")
        array = flux_entry.data
        assert isinstance(array, xr.DataArray)
        centres = array.coords["energy_centers"].to_numpy()
        np.testing.assert_allclose(centres[0], np.geomspace(10, 1e4, m))
        np.testing.assert_allclose(centres[-1], 3 * np.geomspace(10, 1e4, m))
        pad = workspace.session.store.get("T_BINS.PAD").data
        assert isinstance(pad, xr.DataArray)
        assert pad.dims == ("time", "species", "pitch_angle")
        np.testing.assert_array_equal(pad.coords["pitch_angle_low"].to_numpy(), [0, 60, 120])
        np.testing.assert_array_equal(pad.to_numpy()[1], pitch[1].reshape(2, 3))
    finally:
        workspace.close()
    html = tmp_path / "flux.html"
    result = runner.invoke(
        app,
        [
            "plot",
            "T_BINS.Flux",
            "T_BINS.PAD",
            "--source",
            "hapi",
            "-t",
            "2020-01-01",
            "-o",
            str(html),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "mean over species" in result.output
    assert html.read_text().count('"type":"heatmap"') == 2


def test_valid_range_option_reports_for_hapi(hapi: HapiTestServer) -> None:
    info = _info("2020-01-01Z", "2020-01-02Z", [{"name": "B", "type": "double", "units": "nT"}])
    hapi.add_dataset("T_VR", info, _frame("2020-01-01", 10, ["B"], np.arange(10.0)[:, None]))
    _refresh(hapi)
    result = runner.invoke(
        app, ["fetch", "T_VR", "B", "--source", "hapi", "-t", "2020-01-01", "--valid-range"]
    )
    assert result.exit_code == 0, result.output
    assert "no VALIDMIN/VALIDMAX, so no value was masked" in result.output.replace("\n", "")


@pytest.mark.parametrize(
    "text",
    [
        "2020-01-01Z",
        "2020-001T00:00Z",
        "2016-12-31T23:59:60.500Z",
        "1970-01-01Z",
        "2020-060T1234",
        "2001-01-01T00:00:00.123456789123Z",
        " 2010-01-01T00:00:00Z\x00",
        "2020-13-01",
        "2019-02-29",
        "2020-01-01 00:00",
        "yesterday",
    ],
)
def test_one_time_reads_as_the_vectorised_reader_does(text: str) -> None:
    """Catalog loading parses single dates with a scalar path: it must agree exactly."""
    try:
        ns, _ = hapi_times_to_ns([text])
    except ServerError:
        with pytest.raises(ServerError):
            parse_hapi_time(text)
        return
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    assert parse_hapi_time(text) == epoch + timedelta(microseconds=int(ns[0]) // 1000)
