"""Layout rules for resolved figures: default styling, stacked panels, shared time axes.

Given the model's layout and the resolved traces, this module applies the seed's default
styling (white backgrounds, dark font, fixed 1,100 px width and 300 px per panel, no
autosize so toolbar clicks do not resize the figure), stacks panels (one per base y axis)
that share one matching time axis, writes unit-bearing axis titles the model left out,
sets log axes and the zoom window. Anything the model set explicitly is kept.

Imports nothing from xhelio but `timerange` and `render.figure_text` (the unit rule).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from xhelio.render.figure_text import titled, unit_key, without_unit, wrap_title
from xhelio.timerange import TimeRange, readable_iso_ranges

__all__ = [
    "DEFAULT_LAYOUT",
    "FIGURE_WIDTH_PX",
    "PANEL_HEIGHT_PX",
    "AxisFacts",
    "build_layout",
    "trace_panels",
]

PANEL_HEIGHT_PX = 300
FIGURE_WIDTH_PX = 1100
# Vertical space between stacked panels, in pixels (turned into a paper fraction).
PANEL_GAP_PX = 40
DEFAULT_LAYOUT: dict[str, Any] = {
    "paper_bgcolor": "white",
    "plot_bgcolor": "white",
    "font": {"color": "#222222"},
    "autosize": False,
    "width": FIGURE_WIDTH_PX,
}
TIME_AXIS_TITLE = "Time (UTC)"
# Trace types drawn without x/y axes: they never form a panel.
_NON_CARTESIAN = frozenset(
    {
        "pie",
        "sunburst",
        "treemap",
        "icicle",
        "funnelarea",
        "table",
        "indicator",
        "sankey",
        "parcoords",
        "parcats",
        "scatter3d",
        "surface",
        "mesh3d",
        "cone",
        "streamtube",
        "volume",
        "isosurface",
        "scattergeo",
        "choropleth",
        "scattermap",
        "choroplethmap",
        "densitymap",
        "scatterpolar",
        "scatterpolargl",
        "barpolar",
        "scatterternary",
        "scattersmith",
        "scattercarpet",
        "carpet",
        "contourcarpet",
        "splom",
    }
)


@dataclass(frozen=True)
class AxisFacts:
    """What a resolved trace tells the layout: x kind, y quantity and unit, log wish."""

    x_is_date: bool
    x_title: str
    quantity: str
    unit: str
    has_data: bool = True
    log_y: bool = False
    # Every value is >= 0 (a density, a speed, a magnitude): the axis stays above zero.
    non_negative: bool = False


def build_layout(
    spec_layout: Mapping[str, Any],
    traces: Sequence[dict[str, Any]],
    facts: Sequence[AxisFacts],
    time_range: TimeRange | None,
    notes: list[str],
) -> tuple[dict[str, Any], int]:
    """Return the finished layout and the number of panels; may re-point trace x axes."""
    layout: dict[str, Any] = copy.deepcopy(dict(spec_layout))
    _readable_title(layout)
    _apply_defaults(layout)
    pairs = [(t, f) for t, f in zip(traces, facts, strict=True) if _is_cartesian(t)]
    panels = _panel_axes(layout, [t for t, _ in pairs])
    grid = layout.get("grid")
    rows = grid.get("rows") if isinstance(grid, dict) else None
    count = rows if isinstance(rows, int) and rows > 0 else max(1, len(panels))
    layout.setdefault("height", max(PANEL_HEIGHT_PX * count, _legend_height(layout, pairs, count)))
    has_domains = any("domain" in _axis(layout, y) for y in panels)
    if grid is None and len(panels) > 1 and not has_domains:
        _stack_panels(layout, pairs, panels)
        _place_legends(layout, pairs, panels)
    _place_colorbars(layout, pairs)
    _mark_date_axes(layout, pairs)
    _title_axes(layout, pairs, panels, notes)
    for trace, fact in pairs:
        if fact.log_y:
            _axis(layout, _y_of(trace)).setdefault("type", "log")
    if time_range is not None:
        _apply_window(layout, pairs, time_range)
    return layout, count


# One legend entry's height in pixels, and the margins and padding around a one-panel plot.
_LEGEND_ENTRY_PX = 20
_LEGEND_ROOM_PX = 180


def _legend_height(
    layout: Mapping[str, Any], pairs: Sequence[tuple[dict[str, Any], AxisFacts]], panels: int
) -> int:
    """The height a one-panel figure needs for its legend to list every line (no clipping)."""
    if panels != 1 or layout.get("showlegend") is False:
        return 0
    entries = sum(
        1
        for trace, _ in pairs
        if trace.get("type") not in ("heatmap", "contour") and trace.get("showlegend") is not False
    )
    return entries * _LEGEND_ENTRY_PX + _LEGEND_ROOM_PX if entries > 1 else 0


def _readable_title(layout: dict[str, Any]) -> None:
    """A title naming a tool-style ISO range says it as people read it (inclusive)."""
    title = layout.get("title")
    if isinstance(title, str):
        layout["title"] = readable_iso_ranges(title)
    elif isinstance(title, dict) and isinstance(title.get("text"), str):
        title["text"] = readable_iso_ranges(title["text"])


def _apply_defaults(layout: dict[str, Any]) -> None:
    for key, value in DEFAULT_LAYOUT.items():
        if key == "font" and isinstance(layout.get("font"), dict):
            layout["font"].setdefault("color", value["color"])
        else:
            layout.setdefault(key, copy.deepcopy(value))
    # plotly.js's default 100 px top margin would take a third of a 300 px panel; legends
    # and colour bars still widen the right margin automatically.
    top = 70 if _has_title(layout) else 30
    layout.setdefault("margin", {"l": 70, "r": 20, "t": top, "b": 80})


def _is_cartesian(trace: Mapping[str, Any]) -> bool:
    return str(trace.get("type", "scatter")) not in _NON_CARTESIAN


def _axis_id(value: Any, letter: str) -> str:
    """Normalise a trace's axis reference ('y1' and missing both mean 'y')."""
    text = str(value) if value else letter
    return letter if text in (letter, f"{letter}1") else text


def _x_of(trace: Mapping[str, Any]) -> str:
    return _axis_id(trace.get("xaxis"), "x")


def _y_of(trace: Mapping[str, Any]) -> str:
    return _axis_id(trace.get("yaxis"), "y")


def _layout_key(axis_id: str) -> str:
    """'y' -> 'yaxis', 'x3' -> 'xaxis3'."""
    return f"{axis_id[0]}axis{axis_id[1:]}"


def _axis_number(axis_id: str) -> int:
    return int(axis_id[1:] or 1)


def _axis(layout: dict[str, Any], axis_id: str) -> dict[str, Any]:
    """The layout object of an axis, created empty when missing."""
    key = _layout_key(axis_id)
    if not isinstance(layout.get(key), dict):
        layout[key] = {}
    axis: dict[str, Any] = layout[key]
    return axis


def _base_of(layout: dict[str, Any], y_id: str) -> str:
    """The panel axis of `y_id`: itself, or the axis it overlays (a secondary y axis)."""
    axis = layout.get(_layout_key(y_id))
    over = axis.get("overlaying") if isinstance(axis, dict) else None
    if isinstance(over, str) and over.startswith("y"):
        return _axis_id(over, "y")
    return y_id


def _panel_axes(layout: dict[str, Any], traces: Sequence[Mapping[str, Any]]) -> list[str]:
    """Base y axes in use, in axis-number order: one panel each, top to bottom."""
    bases = {_base_of(layout, _y_of(t)) for t in traces}
    return sorted(bases, key=_axis_number)


def trace_panels(layout: dict[str, Any], traces: Sequence[Mapping[str, Any]]) -> list[int]:
    """The 1-based panel (top to bottom) of each trace of a finished figure."""
    bases = [_base_of(layout, _y_of(t)) for t in traces]
    order = {axis: n for n, axis in enumerate(sorted(set(bases), key=_axis_number), start=1)}
    return [order[axis] for axis in bases]


def _stack_panels(
    layout: dict[str, Any],
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
    panels: Sequence[str],
) -> None:
    """Give each panel a vertical domain and its own x axis, anchored under it.

    A figure drawn on the single x axis gets one x axis per panel (x, x2, ...). A figure
    whose panels already name their own x axis (the usual Plotly `xaxis: "x2"`,
    `yaxis: "y2"` pairing) keeps those names; each is anchored to its panel.
    """
    count = len(panels)
    height = float(layout.get("height") or PANEL_HEIGHT_PX * count)
    gap = min(0.1, PANEL_GAP_PX / height)
    span = (1.0 - gap * (count - 1)) / count
    single_x = all(_x_of(t) == "x" for t, _ in pairs)
    own_x = _own_x_axes(layout, pairs, panels)
    for position, y_id in enumerate(panels):
        top = 1.0 - position * (span + gap)
        y_axis = _axis(layout, y_id)
        y_axis["domain"] = [round(max(0.0, top - span), 4), round(top, 4)]
        if single_x:
            x_id = "x" if position == 0 else f"x{position + 1}"
        elif own_x is not None:
            x_id = own_x[position]
        else:
            continue
        on_panel = [(t, f) for t, f in pairs if _base_of(layout, _y_of(t)) == y_id]
        for trace, _ in on_panel:
            trace["xaxis"] = x_id
        for trace, _ in on_panel:
            _axis(layout, _y_of(trace)).setdefault("anchor", x_id)
        x_axis = _axis(layout, x_id)
        x_axis.setdefault("anchor", y_id)
        if all(f.x_is_date for _, f in on_panel) and position < count - 1:
            # Only the bottom panel labels the shared time axis.
            x_axis.setdefault("showticklabels", False)


def _own_x_axes(
    layout: dict[str, Any],
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
    panels: Sequence[str],
) -> list[str] | None:
    """Each panel's x axis when every panel uses exactly one x axis no other panel uses."""
    chosen: list[str] = []
    for y_id in panels:
        x_ids = {_x_of(t) for t, _ in pairs if _base_of(layout, _y_of(t)) == y_id}
        if len(x_ids) != 1:
            return None
        chosen.append(x_ids.pop())
    return chosen if len(set(chosen)) == len(chosen) else None


def _place_legends(
    layout: dict[str, Any],
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
    panels: Sequence[str],
) -> None:
    """Give each stacked panel its own legend beside it, unless the model chose legends."""
    if any("legend" in t for t, _ in pairs) or any(k.startswith("legend") for k in layout):
        return
    for position, y_id in enumerate(panels):
        legend_id = "legend" if position == 0 else f"legend{position + 1}"
        on_panel = [t for t, _ in pairs if _base_of(layout, _y_of(t)) == y_id]
        for trace in on_panel:
            trace["legend"] = legend_id
        top = _axis(layout, y_id)["domain"][1]
        layout[legend_id] = {"x": 1.02, "xanchor": "left", "y": top, "yanchor": "top"}


def _place_colorbars(
    layout: dict[str, Any], pairs: Sequence[tuple[dict[str, Any], AxisFacts]]
) -> None:
    """Fit each heatmap's colour bar to its own panel, its title along the bar and no longer.

    The title (quantity, then unit) reads upwards on the bar's right; it is wrapped into
    as many columns as it needs so that none is longer than the bar, which keeps it inside
    the figure and off the neighbouring panel's bar.
    """
    for trace, _ in pairs:
        if trace.get("type") not in ("heatmap", "contour"):
            continue
        colorbar = trace.setdefault("colorbar", {})
        domain = _axis(layout, _base_of(layout, _y_of(trace))).get("domain")
        if isinstance(domain, list) and len(domain) == 2:
            low, high = float(domain[0]), float(domain[1])
            colorbar.setdefault("y", round((low + high) / 2, 4))
            colorbar.setdefault("len", round(high - low, 4))
            colorbar.setdefault("yanchor", "middle")
        title = colorbar.get("title")
        if isinstance(title, str):
            title = colorbar["title"] = {"text": title}
        if isinstance(title, dict) and isinstance(title.get("text"), str):
            title.setdefault("side", "right")
            if title["side"] == "right":
                chars = max(8, int(_bar_length_px(layout, colorbar) / _TITLE_CHAR_PX))
                title["text"] = wrap_title(title["text"], chars, max_lines=_COLOUR_TITLE_LINES)


# Width of one character of a 12 px colour-bar title, with room to spare (Arial averages
# about 6 px), and the most columns a colour-bar title may take beside its bar.
_TITLE_CHAR_PX = 6.5
_COLOUR_TITLE_LINES = 5
# plotly.js pads a colour bar by 10 px at each end; the citation may add to the bottom.
_BAR_PAD_PX = 20
_CITATION_ROOM_PX = 4


def _bar_length_px(layout: Mapping[str, Any], colorbar: Mapping[str, Any]) -> float:
    """How long a colour bar is drawn, in pixels, from the figure height and its margins."""
    height = layout.get("height")
    margin = layout.get("margin")
    if not isinstance(height, int | float):
        height = PANEL_HEIGHT_PX
    top = bottom = 80
    if isinstance(margin, dict):
        top = float(margin.get("t", top))
        bottom = float(margin.get("b", bottom)) + _CITATION_ROOM_PX
    length = colorbar.get("len", 1.0)
    fraction = float(length) if isinstance(length, int | float) else 1.0
    if colorbar.get("lenmode") == "pixels":
        return fraction - _BAR_PAD_PX
    return fraction * max(0.0, float(height) - top - bottom) - _BAR_PAD_PX


def _x_groups(
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
) -> dict[str, list[AxisFacts]]:
    groups: dict[str, list[AxisFacts]] = {}
    for trace, fact in pairs:
        if fact.has_data:
            groups.setdefault(_x_of(trace), []).append(fact)
    return groups


def _mark_date_axes(
    layout: dict[str, Any], pairs: Sequence[tuple[dict[str, Any], AxisFacts]]
) -> None:
    """Type time axes as dates and make every time axis match the first one."""
    groups = _x_groups(pairs)
    date_axes = sorted(
        (x for x, facts in groups.items() if all(f.x_is_date for f in facts)), key=_axis_number
    )
    for x_id in date_axes:
        _axis(layout, x_id).setdefault("type", "date")
    for x_id in date_axes[1:]:
        _axis(layout, x_id).setdefault("matches", date_axes[0])


def _has_title(axis: Mapping[str, Any]) -> bool:
    title = axis.get("title")
    if isinstance(title, str):
        return bool(title)
    return isinstance(title, dict) and bool(title.get("text"))


def _title_axes(
    layout: dict[str, Any],
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
    panels: Sequence[str],
    notes: list[str],
) -> None:
    """Fill missing axis titles with quantity and unit; note panels mixing units."""
    by_y: dict[str, list[AxisFacts]] = {}
    for trace, fact in pairs:
        if fact.has_data:
            by_y.setdefault(_y_of(trace), []).append(fact)
    for y_id, facts in by_y.items():
        axis = _axis(layout, y_id)
        by_key = {unit_key(f.unit): f.unit for f in reversed(facts) if f.unit}
        units = list(dict.fromkeys(by_key[unit_key(f.unit)] for f in facts if f.unit))
        if len(units) > 1:
            base = _base_of(layout, y_id)
            panel = panels.index(base) + 1 if base in panels else 1
            notes.append(
                f"Panel {panel} mixes units ({', '.join(units)}) on one y axis; give each "
                "unit its own panel or a secondary y axis (yaxisN with 'overlaying')."
            )
        if not _has_title(axis):
            axis["title"] = {"text": _wrap(_y_title(facts, units))}
        if all(f.non_negative and not f.log_y for f in facts) and axis.get("type") != "log":
            axis.setdefault("rangemode", "nonnegative")
    for x_id, facts in _x_groups(pairs).items():
        axis = _axis(layout, x_id)
        if _has_title(axis) or axis.get("showticklabels") is False:
            continue
        if all(f.x_is_date for f in facts):
            axis["title"] = {"text": TIME_AXIS_TITLE}
        else:
            titles = list(dict.fromkeys(f.x_title for f in facts if f.x_title))
            if len(titles) == 1:
                axis["title"] = {"text": titles[0]}


def _y_title(facts: Sequence[AxisFacts], units: Sequence[str]) -> str:
    if len(units) > 1:
        pairs = dict.fromkeys(titled(f.quantity, f.unit) for f in facts)
        return " / ".join(pairs) + " [mixed units]"
    unit = units[0] if units else ""
    names = list(dict.fromkeys(without_unit(f.quantity, unit) for f in facts if f.quantity))
    text = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return titled(text, unit)


# A 300 px panel fits about 34 characters of 12 px text along its y axis.
_Y_TITLE_CHARS = 34


def _wrap(text: str) -> str:
    """Break a long y title into at most three lines so it never runs off its panel."""
    return wrap_title(text, _Y_TITLE_CHARS, max_lines=3)


def _apply_window(
    layout: dict[str, Any],
    pairs: Sequence[tuple[dict[str, Any], AxisFacts]],
    window: TimeRange,
) -> None:
    """Show exactly the zoom window on every time axis that does not follow another."""
    start = pd.Timestamp(window.start).tz_convert("UTC").tz_localize(None).isoformat()
    end = pd.Timestamp(window.end).tz_convert("UTC").tz_localize(None).isoformat()
    for x_id, facts in _x_groups(pairs).items():
        axis = _axis(layout, x_id)
        if all(f.x_is_date for f in facts) and "matches" not in axis:
            axis["range"] = [start, end]
            axis["autorange"] = False
