"""The result models of the tools whose results other parts of xhelio read.

Each is the typed view of a tool's JSON result (declared with `@tool(result=...)`); the
funnel validates every successful result against its tool's model and hands it to the
caller as `ToolResult.output`. Extra fields are kept, so the JSON the model, REST and MCP
see is exactly what the tool returned.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from xhelio.tools.registry import ToolOutput

__all__ = [
    "DatasetSummary",
    "EntrySummary",
    "FetchReport",
    "FigureSummary",
    "LabelledData",
    "ParameterList",
    "ParameterSummary",
    "PlotAction",
    "SavedFile",
]


class DatasetSummary(ToolOutput):
    """One dataset of the catalog: its id, title, mission and coverage."""

    id: str
    title: str | None = None
    mission: str | None = None
    start: str | None = None
    stop: str | None = None


class ParameterSummary(ToolOutput):
    """One parameter of a dataset: name, type, units and size."""

    name: str
    type: str | None = None
    units: str | None = None
    size: list[int] | None = None


class ParameterList(DatasetSummary):
    """A dataset with its data parameters."""

    parameters: list[ParameterSummary]


class LabelledData(ToolOutput):
    """Data stored under a label: its columns, size and provenance."""

    label: str
    columns: list[str] = Field(default_factory=list[str])
    points: int = 0
    dataset: str | None = None
    parameter: str | None = None
    notes: list[str] = Field(default_factory=list[str])


class EntrySummary(LabelledData):
    """A stored entry with the unit of each column."""

    units: dict[str, str] = Field(default_factory=dict[str, str])


class FetchReport(LabelledData):
    """What a fetch stored: the entry, the range asked for, and what is unusable in it."""

    units: str = ""
    requested: str | None = None
    start: str | None = None
    stop: str | None = None
    nan_fraction: float | None = None
    all_nan_columns: list[str] = Field(default_factory=list[str])
    already_loaded: bool = False


class FigureSummary(ToolOutput):
    """The figure drawn: its panels, traces and the points sent to the browser."""

    panels: int = 1
    points_sent: int = 0
    traces: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    notes: list[str] = Field(default_factory=list[str])


class PlotAction(ToolOutput):
    """One action on the current figure; an export names the file it wrote."""

    action: str
    path: str | None = None


class SavedFile(ToolOutput):
    """A file written into the session's export folder."""

    path: str
    bytes: int
