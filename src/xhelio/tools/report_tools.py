"""The `session_report` tool: write this session's report (HTML or Markdown) to its exports.

Public, so the same report is one call away on MCP, REST and the Python API; the CLI has
`xhelio report` and the web app its Report button. Imports the report and tools layers.
"""

from __future__ import annotations

from typing import Any, Literal

from xhelio.report import build_report, write_report
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool

__all__ = ["REPORT_TOOLS"]


@tool("conversation", phase="export", public=True)
def session_report(
    ctx: ToolContext, format: Literal["html", "md"] = "html", title: str | None = None
) -> dict[str, Any]:
    """Write this session's report: question, steps, figures, numbers, citations, how to rerun.

    Args:
        format: html (one self-contained file, interactive figures) or md (Markdown).
        title: The report's title (default: from the first request).
    """
    report = build_report(ctx.session, title=title)
    path = write_report(report, ctx.session.folder / "exports" / f"report.{format}")
    return {
        "path": str(path),
        "format": format,
        "figures": len(report.figures),
        "citations": len(report.citations),
        "steps": len(report.steps),
        "limitations": report.limitations,
    }


REPORT_TOOLS = [session_report]
