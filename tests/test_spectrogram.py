"""Spectrograms and multi-dimensional CDF data, through the reader, the renderer and the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import xarray as xr
from cdflib import cdfepoch
from cdflib.cdfwrite import CDF as CdfWriter
from typer.testing import CliRunner

from servers.cdas_server import CdasTestServer, CdfVariable, write_istp_cdf
from xhelio.cli.main import app
from xhelio.data.arrays import entry_from_parameter
from xhelio.data.store import DataStore
from xhelio.render.figure import render_plotly_json
from xhelio.sources.cdf_reader import read_cdf_parameters

runner = CliRunner(env={"COLUMNS": "200"})
DATASET = "AC_H2_ULE"  # a catalog id; the served file is generated here
MINUTE_NS = 60_000_000_000


def particle_file(folder: Path) -> Path:
    """One day of 1-min records with a 12-h gap: rank-2 flux, per-record bins, support data."""
    t0 = int(cdfepoch.compute_tt2000([2020, 1, 1]))
    minutes = np.concatenate([np.arange(0, 360), np.arange(1080, 1440)])  # gap 06:00-18:00
    epoch = t0 + minutes.astype(np.int64) * MINUTE_NS
    n = minutes.size
    low = np.geomspace(0.05, 5.0, 8).astype(np.float32)
    width = (low * 0.4).astype(np.float32)
    directions = np.array(["Sun", "Asun", "North", "South"])
    flux = np.empty((n, 4, 8), dtype=np.float32)
    for d in range(4):
        flux[:, d, :] = (
            (d + 1) * 1e4 * (low[None, :] ** -2) * (1 + 0.1 * np.sin(minutes / 30))[:, None]
        )
    energies = np.tile(np.geomspace(10, 1e4, 6).astype(np.float32), (n, 1))
    energies[n // 2 :] *= 2  # a mode change: the second half measures at twice the energy
    electrons = np.ones((n, 6), dtype=np.float32) * np.arange(1, 7, dtype=np.float32)
    longitude = np.linspace(-170, 170, n).astype(np.float32)
    return write_istp_cdf(
        folder / "ule_20200101_v01.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_TIME_TT2000, epoch),
            CdfVariable("Ion_Bins_Low_Energy", CdfWriter.CDF_REAL4, low, {"UNITS": "MeV"}, False),
            CdfVariable("Ion_Bins_Width", CdfWriter.CDF_REAL4, width, {"UNITS": "MeV"}, False),
            CdfVariable(
                "Look_Label",
                CdfWriter.CDF_CHAR,
                directions,
                {},
                record_varying=False,
                char_length=5,
            ),
            CdfVariable(
                "Ion_Flux",
                CdfWriter.CDF_REAL4,
                flux,
                {
                    "VAR_TYPE": "data",
                    "DEPEND_0": "Epoch",
                    "DEPEND_2": "Ion_Bins_Low_Energy",
                    "LABL_PTR_1": "Look_Label",
                    "UNITS": "cm!E-2!N s!E-1!N sr!E-1!N MeV!E-1!N",
                    "CATDESC": "Ion flux",
                    "FILLVAL": [-1e31, "CDF_REAL4"],
                },
            ),
            CdfVariable(
                "Electron_Energy",
                CdfWriter.CDF_REAL4,
                energies,
                {"DEPEND_0": "Epoch", "UNITS": "eV", "VAR_TYPE": "support_data"},
            ),
            CdfVariable(
                "Electron_Counts",
                CdfWriter.CDF_REAL4,
                electrons,
                {
                    "VAR_TYPE": "data",
                    "DEPEND_0": "Epoch",
                    "DEPEND_1": "Electron_Energy",
                    "DISPLAY_TYPE": "spectrogram",
                    "UNITS": "counts/s",
                    "CATDESC": "Electron count rate",
                },
            ),
            CdfVariable(
                "Longitude",
                CdfWriter.CDF_REAL4,
                longitude,
                {
                    "VAR_TYPE": "support_data",
                    "DEPEND_0": "Epoch",
                    "UNITS": "deg",
                    "VALIDMIN": [0.0, "CDF_REAL4"],
                    "VALIDMAX": [360.0, "CDF_REAL4"],
                    "FILLVAL": [-1e31, "CDF_REAL4"],
                },
            ),
        ],
    )


@pytest.fixture
def cdas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CdasTestServer]:
    with CdasTestServer() as server:
        server.add_file(
            DATASET,
            particle_file(tmp_path),
            datetime(2020, 1, 1, tzinfo=UTC),
            datetime(2020, 1, 2, tzinfo=UTC),
        )
        monkeypatch.setenv("XHELIO_CDAS_URL", server.url)
        yield server


def test_rank2_keeps_dimensions_and_lower_edges(tmp_path: Path) -> None:
    data = read_cdf_parameters(particle_file(tmp_path), DATASET, ["Ion_Flux"])["Ion_Flux"]
    entry = entry_from_parameter(DATASET, data)
    array = entry.data
    assert isinstance(array, xr.DataArray)
    assert array.dims == ("time", "Look_Label", "Ion_Bins_Low_Energy")
    assert list(array.coords["Look_Label_label"].values) == ["Sun", "Asun", "North", "South"]
    low = array.coords["Ion_Bins_Low_Energy_low"].to_numpy()
    high = array.coords["Ion_Bins_Low_Energy_high"].to_numpy()
    np.testing.assert_allclose(low, np.geomspace(0.05, 5.0, 8), rtol=1e-6)
    np.testing.assert_allclose(high, low * 1.4, rtol=1e-6)
    assert np.all(array.coords["Ion_Bins_Low_Energy"].to_numpy() > low)  # centres, not edges
    assert entry.meta["display_units"] == "cm^-2 s^-1 sr^-1 MeV^-1"
    assert entry.meta["units"] == "cm!E-2!N s!E-1!N sr!E-1!N MeV!E-1!N"


def test_default_spectrogram_reduces_and_leaves_gap_empty(tmp_path: Path) -> None:
    data = read_cdf_parameters(particle_file(tmp_path), DATASET, ["Ion_Flux"])["Ion_Flux"]
    store = DataStore()
    store.put(entry_from_parameter(DATASET, data))
    result = render_plotly_json(
        {"data": [{"data_label": f"{DATASET}.Ion_Flux", "mode": "lines"}]},
        store,
        point_budget=8 * 100,
    )
    trace = result.figure["data"][0]
    assert trace["type"] == "heatmap" and "mode" not in trace
    assert any("mean over Look_Label (4 values)" in n for n in result.notes)
    layout = result.figure["layout"]
    assert layout["yaxis"]["type"] == "log"  # 0.05 to 7 MeV spans two decades
    assert "log" in trace["colorbar"]["title"]["text"]  # a flux: log colour by default
    assert "cm<sup>-2</sup>" in trace["colorbar"]["title"]["text"]
    x = pd.DatetimeIndex(trace["x"])
    z = np.asarray(trace["z"], dtype=float)
    in_gap = [
        k
        for k in range(len(x) - 1)
        if bool(x[k] >= pd.Timestamp("2020-01-01T05:59"))
        and bool(x[k + 1] <= pd.Timestamp("2020-01-01T18:00"))
    ]
    assert in_gap, "the 12-hour gap must be one empty column"
    assert all(np.isnan(z[:, k]).all() for k in in_gap)
    # No column with colour spans into the gap: painted columns end by 06:00 or start at 18:00.
    painted = [k for k in range(len(x) - 1) if np.isfinite(z[:, k]).any()]
    assert all(
        x[k + 1] <= pd.Timestamp("2020-01-01T06:00:30")
        or x[k] >= pd.Timestamp("2020-01-01T17:59:30")
        for k in painted
    )
    select = render_plotly_json(
        {"data": [{"data_label": f"{DATASET}.Ion_Flux", "select": {"Look_Label": "North"}}]},
        store,
    )
    assert any("Look_Label = 'North'" in n for n in select.notes)


def test_per_record_bins_drawn_at_their_own_energies(tmp_path: Path) -> None:
    data = read_cdf_parameters(particle_file(tmp_path), DATASET, ["Electron_Counts"])
    store = DataStore()
    store.put(entry_from_parameter(DATASET, data["Electron_Counts"]))
    array = store.get(f"{DATASET}.Electron_Counts").data
    assert isinstance(array, xr.DataArray)
    centres = array.coords["Electron_Energy_centers"].to_numpy()
    assert centres[0, 0] == pytest.approx(10) and centres[-1, 0] == pytest.approx(20)
    result = render_plotly_json({"data": [{"data_label": f"{DATASET}.Electron_Counts"}]}, store)
    trace = result.figure["data"][0]
    y = np.asarray(trace["y"], dtype=float)
    z = np.asarray(trace["z"], dtype=float)
    mids = np.sqrt(y[:-1] * y[1:])
    first_column, last_column = z[:, 0], z[:, -1]
    # A low grid row (about 7 eV) is coloured early, empty after the mode change.
    low_row = int(np.argmin(np.abs(mids - 7)))
    assert np.isfinite(first_column[low_row]) and np.isnan(last_column[low_row])
    top_row = int(np.argmin(np.abs(mids - 3e4)))
    assert np.isnan(first_column[top_row]) and np.isfinite(last_column[top_row])


def test_one_element_of_every_dimension_is_a_line(tmp_path: Path) -> None:
    data = read_cdf_parameters(particle_file(tmp_path), DATASET, ["Ion_Flux"])["Ion_Flux"]
    store = DataStore()
    store.put(entry_from_parameter(DATASET, data))
    choice = {"Look_Label": "Asun", "Ion_Bins_Low_Energy": 2}
    result = render_plotly_json(
        {"data": [{"data_label": f"{DATASET}.Ion_Flux", "select": choice}]}, store
    )
    (trace,) = result.figure["data"]
    assert trace["type"] in {"scatter", "scattergl"}
    assert "Look_Label=Asun" in trace["name"]
    array = store.get(f"{DATASET}.Ion_Flux").data
    assert isinstance(array, xr.DataArray)
    expected = array.isel(Look_Label=1, Ion_Bins_Low_Energy=2).to_numpy()
    y = np.asarray([np.nan if v is None else v for v in trace["y"]], dtype=float)
    np.testing.assert_allclose(y[np.isfinite(y)], expected, rtol=1e-6)  # NaN only at the gap
    assert "cm<sup>-2</sup>" in result.figure["layout"]["yaxis"]["title"]["text"]


def _axis_type(html: Path, axis: str) -> object:
    """The type of `axis` in the layout Plotly draws from the written HTML."""
    text = html.read_text()
    start = text.index(f'"{axis}":{{', text.rindex("Plotly.newPlot("))  # after plotly.js
    decoded, _ = json.JSONDecoder().raw_decode(text, start + len(axis) + 3)
    return decoded.get("type")


def test_cli_plot_fetch_support_variable_and_outputs(cdas: CdasTestServer, tmp_path: Path) -> None:
    html = tmp_path / "flux.html"
    args = ["plot", f"{DATASET}.Ion_Flux", "--source", "cdf", "-t", "2020-01-01", "-o", str(html)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "mean over Look_Label" in result.output
    assert "heatmap" in html.read_text()
    # The renderer alone decides a 2-D label is a heatmap: no line keys to drop.
    assert "Ignored" not in result.output
    # --log-y: the line panel's axis and the heatmap's bins; --reduce reaches the heatmap.
    lines = [*args[:2], f"{DATASET}.Longitude", *args[2:], "--log-y", "--reduce", "max"]
    logged = runner.invoke(app, lines)
    assert logged.exit_code == 0, logged.output
    assert "max over Look_Label" in logged.output and "Ignored" not in logged.output
    assert [_axis_type(html, y) for y in ("yaxis", "yaxis2")] == ["log", "log"]
    # --select applies to the data that has that dimension, not to every panel.
    both = [*args[:2], f"{DATASET}.Electron_Counts", *args[2:], "--select", "Look_Label=Sun"]
    result = runner.invoke(app, both)
    assert result.exit_code == 0, result.output
    assert "Look_Label = 'Sun'" in result.output and "mean over" not in result.output
    # A support variable is fetchable by name; valid ranges only on request, counted.
    out = tmp_path / "lon.csv"
    base = ["fetch", DATASET, "Longitude", "--source", "cdf", "-t", "2020-01-01"]
    result = runner.invoke(app, [*base, "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert list(table.columns) == ["time", "Longitude [deg]"]
    assert int((table["Longitude [deg]"] < 0).sum()) == 360
    masked = runner.invoke(app, [*base, "--valid-range"])
    assert masked.exit_code == 0, masked.output
    assert "masked 360 value(s) outside VALIDMIN/VALIDMAX" in masked.output.replace("\n", "")
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["citations"][0]["dataset"] == DATASET
    assert meta["citations"][0]["doi"].startswith("10.")
    shown = runner.invoke(app, ["catalog", "show", DATASET])
    assert "Longitude" in shown.output
    parquet = tmp_path / "flux.parquet"
    result = runner.invoke(
        app,
        ["fetch", DATASET, "Ion_Flux", "--source", "cdf", "-t", "2020-01-01", "-o", str(parquet)],
    )
    assert result.exit_code == 0, result.output
    schema = pq.read_schema(parquet)
    stored = json.loads(schema.metadata[b"xhelio"])
    flux = stored["parameters"][f"{DATASET}.Ion_Flux"]
    assert flux["units"] == "cm^-2 s^-1 sr^-1 MeV^-1"
    assert [d["name"] for d in flux["dims"]] == ["Look_Label", "Ion_Bins_Low_Energy"]
    # The files came from the loopback CDAS server, not CDAWeb: the citation says so.
    assert stored["citations"][0]["provider"].startswith("the server at 127.0.0.1")
    netcdf = tmp_path / "flux.nc"
    result = runner.invoke(
        app,
        ["fetch", DATASET, "Ion_Flux", "--source", "cdf", "-t", "2020-01-01", "-o", str(netcdf)],
    )
    assert result.exit_code == 0, result.output
    with xr.open_dataset(netcdf) as opened:
        assert opened["Ion_Flux"].dims == ("time", "Look_Label", "Ion_Bins_Low_Energy")
        assert opened["Ion_Flux"].attrs["units"] == "cm^-2 s^-1 sr^-1 MeV^-1"
        assert opened.attrs["dataset"] == DATASET and "doi" in opened.attrs


def _tool(name: str, args: dict[str, object]) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["tool", name, json.dumps(args), "--session", "spec"])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, {"stdout": result.stdout}


def test_tools_fetch_choose_a_slice_and_save_with_meaning(cdas: CdasTestServer) -> None:
    code, fetched = _tool(
        "fetch_data",
        {
            "dataset_id": DATASET,
            "parameter_id": "Ion_Flux",
            "time_range": "2020-01-01",
            "source": "cdf",
        },
    )
    assert code == 0, fetched
    code, listed = _tool("list_fetched_data", {})
    assert code == 0, listed
    entry = listed["entries"][0]  # type: ignore[index]
    assert entry["dims"] == {"time": 720, "Look_Label": 4, "Ion_Bins_Low_Energy": 8}
    assert entry["citation"]["dataset"] == DATASET
    # The visualization agent's tool: a line-styled trace still becomes a spectrogram,
    # and a chosen look direction replaces the default mean.
    figure = {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"width": 1},
                "data_label": f"{DATASET}.Ion_Flux",
                "select": {"Look_Label": "Asun"},
            }
        ]
    }
    code, rendered = _tool("render_plotly_json", {"figure": figure})
    assert code == 0, rendered
    assert rendered["traces"][0]["type"] == "heatmap"  # type: ignore[index]
    notes = " ".join(rendered["notes"])  # type: ignore[arg-type]
    assert "Look_Label = 'Asun'" in notes and "mean over" not in notes
    code, preview = _tool("preview_data", {"label": f"{DATASET}.Ion_Flux", "n": 1})
    assert code == 0, preview
    first = preview["head"][0]  # type: ignore[index]
    assert "Ion_Flux[Look_Label=Sun,Ion_Bins_Low_Energy=0.0591608]" in first
    code, saved = _tool("save_data", {"label": f"{DATASET}.Ion_Flux", "format": "netcdf"})
    assert code == 0, saved
    with xr.open_dataset(str(saved["path"])) as opened:
        assert opened["Ion_Flux"].dims == ("time", "Look_Label", "Ion_Bins_Low_Energy")
        assert opened.attrs["dataset"] == DATASET
