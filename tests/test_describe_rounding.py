"""Statistics read like science (issue 26): rounded to the digits the spread supports."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.tools.data_tools import describe_data


def _describe(values: np.ndarray) -> dict[str, float]:
    times = pd.date_range("2024-01-01", periods=values.size, freq="1min", tz="UTC")
    store = DataStore()
    store.put(DataEntry("X.v", pd.DataFrame({"v": values}, index=times), {"v": "nT"}))
    result = describe_data.function(SimpleNamespace(store=store), "X.v")  # type: ignore[arg-type]
    return result["columns"]["v"]


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def test_statistics_carry_no_float_noise() -> None:
    rng = np.random.default_rng(3)
    stats = _describe(5.0 + rng.normal(0, 1.3, 1000) / 3)
    for key in ("min", "max", "mean", "std"):
        assert _decimals(stats[key]) <= 3, (key, stats[key])
    assert all(_decimals(v) <= 3 for v in stats["percentiles"].values())
    assert abs(stats["mean"] - 5.0) < 0.1


def test_a_small_spread_keeps_the_digits_that_show_it() -> None:
    values = 400.0 + np.linspace(0, 0.002, 100)
    stats = _describe(values)
    assert stats["min"] == 400.0 and stats["max"] == 400.002
    assert stats["std"] > 0


def test_tiny_values_keep_their_significant_figures() -> None:
    stats = _describe(np.linspace(1e-9, 3e-9, 50))
    assert stats["min"] == 1e-9 and stats["max"] == 3e-9
