"""Resolve LLM-written Plotly figure JSON against the DataStore into a browser-ready figure.

The model writes standard Plotly JSON whose traces carry ``data_label`` placeholders
(``"AC_H2_MFI.BGSEc"`` or ``"AC_H2_MFI.BGSEc.BGSEc_0"`` for one column); this module fills
x/y/z from the store, expands vectors into one trace per component, turns 2-D data into
heatmaps, downsamples long series within a per-figure point budget (see `downsample`),
lays out stacked panels that share one time axis, adds unit-bearing axis titles and the
default styling, and validates the result with plotly so mistakes come back as one short
message naming the property.

Extra trace keys understood here (removed before the figure reaches plotly):
``data_label``, ``column`` (alternative to ``label.column``), ``panel`` (1-based panel
number), ``log_color`` (heatmap colours on log10 scale), ``log_y`` (log y axis).
A figure may also use a ``panels`` list instead of ``data``:
``{"panels": [{"traces": [...], "yaxis": {...}}, ...], "layout": {...}}``.

Imports only `data`, `errors`, `timerange` and `render.downsample` from xhelio.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import xarray as xr
from plotly.basedatatypes import BaseTraceType

from xhelio.data.entry import DataEntry
from xhelio.data.meaning import citation_text, display_units, html_units, prefers_log_colour
from xhelio.data.store import DataStore, UnknownLabelError
from xhelio.errors import NoDataError, UserError
from xhelio.render.component_names import component_names
from xhelio.render.downsample import downsample_line
from xhelio.render.layout import AxisFacts, build_layout
from xhelio.render.spectrogram import BinCells, bin_cells, raster, reduce_to_bins, time_columns
from xhelio.sources.dims import edges_from_centres
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
# A step longer than this many median steps is a data gap: the line is broken there.
GAP_FACTOR = 10
# A spectrogram keeps at least this many time columns (one per two pixels of a default
# 1,100 px figure) even when many traces share the point budget.
MIN_HEATMAP_COLUMNS = 500
# Even a crowded figure draws each line with at least this many points.
_MIN_LINE_POINTS = 200
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
_TRACE_TYPES = frozenset(
    name.lower()
    for name in dir(go)
    if isinstance(getattr(go, name), type) and issubclass(getattr(go, name), BaseTraceType)
)


@dataclass(frozen=True)
class TraceSummary:
    """What one resolved trace holds, for the model and for tests."""

    name: str
    data_label: str | None
    column: str | None
    trace_type: str
    points_total: int
    points_sent: int
    unit: str
    spec_index: int

    @property
    def downsampled(self) -> bool:
        """Whether fewer points were sent than the source has."""
        return self.points_sent < self.points_total


@dataclass
class RenderResult:
    """A resolved figure: what the browser gets, plus what was done to produce it."""

    figure: dict[str, Any]
    spec: dict[str, Any]
    traces: list[TraceSummary]
    panels: int
    notes: list[str] = field(default_factory=list[str])
    time_range: TimeRange | None = None

    @property
    def points_sent(self) -> int:
        """Total data points (heatmap cells included) sent to the browser."""
        return sum(t.points_sent for t in self.traces)

    def summary(self) -> dict[str, Any]:
        """Return a short JSON-able description (no data arrays) for the model."""
        return {
            "status": "ok",
            "panels": self.panels,
            "points_sent": self.points_sent,
            "time_range": str(self.time_range) if self.time_range else None,
            "traces": [
                {
                    "name": t.name,
                    "data_label": t.data_label,
                    "type": t.trace_type,
                    "points": t.points_total,
                    "sent": t.points_sent,
                    "downsampled": t.downsampled,
                    "unit": t.unit,
                }
                for t in self.traces
            ],
            "notes": self.notes,
        }


@dataclass
class _XValues:
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
            return _iso_strings(_naive_utc(picked))
        array = np.asarray(picked)
        if np.issubdtype(array.dtype, np.number):
            return _json_floats(array.astype(np.float64))
        return [str(v) for v in array.tolist()]


@dataclass
class _LinePlan:
    template: dict[str, Any]
    x: _XValues
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


@dataclass
class _HeatmapPlan:
    template: dict[str, Any]
    x: _XValues
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


@dataclass
class _LiteralPlan:
    """A trace the model wrote with its own data (no data_label): passed through."""

    trace: dict[str, Any]
    spec_index: int
    log_y: bool = False


_Plan = _LinePlan | _HeatmapPlan | _LiteralPlan


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
    _name_components(plans)
    budgets = _budgets(plans, point_budget)
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
        title = _default_title(entries)
        if title:
            spec_layout["title"] = {"text": title}
    layout, panels = build_layout(spec_layout, traces, axis_info, time_range, notes)
    _add_citation(layout, _citations(entries))
    resolved: dict[str, Any] = {"data": traces, "layout": layout}
    _validate(resolved)
    return RenderResult(resolved, spec, summaries, panels, notes, time_range)


def normalize_figure_spec(figure: Mapping[str, Any] | str) -> dict[str, Any]:
    """Return a deep copy of the model's figure with ``panels`` flattened into ``data``."""
    if isinstance(figure, str):
        try:
            figure = json.loads(figure)
        except json.JSONDecodeError as exc:
            raise UserError(f"The figure is not valid JSON: {exc}. Send a JSON object.") from exc
    if not isinstance(figure, Mapping):
        raise UserError("The figure must be a JSON object with 'data' and 'layout'.")
    spec: dict[str, Any] = copy.deepcopy(dict(figure))
    unknown = sorted(set(spec) - {"data", "layout", "panels"})
    if unknown:
        raise UserError(
            f"Unknown top-level figure key(s): {', '.join(unknown)}. "
            "Use 'data' (list of traces), 'layout' and optionally 'panels'."
        )
    data = spec.get("data", [])
    layout = spec.get("layout", {})
    if not isinstance(data, list) or not isinstance(layout, dict):
        raise UserError("'data' must be a list of trace objects and 'layout' an object.")
    for number, panel in enumerate(spec.pop("panels", None) or [], start=1):
        data.extend(_flatten_panel(panel, number, layout))
    for index, trace in enumerate(data):
        if not isinstance(trace, dict):
            raise UserError(f"Trace {index} must be an object, got {type(trace).__name__}.")
    spec["data"] = data
    spec["layout"] = layout
    return spec


def _flatten_panel(panel: Any, number: int, layout: dict[str, Any]) -> list[dict[str, Any]]:
    """Turn one convenience panel into traces tagged with their panel number."""
    if isinstance(panel, list):
        panel = {"traces": panel}
    if not isinstance(panel, dict) or not isinstance(panel.get("traces"), list):
        raise UserError(
            f"Panel {number} must be an object with a 'traces' list (and optional 'yaxis')."
        )
    axis_key = "yaxis" if number == 1 else f"yaxis{number}"
    if isinstance(panel.get("yaxis"), dict):
        layout[axis_key] = {**panel["yaxis"], **layout.get(axis_key, {})}
    traces: list[dict[str, Any]] = []
    for trace in panel["traces"]:
        if not isinstance(trace, dict):
            raise UserError(f"Panel {number} holds a trace that is not an object: {trace!r}.")
        traces.append({**trace, "panel": trace.get("panel", number)})
    return traces


def resolve_data_label(store: DataStore, data_label: str) -> tuple[DataEntry, str | None]:
    """Split ``label`` or ``label.column`` into the stored entry and the column, if any.

    Labels contain dots themselves, so the longest stored label that prefixes
    `data_label` wins.
    """
    if store.has(data_label):
        return store.get(data_label), None
    labels = store.labels()
    prefixes = [label for label in labels if data_label.startswith(label + ".")]
    if not prefixes:
        raise UnknownLabelError(data_label, labels)
    label = max(prefixes, key=len)
    entry = store.get(label)
    return entry, _match_column(entry, data_label[len(label) + 1 :])


def _match_column(entry: DataEntry, wanted: str) -> str:
    """Find `wanted` among the entry's columns (exact, case-insensitive, or position)."""
    columns = entry.columns
    if wanted in columns:
        return wanted
    folded = [c for c in columns if c.lower() == wanted.lower()]
    if folded:
        return folded[0]
    if wanted.isdigit() and int(wanted) < len(columns):
        return columns[int(wanted)]
    raise UserError(
        f"'{entry.label}' has no column '{wanted}'. Its columns: {', '.join(columns)}. "
        f"Use '{entry.label}' for all of them or '{entry.label}.<column>' for one."
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
        column = _match_column(entry, trace["column"])
    if _is_two_dimensional(entry, template):
        log_color = trace.get("log_color")
        plan = _heatmap_plan(
            entry,
            _heatmap_template(template, notes),
            index,
            window,
            None if log_color is None else bool(log_color),
            _Reduction(trace.get("bins_dim"), trace.get("select"), trace.get("reduce")),
            notes,
        )
        wants_log = trace.get("log_y")
        plan.log_y = _bins_span_decade(plan.cells) if wants_log is None else bool(wants_log)
        return [plan]
    plans = _line_plans(entry, column, template, index, window)
    for line in plans:
        line.log_y = log_y
    return list(plans)


def _is_two_dimensional(entry: DataEntry, template: dict[str, Any]) -> bool:
    data = entry.data
    if isinstance(data, xr.DataArray):
        return data.ndim >= 2
    return bool(data.attrs.get("spectrogram")) or template.get("type") == "heatmap"


def _line_plans(
    entry: DataEntry,
    column: str | None,
    template: dict[str, Any],
    index: int,
    window: TimeRange | None,
) -> list[_LinePlan]:
    data = entry.data
    if isinstance(data, xr.DataArray):
        dim = str(data.dims[0])
        frame = pd.DataFrame(
            {entry.columns[0]: data.to_numpy()}, index=_coord_index(data, dim, entry)
        )
    else:
        frame = data
    x = _x_values(frame.index, entry)
    rows = _window_slice(x, window)
    columns = [column] if column is not None else entry.columns
    expanded = column is None and len(columns) > 1
    shown = _XValues(x.values[rows], x.is_date, x.title)
    breaks = _time_gap_breaks(shown)
    display = component_names(_quantity(entry), entry.columns)
    shown_names = dict(zip(entry.columns, display, strict=True))
    plans: list[_LinePlan] = []
    for position, name in enumerate(columns):
        series = frame.iloc[rows, entry.columns.index(name)]
        y = _float_values(series, entry.label, name)
        if breaks is not None:
            y = np.insert(y, breaks[0], np.nan)
        plans.append(
            _LinePlan(
                template=copy.deepcopy(template),
                x=shown if breaks is None else breaks[1],
                y=y,
                name=shown_names[name]
                if expanded
                else (column and f"{entry.label}.{column}") or entry.label,
                quantity=_quantity_title(entry),
                unit=html_units(display_units(_unit_of(entry, name))),
                data_label=entry.label,
                column=name if (expanded or column) else None,
                spec_index=index,
                colour=COMPONENT_COLOURS[position % len(COMPONENT_COLOURS)] if expanded else None,
                gap_breaks=0 if breaks is None else int(breaks[0].size),
            )
        )
    return plans


def _time_gap_breaks(x: _XValues) -> tuple[np.ndarray, _XValues] | None:
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
    return positions, _XValues(broken, True, x.title)


def _coord_index(data: xr.DataArray, dim: str, entry: DataEntry) -> pd.Index:
    if dim in data.coords:
        return pd.Index(data.coords[dim].to_numpy(), name=dim)
    return pd.RangeIndex(data.shape[0], name=dim)


def _x_values(index: pd.Index, entry: DataEntry) -> _XValues:
    if isinstance(index, pd.DatetimeIndex):
        return _XValues(index, True)
    if pd.api.types.is_datetime64_any_dtype(index.dtype):
        return _XValues(pd.DatetimeIndex(index), True)
    title = str(index.name) if index.name is not None else ""
    unit = entry.units.get(title, "") if title else ""
    return _XValues(index, False, f"{title} ({unit})" if unit else title)


def _window_slice(x: _XValues, window: TimeRange | None) -> slice | np.ndarray:
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


def _float_values(series: pd.Series, label: str, column: str) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise UserError(
            f"Column '{column}' of '{label}' holds {series.dtype} values, not numbers; "
            "only numeric columns can be plotted."
        )
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(dtype=np.float64)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


@dataclass(frozen=True)
class _Reduction:
    """How a trace asks to reduce a multi-dimensional entry to one spectrogram."""

    bins_dim: Any = None
    select: Any = None
    reduce: Any = None


# Keys plotly's heatmap accepts; anything else a model copied from a line trace (mode,
# line, marker, connectgaps...) is dropped with a note instead of failing the figure.
_HEATMAP_KEYS = frozenset(go.Heatmap()._valid_props)  # pyright: ignore[reportPrivateUsage]


def _heatmap_template(template: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    dropped = sorted(k for k in template if k not in _HEATMAP_KEYS)
    if dropped:
        notes.append(
            f"Ignored {', '.join(dropped)} on a spectrogram (heatmap traces have no "
            "lines or markers)."
        )
    kept = {k: v for k, v in template.items() if k in _HEATMAP_KEYS}
    kept["type"] = "heatmap"
    return kept


def _heatmap_plan(
    entry: DataEntry,
    template: dict[str, Any],
    index: int,
    window: TimeRange | None,
    log_color: bool | None,
    reduction: _Reduction,
    notes: list[str],
) -> _HeatmapPlan:
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
        x = _x_values(_coord_index(oriented, time_dim, entry), entry)
        values = oriented.to_numpy().astype(np.float64)
        cells = bin_cells(oriented, bins_dim)
    else:
        x = _x_values(data.index, entry)
        values = data.to_numpy(dtype=np.float64)
        bins_dim = str(data.attrs.get("bins_name", "bin"))
        low, high = edges_from_centres(_frame_bins(data)[None, :])
        cells = BinCells(low, high, bins_dim, str(data.attrs.get("bins_units", "")))
    bins_title = cells.title or bins_dim
    bins_units = display_units(cells.units)
    if bins_units:
        bins_title = f"{bins_title} ({html_units(bins_units)})"
    rows = _window_slice(x, window)
    if cells.low.shape[0] > 1:
        cells = replace(cells, low=cells.low[rows], high=cells.high[rows])
    unit = _unit_of(entry, entry.columns[0])
    if log_color is None:
        quantity = _quantity(entry)
        log_color = prefers_log_colour(quantity, unit, entry.description)
    return _HeatmapPlan(
        template=template,
        x=_XValues(x.values[rows], x.is_date),
        values=values[rows],
        cells=cells,
        bins_title=bins_title,
        unit=unit,
        log_color=log_color,
        name=str(template.get("name") or entry.label),
        data_label=entry.label,
        spec_index=index,
        quantity=_quantity_title(entry),
    )


def _bins_span_decade(cells: BinCells) -> bool:
    """Log y for bins that are positive and span more than a factor of ten."""
    high = cells.high[np.isfinite(cells.high)]
    centres = np.sqrt(np.abs(cells.low * cells.high))
    positive = centres[np.isfinite(centres) & (centres > 0)]
    if positive.size < 2 or np.any(high <= 0):
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


def _quantity(entry: DataEntry) -> str:
    """Short name of what an entry measures: the parameter, not the dataset prefix."""
    dataset = entry.source_dataset
    if dataset and entry.label.startswith(dataset + "."):
        return entry.label[len(dataset) + 1 :]
    # Labels are conventionally DATASET.PARAMETER: the last part names the quantity.
    return entry.source_parameter or entry.label.rsplit(".", 1)[-1]


def _quantity_title(entry: DataEntry) -> str:
    """What a y axis says: the parameter's description when short, else its name.

    Indices stored multiplied (OMNI's Kp*10) say so, so nobody reads Kp 30 as 30.
    """
    name = _quantity(entry)
    description = " ".join(entry.description.split())
    text = description if description and len(description) <= 40 else name
    scale = entry.meta.get("scale")
    if isinstance(scale, int | float) and scale != 1:
        text = f"{name} x{scale:g}" if text == name else f"{text} ({name} x{scale:g})"
    return text


def _default_title(entries: Sequence[DataEntry]) -> str:
    """Spacecraft, instrument and dataset of the plotted data, for a figure without title."""
    parts: list[str] = []
    for entry in entries:
        dataset = entry.source_dataset
        if not dataset:
            continue
        who = " ".join(
            str(entry.meta[k]).upper() if k == "mission" else str(entry.meta[k])
            for k in ("mission", "instrument")
            if entry.meta.get(k)
        )
        text = f"{who} — {dataset}" if who else dataset
        if text not in parts:
            parts.append(text)
    title = "; ".join(parts[:3]) + ("; ..." if len(parts) > 3 else "")
    return title if len(title) <= 110 else title[:107] + "..."


def _citations(entries: Sequence[DataEntry]) -> str:
    lines = list(dict.fromkeys(citation_text(e.citation) for e in entries if e.citation))
    return "<br>".join(line for line in lines[:3] if line)


def _unit_of(entry: DataEntry, column: str) -> str:
    units = entry.units
    for key in (column, entry.label, entry.source_parameter or ""):
        if units.get(key):
            return units[key]
    distinct = {u for u in units.values() if u}
    if len(distinct) == 1:
        return distinct.pop()
    if isinstance(entry.data, xr.DataArray):
        return str(entry.data.attrs.get("units", ""))
    return ""


def _name_components(plans: Sequence[_Plan]) -> None:
    """Prefix component names with their quantity when two traces would share a name."""
    lines = [p for p in plans if isinstance(p, _LinePlan) and p.colour is not None]
    seen: dict[str, int] = {}
    for plan in lines:
        seen[plan.name] = seen.get(plan.name, 0) + 1
    for plan in lines:
        given = plan.template.get("name")
        if isinstance(given, str) and given:
            plan.name = f"{given} {plan.name}"
        elif seen[plan.name] > 1:
            plan.name = f"{plan.data_label} {plan.name}"


def _wanted_points(plan: _Plan) -> int:
    if isinstance(plan, _LinePlan):
        return int(plan.y.size)
    if isinstance(plan, _HeatmapPlan):
        return int(plan.values.size)
    return 0


def _budgets(plans: Sequence[_Plan], point_budget: int) -> list[int]:
    """Points each trace may send: heatmaps take their (floored) share, lines the rest."""
    first = _allocate([_wanted_points(p) for p in plans], point_budget)
    budgets = [0] * len(plans)
    for i, plan in enumerate(plans):
        if isinstance(plan, _HeatmapPlan):
            n_time, n_bins = plan.values.shape
            columns = min(n_time, max(first[i] // max(n_bins, 1), MIN_HEATMAP_COLUMNS))
            budgets[i] = columns * n_bins
    line_budget = max(point_budget - sum(budgets), _MIN_LINE_POINTS)
    line_indices = [i for i, p in enumerate(plans) if isinstance(p, _LinePlan)]
    shares = _allocate([_wanted_points(plans[i]) for i in line_indices], line_budget)
    for i, share in zip(line_indices, shares, strict=True):
        budgets[i] = max(share, min(_MIN_LINE_POINTS, _wanted_points(plans[i])))
    return budgets


def _allocate(wanted: list[int], budget: int) -> list[int]:
    """Split `budget` across traces: small ones get all they need, big ones share the rest."""
    shares = [0] * len(wanted)
    pending = [i for i, w in enumerate(wanted) if w > 0]
    remaining = budget
    while pending:
        fair = remaining // len(pending)
        satisfied = [i for i in pending if wanted[i] <= fair]
        if not satisfied:
            for i in pending:
                shares[i] = max(fair, 1)
            break
        for i in satisfied:
            shares[i] = wanted[i]
            remaining -= wanted[i]
        pending = [i for i in pending if i not in satisfied]
    return shares


def _materialize(
    plan: _Plan, budget: int, webgl_threshold: int
) -> tuple[dict[str, Any], TraceSummary]:
    if isinstance(plan, _LinePlan):
        return _line_trace(plan, budget, webgl_threshold)
    if isinstance(plan, _HeatmapPlan):
        return _heatmap_trace(plan, budget)
    trace = plan.trace
    summary = TraceSummary(
        name=str(trace.get("name", "")),
        data_label=None,
        column=None,
        trace_type=str(trace.get("type", "scatter")),
        points_total=0,
        points_sent=0,
        unit="",
        spec_index=plan.spec_index,
    )
    return trace, summary


def _line_trace(
    plan: _LinePlan, budget: int, webgl_threshold: int
) -> tuple[dict[str, Any], TraceSummary]:
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
    if plan.colour is not None:
        trace["line"] = {**trace.get("line", {}), "color": plan.colour}
        trace.setdefault("marker", {})
        trace["marker"] = {**trace["marker"], "color": plan.colour}
    trace["x"] = plan.x.take(positions)
    trace["y"] = _json_floats(y)
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


def _heatmap_trace(plan: _HeatmapPlan, budget: int) -> tuple[dict[str, Any], TraceSummary]:
    n_bins = plan.values.shape[1]
    max_columns = max(1, budget // max(n_bins, 1))
    values, x_edges, cells = _heatmap_columns(plan, max_columns)
    y_edges, z = raster(values, cells, plan.log_y)
    if plan.log_color:
        positive = z > 0
        z = np.log10(z, out=np.full(z.shape, np.nan), where=positive)
    unit = html_units(display_units(plan.unit))
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
    trace["x"] = x_edges
    trace["y"] = _json_floats(y_edges)
    trace["z"] = [_json_floats(row) for row in z]
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


def _heatmap_columns(
    plan: _HeatmapPlan, max_columns: int
) -> tuple[np.ndarray, list[Any], BinCells]:
    """Average records into columns that never cross a gap; x edges with empty gap columns."""
    cells = plan.cells
    n_time, n_bins = plan.values.shape
    if n_time == 0:
        return np.empty((0, n_bins)), [], cells
    if not plan.x.is_date:
        centres = np.asarray(plan.x.values, dtype=np.float64)
        low, high = edges_from_centres(centres[None, :])
        edges = np.concatenate([low[0, :1], high[0]])
        return plan.values, _json_floats(edges), cells
    times = pd.DatetimeIndex(_naive_utc(plan.x.values))
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
    x = _iso_strings(edges_ns.astype("datetime64[ns]"))
    return means, x, cells


def _axis_facts(plan: _Plan) -> AxisFacts:
    if isinstance(plan, _LinePlan):
        return AxisFacts(plan.x.is_date, plan.x.title, plan.quantity, plan.unit, log_y=plan.log_y)
    if isinstance(plan, _HeatmapPlan):
        return AxisFacts(plan.x.is_date, plan.x.title, plan.bins_title, "", log_y=plan.log_y)
    return AxisFacts(False, "", "", "", has_data=False, log_y=plan.log_y)


def _naive_utc(values: Any) -> np.ndarray:
    """Datetime values as naive UTC datetime64 (plotly.js dates carry no zone)."""
    index = pd.DatetimeIndex(values)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return index.to_numpy()


def _iso_strings(values: np.ndarray) -> list[str]:
    """ISO 8601 strings at the coarsest unit that loses nothing (shorter JSON)."""
    nanos = values.astype("datetime64[ns]").astype(np.int64)
    unit = "us"
    if not np.any(nanos % 1_000_000_000):
        unit = "s"
    elif not np.any(nanos % 1_000_000):
        unit = "ms"
    return np.datetime_as_string(values, unit=unit).tolist()


def _json_floats(values: np.ndarray) -> list[float | None]:
    """Floats for JSON: NaN and infinities become null (plotly draws a gap)."""
    array = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(array)
    if finite.all():
        return array.tolist()
    boxed = array.astype(object)
    boxed[~finite] = None
    return boxed.tolist()


def _add_citation(layout: dict[str, Any], text: str) -> None:
    """Put the data citation under the figure, where exports keep it."""
    if not text:
        return
    annotations = list(layout.get("annotations") or [])
    annotations.append(
        {
            "text": text,
            "xref": "paper",
            "yref": "paper",
            "x": 0,
            "y": 0,
            "xanchor": "left",
            "yanchor": "top",
            "yshift": -48,
            "showarrow": False,
            "align": "left",
            "font": {"size": 9, "color": "#555555"},
            "name": "xhelio-citation",
        }
    )
    layout["annotations"] = annotations
    margin = layout.get("margin")
    if isinstance(margin, dict):
        margin["b"] = max(int(margin.get("b", 80)), 70 + 12 * text.count("<br>"))


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
