"""Visualization tools: render Plotly JSON with data_label placeholders, manage the plot."""

from __future__ import annotations

from typing import Any, Literal

from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool
from xhelio.tools.results import FigureSummary, PlotAction

__all__ = ["VIZ_TOOLS"]


@tool("visualization", reads=("figure",), result=FigureSummary)
def render_plotly_json(ctx: ToolContext, figure: dict[str, Any]) -> dict[str, Any]:
    """Create or replace the plot from Plotly figure JSON whose traces carry data_label.

    Each trace names its data with "data_label" (a stored label such as
    "AC_H2_MFI.BGSEc", or "label.column" for one column); x/y/z are filled from memory.
    Vectors become one trace per component; 2-D and higher data becomes a spectrogram
    (heatmap; never give it line properties such as mode). Colour is log for fluxes,
    counts and spectral densities unless "log_color": false; y is log when the bins span
    a decade unless "log_y": false. Data with more dimensions than time and bins is
    reduced (default: mean over the others, said in the notes); choose with
    "bins_dim": "<dim>", "select": {"<dim>": index or label} and "reduce":
    "mean"|"median"|"sum"|"max"|"min". Stack panels with yaxis2/yaxis3 domains or a top-level
    "panels" list; time axes are shared. Units go into axis titles automatically.

    Args:
        figure: Plotly figure JSON, e.g.
            {"data": [{"type": "scatter", "data_label": "..."}], "layout": {...}}.
    """
    result = ctx.plot.render(figure)
    summary = result.summary()
    ctx.session.events.publish(
        "render_executed",
        tool="render_plotly_json",
        summary=f"{len(result.traces)} traces, {result.points_sent} points",
    )
    return summary


@tool(
    "visualization",
    reads=("trace",),
    time_args=("time_range",),
    result=PlotAction,
    edits_figure=True,
)
def manage_plot(
    ctx: ToolContext,
    action: Literal["export", "reset", "zoom", "get_state", "add_trace", "remove_trace"],
    format: Literal["png", "pdf", "html"] | None = None,
    filename: str | None = None,
    time_range: str | None = None,
    trace: dict[str, Any] | None = None,
    name: str | None = None,
    index: int | None = None,
) -> dict[str, Any]:
    """Act on the current figure: export, reset, zoom, get_state, add_trace, remove_trace.

    Args:
        action: What to do.
        format: For export: png, pdf or html (default from filename, else png).
        filename: For export: a plain file name inside the session's export folder.
        time_range: For zoom: a time range such as '2024-01-15 06:00 to 12:00', or 'full'.
        trace: For add_trace: a trace object with a data_label.
        name: For remove_trace: the displayed trace name.
        index: For remove_trace: the trace position.
    """
    given = {
        "format": format,
        "filename": filename,
        "time_range": time_range,
        "trace": trace,
        "name": name,
        "index": index,
    }
    kwargs = {key: value for key, value in given.items() if value is not None}
    return ctx.plot.manage_plot(action, **kwargs)


VIZ_TOOLS = [render_plotly_json, manage_plot]
