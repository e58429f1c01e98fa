"""Heatmap traces: a spectrogram per 2-D entry, averaged into gap-aware time columns.

`heatmap_plan` reduces a stored 2-D (or higher) entry to one `HeatmapPlan`: values per
record and bin, the cells of each bin (see `spectrogram`), the colour scale (log for
quantities that span decades) and a bins axis title with units. `heatmap_trace` averages
records into at most as many columns as the plan's point budget allows, never across a
data gap, places the cells on one y grid and writes the plotly heatmap with a titled
colour bar.

Imports only `data.entry`, `data.meaning`, `sources.dims`, `timerange` and `render`
siblings (`figure_text`, `result`, `series`, `spectrogram`) from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.meaning import prefers_log_colour
from xhelio.render.figure_text import (
    axis_unit,
    quantity,
    quantity_title,
    titled,
    unit_of,
    without_unit,
)
from xhelio.render.result import TraceSummary
from xhelio.render.series import (
    XValues,
    coord_index,
    iso_strings,
    json_floats,
    naive_utc,
    window_slice,
    x_values,
)
from xhelio.render.spectrogram import BinCells, bin_cells, raster, reduce_to_bins, time_columns
from xhelio.sources.dims import edges_from_centres
from xhelio.timerange import TimeRange

__all__ = [
    "HeatmapPlan",
    "Reduction",
    "bins_span_decade",
    "heatmap_plan",
    "heatmap_template",
    "heatmap_trace",
]


@dataclass
class HeatmapPlan:
    """One spectrogram to draw: values per record and bin at full resolution, and style."""

    template: dict[str, Any]
    x: XValues
    values: np.ndarray
    cells: BinCells
    bins_title: str
    unit: str
    log_color: bool
    name: str
    data_label: str
    spec_index: int
    log_y: bool = False
    quantity: str = ""
    bins_name: str = "bin"
    bins_unit: str = ""


@dataclass(frozen=True)
class Reduction:
    """How a trace asks to reduce a multi-dimensional entry to one spectrogram."""

    bins_dim: Any = None
    select: Any = None
    reduce: Any = None


# Keys plotly's heatmap accepts; anything else a model copied from a line trace (mode,
# line, marker, connectgaps...) is dropped with a note instead of failing the figure.
_HEATMAP_KEYS = frozenset(go.Heatmap()._valid_props)  # pyright: ignore[reportPrivateUsage]


def heatmap_template(template: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The model's trace keys a heatmap accepts, noting the ones dropped."""
    dropped = sorted(k for k in template if k not in _HEATMAP_KEYS)
    if dropped:
        notes.append(
            f"Ignored {', '.join(dropped)} on a spectrogram (heatmap traces have no "
            "lines or markers)."
        )
    kept = {k: v for k, v in template.items() if k in _HEATMAP_KEYS}
    kept["type"] = "heatmap"
    return kept


def heatmap_plan(
    entry: DataEntry,
    template: dict[str, Any],
    index: int,
    window: TimeRange | None,
    log_color: bool | None,
    reduction: Reduction,
    notes: list[str],
) -> HeatmapPlan:
    """Plan the spectrogram of `entry` inside `window`; `log_color` None means by quantity."""
    data = entry.data
    if isinstance(data, xr.DataArray):
        select = reduction.select if isinstance(reduction.select, dict) else None
        oriented, bins_dim, reduce_notes = reduce_to_bins(
            data,
            str(reduction.bins_dim) if reduction.bins_dim else None,
            select,  # pyright: ignore[reportUnknownArgumentType]
            str(reduction.reduce or "mean"),
        )
        notes.extend(reduce_notes)
        time_dim = str(oriented.dims[0])
        x = x_values(coord_index(oriented, time_dim), entry)
        values = oriented.to_numpy().astype(np.float64)
        cells = bin_cells(oriented, bins_dim)
    else:
        x = x_values(data.index, entry)
        values = data.to_numpy(dtype=np.float64)
        bins_dim = str(data.attrs.get("bins_name", "bin"))
        low, high = edges_from_centres(_frame_bins(data)[None, :])
        cells = BinCells(low, high, bins_dim, str(data.attrs.get("bins_units", "")))
    bins_unit = axis_unit(cells.units)
    bins_name = without_unit(cells.title or bins_dim, bins_unit)
    rows = window_slice(x, window)
    if cells.low.shape[0] > 1:
        cells = replace(cells, low=cells.low[rows], high=cells.high[rows])
    unit = unit_of(entry, entry.columns[0])
    if log_color is None:
        log_color = prefers_log_colour(quantity(entry), unit, entry.description)
    return HeatmapPlan(
        template=template,
        x=XValues(x.values[rows], x.is_date),
        values=values[rows],
        cells=cells,
        bins_title=titled(bins_name, bins_unit),
        unit=unit,
        log_color=log_color,
        name=str(template.get("name") or entry.label),
        data_label=entry.label,
        spec_index=index,
        quantity=quantity_title(entry),
        bins_name=bins_name,
        bins_unit=bins_unit,
    )


def bins_span_decade(cells: BinCells) -> bool:
    """Log y for bins that are positive and span more than a factor of ten.

    Bins known only by their index (edges from -0.5) are drawn linear.
    """
    high = cells.high[np.isfinite(cells.high)]
    low = cells.low[np.isfinite(cells.low)]
    centres = np.sqrt(np.abs(cells.low * cells.high))
    positive = centres[np.isfinite(centres) & (centres > 0)]
    if positive.size < 2 or np.any(high <= 0) or np.any(low < 0):
        return False
    return float(positive.max() / positive.min()) > 10


def _frame_bins(frame: pd.DataFrame) -> np.ndarray:
    explicit = frame.attrs.get("bins")
    if explicit is not None:
        return np.asarray(explicit, dtype=np.float64)
    try:
        return np.asarray([float(c) for c in frame.columns], dtype=np.float64)
    except (TypeError, ValueError):
        return np.arange(frame.shape[1], dtype=np.float64)


def _hover(plan: HeatmapPlan, what: str, unit: str) -> str:
    """Time, the bin with its unit and the value with its unit (log colour: as 10^z)."""
    when = "%{x|%Y-%m-%d %H:%M:%S} UTC" if plan.x.is_date else "%{x:.4~g}"
    value = "10<sup>%{z:.2f}</sup>" if plan.log_color else "%{z:.4~g}"
    bin_unit = f" {plan.bins_unit}" if plan.bins_unit else ""
    value_unit = f" {unit}" if unit else ""
    return (
        f"{when}<br>{plan.bins_name}: %{{y:.4~g}}{bin_unit}<br>"
        f"{what}: {value}{value_unit}<extra>%{{fullData.name}}</extra>"
    )


def heatmap_trace(plan: HeatmapPlan, budget: int) -> tuple[dict[str, Any], TraceSummary]:
    """Average `plan` into columns within `budget` cells and write its heatmap and summary."""
    n_bins = plan.values.shape[1]
    max_columns = max(1, budget // max(n_bins, 1))
    values, x_edges, cells = _heatmap_columns(plan, max_columns)
    y_edges, z = raster(values, cells, plan.log_y)
    if plan.log_color:
        positive = z > 0
        z = np.log10(z, out=np.full(z.shape, np.nan), where=positive)
    unit = axis_unit(plan.unit)
    what = plan.quantity or "value"
    colour_title = f"{what}<br>({unit})" if unit else what
    if plan.log_color:
        colour_title = (
            f"log<sub>10</sub> {what}<br>({unit})" if unit else f"log<sub>10</sub> {what}"
        )
    trace = dict(plan.template)
    trace["type"] = "heatmap"
    trace.setdefault("name", plan.name)
    trace.setdefault("colorscale", "Viridis")
    colorbar = dict(trace.get("colorbar", {}))
    colorbar.setdefault("title", {"text": colour_title})
    trace["colorbar"] = colorbar
    trace.setdefault("hovertemplate", _hover(plan, what, unit))
    trace["x"] = x_edges
    trace["y"] = json_floats(y_edges)
    trace["z"] = [json_floats(row) for row in z]
    summary = TraceSummary(
        name=str(trace["name"]),
        data_label=plan.data_label,
        column=None,
        trace_type="heatmap",
        points_total=int(plan.values.size),
        points_sent=int(values.size),
        unit=plan.unit,
        spec_index=plan.spec_index,
    )
    return trace, summary


def _heatmap_columns(plan: HeatmapPlan, max_columns: int) -> tuple[np.ndarray, list[Any], BinCells]:
    """Average records into columns that never cross a gap; x edges with empty gap columns."""
    cells = plan.cells
    n_time, n_bins = plan.values.shape
    if n_time == 0:
        return np.empty((0, n_bins)), [], cells
    if not plan.x.is_date:
        centres = np.asarray(plan.x.values, dtype=np.float64)
        low, high = edges_from_centres(centres[None, :])
        edges = np.concatenate([low[0, :1], high[0]])
        return plan.values, json_floats(edges), cells
    times = pd.DatetimeIndex(naive_utc(plan.x.values))
    columns, edges_ns, gaps = time_columns(times, max_columns)
    starts = np.asarray([first for first, _ in columns], dtype=np.int64)
    if len(columns) == n_time:
        means = plan.values
    else:
        finite = np.isfinite(plan.values)
        sums = np.add.reduceat(np.where(finite, plan.values, 0.0), starts, axis=0)
        counts = np.add.reduceat(finite.astype(np.int64), starts, axis=0)
        means = np.full(sums.shape, np.nan)
        np.divide(sums, counts, out=means, where=counts > 0)
        if cells.low.shape[0] > 1:
            # Per-record bins: a column takes its first record's bins (a column averages
            # only records of one gap-free run; bins rarely change inside one).
            cells = replace(cells, low=cells.low[starts], high=cells.high[starts])
    if gaps:
        blank = np.full(n_bins, np.nan)
        for position in gaps:
            means = np.insert(means, position, blank, axis=0)
            if cells.low.shape[0] > 1:
                cells = replace(
                    cells,
                    low=np.insert(cells.low, position, blank, axis=0),
                    high=np.insert(cells.high, position, blank, axis=0),
                )
    x = iso_strings(edges_ns.astype("datetime64[ns]"))
    return means, x, cells
