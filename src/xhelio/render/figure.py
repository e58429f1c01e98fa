"""Resolve LLM-written Plotly figure JSON against the DataStore into a browser-ready figure.

The model writes standard Plotly JSON whose traces carry ``data_label`` placeholders
(``"AC_H2_MFI.BGSEc"`` or ``"AC_H2_MFI.BGSEc.BGSEc_0"`` for one column); this module fills
x/y/z from the store, expands vectors into one trace per component, turns 2-D data into
heatmaps, downsamples long series within a per-figure point budget (see `downsample`),
lays out stacked panels that share one time axis, adds unit-bearing axis titles and the
default styling, and validates the result with plotly so mistakes come back as one short
message naming the property.

Here is the pipeline and the choice of trace kind per spec trace; the parts live in
siblings: `figure_spec` (parsing, panels, label resolution), `line_traces`,
`heatmap_traces`, `point_budget`, `layout`, `figure_text` (titles, units, citations) and
`result` (`RenderResult`, `TraceSummary`, re-exported here).

Extra trace keys understood here (removed before the figure reaches plotly):
``data_label``, ``column`` (alternative to ``label.column``), ``panel`` (1-based panel
number), ``log_color`` (heatmap colours on log10 scale), ``log_y`` (log y axis).
A figure may also use a ``panels`` list instead of ``data``:
``{"panels": [{"traces": [...], "yaxis": {...}}, ...], "layout": {...}}``.

Imports only `data`, `errors`, `timerange` and `render` siblings from xhelio.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import xarray as xr
from plotly.basedatatypes import BaseTraceType

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.errors import NoDataError, UserError
from xhelio.render.figure_spec import match_column, normalize_figure_spec, resolve_data_label
from xhelio.render.figure_text import add_citation, citations, default_title, unit_of
from xhelio.render.heatmap_traces import (
    HeatmapPlan,
    Reduction,
    bins_span_decade,
    heatmap_plan,
    heatmap_template,
    heatmap_trace,
)
from xhelio.render.layout import AxisFacts, build_layout, trace_panels
from xhelio.render.line_traces import LinePlan, line_plans, line_trace, name_components
from xhelio.render.point_budget import point_budgets
from xhelio.render.result import RenderResult, TraceSummary
from xhelio.render.spectrogram import select_point
from xhelio.timerange import TimeRange

__all__ = [
    "DEFAULT_POINT_BUDGET",
    "WEBGL_THRESHOLD",
    "RenderResult",
    "TraceSummary",
    "normalize_figure_spec",
    "render_plotly_json",
    "resolve_data_label",
]

DEFAULT_POINT_BUDGET = 50_000
WEBGL_THRESHOLD = 10_000
XHELIO_TRACE_KEYS = (
    "data_label",
    "column",
    "panel",
    "log_color",
    "log_y",
    "bins_dim",
    "select",
    "reduce",
)
# Every trace type plotly knows: a typo gets a short list instead of plotly's page.
_TRACE_TYPES = frozenset(
    name.lower()
    for name in dir(go)
    if isinstance(getattr(go, name), type) and issubclass(getattr(go, name), BaseTraceType)
)


@dataclass
class _LiteralPlan:
    """A trace the model wrote with its own data (no data_label): passed through."""

    trace: dict[str, Any]
    spec_index: int
    log_y: bool = False


_Plan = LinePlan | HeatmapPlan | _LiteralPlan


def render_plotly_json(
    figure: Mapping[str, Any] | str,
    store: DataStore,
    *,
    time_range: TimeRange | None = None,
    point_budget: int = DEFAULT_POINT_BUDGET,
    webgl_threshold: int = WEBGL_THRESHOLD,
) -> RenderResult:
    """Fill `data_label` placeholders from `store` and return the browser-ready figure.

    `time_range` restricts timeseries to a window (zoom) before downsampling, so the
    window gets full resolution within `point_budget`. Raises `UserError` naming the
    problem for unknown labels or columns and invalid Plotly properties.
    """
    spec = normalize_figure_spec(figure)
    notes: list[str] = []
    plans = [
        plan
        for index, trace in enumerate(spec["data"])
        for plan in _plan_trace(trace, index, store, time_range, notes)
    ]
    name_components([p for p in plans if isinstance(p, LinePlan)])
    budgets = point_budgets(plans, point_budget)
    traces: list[dict[str, Any]] = []
    summaries: list[TraceSummary] = []
    for plan, budget in zip(plans, budgets, strict=True):
        trace, summary = _materialize(plan, budget, webgl_threshold)
        traces.append(trace)
        summaries.append(summary)
    if time_range is not None and summaries and all(s.points_sent == 0 for s in summaries):
        raise NoDataError(
            f"No data of this figure falls in {time_range}. Zoom to a window inside the "
            "plotted data, or fetch data for this window first."
        )
    notes.extend(f"{s.name} has no data to show." for s in summaries if s.points_total == 0)
    axis_info = [_axis_facts(plan) for plan in plans]
    entries = [
        store.get(label)
        for label in dict.fromkeys(p.data_label for p in plans if not isinstance(p, _LiteralPlan))
    ]
    spec_layout = dict(spec.get("layout", {}))
    if "title" not in spec_layout and entries:
        title = default_title(entries)
        if title:
            spec_layout["title"] = {"text": title}
    layout, panels = build_layout(spec_layout, traces, axis_info, time_range, notes)
    add_citation(layout, citations(entries))
    resolved: dict[str, Any] = {"data": traces, "layout": layout}
    _validate(resolved)
    return RenderResult(
        resolved, spec, summaries, panels, notes, time_range, trace_panels(layout, traces)
    )


def _plan_trace(
    trace: dict[str, Any],
    index: int,
    store: DataStore,
    window: TimeRange | None,
    notes: list[str],
) -> list[_Plan]:
    """Turn one spec trace into plans: several for a vector, one heatmap for 2-D data."""
    template = {k: copy.deepcopy(v) for k, v in trace.items() if k not in XHELIO_TRACE_KEYS}
    panel = trace.get("panel")
    if panel is not None:
        if not isinstance(panel, int) or isinstance(panel, bool) or panel < 1:
            raise UserError(f"Trace {index}: 'panel' must be a positive integer, got {panel!r}.")
        template.setdefault("yaxis", "y" if panel == 1 else f"y{panel}")
    log_y = bool(trace.get("log_y"))
    data_label = trace.get("data_label")
    if data_label is None:
        return [_LiteralPlan(template, index, log_y)]
    if not isinstance(data_label, str) or not data_label:
        raise UserError(f"Trace {index}: 'data_label' must be a label string.")
    entry, column = resolve_data_label(store, data_label)
    if isinstance(trace.get("column"), str):
        column = match_column(entry, trace["column"])
    point = _point_series(entry, trace.get("select"), template, notes)
    if point is not None:
        entry, column = point, None
    elif _is_two_dimensional(entry, template):
        log_color = trace.get("log_color")
        plan = heatmap_plan(
            entry,
            heatmap_template(template, notes),
            index,
            window,
            None if log_color is None else bool(log_color),
            Reduction(trace.get("bins_dim"), trace.get("select"), trace.get("reduce")),
            notes,
        )
        wants_log = trace.get("log_y")
        plan.log_y = bins_span_decade(plan.cells) if wants_log is None else bool(wants_log)
        return [plan]
    plans = line_plans(entry, column, template, index, window)
    for line in plans:
        line.log_y = log_y
    return list(plans)


def _point_series(
    entry: DataEntry, select: Any, template: dict[str, Any], notes: list[str]
) -> DataEntry | None:
    """With one element chosen on every non-time dimension, 2-D data is one line.

    A scientist asking for the flux at one energy and look direction wants a time
    series, not a one-row spectrogram. Returns None when `select` leaves a dimension.
    """
    array = entry.data
    if not isinstance(array, xr.DataArray) or array.ndim < 2 or not isinstance(select, dict):
        return None
    if not {str(d) for d in array.dims[1:]} <= {str(k) for k in select}:
        return None
    series, taken = select_point(array, select)
    name = f"{array.name or entry.label}[{taken}]"
    time = str(array.dims[0])
    index = pd.Index(array.coords[time].to_numpy(), name="time") if time in array.coords else None
    frame = pd.DataFrame({name: series.to_numpy()}, index=index)
    if template.get("type") == "heatmap":
        template["type"] = "scatter"
    template.setdefault("name", f"{entry.label}[{taken}]")
    notes.append(f"{array.name}: took {taken} as one time series.")
    unit = unit_of(entry, str(array.name or entry.label))
    return replace(entry, data=frame, units={name: unit})


def _is_two_dimensional(entry: DataEntry, template: dict[str, Any]) -> bool:
    data = entry.data
    if isinstance(data, xr.DataArray):
        return data.ndim >= 2
    return bool(data.attrs.get("spectrogram")) or template.get("type") == "heatmap"


def _materialize(
    plan: _Plan, budget: int, webgl_threshold: int
) -> tuple[dict[str, Any], TraceSummary]:
    if isinstance(plan, LinePlan):
        return line_trace(plan, budget, webgl_threshold)
    if isinstance(plan, HeatmapPlan):
        return heatmap_trace(plan, budget)
    trace = plan.trace
    points = _literal_points(trace)
    summary = TraceSummary(
        name=str(trace.get("name", "")),
        data_label=None,
        column=None,
        trace_type=str(trace.get("type", "scatter")),
        points_total=points,
        points_sent=points,
        unit="",
        spec_index=plan.spec_index,
    )
    return trace, summary


def _literal_points(trace: Mapping[str, Any]) -> int:
    """How many values a trace given with its own arrays carries (y, z, r or values)."""
    sizes = [len(v) for k in ("y", "z", "r", "values") if isinstance(v := trace.get(k), list)]
    return max(sizes, default=0)


def _axis_facts(plan: _Plan) -> AxisFacts:
    if isinstance(plan, LinePlan):
        finite = plan.y[np.isfinite(plan.y)]
        return AxisFacts(
            plan.x.is_date,
            plan.x.title,
            plan.quantity,
            plan.unit,
            log_y=plan.log_y,
            non_negative=bool(finite.size) and float(finite.min()) >= 0,
        )
    if isinstance(plan, HeatmapPlan):
        return AxisFacts(plan.x.is_date, plan.x.title, plan.bins_title, "", log_y=plan.log_y)
    return AxisFacts(False, "", "", "", has_data=False, log_y=plan.log_y)


def _validate(figure: dict[str, Any]) -> None:
    """Check the figure with plotly's validators, one trace at a time for a precise message."""
    for index, trace in enumerate(figure["data"]):
        trace_type = str(trace.get("type", "scatter"))
        if trace_type not in _TRACE_TYPES:
            raise UserError(
                f"Trace {index} has unknown type '{trace_type}'. Common types: scatter, "
                "scattergl, bar, heatmap, histogram, box."
            )
        skeleton = {k: v for k, v in trace.items() if k not in ("x", "y", "z")}
        try:
            go.Figure({"data": [skeleton]})
        except ValueError as exc:
            raise UserError(f"Trace {index} ({trace_type}): {_short_plotly_error(exc)}") from exc
    try:
        go.Layout(figure["layout"])
    except ValueError as exc:
        raise UserError(f"Layout: {_short_plotly_error(exc)}") from exc


def _short_plotly_error(exc: ValueError) -> str:
    """Reduce plotly's page-long validation error to its first useful sentences."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines()]
    kept: list[str] = []
    for line in lines:
        if line.startswith(("Valid properties", "Bad property path")):
            break
        if line:
            kept.append(line)
    message = " ".join(kept)
    message = message.replace("plotly.graph_objs.", "")
    return message if len(message) <= 400 else message[:397] + "..."
