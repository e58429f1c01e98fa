"""How custom_operation adopts a sandbox result: time index, is_timeseries, units."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.tools.compute_tools import adopt_result


def _field() -> DataEntry:
    index = pd.date_range("2024-01-01", periods=10, freq="1min", tz="UTC")
    frame = pd.DataFrame(np.ones((10, 3)), index=index, columns=["Bx", "By", "Bz"])
    return DataEntry("AC_H2_MFI.BGSEc", frame, dict.fromkeys(frame.columns, "nT"))


def test_units_carry_by_column_name_and_unknown_units_are_called_out() -> None:
    source = _field()
    frame = source.data
    assert isinstance(frame, pd.DataFrame)
    kept, notes = adopt_result(frame * 2, "twice", [source], "")
    assert kept.units == dict.fromkeys(["Bx", "By", "Bz"], "nT") and notes == []
    assert kept.is_timeseries

    magnitude = (frame**2).sum(axis=1).pow(0.5).to_frame("Bmag")
    entry, notes = adopt_result(magnitude, "Bmag", [source], "")
    assert entry.units == {"Bmag": ""}
    assert any("Bmag" in n and "units=" in n for n in notes)

    labelled, notes = adopt_result(magnitude, "Bmag", [source], "", units="nT")
    assert labelled.units == {"Bmag": "nT"} and notes == []


def test_result_without_index_gets_the_source_time_index_back() -> None:
    source = _field()
    values = pd.DataFrame({"x": np.arange(10.0)})
    entry, notes = adopt_result(values, "x", [source], "", units="1")
    assert isinstance(entry.data, pd.DataFrame)
    assert isinstance(entry.data.index, pd.DatetimeIndex) and entry.is_timeseries
    assert any("time index" in n for n in notes)
