"""The key numbers of a turn: what each shown series spans, its extremes and their times.

`key_numbers` reads the series a turn shows (the traces of the figure it drew, else the
data it stored) from the session's DataStore and says, per series, its range with units,
the times of its extremes and its mean, over the readable inclusive interval of its
samples. The composer (`api.compose`) puts these sentences in the short answer, the same
for every assistant. Imports `data`, `render`, `tools` and `timerange`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

from xhelio.data.store import DataStore
from xhelio.render.figure_text import plain_unit
from xhelio.render.result import RenderResult
from xhelio.timerange import TimeRange, readable_range, readable_span
from xhelio.tools.data_tools import frame_of

__all__ = ["SeriesNumbers", "key_numbers", "numbers_of"]

_SHOWN = 6  # series given numbers; more are named as a count


@dataclass(frozen=True)
class SeriesNumbers:
    """One series' range, extremes (with their times) and mean over its samples."""

    name: str
    unit: str
    points: int
    first: datetime
    last: datetime
    low: float
    low_at: datetime
    high: float
    high_at: datetime
    mean: float

    def sentence(self) -> str:
        """One sentence: name, interval, points, extremes with their times, and mean."""
        step = _step(self.low, self.high)
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"{self.name}, {_interval(self.first, self.last, self.points)} "
            f"({self.points:,} points): "
            f"from {_number(self.low, step)}{unit} ({_moment(self.low_at)}) "
            f"to {_number(self.high, step)}{unit} ({_moment(self.high_at)}), "
            f"mean {_number(self.mean, step)}{unit}."
        )


def _step(low: float, high: float) -> float:
    """The rounding step: three significant figures of the spread (or of the value)."""
    size = (high - low) or max(abs(low), abs(high))
    return 10 ** (math.floor(math.log10(size)) - 2) if size > 0 else 1.0


def _number(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step)))
    text = f"{round(value / step) * step:,.{decimals}f}"
    return "0" if text.strip("-0.,") == "" else text


def _interval(first: datetime, last: datetime, points: int) -> str:
    """The samples' interval as people say it: whole days when the samples fill them.

    They do when the first is within a sample step of a midnight and the last within one
    of the next; otherwise the interval is said to the minute.
    """
    step = (last - first) / max(points - 1, 1)
    day = timedelta(days=1)
    start = first.replace(hour=0, minute=0, second=0, microsecond=0)
    stop = last.replace(hour=0, minute=0, second=0, microsecond=0) + day
    if stop - start >= day and first - start <= step and stop - last <= step * 1.5:
        return readable_range(start, stop)
    return readable_span(first.replace(second=0), last.replace(second=0))


def _moment(when: datetime) -> str:
    fmt = "%Y-%m-%d %H:%M:%S" if when.second else "%Y-%m-%d %H:%M"
    return f"{when.strftime(fmt)} UTC"


def _utc(index: pd.DatetimeIndex) -> pd.DatetimeIndex:
    return index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")


def numbers_of(
    store: DataStore,
    label: str,
    column: str | None,
    name: str,
    unit: str,
    window: TimeRange | None = None,
) -> SeriesNumbers | None:
    """The numbers of one column of a stored time series (None when it has none)."""
    if not store.has(label):
        return None
    frame = frame_of(store.get(label))
    if not isinstance(frame.index, pd.DatetimeIndex) or frame.empty:
        return None
    if column is None:
        if len(frame.columns) != 1:
            return None
        column = str(frame.columns[0])
    if column not in frame.columns:
        return None
    values = np.asarray(pd.to_numeric(frame[column], errors="coerce"), dtype=float)
    times = _utc(frame.index)
    keep = np.isfinite(values)
    if window is not None:
        keep &= np.asarray((times >= window.start) & (times < window.end))
    values, times = values[keep], times[keep]
    if not values.size:
        return None
    low, high = int(np.argmin(values)), int(np.argmax(values))
    moments: list[datetime] = [t.to_pydatetime() for t in times[[0, -1, low, high]]]
    return SeriesNumbers(
        name,
        unit,
        int(values.size),
        moments[0],
        moments[1],
        float(values[low]),
        moments[2],
        float(values[high]),
        moments[3],
        float(values.mean()),
    )


def _with_dataset(store: DataStore, label: str, name: str) -> str:
    """`name` with the dataset it was fetched from ("... [AC_H1_MFI]"), for provenance."""
    dataset = store.get(label).source_dataset if store.has(label) else None
    return f"{name} [{dataset}]" if dataset and dataset not in name else name


def key_numbers(store: DataStore, figure: RenderResult | None, labels: Sequence[str]) -> list[str]:
    """Sentences on the series shown: the figure's line traces, else the stored `labels`."""
    found: list[SeriesNumbers] = []
    if figure is not None:
        for trace in figure.traces:
            if trace.data_label is None or trace.trace_type == "heatmap":
                continue
            numbers = numbers_of(
                store,
                trace.data_label,
                trace.column,
                _with_dataset(store, trace.data_label, trace.name),
                plain_unit(trace.unit),
                figure.time_range,
            )
            if numbers is not None:
                found.append(numbers)
    else:
        for label in labels:
            entry = store.get(label) if store.has(label) else None
            unit = next(iter(entry.units.values()), "") if entry is not None else ""
            numbers = numbers_of(store, label, None, label, unit)
            if numbers is not None:
                found.append(numbers)
    sentences = [n.sentence() for n in found[:_SHOWN]]
    if len(found) > _SHOWN:
        sentences.append(f"And {len(found) - _SHOWN} more series.")
    return sentences
