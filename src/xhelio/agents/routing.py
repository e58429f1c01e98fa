"""The orchestrator's routing and conversation tools, as registry tools with their own context.

Like every other tool they are typed functions whose schema comes from the signature and
Google docstring, and they run through a `ToolFunnel` (validated, recorded in the
operations log with caller `orchestrator`, published as events); their context is a
`Router`, the orchestrator object that runs the sub-agents. `request_planning` is a
placeholder until the planner lands: it tells the model honestly to go step by step.
The docstrings document what the model sees, so the injected `ctx` is left out (D417).
Imports `tools.registry` only.
"""

from __future__ import annotations

from typing import Any, Protocol

from xhelio.tools.registry import ToolRegistry, tool

__all__ = ["ROUTING_TOOLS", "Router", "routing_registry"]


class Router(Protocol):
    """What the routing tools need from the orchestrator."""

    def delegate(self, kind: str, request: str, mission_id: str | None = None) -> dict[str, Any]:
        """Run the sub-agent of `kind` on `request`; return its wrapped result."""
        ...

    def plan(self, request: str) -> dict[str, Any]:
        """Handle a request for multi-step planning."""
        ...

    def clarify(self, question: str) -> dict[str, Any]:
        """Stop the turn and put `question` to the user."""
        ...


@tool("routing")
def delegate_to_mission(ctx: Router, mission_id: str, request: str) -> dict[str, Any]:  # noqa: D417
    """Have one spacecraft's specialist find and fetch its data (one call per spacecraft).

    Args:
        mission_id: Mission name or alias, e.g. 'ACE', 'Wind', 'PSP'.
        request: Quantity and time range in plain words, e.g. 'magnetic field, last week'.
    """
    return ctx.delegate("mission", request, mission_id)


@tool("routing")
def delegate_to_data_ops(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have the computation specialist derive data from stored labels.

    Args:
        request: Input labels, the computation and the output label.
    """
    return ctx.delegate("data_ops", request)


@tool("routing")
def delegate_to_data_extraction(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have the extraction specialist turn text, tables, PDFs or images into stored data.

    Args:
        request: The text or the file path the user gave, and what to extract.
    """
    return ctx.delegate("data_extraction", request)


@tool("routing")
def delegate_to_sql(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have the SQL specialist select or aggregate data in memory with one SQL query.

    Args:
        request: The question in words (thresholds, periods, aggregations) and the labels.
    """
    return ctx.delegate("sql", request)


@tool("routing")
def delegate_to_visualization(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have the figure specialist plot, restyle, zoom or export.

    Args:
        request: What to show, naming the stored labels.
    """
    return ctx.delegate("visualization", request)


@tool("routing")
def delegate_to_insight(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have a vision model interpret the current figure.

    Args:
        request: What the user wants to know about the figure.
    """
    return ctx.delegate("insight", request)


@tool("routing")
def delegate_to_api(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Have the web-API specialist call NOAA SWPC, NASA DONKI or a user API, or search papers.

    Args:
        request: What to look up, with dates, e.g. 'CMEs DONKI listed 2024-05-08 to 05-15'.
    """
    return ctx.delegate("web_api", request)


@tool("routing")
def request_planning(ctx: Router, request: str) -> dict[str, Any]:  # noqa: D417
    """Ask for a multi-step plan for a long request.

    Args:
        request: The whole request.
    """
    return ctx.plan(request)


@tool("conversation")
def ask_clarification(ctx: Router, question: str) -> dict[str, Any]:  # noqa: D417
    """Ask the user a question when the request cannot be understood; ends the turn.

    Args:
        question: One short, specific question.
    """
    return ctx.clarify(question)


ROUTING_TOOLS = [
    delegate_to_mission,
    delegate_to_data_ops,
    delegate_to_data_extraction,
    delegate_to_sql,
    delegate_to_visualization,
    delegate_to_insight,
    delegate_to_api,
    request_planning,
    ask_clarification,
]


def routing_registry() -> ToolRegistry:
    """A registry holding only the routing and conversation tools."""
    return ToolRegistry(ROUTING_TOOLS)
