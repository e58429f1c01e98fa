"""Resolving data_label figures: labels, vectors, heatmaps, panels, styling, validation."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.data.arrays import entry_from_parameter
from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore, UnknownLabelError
from xhelio.errors import NoDataError, UserError
from xhelio.render.figure import render_plotly_json, resolve_data_label
from xhelio.sources.cdf_reader import read_cdf_parameters
from xhelio.timerange import TimeRange

START = pd.Timestamp("2024-01-01", tz="UTC")


def _vector_entry(n: int = 600) -> DataEntry:
    times = pd.date_range(START, periods=n, freq="1min")
    phase = np.arange(n) / 40
    frame = pd.DataFrame(
        {"Bx GSE": np.sin(phase), "By GSE": np.cos(phase), "Bz GSE": 0.5 * np.sin(2 * phase)},
        index=times,
    )
    return DataEntry(
        label="AC_H2_MFI.BGSEc",
        data=frame,
        units=dict.fromkeys(frame.columns, "nT"),
        source_dataset="AC_H2_MFI",
        source_parameter="BGSEc",
    )


def _scalar_entry(label: str, column: str, unit: str, n: int = 600) -> DataEntry:
    times = pd.date_range(START, periods=n, freq="1min")
    frame = pd.DataFrame({column: 400 + np.arange(n, dtype=float)}, index=times)
    dataset, _, parameter = label.rpartition(".")
    return DataEntry(
        label, frame, {column: unit}, source_dataset=dataset, source_parameter=parameter
    )


def _spectrogram_entry(n_time: int = 300, n_bins: int = 8) -> DataEntry:
    times = pd.date_range("2024-01-01", periods=n_time, freq="1min").to_numpy()
    energies = np.geomspace(10, 10_000, n_bins)
    values = np.outer(np.arange(1, n_time + 1), np.arange(1, n_bins + 1)).astype(float)
    array = xr.DataArray(
        values,
        dims=("time", "energy"),
        coords={"time": times, "energy": energies},
        name="FLUX",
        attrs={"units": "eV/cm2-s-sr-eV"},
    )
    array.coords["energy"].attrs["units"] = "eV"
    return DataEntry(
        "PSP_SWP_SPI.FLUX",
        array,
        {"FLUX": "eV/cm2-s-sr-eV"},
        source_dataset="PSP_SWP_SPI",
        source_parameter="FLUX",
    )


@pytest.fixture
def store() -> DataStore:
    store = DataStore()
    store.put(_vector_entry())
    store.put(_scalar_entry("AC_H0_SWE.Vp", "Vp", "km/s"))
    store.put(_scalar_entry("AC_H2_MFI.Magnitude", "Magnitude", "nT"))
    store.put(_spectrogram_entry())
    return store


def _layout(result: Any) -> dict[str, Any]:
    layout: dict[str, Any] = result.figure["layout"]
    return layout


def test_vector_becomes_one_styled_trace_per_component(store: DataStore) -> None:
    result = render_plotly_json(
        {"data": [{"data_label": "AC_H2_MFI.BGSEc", "line": {"width": 3, "dash": "dot"}}]},
        store,
    )
    traces = result.figure["data"]
    assert [t["name"] for t in traces] == ["Bx GSE", "By GSE", "Bz GSE"]
    assert all(t["line"]["width"] == 3 and t["line"]["dash"] == "dot" for t in traces)
    assert len({t["line"]["color"] for t in traces}) == 3
    entry = store.get("AC_H2_MFI.BGSEc")
    assert isinstance(entry.data, pd.DataFrame)
    np.testing.assert_allclose(traces[1]["y"], entry.data["By GSE"].to_numpy())
    assert _layout(result)["yaxis"]["title"]["text"] == "BGSEc (nT)"


def test_label_dot_column_uses_longest_stored_label(store: DataStore) -> None:
    # A label that is itself a prefix-with-dot of another label must not steal the match.
    times = pd.date_range(START, periods=5, freq="1h")
    store.put(DataEntry("AC_H2_MFI.BGSEc.smooth", pd.DataFrame({"Bx GSE": np.ones(5)}, times)))
    entry, column = resolve_data_label(store, "AC_H2_MFI.BGSEc.smooth.Bx GSE")
    assert entry.label == "AC_H2_MFI.BGSEc.smooth"
    assert column == "Bx GSE"
    entry, column = resolve_data_label(store, "AC_H2_MFI.BGSEc.By GSE")
    assert (entry.label, column) == ("AC_H2_MFI.BGSEc", "By GSE")
    result = render_plotly_json({"data": [{"data_label": "AC_H2_MFI.BGSEc.bz gse"}]}, store)
    assert len(result.figure["data"]) == 1
    assert result.traces[0].column == "Bz GSE"
    result = render_plotly_json({"data": [{"data_label": "AC_H2_MFI.BGSEc.0"}]}, store)
    assert result.traces[0].column == "Bx GSE"


def test_unknown_label_lists_what_is_in_memory(store: DataStore) -> None:
    with pytest.raises(UnknownLabelError) as info:
        render_plotly_json({"data": [{"data_label": "WI_H0_MFI.B3GSE"}]}, store)
    message = str(info.value)
    assert "WI_H0_MFI.B3GSE" in message
    assert "AC_H2_MFI.BGSEc" in message and "AC_H0_SWE.Vp" in message


def test_unknown_column_lists_columns(store: DataStore) -> None:
    with pytest.raises(UserError) as info:
        render_plotly_json({"data": [{"data_label": "AC_H2_MFI.BGSEc.Bq"}]}, store)
    message = str(info.value)
    assert "'Bq'" in message and "Bx GSE, By GSE, Bz GSE" in message


def test_invalid_trace_property_is_named_briefly(store: DataStore) -> None:
    with pytest.raises(UserError) as info:
        render_plotly_json(
            {"data": [{"data_label": "AC_H0_SWE.Vp", "line": {"colr": "red"}}]}, store
        )
    message = str(info.value)
    assert "'colr'" in message and '"color"' in message
    assert "Trace 0" in message
    assert len(message) < 450


def test_invalid_layout_value_and_trace_type(store: DataStore) -> None:
    with pytest.raises(UserError, match=r"Layout: .*'type' property of layout\.yaxis"):
        render_plotly_json(
            {"data": [{"data_label": "AC_H0_SWE.Vp"}], "layout": {"yaxis": {"type": "logg"}}},
            store,
        )
    with pytest.raises(UserError, match="unknown type 'scater'"):
        render_plotly_json({"data": [{"data_label": "AC_H0_SWE.Vp", "type": "scater"}]}, store)
    with pytest.raises(UserError, match="Unknown top-level figure key"):
        render_plotly_json({"traces": []}, store)


def test_default_styling_and_llm_overrides(store: DataStore) -> None:
    layout = _layout(render_plotly_json({"data": [{"data_label": "AC_H0_SWE.Vp"}]}, store))
    assert layout["paper_bgcolor"] == "white" and layout["plot_bgcolor"] == "white"
    assert layout["font"]["color"] == "#222222"
    assert layout["autosize"] is False
    assert (layout["width"], layout["height"]) == (1100, 300)
    assert layout["xaxis"]["type"] == "date"
    assert layout["xaxis"]["title"]["text"] == "Time (UTC)"
    assert layout["yaxis"]["title"]["text"] == "Vp (km/s)"
    custom = _layout(
        render_plotly_json(
            {
                "data": [{"data_label": "AC_H0_SWE.Vp"}],
                "layout": {"width": 800, "height": 450, "yaxis": {"title": {"text": "Speed"}}},
            },
            store,
        )
    )
    assert (custom["width"], custom["height"]) == (800, 450)
    assert custom["yaxis"]["title"]["text"] == "Speed"


def test_standard_plotly_yaxis2_makes_stacked_panels_sharing_time(store: DataStore) -> None:
    result = render_plotly_json(
        {
            "data": [
                {"data_label": "AC_H2_MFI.Magnitude"},
                {"data_label": "AC_H0_SWE.Vp", "yaxis": "y2"},
                {"data_label": "PSP_SWP_SPI.FLUX", "yaxis": "y3"},
            ],
            "layout": {"yaxis2": {"title": {"text": "V"}}},
        },
        store,
    )
    layout = _layout(result)
    assert result.panels == 3
    assert layout["height"] == 900
    domains = [layout[k]["domain"] for k in ("yaxis", "yaxis2", "yaxis3")]
    assert domains[0][0] > domains[1][1] and domains[1][0] > domains[2][1]
    x_axes = [t["xaxis"] for t in result.figure["data"]]
    assert x_axes == ["x", "x2", "x3"]
    assert layout["xaxis2"]["matches"] == "x" and layout["xaxis3"]["matches"] == "x"
    assert layout["xaxis"]["showticklabels"] is False
    assert "showticklabels" not in layout["xaxis3"]
    assert layout["yaxis2"]["title"]["text"] == "V"
    assert layout["yaxis3"]["title"]["text"] == "energy (eV)"


def test_panels_naming_their_own_x_axes_are_anchored_and_share_time(store: DataStore) -> None:
    # The usual Plotly idiom: the second panel's traces name xaxis "x2" and yaxis "y2".
    result = render_plotly_json(
        {
            "data": [
                {"data_label": "AC_H2_MFI.BGSEc"},
                {"data_label": "AC_H0_SWE.Vp", "xaxis": "x2", "yaxis": "y2"},
            ],
            "layout": {"title": {"text": "ACE"}},
        },
        store,
    )
    layout = _layout(result)
    assert result.panels == 2 and layout["height"] == 600
    assert [t["xaxis"] for t in result.figure["data"]] == ["x", "x", "x", "x2"]
    assert layout["xaxis"]["anchor"] == "y" and layout["xaxis2"]["anchor"] == "y2"
    assert layout["yaxis2"]["anchor"] == "x2"
    assert layout["xaxis2"]["matches"] == "x"
    # Only the bottom panel carries the time tick labels and the "Time (UTC)" title.
    assert layout["xaxis"]["showticklabels"] is False and "title" not in layout["xaxis"]
    assert layout["xaxis2"]["title"]["text"] == "Time (UTC)"


def test_panels_hint_and_overlaying_axis(store: DataStore) -> None:
    result = render_plotly_json(
        {
            "panels": [
                {"traces": [{"data_label": "AC_H2_MFI.BGSEc"}], "yaxis": {"range": [-2, 2]}},
                {"traces": [{"data_label": "AC_H0_SWE.Vp"}]},
            ],
            "data": [{"data_label": "AC_H2_MFI.Magnitude", "yaxis": "y3"}],
            "layout": {"yaxis3": {"overlaying": "y2", "side": "right"}},
        },
        store,
    )
    layout = _layout(result)
    assert result.panels == 2  # y3 overlays panel 2 instead of making a third panel
    assert layout["yaxis"]["range"] == [-2, 2]
    assert "domain" not in layout["yaxis3"]
    assert {t["xaxis"] for t in result.figure["data"] if t.get("yaxis") in ("y2", "y3")} == {"x2"}
    assert layout["yaxis3"]["title"]["text"] == "Magnitude (nT)"


def test_model_domains_are_kept(store: DataStore) -> None:
    layout = _layout(
        render_plotly_json(
            {
                "data": [
                    {"data_label": "AC_H2_MFI.Magnitude"},
                    {"data_label": "AC_H0_SWE.Vp", "yaxis": "y2"},
                ],
                "layout": {"yaxis": {"domain": [0.6, 1]}, "yaxis2": {"domain": [0, 0.4]}},
            },
            store,
        )
    )
    assert layout["yaxis"]["domain"] == [0.6, 1]
    assert layout["yaxis2"]["domain"] == [0, 0.4]


def test_grid_layout_gets_height_per_row_and_matching_time_axes(store: DataStore) -> None:
    layout = _layout(
        render_plotly_json(
            {
                "data": [
                    {"data_label": "AC_H2_MFI.Magnitude"},
                    {"data_label": "AC_H0_SWE.Vp", "xaxis": "x2", "yaxis": "y2"},
                ],
                "layout": {"grid": {"rows": 2, "columns": 1, "pattern": "independent"}},
            },
            store,
        )
    )
    assert layout["height"] == 600
    assert layout["xaxis2"]["matches"] == "x"


def test_mixed_units_in_one_panel_are_called_out(store: DataStore) -> None:
    result = render_plotly_json(
        {"data": [{"data_label": "AC_H2_MFI.Magnitude"}, {"data_label": "AC_H0_SWE.Vp"}]}, store
    )
    title = _layout(result)["yaxis"]["title"]["text"].replace("<br>", " ")
    assert "nT" in title and "km/s" in title and "mixed units" in title
    assert any("mixes units" in note for note in result.notes)


def test_one_unit_written_two_ways_is_not_mixed(store: DataStore) -> None:
    store.put(_scalar_entry("OMNI_HRO_1MIN.BF1", "BF1", "nT (1min)"))
    store.put(_scalar_entry("AC_H0_SWE.Np", "Np", "#/cc"))
    store.put(_scalar_entry("WI_K0_SWE.Np", "Np", "cm^{-3}"))
    field = render_plotly_json(
        {"data": [{"data_label": "AC_H2_MFI.Magnitude"}, {"data_label": "OMNI_HRO_1MIN.BF1"}]},
        store,
    )
    density = render_plotly_json(
        {"data": [{"data_label": "AC_H0_SWE.Np"}, {"data_label": "WI_K0_SWE.Np"}]}, store
    )
    assert not field.notes and not density.notes
    assert _layout(field)["yaxis"]["title"]["text"].endswith("(nT)")
    assert _layout(density)["yaxis"]["title"]["text"].endswith("(cm<sup>-3</sup>)")


def test_generic_hapi_component_columns_get_frame_names() -> None:
    store = DataStore()
    times = pd.date_range(START, periods=50, freq="1min")
    for parameter in ("BGSEc", "psp_fld_l2_mag_RTN_1min", "Vp"):
        columns = [f"{parameter}_{i}" for i in range(3)]
        frame = pd.DataFrame(np.ones((50, 3)), index=times, columns=columns)
        store.put(
            DataEntry(f"DS.{parameter}", frame, dict.fromkeys(columns, "nT"), "DS", parameter)
        )
    names = [
        [
            t["name"]
            for t in render_plotly_json({"data": [{"data_label": label}]}, store).figure["data"]
        ]
        for label in ("DS.BGSEc", "DS.psp_fld_l2_mag_RTN_1min", "DS.Vp")
    ]
    assert names[0] == ["Bx GSE", "By GSE", "Bz GSE"]
    assert names[1] == ["BR RTN", "BT RTN", "BN RTN"]
    assert names[2] == ["Vp_0", "Vp_1", "Vp_2"]  # no frame in the name: no guess


def test_heatmap_from_data_array(store: DataStore) -> None:
    result = render_plotly_json(
        {"data": [{"data_label": "PSP_SWP_SPI.FLUX", "log_color": True, "log_y": True}]}, store
    )
    trace = result.figure["data"][0]
    entry = store.get("PSP_SWP_SPI.FLUX")
    assert isinstance(entry.data, xr.DataArray)
    values = entry.data.to_numpy()
    assert trace["type"] == "heatmap"
    assert len(trace["z"]) == values.shape[1] and len(trace["z"][0]) == values.shape[0]
    assert trace["z"][3][17] == pytest.approx(np.log10(values[17, 3]))
    # y holds cell edges (log-spaced bins: geometric midpoints), one more than the bins.
    edges = np.asarray(trace["y"], dtype=float)
    np.testing.assert_allclose(np.sqrt(edges[:-1] * edges[1:]), entry.data.coords["energy"])
    # x holds time edges: half a step before the first record to half after the last.
    times = pd.DatetimeIndex(entry.data.coords["time"].to_numpy())
    step = times[1] - times[0]
    assert pd.Timestamp(trace["x"][0]) == times[0] - step / 2
    assert len(trace["x"]) == values.shape[0] + 1
    assert "log" in trace["colorbar"]["title"]["text"]
    assert "eV/cm2-s-sr-eV" in trace["colorbar"]["title"]["text"]
    layout = _layout(result)
    assert layout["yaxis"]["type"] == "log"
    assert layout["yaxis"]["title"]["text"] == "energy (eV)"


def test_long_heatmap_is_averaged_in_time_within_budget() -> None:
    store = DataStore()
    store.put(_spectrogram_entry(n_time=40_000, n_bins=16))
    result = render_plotly_json(
        {"data": [{"data_label": "PSP_SWP_SPI.FLUX", "log_color": False}]},
        store,
        point_budget=20_000,
    )
    trace = result.figure["data"][0]
    columns = len(trace["x"]) - 1  # x holds column edges
    assert columns * 16 <= 20_000
    assert len(trace["z"][0]) == columns
    # Column k averages an equal-count block of rows; values are row*bin, so the mean of
    # the first block in bin 0 is the mean of its row numbers.
    block = -(-40_000 // columns)
    assert trace["z"][0][0] == pytest.approx(np.mean(np.arange(1, block + 1)))


def test_dataframe_flagged_as_spectrogram() -> None:
    times = pd.date_range(START, periods=50, freq="1min")
    frame = pd.DataFrame(np.ones((50, 4)), index=times, columns=["a", "b", "c", "d"])
    frame.attrs.update(spectrogram=True, bins=[1.0, 2.0, 4.0, 8.0], bins_name="f", bins_units="Hz")
    store = DataStore()
    store.put(DataEntry("X.PSD", frame, {"a": "nT2/Hz"}))
    result = render_plotly_json({"data": [{"data_label": "X.PSD"}]}, store)
    trace = result.figure["data"][0]
    assert trace["type"] == "heatmap"
    assert trace["y"] == [0.5, 1.5, 3.0, 6.0, 10.0]  # cell edges between the bins
    assert _layout(result)["yaxis"]["title"]["text"] == "f (Hz)"


def test_general_data_gets_numeric_axis() -> None:
    energies = pd.Index([1.0, 2.0, 5.0, 10.0], name="energy")
    store = DataStore()
    store.put(
        DataEntry(
            "spectrum",
            pd.DataFrame({"counts": [5.0, 3.0, 2.0, 1.0]}, index=energies),
            {"counts": "1/s", "energy": "keV"},
            is_timeseries=False,
        )
    )
    result = render_plotly_json({"data": [{"data_label": "spectrum", "mode": "markers"}]}, store)
    trace = result.figure["data"][0]
    assert trace["x"] == [1.0, 2.0, 5.0, 10.0]
    layout = _layout(result)
    assert layout["xaxis"].get("type") != "date"
    assert layout["xaxis"]["title"]["text"] == "energy (keV)"


def test_big_series_is_downsampled_with_extrema_gaps_and_webgl() -> None:
    n = 1_000_000
    times = pd.date_range(START, periods=n, freq="100ms")
    values = np.sin(np.arange(n) / 10_000.0)
    values[400_000] = 25.0
    values[700_000:700_500] = np.nan
    store = DataStore()
    store.put(DataEntry("MMS1.B", pd.DataFrame({"B": values}, index=times), {"B": "nT"}))
    store.put(_scalar_entry("AC_H0_SWE.Vp", "Vp", "km/s", n=300))
    result = render_plotly_json(
        {"data": [{"data_label": "MMS1.B"}, {"data_label": "AC_H0_SWE.Vp", "yaxis": "y2"}]},
        store,
    )
    big, small = result.figure["data"]
    assert result.points_sent <= 50_000
    assert big["type"] == "scattergl" and small["type"] == "scatter"
    sent = np.array([np.nan if v is None else v for v in big["y"]])
    assert np.nanmax(sent) == 25.0 and np.nanmin(sent) == np.nanmin(values)
    assert big["connectgaps"] is False
    gap = [i for i, v in enumerate(big["y"]) if v is None]
    assert len(gap) == 1
    gap_time = pd.Timestamp(big["x"][gap[0]], tz="UTC")
    assert bool(times[699_000] < gap_time <= times[700_499])
    assert len(small["y"]) == 300
    assert result.traces[0].downsampled and not result.traces[1].downsampled
    json.dumps(result.figure, allow_nan=False)


def test_budget_is_split_across_traces() -> None:
    n = 300_000
    times = pd.date_range(START, periods=n, freq="1s")
    store = DataStore()
    for name in ("A.x", "B.y", "C.z"):
        store.put(
            DataEntry(name, pd.DataFrame({"v": np.random.default_rng(3).normal(size=n)}, times))
        )
    result = render_plotly_json(
        {"data": [{"data_label": label} for label in ("A.x", "B.y", "C.z")]},
        store,
        point_budget=30_000,
    )
    sent = [t.points_sent for t in result.traces]
    assert sum(sent) <= 30_000
    assert min(sent) > 9_000


def test_time_window_gets_full_resolution(store: DataStore) -> None:
    n = 2_000_000
    times = pd.date_range(START, periods=n, freq="1s")
    store.put(DataEntry("WI.B", pd.DataFrame({"B": np.arange(n, dtype=float)}, times), {"B": "nT"}))
    window = TimeRange(
        datetime(2024, 1, 2, 0, 0, tzinfo=UTC), datetime(2024, 1, 2, 2, 0, tzinfo=UTC)
    )
    result = render_plotly_json({"data": [{"data_label": "WI.B"}]}, store, time_range=window)
    trace = result.figure["data"][0]
    assert len(trace["y"]) == 7_200  # every sample of the two hours
    assert trace["y"][0] == 86_400.0
    assert trace["x"][0] == "2024-01-02T00:00:00"
    assert _layout(result)["xaxis"]["range"] == ["2024-01-02T00:00:00", "2024-01-02T02:00:00"]
    empty = TimeRange(datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 1, 2, tzinfo=UTC))
    with pytest.raises(NoDataError, match="No data of this figure"):
        render_plotly_json({"data": [{"data_label": "WI.B"}]}, store, time_range=empty)


def test_literal_trace_passes_through(store: DataStore) -> None:
    result = render_plotly_json(
        {
            "data": [
                {"data_label": "AC_H0_SWE.Vp"},
                {
                    "type": "scatter",
                    "x": ["2024-01-01", "2024-01-02"],
                    "y": [450, 450],
                    "name": "ref",
                },
            ]
        },
        store,
    )
    assert result.figure["data"][1]["y"] == [450, 450]
    assert result.traces[1].data_label is None


def test_figure_json_string_and_bad_json(store: DataStore) -> None:
    result = render_plotly_json(json.dumps({"data": [{"data_label": "AC_H0_SWE.Vp"}]}), store)
    assert len(result.figure["data"]) == 1
    with pytest.raises(UserError, match="not valid JSON"):
        render_plotly_json("{data: [", store)


def test_real_omni_hourly_file(real_data: Path) -> None:
    frame = pd.read_csv(real_data / "omni_hourly_1999-07_2001-10.csv")
    time_column = frame.columns[0]
    frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop(time_column), utc=True))
    store = DataStore()
    store.put(DataEntry("OMNI.Dst", pd.DataFrame({"Dst": frame["Dst"]}), {"Dst": "nT"}))
    store.put(DataEntry("OMNI.velo", pd.DataFrame({"velo": frame["velo"]}), {"velo": "km/s"}))
    result = render_plotly_json(
        {"panels": [[{"data_label": "OMNI.Dst"}], [{"data_label": "OMNI.velo"}]]},
        store,
        point_budget=4_000,
    )
    assert result.points_sent <= 4_000
    dst = np.array([np.nan if v is None else v for v in result.figure["data"][0]["y"]])
    assert np.nanmin(dst) == frame["Dst"].min()  # the deepest storm survives
    assert np.nanmax(dst) == frame["Dst"].max()
    assert _layout(result)["yaxis"]["title"]["text"] == "Dst (nT)"


def test_time_gaps_break_the_line_without_counting_as_samples() -> None:
    times = pd.date_range(START, periods=100, freq="1min")
    times = times[:50].append(times[50:] + pd.Timedelta("6h"))
    store = DataStore()
    frame = pd.DataFrame({"n": np.arange(100.0)}, index=times)
    store.put(DataEntry("DE2.n", frame, {"n": "cm^-3"}))
    result = render_plotly_json({"data": [{"data_label": "DE2.n"}]}, store)
    trace = result.figure["data"][0]
    assert trace["connectgaps"] is False
    assert trace["y"][49:52] == [49.0, None, 50.0]
    assert trace["x"][50] == "2024-01-01T03:49:30"  # the break sits inside the gap
    assert result.traces[0].points_total == 100 and not result.traces[0].downsampled
    # A regular series gets no break.
    steady = render_plotly_json({"data": [{"data_label": "AC_H2_MFI.Magnitude"}]}, _store())
    assert None not in steady.figure["data"][0]["y"]


def _store() -> DataStore:
    store = DataStore()
    store.put(_scalar_entry("AC_H2_MFI.Magnitude", "Magnitude", "nT"))
    return store


def test_real_file_titles_read_as_physics(real_data: Path) -> None:
    """PSP's long CATDESC loses only its cadence aside; its 'None' units show as no units."""
    names = ["psp_fld_l2_mag_RTN_1min", "psp_fld_l2_quality_flags"]
    read = read_cdf_parameters(
        real_data / "psp_fld_l2_mag_rtn_1min_20200104_v02.cdf", "PSP_FLD_L2_MAG_RTN_1MIN", names
    )
    store = DataStore()
    for name in names:
        store.put(entry_from_parameter("PSP_FLD_L2_MAG_RTN_1MIN", read[name]))
    traces = [
        {"data_label": f"PSP_FLD_L2_MAG_RTN_1MIN.{name}", "panel": i + 1}
        for i, name in enumerate(names)
    ]
    layout = render_plotly_json({"data": traces}, store).figure["layout"]
    field, flags = layout["yaxis"]["title"]["text"], layout["yaxis2"]["title"]["text"]
    assert field.replace("<br>", " ") == "Magnetic field in RTN coordinates (nT)"
    assert flags == "FIELDS quality flag"
    assert store.get("PSP_FLD_L2_MAG_RTN_1MIN.psp_fld_l2_quality_flags").meta["units"] == "None"


def test_answer_names_what_each_panel_shows(store: DataStore) -> None:
    from xhelio.agents.offline.answer import describe_render

    figure = {
        "data": [
            {"data_label": "AC_H2_MFI.BGSEc", "panel": 1},
            {"data_label": "AC_H2_MFI.Magnitude", "panel": 2},
            {"data_label": "PSP_SWP_SPI.FLUX", "panel": 3},
        ]
    }
    summary = render_plotly_json(figure, store).summary()
    assert [t["panel"] for t in summary["traces"]] == [1, 1, 1, 2, 3]
    assert describe_render(summary) == (
        "Plotted 3 stacked panels, top to bottom: Bx GSE, By GSE, Bz GSE (nT); "
        "AC_H2_MFI.Magnitude (nT); a spectrogram of PSP_SWP_SPI.FLUX (eV/cm2-s-sr-eV)."
    )
    overlay = render_plotly_json(
        {"data": [{"data_label": "AC_H2_MFI.BGSEc"}, {"data_label": "AC_H0_SWE.Vp"}]}, store
    ).summary()
    assert describe_render(overlay) == (
        "Plotted Bx GSE, By GSE, Bz GSE (nT) and AC_H0_SWE.Vp (km/s) in one panel."
    )
    # A vector's components are named under the series they belong to, when it is known.
    named = {"AC_H2_MFI.BGSEc": "ACE magnetic field"}
    assert describe_render(overlay, named) == (
        "Plotted ACE magnetic field (Bx GSE, By GSE, Bz GSE) (nT) and AC_H0_SWE.Vp (km/s)"
        " in one panel."
    )


def test_heatmap_hover_says_time_bin_and_value_with_units(store: DataStore) -> None:
    for log_color, value in ((True, "10<sup>%{z:.2f}</sup>"), (False, "%{z:.4~g}")):
        result = render_plotly_json(
            {"data": [{"data_label": "PSP_SWP_SPI.FLUX", "log_color": log_color}]}, store
        )
        hover = result.figure["data"][0]["hovertemplate"]
        assert "%{x|%Y-%m-%d %H:%M:%S} UTC" in hover
        assert "energy: %{y:.4~g} eV<br>" in hover
        assert f": {value} eV/cm" in hover, hover
        json.dumps(result.figure)  # the figure stays JSON
