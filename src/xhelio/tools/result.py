"""`no_usable_data`: THE verdict for "this fetch gave nothing usable".

No samples, or every column fill/NaN: the agents' tool bridge, the offline interpreter and
the servers all ask it, so they never disagree about whether data arrived. It applies to
every tool of the fetch phase (see `xhelio.operations.ToolResult`).
"""

from __future__ import annotations

from typing import Any

from xhelio.operations import ToolResult

__all__ = ["no_usable_data", "no_usable_result"]


def no_usable_data(result: dict[str, Any]) -> str | None:
    """Why a successful fetch result holds no usable data, or None when it does.

    Args:
        result: A fetch result (the funnel's JSON form).

    Returns:
        "it returned no data points", "all its values are fill values (NaN)", or None.
        An error result is not judged here (it already says what failed).
    """
    if result.get("status") == "error":
        return None
    if not result.get("points"):
        return "it returned no data points"
    columns = result.get("columns") or []
    if columns and set(result.get("all_nan_columns") or []) >= set(columns):
        return "all its values are fill values (NaN)"
    return None


def no_usable_result(result: ToolResult) -> str | None:
    """`no_usable_data` of a typed result; None for any tool outside the fetch phase."""
    if result.phase != "fetch":
        return None
    return no_usable_data(result.to_dict())
