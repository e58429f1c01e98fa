"""Direct (no LLM) operations on a session, shared by the REST routes, MCP and the CLI.

Writes (fetch, plot, compute, exports) go through the session's funnel, so they appear in
its operations log and event stream like any agent's call; reads (entries, preview,
describe) call the tool functions without recording, so a browser polling a session does
not fill its log. Both raise `XhelioError`s, never return error dicts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xhelio.errors import UserError, XhelioError
from xhelio.operations import ToolResult
from xhelio.tools.extraction_tools import work_folder
from xhelio.tools.workspace import Workspace

__all__ = [
    "ToolCallError",
    "build_figure",
    "checked_call",
    "read_tool",
    "safe_upload_name",
]

_UPLOAD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ToolCallError(XhelioError):
    """A tool called on a caller's behalf failed; `kind` is the failure's type name."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def to_dict(self) -> dict[str, str]:
        """The structured form, with the tool's own error type."""
        return {"status": "error", "type": self.kind, "message": self.message}


def as_exception(result: ToolResult) -> ToolCallError:
    """The exception a failed tool result stands for (its type name kept as `kind`)."""
    return ToolCallError(result.error_type or "error", result.error or "The tool failed.")


def checked_call(
    workspace: Workspace, name: str, args: dict[str, Any], caller: str = "api"
) -> ToolResult:
    """Run `name` through the session's funnel; a failure raises.

    Raises:
        XhelioError: The tool failed (its type name is kept).
    """
    result = workspace.funnel.call(name, args, caller=caller)
    if not result.ok:
        raise as_exception(result)
    return result


def read_tool(workspace: Workspace, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run a read-only tool without recording it in the operations log.

    Raises:
        XhelioError: The tool failed or the arguments are invalid.
    """
    t = workspace.funnel.registry.get(name)
    if t is None:
        raise UserError(f"There is no tool named {name!r}.")
    try:
        validated = t.arguments.model_validate(args)
    except ValueError as exc:
        raise UserError(f"Invalid arguments for {name}: {exc}") from exc
    kwargs = {key: getattr(validated, key) for key in type(validated).model_fields}
    result = t.function(workspace.context, **kwargs)
    return result.model_dump() if isinstance(result, BaseModel) else result


def build_figure(
    labels: list[str], overlay: bool = False, log_y: bool = False, title: str | None = None
) -> dict[str, Any]:
    """A figure spec: one panel per label (shared time axis), or all in one panel.

    Traces name only their data: the renderer draws 1-D data as lines and 2-D+ data as
    heatmaps. `log_y` asks each trace for a log y axis (a heatmap's bins rows included).
    """
    traces: list[dict[str, Any]] = []
    for i, label in enumerate(labels):
        trace: dict[str, Any] = {"data_label": label}
        if not overlay and i:
            trace["yaxis"] = f"y{i + 1}"
        if log_y:
            trace["log_y"] = True
        traces.append(trace)
    layout: dict[str, Any] = {"title": {"text": title}} if title else {}
    return {"data": traces, "layout": layout}


def safe_upload_name(name: str) -> str:
    """A plain file name for an upload, or `UserError` (no folders, no leading dot)."""
    if not _UPLOAD_NAME.fullmatch(name) or ".." in name:
        raise UserError(
            f"Upload name {name!r} is not a plain file name: use letters, digits, '.', '_' "
            "or '-' (at most 128 characters)."
        )
    return name


def uploads_dir(workspace: Workspace) -> Path:
    """The session's own upload folder (its working folder, which the agents read)."""
    return work_folder(workspace.session)
