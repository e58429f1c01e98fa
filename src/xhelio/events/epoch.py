"""Superposed-epoch analysis: a quantity stacked around event times, with its figure.

Each event contributes one value per epoch bin (the mean of its samples in that bin);
the statistics across events are the mean, median, quartiles and the count of events
with data in each bin (the method of Chree, C. (1913), Phil. Trans. R. Soc. A, 212,
75-89, doi:10.1098/rsta.1913.0003). Vectorised: one `searchsorted` per event edge and a single
`bincount`, never a Python loop over samples.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

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
    clean = series.dropna().sort_index()
    times = clean.index.to_numpy(dtype="datetime64[ns]").astype(np.int64)
    values = clean.to_numpy(dtype=float)
    zero = epochs.to_numpy(dtype="datetime64[ns]").astype(np.int64)
    before = int(before_hours * 3.6e12)
    width = int(bin_minutes * 6e10)
    bins = int(np.ceil((before + after_hours * 3.6e12) / width))
    lo = np.searchsorted(times, zero - before, "left")
    hi = np.searchsorted(times, zero - before + bins * width, "left")
    counts = hi - lo
    if counts.sum() == 0:
        raise UserError("No data falls within the window around any event.")
    event = np.repeat(np.arange(len(zero)), counts)
    take = (
        np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]) if len(zero) else lo
    )
    which = (times[take] - (zero[event] - before)) // width
    key = event * bins + which
    size = len(zero) * bins
    sums = np.bincount(key, weights=values[take], minlength=size)
    hits = np.bincount(key, minlength=size)
    with np.errstate(invalid="ignore"):
        matrix = (sums / np.where(hits, hits, np.nan)).reshape(len(zero), bins)
    table = _statistics(matrix, before, width, bins)
    return EpochResult(table, matrix, int((counts > 0).sum()))


def _statistics(matrix: np.ndarray, before: int, width: int, bins: int) -> pd.DataFrame:
    centres = (np.arange(bins) * width - before + width / 2) / 3.6e12
    count = np.sum(~np.isnan(matrix), axis=0)
    stats: dict[str, Any] = {"count": count}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bins stay NaN
        stats["mean"] = np.nanmean(matrix, axis=0)
        q25, median, q75 = np.nanpercentile(matrix, [25, 50, 75], axis=0)
    stats.update(median=median, q25=q25, q75=q75)
    table = pd.DataFrame(stats, index=pd.Index(np.round(centres, 6), name="epoch_hours"))
    return table.loc[:, ["mean", "median", "q25", "q75", "count"]]


def epoch_figure(result: EpochResult, quantity: str, unit: str, title: str) -> go.Figure:
    """The quartile band, mean and median lines, and the events per bin beneath."""
    table = result.table
    x = table.index.to_numpy()
    axis = f"{quantity} ({unit})" if unit else quantity
    figure = go.Figure()
    figure.add_scatter(x=x, y=table["q75"], mode="lines", line={"width": 0},
                       showlegend=False, hoverinfo="skip")  # fmt: skip
    figure.add_scatter(x=x, y=table["q25"], mode="lines", line={"width": 0}, fill="tonexty",
                       fillcolor="rgba(31,119,180,0.25)", name="quartiles (25-75%)")  # fmt: skip
    figure.add_scatter(x=x, y=table["mean"], mode="lines", name="mean", line={"color": "#1f77b4"})
    figure.add_scatter(x=x, y=table["median"], mode="lines", name="median",
                       line={"color": "#d62728", "dash": "dash"})  # fmt: skip
    figure.add_bar(x=x, y=table["count"], name="events per bin", yaxis="y2",
                   marker={"color": "rgba(120,120,120,0.6)"})  # fmt: skip
    figure.add_vline(x=0, line={"color": "black", "width": 1})
    figure.update_layout(
        title=title,
        xaxis={"title": "epoch (hours from event)", "anchor": "y2"},
        yaxis={"title": axis, "domain": [0.28, 1.0]},
        yaxis2={"title": "n events", "domain": [0.0, 0.2]},
        legend={"orientation": "h", "y": 1.08},
    )
    return figure
