"""The Plotly figure spec of an offline plan: traces with `{ref}` data labels, panels, style.

Series of one quantity are overlaid unless separate panels were asked for; different
quantities get one panel each; a difference or ratio always gets its own panel unless an
overlay was asked for. Log scale, title and colours come from the request. Imports
`timerange` and this package only.
"""

from __future__ import annotations

from typing import Any

from xhelio.language.intent import RequestIntent
from xhelio.timerange import TimeRange

__all__ = ["figure_spec"]


def _panels(intent: RequestIntent, finals: list[tuple[str, str, str]]) -> list[int]:
    layout = intent.plot.layout
    if layout == "overlay" or len(finals) == 1:
        return [1] * len(finals)
    if layout == "separate":
        return list(range(1, len(finals) + 1))
    derived = intent.operation("ratio") or intent.operation("difference")
    measured = finals[:-1] if derived else finals
    panel_of_unit: dict[str, int] = {}
    panels: list[int] = []
    for n, (_, _, group) in enumerate(measured):
        # Two heatmaps cannot share a panel: every spectrogram gets its own.
        key = f"{group}#{n}" if group.startswith("spectrogram") else group.strip().lower()
        panel_of_unit.setdefault(key, len(panel_of_unit) + 1)
        panels.append(panel_of_unit[key])
    if derived:
        panels.append(len(panel_of_unit) + 1)
    return panels


def _named_by_group(finals: list[tuple[str, str, str]]) -> list[str]:
    """The series' names; the channels of one spectrum as its first to last channel."""
    names: list[str] = []
    channels: dict[str, list[str]] = {}
    for _, name, group in finals:
        if group.startswith("channels"):
            if group not in channels:
                names.append(group)
            channels.setdefault(group, []).append(name)
        else:
            names.append(name)
    return [f"{channels[n][0]} to {channels[n][-1]}" if n in channels else n for n in names]


def figure_spec(
    intent: RequestIntent, finals: list[tuple[str, str, str]], span: TimeRange | None
) -> tuple[dict[str, Any], str | None]:
    """The figure for `finals` (ref, name, panel group), and a note on the layout chosen."""
    panels = _panels(intent, finals)
    colours = intent.plot.colours
    traces: list[dict[str, Any]] = []
    y_titles: dict[str, Any] = {}
    for n, ((ref, name, group), panel) in enumerate(zip(finals, panels, strict=True)):
        trace: dict[str, Any] = {
            "type": "scatter",
            "mode": "lines",
            "data_label": f"{{{ref}}}",
            "name": name,
            "panel": panel,
        }
        if group.startswith("spectrogram"):
            # Channels against time: one heatmap, colours on a log scale.
            trace = {**trace, "type": "heatmap", "log_color": True}
            trace.pop("mode")
            # '@dim': the dimension of a 2-D array drawn on y; '!title': the y title when
            # the metadata has no bins for it ("frequency channel").
            shape, _, y_title = group.partition("!")
            _, _, kept = shape.partition("@")
            if kept:
                trace["bins_dim"] = kept
            if y_title:
                axis = "yaxis" if panel == 1 else f"yaxis{panel}"
                y_titles[axis] = {"title": {"text": y_title}}
        if intent.plot.log_y or group.startswith("channels"):
            trace["log_y"] = True  # energy channels of a spectrum span decades
        if "flux" in name.lower():
            trace["log_color"] = True
        if n < len(colours):
            trace["line"] = {"color": colours[n]}
        traces.append(trace)
    names = ", ".join(dict.fromkeys(_named_by_group(finals)))
    title = intent.plot.title or (f"{names}, {span.readable()}" if span else names)
    figure = {"data": traces, "layout": {"title": {"text": title}, **y_titles}}
    note = None
    if intent.plot.layout == "auto" and len(finals) > 1:
        count = max(panels)
        note = (
            "Overlaid in one panel (same quantity)."
            if count == 1
            else f"Shown in {count} stacked panels (different quantities or a derived series)."
        )
    return figure, note
