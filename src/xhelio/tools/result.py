"""THE verdict for "this fetch gave nothing usable": no samples, or every column fill/NaN.

The agents' tool bridge, the offline interpreter and the servers all ask it, so they never
disagree about whether data arrived. It reads a fetch result as its typed `FetchReport`,
so it holds for every tool whose declared result model is one.
"""

from __future__ import annotations

from typing import Any

from xhelio.operations import ToolResult
from xhelio.tools.results import FetchReport

__all__ = ["no_usable_data", "no_usable_result"]


def _verdict(report: FetchReport) -> str | None:
    if not report.points:
        return "it returned no data points"
    if report.columns and set(report.all_nan_columns) >= set(report.columns):
        return "all its values are fill values (NaN)"
    return None


def no_usable_data(result: dict[str, Any]) -> str | None:
    """Why a successful fetch result (its JSON form) holds no usable data, or None.

    Returns:
        "it returned no data points", "all its values are fill values (NaN)", or None.
        An error result is not judged here (it already says what failed).
    """
    if result.get("status") == "error":
        return None
    return _verdict(FetchReport.model_validate(result))


def no_usable_result(result: ToolResult) -> str | None:
    """`no_usable_data` of a typed result; None unless it is a successful `FetchReport`."""
    if not result.ok or not isinstance(result.output, FetchReport):
        return None
    return _verdict(result.output)
