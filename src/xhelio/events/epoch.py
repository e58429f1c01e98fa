"""Superposed-epoch analysis: a quantity stacked around event times, with its figure.

Each event contributes one value per epoch bin (the mean of its samples in that bin);
the statistics across events are the mean, median, quartiles and the count of events
with data in each bin (the method of Chree, C. (1913), Phil. Trans. R. Soc. A, 212,
75-89, doi:10.1098/rsta.1913.0003). The series is never copied: the windows are found
with `searchsorted` on its time index, each event's bins by one `bincount` of its slice,
and the quantiles by one sort of the events x bins matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xhelio.errors import UserError

__all__ = ["EpochResult", "epoch_figure", "superposed_epoch"]


@dataclass(frozen=True)
class EpochResult:
    """The statistics per epoch bin and how they were made.

    Attributes:
        table: Index `epoch_hours` (bin centres); columns mean, median, q25, q75, count.
        matrix: Events x bins of per-event bin means (NaN where an event has no data).
        used: How many events had data in the window.
    """

    table: pd.DataFrame
    matrix: np.ndarray
    used: int


def superposed_epoch(
    series: pd.Series,
    epochs: pd.DatetimeIndex,
    before_hours: float,
    after_hours: float,
    bin_minutes: float,
) -> EpochResult:
    """Stack `series` from `before_hours` before to `after_hours` after each epoch.

    Raises:
        UserError: an empty window or bin, no epochs, or no data near any epoch.
    """
    if before_hours < 0 or after_hours <= 0 or bin_minutes <= 0:
        raise UserError("Give a window with after_hours > 0, before_hours >= 0 and bins > 0.")
    if len(epochs) == 0:
        raise UserError("The event list is empty: no epochs to stack.")
    ordered = series if series.index.is_monotonic_increasing else series.sort_index()
    index = pd.DatetimeIndex(ordered.index)
    times = index.asi8  # a view, in the index's own unit (no copy of a long series)
    per_hour = 3600 * {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[index.unit]
    values = ordered.to_numpy(dtype=float)
    zero = epochs.as_unit(index.unit).asi8
    before = int(before_hours * per_hour)
    width = max(1, int(bin_minutes * per_hour / 60))
    bins = int(np.ceil((before + after_hours * per_hour) / width))
    lo = np.searchsorted(times, zero - before, "left")
    hi = np.searchsorted(times, zero - before + bins * width, "left")
    matrix = np.full((len(zero), bins), np.nan)
    for row, (first, stop) in enumerate(zip(lo, hi, strict=True)):
        chunk = values[first:stop]
        valid = ~np.isnan(chunk)
        which = (times[first:stop][valid] - (zero[row] - before)) // width
        hits = np.bincount(which, minlength=bins)
        sums = np.bincount(which, weights=chunk[valid], minlength=bins)
        np.divide(sums, hits, out=matrix[row], where=hits > 0)
    used = int(np.any(~np.isnan(matrix), axis=1).sum())
    if used == 0:
        raise UserError("No data falls within the window around any event.")
    centres = (np.arange(bins) * width - before + width / 2) / per_hour
    return EpochResult(_statistics(matrix, centres), matrix, used)


def _quantiles(matrix: np.ndarray, count: np.ndarray, qs: tuple[float, ...]) -> list[np.ndarray]:
    """Linear-interpolation quantiles of each column, ignoring NaN (NaN where empty).

    One sort for all columns: numpy's nanpercentile loops over columns in Python.
    """
    ordered = np.sort(matrix, axis=0)  # NaN sorts last
    top = np.maximum(count - 1, 0)
    found: list[np.ndarray] = []
    for q in qs:
        position = q * top
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, top)
        below = np.take_along_axis(ordered, low[None, :], axis=0)[0]
        above = np.take_along_axis(ordered, high[None, :], axis=0)[0]
        found.append(np.where(count > 0, below + (position - low) * (above - below), np.nan))
    return found


def _statistics(matrix: np.ndarray, centres: np.ndarray) -> pd.DataFrame:
    count = np.sum(~np.isnan(matrix), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(matrix, axis=0) / np.where(count > 0, count, np.nan)
    q25, median, q75 = _quantiles(matrix, count, (0.25, 0.5, 0.75))
    return pd.DataFrame(
        {"mean": mean, "median": median, "q25": q25, "q75": q75, "count": count},
        index=pd.Index(np.round(centres, 6), name="epoch_hours"),
    )


def _values(table: pd.DataFrame, column: str) -> list[float | None]:
    return [None if np.isnan(v) else float(v) for v in table[column].to_numpy(dtype=float)]


def epoch_figure(result: EpochResult, quantity: str, unit: str, title: str) -> go.Figure:
    """The quartile band, mean and median lines, and the events per bin beneath."""
    table = result.table
    x = table.index.to_list()  # lists, not arrays: the JSON stays plain numbers
    axis = f"{quantity} ({unit})" if unit else quantity
    figure = go.Figure()
    figure.add_scatter(
        x=x,
        y=_values(table, "q75"),
        mode="lines",
        line={"width": 0},
        showlegend=False,
        hoverinfo="skip",
    )
    figure.add_scatter(
        x=x,
        y=_values(table, "q25"),
        mode="lines",
        line={"width": 0},
        fill="tonexty",
        fillcolor="rgba(31,119,180,0.25)",
        name="quartiles (25-75%)",
    )
    figure.add_scatter(
        x=x, y=_values(table, "mean"), mode="lines", name="mean", line={"color": "#1f77b4"}
    )
    figure.add_scatter(
        x=x,
        y=_values(table, "median"),
        mode="lines",
        name="median",
        line={"color": "#d62728", "dash": "dash"},
    )
    figure.add_bar(
        x=x,
        y=_values(table, "count"),
        name="events per bin",
        yaxis="y2",
        marker={"color": "rgba(120,120,120,0.6)"},
    )
    figure.add_vline(x=0, line={"color": "black", "width": 1})
    figure.update_layout(
        title=title,
        xaxis={"title": "epoch (hours from event)", "anchor": "y2"},
        yaxis={"title": axis, "domain": [0.28, 1.0]},
        yaxis2={"title": "n events", "domain": [0.0, 0.2]},
        legend={"orientation": "h", "y": 1.08},
    )
    return figure
