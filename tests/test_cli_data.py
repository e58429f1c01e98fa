"""`xhelio fetch`, `xhelio cache` and `xhelio plot` as a user runs them, over loopback HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import cdflib
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from typer.testing import CliRunner

from servers.cdas_server import CdasTestServer
from servers.hapi_server import HapiTestServer
from xhelio.cli.main import app
from xhelio.render.export import find_browser

runner = CliRunner(env={"COLUMNS": "200"})
ACE_CSV = "cdaweb_hapi_AC_H2_MFI_all_1997-09-02.csv"


@pytest.fixture
def hapi(real_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(real_data / ACE_CSV)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


@pytest.fixture
def cdas(real_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CdasTestServer]:
    with CdasTestServer() as server:
        server.add_file(
            "AC_K2_MFI",
            real_data / "ac_k2_mfi_20220101_v03.cdf",
            datetime(2022, 1, 1, tzinfo=UTC),
            datetime(2022, 1, 2, tzinfo=UTC),
        )
        monkeypatch.setenv("XHELIO_CDAS_URL", server.url)
        yield server


def test_fetch_to_csv_parquet_and_netcdf(hapi: HapiTestServer, tmp_path: Path) -> None:
    csv = tmp_path / "ace.csv"
    result = runner.invoke(
        app, ["fetch", "AC_H2_MFI", "Magnitude", "BGSEc", "--time", "1997-09-02", "--out", str(csv)]
    )
    assert result.exit_code == 0, result.output
    assert "AC_H2_MFI.Magnitude" in result.stdout and "24" in result.stdout
    frame = pd.read_csv(csv)
    # Vector components keep their own names (no `BGSEc.BGSEc_0` doubling), and every
    # header carries its units in a form pandas.read_csv reads by default.
    assert list(frame.columns) == [
        "time",
        "Magnitude [nT]",
        "BGSEc_0 [nT]",
        "BGSEc_1 [nT]",
        "BGSEc_2 [nT]",
    ]
    assert len(frame) == 24
    assert frame["time"].iloc[0] == "1997-09-02T00:00:00.000000Z"
    assert frame["Magnitude [nT]"].iloc[0] == pytest.approx(2.658)

    parquet = tmp_path / "ace.parquet"
    assert (
        runner.invoke(
            app, ["fetch", "AC_H2_MFI", "BGSEc", "-t", "1997-09-02", "-o", str(parquet)]
        ).exit_code
        == 0
    )
    stored = pd.read_parquet(parquet)
    assert isinstance(stored.index, pd.DatetimeIndex) and str(stored.index.tz) == "UTC"
    assert stored.shape == (24, 3)

    nc = tmp_path / "ace.nc"
    assert (
        runner.invoke(
            app, ["fetch", "AC_H2_MFI", "Magnitude", "BGSEc", "-t", "1997-09-02", "-o", str(nc)]
        ).exit_code
        == 0
    )
    with xr.open_dataset(nc) as dataset:
        assert dataset["Magnitude"].attrs["units"] == "nT"
        assert dataset["BGSEc"].shape == (24, 3)


def test_fetch_from_cdf_source_matches_cdflib(
    cdas: CdasTestServer, real_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "k2.csv"
    result = runner.invoke(
        app,
        [
            "fetch",
            "AC_K2_MFI",
            "Magnitude",
            "--time",
            "2022-01-01",
            "--source",
            "cdf",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    raw = cdflib.CDF(str(real_data / "ac_k2_mfi_20220101_v03.cdf"))
    expected = np.asarray(raw.varget("Magnitude"), dtype=float)
    assert len(frame) == len(expected) == 24
    np.testing.assert_array_equal(frame["Magnitude [nT]"].to_numpy(), expected)


def test_cache_info_and_clear(hapi: HapiTestServer) -> None:
    assert (
        runner.invoke(app, ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02"]).exit_code == 0
    )
    info = runner.invoke(app, ["cache", "info"])
    assert info.exit_code == 0 and "AC_H2_MFI" in info.stdout
    assert "of 2048 MB" in info.stdout  # the default XHELIO_CACHE_MAX_MB, as configured
    hapi.clear_requests()
    assert (
        runner.invoke(app, ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02"]).exit_code == 0
    )
    assert hapi.data_requests() == []  # served from the cache
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "Removed" in cleared.stdout
    assert (
        runner.invoke(app, ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02"]).exit_code == 0
    )
    assert len(hapi.data_requests()) == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["fetch", "AC_H2_MFX", "Magnitude", "-t", "1997-09-02"], "Unknown dataset 'AC_H2_MFX'"),
        (["fetch", "AC_H2_MFI", "Nope", "-t", "1997-09-02"], "has no parameter 'Nope'"),
        (["fetch", "AC_H2_MFI", "Magnitude", "-t", "sometime soon"], "Could not understand"),
        (["fetch", "AC_H2_MFI", "Magnitude", "-t", "1990-01-01"], "no data"),
        (["plot", "AC_H2_MFI.Magnitude", "-o", "x.png"], "--time"),
    ],
)
def test_user_errors_are_one_clear_line(
    hapi: HapiTestServer, args: list[str], expected: str
) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert expected in result.stderr
    assert "Traceback" not in result.output


def test_bad_output_name_is_refused_before_any_download(
    hapi: HapiTestServer, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("")
    for out in (tmp_path / "x.xlsx", tmp_path, tmp_path / "a-file" / "x.csv"):
        result = runner.invoke(
            app, ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02", "-o", str(out)]
        )
        assert result.exit_code == 1 and "Cannot " in result.stderr
        assert "Traceback" not in result.output
    assert hapi.requests == []


@pytest.mark.parametrize("source", ["hapi", "cdf"])
def test_server_down_is_a_clear_error(source: str) -> None:
    # Default retries: a refused connection is reported at once, never retried.
    args = ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02", "--source", source]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    setting = "XHELIO_HAPI_URL" if source == "hapi" else "XHELIO_CDAS_URL"
    assert "127.0.0.1:9" in result.stderr and setting in result.stderr
    assert "refused" in result.stderr and "attempts" not in result.stderr
    assert "Traceback" not in result.output


def test_server_url_without_scheme_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", "cdaweb.gsfc.nasa.gov/hapi")
    result = runner.invoke(app, ["fetch", "AC_H2_MFI", "Magnitude", "-t", "1997-09-02"])
    assert result.exit_code == 1
    assert "XHELIO_HAPI_URL" in result.stderr and "https://" in result.stderr
    assert "Traceback" not in result.output


def test_plot_html_and_png(hapi: HapiTestServer, tmp_path: Path) -> None:
    html = tmp_path / "ace.html"
    result = runner.invoke(
        app, ["plot", "AC_H2_MFI.Magnitude", "AC_H2_MFI.BGSEc", "-t", "1997-09-02", "-o", str(html)]
    )
    assert result.exit_code == 0, result.output
    text = html.read_text()
    assert "plotly" in text.lower() and "Magnitude" in text and "nT" in text
    if find_browser() is None:
        pytest.skip("no Chromium for PNG export (apt-get install chromium)")
    png = tmp_path / "ace.png"
    result = runner.invoke(app, ["plot", "AC_H2_MFI.Magnitude", "-t", "1997-09-02", "-o", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_xhelio_home_that_is_a_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("")
    monkeypatch.setenv("XHELIO_HOME", str(home))
    for args in (
        ["catalog", "search", "ACE"],
        ["cache", "info"],
        ["fetch", "AC_H2_MFI", "B", "-t", "2024"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, args
        assert "XHELIO_HOME" in result.stderr and "Traceback" not in result.output
