"""Superposed epoch: statistics per bin against a direct computation, and its figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xhelio.errors import UserError
from xhelio.events.epoch import epoch_figure, superposed_epoch


def _series() -> tuple[pd.Series, pd.DatetimeIndex]:
    times = pd.date_range("2020-01-01", periods=20 * 1440, freq="1min", tz="UTC")
    rng = np.random.default_rng(5)
    values = rng.normal(0, 1, len(times))
    epochs = pd.DatetimeIndex(["2020-01-03", "2020-01-08T06:30", "2020-01-15T12:00"], tz="UTC")
    for i, zero in enumerate(epochs):  # a response of depth 10*(i+1) in the 6 h after each
        after = (times >= zero) & (times < zero + pd.Timedelta("6h"))
        values[after] -= 10 * (i + 1)
    return pd.Series(values, index=times), epochs


def test_bins_match_a_direct_per_event_computation() -> None:
    series, epochs = _series()
    result = superposed_epoch(series, epochs, before_hours=12, after_hours=24, bin_minutes=60)
    table = result.table
    assert len(table) == 36 and table.index[0] == pytest.approx(-11.5)
    per_event = []
    for zero in epochs:
        window = series[
            zero - pd.Timedelta("12h") : zero + pd.Timedelta("24h") - pd.Timedelta("1ns")
        ]
        hours = (window.index - zero) / pd.Timedelta("1h")
        per_event.append(window.groupby(np.floor(hours)).mean().to_numpy())
    stacked = np.vstack(per_event)
    np.testing.assert_allclose(table["mean"], stacked.mean(axis=0))
    np.testing.assert_allclose(table["median"], np.median(stacked, axis=0))
    np.testing.assert_allclose(table["q25"], np.percentile(stacked, 25, axis=0))
    assert (table["count"] == 3).all() and result.used == 3
    assert table.loc[0.5, "median"] == pytest.approx(-20, abs=0.5)  # epochs respond


def test_events_without_data_are_counted_out() -> None:
    series, epochs = _series()
    late = epochs.append(pd.DatetimeIndex(["2021-06-01"], tz="UTC"))
    result = superposed_epoch(series, late, 1, 1, 30)
    assert result.used == 3 and (result.table["count"] == 3).all()
    with pytest.raises(UserError, match="No data"):
        superposed_epoch(series, pd.DatetimeIndex(["2030-01-01"], tz="UTC"), 1, 1, 30)
    with pytest.raises(UserError, match="empty"):
        superposed_epoch(series, pd.DatetimeIndex([], tz="UTC"), 1, 1, 30)


def test_figure_has_band_lines_and_counts() -> None:
    series, epochs = _series()
    figure = epoch_figure(superposed_epoch(series, epochs, 6, 12, 30), "Bz", "nT", "SEA")
    names = [t.name for t in figure.data]
    assert {"quartiles (25-75%)", "mean", "median", "events per bin"} <= set(names)
    assert figure.layout.yaxis.title.text == "Bz (nT)"
