"""What the analysis tools read from the session's store, and how they store outputs.

A stored label and a time range become times and values: vectors (three components,
chosen by their names), scalars (one column, or the magnitude of a vector), with the
unit and coordinate frame the entry states; another series is put on those times by
linear interpolation. Outputs are stored through `adopt_result`, so they carry units
and their inputs' citations like any computed entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import BadTimeRangeError, UserError
from xhelio.timerange import TimeRange, find_time, parse_time_range
from xhelio.tools.compute_tools import adopt_result
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import frame_of

__all__ = ["Series", "read_series", "store_output", "time_span", "with_stored"]

_FRAME = re.compile(r"GSE|GSM|RTN|HEEQ|HGI|HCI|GEI|J2000", re.IGNORECASE)
"""Frame names as datasets write them, also inside parameter names (BGSE, B_RTN)."""
_COMPONENT = re.compile(r"(?:^|[_\s\[])(x|y|z|r|t|n|0|1|2)\]?$", re.IGNORECASE)
_MAGNITUDE = re.compile(r"mag|total|\|b\||^bt$|^f1?$|abs|norm", re.IGNORECASE)


@dataclass(frozen=True)
class Series:
    """A stored entry over a time window: times, values (n, k), column names and meaning."""

    entry: DataEntry
    times: npt.NDArray[np.datetime64]
    values: npt.NDArray[np.float64]
    columns: list[str]
    unit: str
    frame: str | None

    def vectors(self) -> npt.NDArray[np.float64]:
        """The three vector components (refuses a series without three)."""
        if self.values.shape[1] < 3:
            raise UserError(
                f"'{self.entry.label}' has {self.values.shape[1]} column(s) "
                f"({', '.join(self.columns)}); this method needs a 3-component vector."
            )
        return self.values[:, :3]

    def scalar(self) -> npt.NDArray[np.float64]:
        """One value per sample: the only column, or the magnitude of a vector."""
        if self.values.shape[1] == 1:
            return self.values[:, 0]
        return np.sqrt(np.sum(self.vectors() ** 2, axis=1))

    def on(self, times: npt.NDArray[np.datetime64]) -> npt.NDArray[np.float64]:
        """The values linearly interpolated to `times` (NaN outside this series)."""
        source = self.times.astype("datetime64[ns]").astype(np.int64).astype(np.float64)
        target = times.astype("datetime64[ns]").astype(np.int64).astype(np.float64)
        columns = [
            np.interp(target, source[ok], column[ok], left=np.nan, right=np.nan)
            for column in self.values.T
            for ok in [np.isfinite(column)]
        ]
        return np.column_stack(columns)


def time_span(text: str) -> TimeRange:
    """A time range as people write it, also '2015-03-17 10:15 to 10:25' (the same day)."""
    try:
        return parse_time_range(text)
    except BadTimeRangeError:
        found = find_time(text)
        if found.range is None:
            raise
        return found.range


def _window(frame: pd.DataFrame, label: str, time_range: str | None) -> pd.DataFrame:
    if not isinstance(frame.index, pd.DatetimeIndex):
        raise UserError(f"'{label}' is not a time series; the analysis methods need one.")
    if not time_range:
        return frame
    span = time_span(time_range)
    start, end = pd.Timestamp(span.start), pd.Timestamp(span.end)
    index = frame.index if frame.index.tz is not None else frame.index.tz_localize("UTC")
    chosen = frame.loc[(index >= start) & (index < end)]
    if chosen.empty:
        covers = (
            f"{index[0]:%Y-%m-%d %H:%M} to {index[-1]:%Y-%m-%d %H:%M}" if len(index) else "nothing"
        )
        raise UserError(f"'{label}' has no samples in {time_range}; it covers {covers}.")
    return chosen


def _columns(frame: pd.DataFrame, wanted: list[str] | None) -> list[str]:
    numeric = [str(c) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    if wanted:
        missing = [c for c in wanted if c not in numeric]
        if missing:
            raise UserError(
                f"No numeric column {', '.join(missing)}; columns: {', '.join(numeric)}."
            )
        return wanted
    components = [c for c in numeric if _COMPONENT.search(c) and not _MAGNITUDE.search(c)]
    if len(components) >= 3:
        return components[:3]
    plain = [c for c in numeric if not _MAGNITUDE.search(c)]
    return plain[:3] if len(plain) >= 3 else numeric[:3] if len(numeric) >= 3 else numeric[:1]


def frame_name(entry: DataEntry) -> str | None:
    """The coordinate frame the entry's names or description state, if any."""
    text = " ".join([entry.label, entry.source_parameter or "", entry.description, *entry.columns])
    match = _FRAME.search(text)
    return match.group(0).upper() if match else None


def read_series(
    ctx: ToolContext, label: str, time_range: str | None = None, columns: list[str] | None = None
) -> Series:
    """The stored `label` over `time_range` (all of it when None)."""
    entry = ctx.store.get(label)
    if isinstance(entry.data, xr.DataArray) and entry.data.ndim > 2:
        raise UserError(f"'{label}' is a {entry.data.ndim}-D array; pick a 1-D or vector series.")
    frame = _window(frame_of(entry), label, time_range)
    chosen = _columns(frame, columns)
    if not chosen:
        raise UserError(f"'{label}' has no numeric column.")
    index = pd.DatetimeIndex(frame.index)
    times = (index.tz_convert(None) if index.tz is not None else index).to_numpy()
    values = frame[chosen].to_numpy(dtype=np.float64)
    unit = next((entry.units.get(c, "") for c in chosen if entry.units.get(c)), "")
    unit = re.sub(r"\s*\(.*?\)", "", unit).strip()  # "nT (1min)": the remark is no unit
    return Series(entry, times, values, chosen, unit, frame_name(entry))


def store_output(
    ctx: ToolContext,
    label: str,
    value: pd.DataFrame | xr.DataArray,
    sources: list[DataEntry],
    description: str,
    units: dict[str, str] | str,
) -> str:
    """Store an analysis output under `label` (units, citations) and return the label."""
    if isinstance(value, pd.DataFrame) and not isinstance(value.index, pd.DatetimeIndex):
        # A spectrum: indexed by frequency, never given its sources' time index back.
        named = units if isinstance(units, dict) else dict.fromkeys(value.columns, units)
        entry = DataEntry(label, value, named, description, is_timeseries=False)
        entry.meta["citations"] = [c for s in sources for c in s.citations]
    else:
        entry, _ = adopt_result(value, label, sources, description, units)
    entry.meta["notes"] = [description]
    ctx.store.put(entry)
    ctx.session.events.publish(
        "data_computed", tool="analysis", summary=f"{label} ({entry.points} points)"
    )
    return label


def with_stored(result: Any, stored: list[str]) -> dict[str, Any]:
    """The result's JSON with the labels it stored."""
    return {**result.model_dump(), "stored": stored}
