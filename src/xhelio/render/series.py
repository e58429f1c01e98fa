"""Values of a stored series as the browser gets them: x coordinates, windows, JSON numbers.

`XValues` is the x coordinate of one series (dates or numbers), read only at the
positions a trace keeps; `window_slice` picks the rows inside a zoom window; `iso_strings`
and `json_floats` write dates and floats compactly for plotly.js (NaN becomes null).
Shared by the line and heatmap trace modules.

Imports only `data.entry`, `errors` and `timerange` from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.timerange import TimeRange

__all__ = [
    "XValues",
    "coord_index",
    "iso_strings",
    "json_floats",
    "naive_utc",
    "window_slice",
    "x_values",
]


@dataclass
class XValues:
    """The x coordinate of a series: a pandas/numpy array, read only at kept positions."""

    values: pd.Index | np.ndarray
    is_date: bool
    title: str = ""

    def __len__(self) -> int:
        return len(self.values)

    def take(self, positions: np.ndarray) -> list[Any]:
        """JSON values at `positions`: ISO strings for dates, numbers or text otherwise."""
        picked = self.values[positions]
        if self.is_date:
            return iso_strings(naive_utc(picked))
        array = np.asarray(picked)
        if np.issubdtype(array.dtype, np.number):
            return json_floats(array.astype(np.float64))
        return [str(v) for v in array.tolist()]


def coord_index(data: xr.DataArray, dim: str) -> pd.Index:
    """The coordinate of `dim` as an index, or record numbers when `dim` has none."""
    if dim in data.coords:
        return pd.Index(data.coords[dim].to_numpy(), name=dim)
    return pd.RangeIndex(data.shape[0], name=dim)


def x_values(index: pd.Index, entry: DataEntry) -> XValues:
    """The x coordinate of `entry` from its index: dates, or numbers titled with their unit."""
    if isinstance(index, pd.DatetimeIndex):
        return XValues(index, True)
    if pd.api.types.is_datetime64_any_dtype(index.dtype):
        return XValues(pd.DatetimeIndex(index), True)
    title = str(index.name) if index.name is not None else ""
    unit = entry.units.get(title, "") if title else ""
    return XValues(index, False, f"{title} ({unit})" if unit else title)


def window_slice(x: XValues, window: TimeRange | None) -> slice | np.ndarray:
    """Rows of `x` inside `window` (all rows for non-time data or no window)."""
    if window is None or not x.is_date:
        return slice(None)
    index = pd.DatetimeIndex(x.values)
    start, end = _aligned(window.start, index), _aligned(window.end, index)
    if index.is_monotonic_increasing:
        bounds = np.asarray(index.searchsorted(pd.DatetimeIndex([start, end])))
        return slice(int(bounds[0]), int(bounds[1]))
    return np.flatnonzero((index >= start) & (index < end))


def _aligned(moment: datetime, index: pd.DatetimeIndex) -> pd.Timestamp:
    """`moment` (aware UTC) as a Timestamp comparable with `index` (naive means UTC)."""
    stamp = pd.Timestamp(moment)
    if not isinstance(stamp, pd.Timestamp):
        raise UserError(f"Time {moment!r} is not a valid time.")
    if index.tz is None:
        return stamp.tz_convert("UTC").tz_localize(None)
    return stamp.tz_convert(index.tz)


def naive_utc(values: Any) -> np.ndarray:
    """Datetime values as naive UTC datetime64 (plotly.js dates carry no zone)."""
    index = pd.DatetimeIndex(values)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return index.to_numpy()


def iso_strings(values: np.ndarray) -> list[str]:
    """ISO 8601 strings at the coarsest unit that loses nothing (shorter JSON)."""
    nanos = values.astype("datetime64[ns]").astype(np.int64)
    unit = "us"
    if not np.any(nanos % 1_000_000_000):
        unit = "s"
    elif not np.any(nanos % 1_000_000):
        unit = "ms"
    return np.datetime_as_string(values, unit=unit).tolist()


def json_floats(values: np.ndarray) -> list[float | None]:
    """Floats for JSON: NaN and infinities become null (plotly draws a gap)."""
    array = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(array)
    if finite.all():
        return array.tolist()
    boxed = array.astype(object)
    boxed[~finite] = None
    return boxed.tolist()
