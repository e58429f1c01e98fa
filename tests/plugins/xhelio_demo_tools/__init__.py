"""A tool group and an offline skill from a separate package: what a capability adds.

`demo_points` is public, so MCP, REST and the Python API offer it with no code of theirs;
the skill answers "how many points in LABEL" offline through that tool.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from xhelio.agents.turn import AssistantReply
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool

if TYPE_CHECKING:
    from xhelio.agents.offline.assistant import OfflineAssistant


@tool("data_ops_compute", phase="compute", reads=("label",), public=True)
def demo_points(ctx: ToolContext, label: str, scale: float = 1.0) -> dict[str, Any]:
    """Count the points of a stored label (times `scale`).

    Args:
        label: A stored data label.
        scale: A factor applied to the count.
    """
    entry = ctx.store.get(label)
    return {"label": label, "points": len(entry.data) * scale}


DEMO_TOOLS = [demo_points]
NOT_TOOLS = ["not a tool"]

_ASK = re.compile(r"how many points in ([\w.]+)", re.I)


def answer(assistant: OfflineAssistant, request: str) -> AssistantReply | None:
    """Answer "how many points in LABEL" with the demo tool; anything else is not ours."""
    match = _ASK.search(request)
    if match is None:
        return None
    result = assistant.call_tool("demo_points", {"label": match[1]})
    if not result.ok:
        return AssistantReply(f"Could not count: {result.error}", error=result.error)
    return AssistantReply(f"{match[1]} has {result.payload['points']:g} points.")
