"""Plotly figure rendering: resolve data_label figures, downsample, export, plot state.

`render_plotly_json` turns the model's figure JSON into a browser-ready figure;
`PlotState` holds a session's current figure and carries out `manage_plot` actions;
`FigureExporter` writes PNG/PDF through one persistent headless browser.
"""

from xhelio.render.export import FigureExporter, find_browser, shared_exporter, write_html
from xhelio.render.figure import RenderResult, TraceSummary, render_plotly_json
from xhelio.render.plot_state import PlotState

__all__ = [
    "FigureExporter",
    "PlotState",
    "RenderResult",
    "TraceSummary",
    "find_browser",
    "render_plotly_json",
    "shared_exporter",
    "write_html",
]
