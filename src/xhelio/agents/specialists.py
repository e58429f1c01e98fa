"""The data-extraction and visualization specialists, and export requests without a model.

Extraction turns text, tables, PDFs and images into stored DataFrames (`store_dataframe`,
`read_document`, `list_fetched_data`). Visualization owns the figure (`render_plotly_json`,
`manage_plot`, `list_fetched_data`). An export request ("export the plot as png",
"save it to ace.pdf") is recognised by `export_request` and run straight through the
funnel as `manage_plot(action="export")`, by the orchestrator or the visualization agent,
with no model request at all. Imports `agents.subagent` and `agents.prompts`; never the
orchestrator.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from xhelio.agents.prompts import EXTRACTION_PROMPT, VISUALIZATION_PROMPT
from xhelio.agents.subagent import AgentEnv, AgentMode, DelegationResult, SubAgent, memory_note
from xhelio.tools.work_tools import WORK_TOOLS
from xhelio.tools.workspace import Workspace

__all__ = [
    "ExportRequest",
    "VisualizationAgent",
    "export_figure",
    "export_request",
    "extraction_agent",
]

# Only a request that starts with the export verb is an export: "plot ACE and save it as png"
# has work to do first and goes to the model.
_EXPORT_VERB = re.compile(
    r"\W*(?:(?:please|now|then|also|and|can you|could you)\s+)*(?:export|save|download|write)\b",
    re.IGNORECASE,
)
_FIGURE_WORD = re.compile(r"\b(plot|figure|chart|graph|image|picture|png|pdf)\b", re.IGNORECASE)
_DATA_FORMAT = re.compile(r"\b(csv|parquet|netcdf|nc|data ?frame|table)\b", re.IGNORECASE)
_FILENAME = re.compile(r"([\w.-]+\.(?:png|pdf|html))\b", re.IGNORECASE)
_FORMAT = re.compile(r"\b(png|pdf|html)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ExportRequest:
    """A recognised figure export: format and optional file name."""

    format: str | None
    filename: str | None


def export_request(text: str) -> ExportRequest | None:
    """Recognise a request to export the current figure (not data) to png/pdf/html."""
    if not _EXPORT_VERB.match(text) or _DATA_FORMAT.search(text):
        return None
    filename = _FILENAME.search(text)
    if not filename and not _FIGURE_WORD.search(text):
        return None
    fmt = _FORMAT.search(filename.group(1).rsplit(".", 1)[1] if filename else text)
    return ExportRequest(
        fmt.group(1).lower() if fmt else None, filename.group(1) if filename else None
    )


def export_figure(workspace: Workspace, export: ExportRequest, caller: str) -> DelegationResult:
    """Export the current figure through the funnel; a clear failure when there is none."""
    if workspace.session.plot.current is None:
        message = "There is no figure to export yet; ask for a plot first."
        return DelegationResult(caller, message, failed=True, errors=[message])
    args: dict[str, str] = {"action": "export"}
    if export.format:
        args["format"] = export.format
    if export.filename:
        args["filename"] = export.filename
    result = workspace.funnel.call("manage_plot", args, caller)
    if not result.ok:
        message = result.error or "the export failed"
        return DelegationResult(
            caller, message, failed=True, errors=[message], tools=["manage_plot"]
        )
    size = int(result.payload.get("bytes", 0))
    text = f"Exported the figure to {result.payload.get('path')} ({size:,} bytes)."
    return DelegationResult(caller, text, tools=["manage_plot"])


WORK_TOOL_NAMES = tuple(t.name for t in WORK_TOOLS)


def extraction_agent(env: AgentEnv) -> SubAgent:
    """The specialist that turns text and documents into stored DataFrames."""
    names = ("store_dataframe", "read_document", "list_fetched_data", *WORK_TOOL_NAMES)
    tools = [env.tool(n) for n in names]
    return SubAgent(env, "data_extraction", EXTRACTION_PROMPT, tools)


class VisualizationAgent(SubAgent):
    """The figure specialist; exports skip the model."""

    def __init__(self, env: AgentEnv) -> None:
        tools = [env.tool(n) for n in ("render_plotly_json", "manage_plot", "list_fetched_data")]
        super().__init__(env, "visualization", VISUALIZATION_PROMPT, tools)

    async def draw(
        self, request: str, cancel: threading.Event, mode: AgentMode = "conversational"
    ) -> DelegationResult:
        """Plot, restyle, zoom or export as `request` says."""
        export = export_request(request)
        if export is not None:
            return export_figure(self.env.workspace, export, self.name)
        prompt = f"{request.strip()}\n\n{memory_note(self.env.workspace)}"
        return await self.arun(prompt, cancel, mode)
