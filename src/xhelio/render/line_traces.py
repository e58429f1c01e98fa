"""Line traces: one line per column of a timeseries, broken at data gaps, downsampled.

`line_plans` turns a stored entry (or one of its columns) into `LinePlan`s: a vector
becomes one trace per component with its own colour and component name, and a NaN break
is inserted in every time gap longer than `GAP_FACTOR` median steps so no line is drawn
across missing data. `line_trace` downsamples a plan within its point budget (see
`downsample`) and writes the plotly trace, switching to WebGL above a threshold.

Imports only `data.entry`, `data.meaning`, `errors`, `timerange` and `render` siblings
(`component_names`, `downsample`, `figure_text`, `result`, `series`, `spectrogram`) from
xhelio.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.render.component_names import component_names
from xhelio.render.downsample import downsample_line
from xhelio.render.figure_text import axis_unit, quantity, quantity_title, unit_of
from xhelio.render.result import TraceSummary
from xhelio.render.series import XValues, coord_index, json_floats, window_slice, x_values
from xhelio.render.spectrogram import GAP_FACTOR
from xhelio.timerange import TimeRange

__all__ = ["COMPONENT_COLOURS", "LinePlan", "line_plans", "line_trace", "name_components"]

# plotly.js's default colorway; vector components get these explicitly so each stays
# distinct even when the model gave the vector one shared style.
COMPONENT_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


@dataclass
class LinePlan:
    """One line to draw: its x and y at full resolution, its names and its style."""

    template: dict[str, Any]
    x: XValues
    y: np.ndarray
    name: str
    quantity: str
    unit: str
    data_label: str
    column: str | None
    spec_index: int
    colour: str | None = None
    log_y: bool = False
    gap_breaks: int = 0  # NaN points inserted in `y` at time gaps (not samples)


def line_plans(
    entry: DataEntry,
    column: str | None,
    template: dict[str, Any],
    index: int,
    window: TimeRange | None,
) -> list[LinePlan]:
    """Plan one line for `column`, or one per column (a vector) when `column` is None."""
    data = entry.data
    if isinstance(data, xr.DataArray):
        dim = str(data.dims[0])
        frame = pd.DataFrame({entry.columns[0]: data.to_numpy()}, index=coord_index(data, dim))
    else:
        frame = data
    x = x_values(frame.index, entry)
    rows = window_slice(x, window)
    columns = [column] if column is not None else entry.columns
    expanded = column is None and len(columns) > 1
    shown = XValues(x.values[rows], x.is_date, x.title)
    breaks = _time_gap_breaks(shown)
    display = component_names(quantity(entry), entry.columns)
    shown_names = dict(zip(entry.columns, display, strict=True))
    plans: list[LinePlan] = []
    for position, name in enumerate(columns):
        series = frame.iloc[rows, entry.columns.index(name)]
        y = _float_values(series, entry.label, name)
        if breaks is not None:
            y = np.insert(y, breaks[0], np.nan)
        plans.append(
            LinePlan(
                template=copy.deepcopy(template),
                x=shown if breaks is None else breaks[1],
                y=y,
                name=shown_names[name]
                if expanded
                else (column and f"{entry.label}.{column}") or entry.label,
                quantity=quantity_title(entry),
                unit=axis_unit(unit_of(entry, name)),
                data_label=entry.label,
                column=name if (expanded or column) else None,
                spec_index=index,
                colour=COMPONENT_COLOURS[position % len(COMPONENT_COLOURS)] if expanded else None,
                gap_breaks=0 if breaks is None else int(breaks[0].size),
            )
        )
    return plans


def _time_gap_breaks(x: XValues) -> tuple[np.ndarray, XValues] | None:
    """NaN break points for gaps longer than `GAP_FACTOR` median steps of a time series.

    Returns the insert positions (for `np.insert` on y) and the x with a break time in
    the middle of each gap, so lines are not drawn across missing data.
    """
    if not x.is_date or len(x) < 3:
        return None
    index = pd.DatetimeIndex(x.values)
    if not index.is_monotonic_increasing:
        return None
    stamps = index.asi8
    steps = np.diff(stamps)
    typical = float(np.median(steps))
    if typical <= 0:
        return None
    after = np.flatnonzero(steps > GAP_FACTOR * typical)
    if after.size == 0:
        return None
    positions = after + 1
    merged = np.insert(stamps, positions, stamps[after] + steps[after] // 2)
    broken = pd.DatetimeIndex(merged.astype(f"datetime64[{index.unit}]"))
    if index.tz is not None:
        broken = broken.tz_localize("UTC").tz_convert(index.tz)
    return positions, XValues(broken, True, x.title)


def _float_values(series: pd.Series, label: str, column: str) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise UserError(
            f"Column '{column}' of '{label}' holds {series.dtype} values, not numbers; "
            "only numeric columns can be plotted."
        )
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(dtype=np.float64)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def name_components(lines: Sequence[LinePlan]) -> None:
    """Prefix component names with their quantity when two traces would share a name."""
    components = [p for p in lines if p.colour is not None]
    seen: dict[str, int] = {}
    for plan in components:
        seen[plan.name] = seen.get(plan.name, 0) + 1
    for plan in components:
        given = plan.template.get("name")
        if isinstance(given, str) and given:
            plan.name = f"{given} {plan.name}"
        elif seen[plan.name] > 1:
            plan.name = f"{plan.data_label} {plan.name}"


def line_trace(
    plan: LinePlan, budget: int, webgl_threshold: int
) -> tuple[dict[str, Any], TraceSummary]:
    """Downsample `plan` to `budget` points and write its plotly trace and summary."""
    positions, is_marker = downsample_line(plan.y, budget).positions()
    y = plan.y[positions]
    y[is_marker] = np.nan
    trace = dict(plan.template)
    trace_type = str(trace.get("type", "scatter"))
    if trace_type in ("scatter", "scattergl"):
        trace_type = "scattergl" if positions.size > webgl_threshold else trace_type
        trace["type"] = trace_type
        trace.setdefault("mode", "lines")
        trace.setdefault("connectgaps", False)
    # plotly hides the legend of a figure with one trace; a named line keeps its entry.
    trace.setdefault("showlegend", True)
    trace.setdefault("name", plan.name)
    # Hover names the trace and gives the value with its unit (one line per trace).
    unit = f" {plan.unit}" if plan.unit else ""
    trace.setdefault("hovertemplate", f"%{{fullData.name}}: %{{y:.4~g}}{unit}<extra></extra>")
    if plan.colour is not None:
        trace["line"] = {**trace.get("line", {}), "color": plan.colour}
        trace.setdefault("marker", {})
        trace["marker"] = {**trace["marker"], "color": plan.colour}
    trace["x"] = plan.x.take(positions)
    trace["y"] = json_floats(y)
    summary = TraceSummary(
        name=str(trace["name"]),
        data_label=plan.data_label,
        column=plan.column,
        trace_type=trace_type,
        points_total=int(plan.y.size) - plan.gap_breaks,
        points_sent=int(positions.size),
        unit=plan.unit,
        spec_index=plan.spec_index,
    )
    return trace, summary
