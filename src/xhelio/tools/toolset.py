"""The default tool registry: the built-in tools, then every group registered by entry point.

A tool group is a sequence of `Tool`s that a module exports and names in the
``xhelio.tools`` entry-point group, in xhelio's own pyproject.toml or a plugin's::

    [project.entry-points."xhelio.tools"]
    analysis = "xhelio.tools.analysis_tools:ANALYSIS_TOOLS"

Groups are added in the order of their names. A group that fails to load, or that holds
something other than tools, is left out and listed by `tool_group_problems` (and
`xhelio tools`); it never stops the others.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points

from xhelio.tools.compute_tools import COMPUTE_TOOLS
from xhelio.tools.data_tools import DATA_TOOLS
from xhelio.tools.discovery import DISCOVERY_TOOLS
from xhelio.tools.extraction_tools import EXTRACTION_TOOLS
from xhelio.tools.pipeline_tools import PIPELINE_TOOLS
from xhelio.tools.registry import Tool, ToolRegistry
from xhelio.tools.viz_tools import VIZ_TOOLS

__all__ = ["TOOL_GROUP", "default_registry", "tool_group_problems"]

TOOL_GROUP = "xhelio.tools"
_log = logging.getLogger(__name__)


def _groups() -> tuple[list[Tool], dict[str, str]]:
    """The tools of every registered group, and why any group was left out."""
    tools: list[Tool] = []
    problems: dict[str, str] = {}
    for point in sorted(entry_points(group=TOOL_GROUP), key=lambda p: p.name):
        try:
            loaded: object = point.load()
        except Exception as exc:  # a broken plugin is listed, never fatal
            problems[point.name] = f"could not be loaded: {type(exc).__name__}: {exc}"
            continue
        group = list(loaded) if isinstance(loaded, Iterable) else [loaded]  # pyright: ignore[reportUnknownArgumentType]
        if not all(isinstance(t, Tool) for t in group):
            problems[point.name] = f"{point.value} is not a sequence of tools"
            continue
        tools.extend(t for t in group if isinstance(t, Tool))
    for name, why in problems.items():
        _log.warning("Tool group %r %s.", name, why)
    return tools, problems


@cache
def _loaded() -> tuple[tuple[Tool, ...], tuple[tuple[str, str], ...]]:
    tools, problems = _groups()
    return tuple(tools), tuple(problems.items())


def tool_group_problems() -> dict[str, str]:
    """Tool groups that were left out, with the reason."""
    return dict(_loaded()[1])


@cache
def default_registry() -> ToolRegistry:
    """All built-in tools and the registered groups (built once per process)."""
    return ToolRegistry(
        [
            *DISCOVERY_TOOLS,
            *DATA_TOOLS,
            *COMPUTE_TOOLS,
            *VIZ_TOOLS,
            *EXTRACTION_TOOLS,
            *PIPELINE_TOOLS,
            *_loaded()[0],
        ]
    )
