"""What a figure says stays inside it: colour-bar titles and legends.

A spectrogram's colour-bar title (quantity and unit) reads along the bar on its right; no
line of it may be longer than the bar, in one panel and in stacked panels, so it never
runs off the figure or onto the next bar. A one-panel legend of many lines (the energy
channels of a spectrum) gets the height to list them all.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.render.figure import render_plotly_json
from xhelio.render.figure_text import visible_length, wrap_title

LONG = "Omnidirectional differential proton intensity, averaged"
UNIT = "cm^-2 s^-1 sr^-1 MeV^-1"
# A generous upper bound of one drawn character of 12 px text, in pixels.
CHAR_PX = 7.0


def _spectrogram(label: str, description: str) -> DataEntry:
    times = pd.date_range("2024-01-01", periods=120, freq="1min").to_numpy()
    energies = np.geomspace(0.05, 5.0, 8)
    array = xr.DataArray(
        np.outer(np.arange(1, 121), np.arange(1, 9)).astype(float),
        dims=("time", "energy"),
        coords={"time": times, "energy": energies},
        name="FLUX",
        attrs={"units": UNIT},
    )
    array.coords["energy"].attrs["units"] = "MeV"
    dataset, _, parameter = label.rpartition(".")
    return DataEntry(
        label,
        array,
        {"FLUX": UNIT},
        description=description,
        source_dataset=dataset,
        source_parameter=parameter,
    )


def _bar_px(layout: dict[str, Any], colorbar: dict[str, Any]) -> float:
    """The drawn bar length: its fraction of the plot area less plotly's 10 px end pads."""
    margin = layout["margin"]
    plot_area = layout["height"] - margin["t"] - margin["b"]
    return float(colorbar.get("len", 1.0)) * plot_area - 20


def _check_inside(figure: dict[str, Any]) -> None:
    layout = figure["layout"]
    for trace in figure["data"]:
        colorbar = trace["colorbar"]
        title = colorbar["title"]
        assert title["side"] == "right"  # along the bar, not above it
        lines = title["text"].split("<br>")
        longest = max(visible_length(line) for line in lines)
        assert longest * CHAR_PX <= _bar_px(layout, colorbar), title["text"]
        assert "MeV<sup>-1</sup>" in lines[-1]  # the unit is never cut off
        assert colorbar.get("y", 0.5) - colorbar.get("len", 1.0) / 2 + 1e-3 >= 0
        assert colorbar.get("y", 0.5) + colorbar.get("len", 1.0) / 2 <= 1 + 1e-3


def test_single_panel_colour_title_fits_its_bar() -> None:
    store = DataStore()
    store.put(_spectrogram("AC_H3_EPM.FLUX", LONG))
    result = render_plotly_json({"data": [{"data_label": "AC_H3_EPM.FLUX"}]}, store)
    _check_inside(result.figure)
    words = re.sub(r"<[^>]+>", " ", result.figure["data"][0]["colorbar"]["title"]["text"])
    assert "Omnidirectional" in words.split()  # the quantity still names itself


def test_stacked_panels_each_bar_fits_its_panel() -> None:
    store = DataStore()
    store.put(_spectrogram("AC_H3_EPM.FLUX", LONG))
    store.put(_spectrogram("WI_SFSP_3DP.FLUX", "Electron flux"))
    result = render_plotly_json(
        {
            "data": [
                {"data_label": "AC_H3_EPM.FLUX", "yaxis": "y"},
                {"data_label": "WI_SFSP_3DP.FLUX", "yaxis": "y2"},
            ]
        },
        store,
    )
    _check_inside(result.figure)
    first, second = (t["colorbar"] for t in result.figure["data"])
    assert first["len"] < 0.5 and second["len"] < 0.5
    # The bars do not overlap: each sits on its own panel.
    assert first["y"] - first["len"] / 2 >= second["y"] + second["len"] / 2 - 1e-3
    assert "Electron flux" in second["title"]["text"]  # a short title stays on one line


@pytest.mark.parametrize("width", [16, 19, 34])
def test_wrapped_title_keeps_unit_and_line_width(width: int) -> None:
    text = f"log<sub>10</sub> {LONG}<br>(cm<sup>-2</sup> s<sup>-1</sup>)"
    wrapped = wrap_title(text, width, max_lines=4)
    lines = wrapped.split("<br>")
    assert len(lines) <= 4
    assert all(visible_length(line) <= width for line in lines), wrapped
    assert lines[-1].endswith("s<sup>-1</sup>)")
    assert wrapped.count("<sup>") == wrapped.count("</sup>")


def test_one_panel_legend_gets_room_for_every_line() -> None:
    store = DataStore()
    times = pd.date_range("2024-01-01", periods=60, freq="1min")
    for n in range(1, 13):
        frame = pd.DataFrame({f"P{n}": np.full(60, float(n))}, index=times)
        store.put(DataEntry(f"AC_H1_EPM.P{n}", frame, {f"P{n}": "1/(cm**2-s-sr-MeV)"}))
    traces = [{"data_label": f"AC_H1_EPM.P{n}"} for n in range(1, 13)]
    layout = render_plotly_json({"data": traces}, store).figure["layout"]
    margin = layout["margin"]
    plot_area = layout["height"] - margin["t"] - margin["b"]
    assert plot_area >= 12 * 20  # about 20 px per legend entry
    one = render_plotly_json({"data": traces[:1]}, store).figure["layout"]
    assert one["height"] == 300  # a single line keeps the standard panel height
