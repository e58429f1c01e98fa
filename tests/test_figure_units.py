"""One rule for units on a figure (issue 26).

A unit is said once, without cadence asides; hover gives units; axes of non-negative
data never run below zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.render.figure import render_plotly_json
from xhelio.render.figure_text import axis_unit, titled

TIMES = pd.date_range("2024-01-01", periods=200, freq="1min", tz="UTC")


@pytest.mark.parametrize(
    ("name", "unit", "expected"),
    [
        ("flow speed (km/s)", "km/s", "flow speed (km/s)"),
        ("Flow Speed (Km/s)", "km/s", "Flow Speed (km/s)"),
        ("Proton density (per cc)", "cm<sup>-3</sup>", "Proton density (cm<sup>-3</sup>)"),
        ("density (#/cc)", "cm<sup>-3</sup>", "density (cm<sup>-3</sup>)"),
        ("Field magnitude (1min)", "nT", "Field magnitude (nT)"),
        ("B (5 s avg) (nT)", "nT", "B (nT)"),
        ("Speed (bulk) ", "km/s", "Speed (bulk) (km/s)"),
        ("Kp", "", "Kp"),
        ("", "nT", "nT"),
    ],
)
def test_a_unit_is_said_once_in_a_title(name: str, unit: str, expected: str) -> None:
    assert titled(name, unit) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("nT (1min)", "nT"), ("Km/s", "km/s"), ("per cc", "cm<sup>-3</sup>"), ("nT", "nT")],
)
def test_axis_units_drop_cadence_asides(raw: str, expected: str) -> None:
    assert axis_unit(raw) == expected


def _entry(label: str, column: str, unit: str, values: Any, description: str = "") -> DataEntry:
    frame = pd.DataFrame({column: values}, index=TIMES)
    dataset, _, parameter = label.rpartition(".")
    return DataEntry(
        label,
        frame,
        {column: unit},
        description=description,
        source_dataset=dataset,
        source_parameter=parameter,
    )


def _render(*entries: DataEntry) -> dict[str, Any]:
    store = DataStore()
    for entry in entries:
        store.put(entry)
    spec = {"data": [{"data_label": e.label} for e in entries]}
    figure: dict[str, Any] = render_plotly_json(spec, store).figure
    return figure


def test_axis_titles_never_double_or_mix_a_unit() -> None:
    speed = _entry(
        "OMNI.flow_speed", "flow_speed", "Km/s", np.full(200, 400.0), "flow speed (km/s)"
    )
    density = _entry("OMNI.N", "N", "Per cc", np.full(200, 5.0), "Proton density (per cc)")
    field = _entry("OMNI.F", "F", "nT (1min)", np.full(200, 5.0), "Field magnitude")
    for entry, expected in [
        (speed, "flow speed (km/s)"),
        (density, "Proton density (cm<sup>-3</sup>)"),
        (field, "Field magnitude (nT)"),
    ]:
        layout = _render(entry)["layout"]
        assert layout["yaxis"]["title"]["text"] == expected


def test_hover_is_unified_per_time_and_names_the_unit() -> None:
    figure = _render(_entry("OMNI.flow_speed", "flow_speed", "km/s", np.full(200, 400.0)))
    assert figure["data"][0]["hovertemplate"].endswith(" km/s<extra></extra>")
    assert "%{fullData.name}" in figure["data"][0]["hovertemplate"]


def test_an_axis_of_non_negative_data_stays_above_zero() -> None:
    rng = np.random.default_rng(1)
    density = _entry("OMNI.N", "N", "cm^-3", np.abs(rng.normal(0.2, 1.0, 200)))
    bz = _entry("OMNI.BZ", "BZ", "nT", rng.normal(0.0, 3.0, 200))
    assert _render(density)["layout"]["yaxis"].get("rangemode") == "nonnegative"
    assert _render(bz)["layout"]["yaxis"].get("rangemode") is None


def test_an_archive_banner_is_not_part_of_the_axis_title() -> None:
    entry = _entry(
        "AC_K0_MFI.Magnitude",
        "Magnitude",
        "nT",
        np.full(200, 5.0),
        "[PRELIMINARY VALUES - BROWSE USE ONLY] B-field magnitude",
    )
    assert _render(entry)["layout"]["yaxis"]["title"]["text"] == "B-field magnitude (nT)"


def test_a_formula_aside_with_nested_brackets_is_not_part_of_the_axis_title() -> None:
    # A derived quantity's description carries its formula: "(beta = n k T / (B^2 / 2 mu0))"
    # once filled the axis title and was cut off at the figure's edge.
    entry = _entry(
        "WIND_plasma_beta",
        "WIND_plasma_beta",
        "1",
        np.full(200, 1.0),
        "Wind plasma beta (beta = n k T / (B^2 / 2 mu0))",
    )
    assert _render(entry)["layout"]["yaxis"]["title"]["text"].startswith("Wind plasma beta")
    assert "mu0" not in _render(entry)["layout"]["yaxis"]["title"]["text"]


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("---> HOPE proton partial density", "HOPE proton partial density (cm<sup>-3</sup>)"),
        ("-----Ion density spectrogram", "Ion density spectrogram (cm<sup>-3</sup>)"),
        # a leading minus sign is no arrow
        ("-1 to 1 normalised density", "-1 to 1 normalised density (cm<sup>-3</sup>)"),
    ],
)
def test_an_istp_continuation_arrow_is_not_part_of_the_axis_title(
    description: str, expected: str
) -> None:
    entry = _entry("RBSPA.Dens_p_30", "Dens_p_30", "cm^-3", np.full(200, 5.0), description)
    assert _render(entry)["layout"]["yaxis"]["title"]["text"] == expected
