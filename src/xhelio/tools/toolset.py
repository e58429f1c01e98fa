"""The default tool registry: every tool xhelio offers, in one place."""

from __future__ import annotations

from functools import cache

from xhelio.tools.compute_tools import COMPUTE_TOOLS
from xhelio.tools.data_tools import DATA_TOOLS
from xhelio.tools.discovery import DISCOVERY_TOOLS
from xhelio.tools.extraction_tools import EXTRACTION_TOOLS
from xhelio.tools.pipeline_tools import PIPELINE_TOOLS
from xhelio.tools.registry import ToolRegistry
from xhelio.tools.viz_tools import VIZ_TOOLS

__all__ = ["default_registry"]


@cache
def default_registry() -> ToolRegistry:
    """All built-in tools (built once per process)."""
    return ToolRegistry(
        [
            *DISCOVERY_TOOLS,
            *DATA_TOOLS,
            *COMPUTE_TOOLS,
            *VIZ_TOOLS,
            *EXTRACTION_TOOLS,
            *PIPELINE_TOOLS,
        ]
    )
