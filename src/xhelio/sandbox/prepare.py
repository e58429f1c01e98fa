"""Interpretation of a result, done in the child where a call's time and memory are bounded.

The parent only checks and stores what it decoded; anything costly that turns a result
into what the session stores happens here, under the call's timeout, CPU and memory
limits, so no result can keep the host busy:

* a frame computed from time series that lost its time index but carries a time column
  (`time`, `Time`, `epoch`, `Epoch`, `datetime`) gets it back as a UTC DatetimeIndex.
  Text is parsed only as ISO 8601 (vectorised); a column that does not parse so is
  left as it is, never parsed value by value (a minute per call on long strings that
  look like times);
* interval and categorical labels (`pd.cut` bins as an index) become strings, which
  Arrow and the session's files can store.

Imports nothing from xhelio.
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

__all__ = ["TIME_COLUMNS", "prepare_frame"]

TIME_COLUMNS = ("time", "Time", "epoch", "Epoch", "datetime")


def _is_time_series(source: pd.DataFrame | xr.DataArray) -> bool:
    if isinstance(source, pd.DataFrame):
        return isinstance(source.index, pd.DatetimeIndex)
    return "time" in source.dims


def _as_times(column: pd.Series) -> pd.DatetimeIndex | None:
    """The column as UTC times: datetimes as they are, text only when all ISO 8601."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        times = pd.DatetimeIndex(column)
        return times.tz_localize("UTC") if times.tz is None else times.tz_convert("UTC")
    if not (pd.api.types.is_string_dtype(column.dtype) or column.dtype == object):
        return None
    try:
        return pd.DatetimeIndex(pd.to_datetime(column, utc=True, format="ISO8601"))
    except (ValueError, TypeError, OverflowError):
        return None


def _time_indexed(frame: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    for name in TIME_COLUMNS:
        column = frame[name] if name in frame.columns else None
        if isinstance(column, pd.Series):  # one column of that name, not several
            times = _as_times(column)
            if times is None:
                notes.append(f"column {name!r} is not in ISO 8601 form; kept as a column")
                return frame
            return frame.drop(columns=[name]).set_axis(times.rename("time"), axis=0)
    return frame


def _plain_labels(frame: pd.DataFrame) -> pd.DataFrame:
    for axis in ("index", "columns"):
        labels = getattr(frame, axis)
        if isinstance(labels, pd.IntervalIndex | pd.CategoricalIndex):
            frame = frame.set_axis(labels.astype(str), axis=axis)
    return frame


def prepare_frame(
    frame: pd.DataFrame, sources: dict[str, pd.DataFrame | xr.DataArray], notes: list[str]
) -> pd.DataFrame:
    """`frame` as the session will store it (see the module doc); notes say what changed."""
    frame = _plain_labels(frame)
    if not isinstance(frame.index, pd.DatetimeIndex) and all(
        _is_time_series(s) for s in sources.values()
    ):
        frame = _time_indexed(frame, notes)
    return frame
