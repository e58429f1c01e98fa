"""`ToolResult`: the typed form of what every tool call returns through the funnel.

Tools still return JSON-able dicts (the model and the operations log see exactly those);
`ToolResult.from_dict` / `to_dict` bridge the two so callers outside the agents (REST, MCP,
the CLI, pipelines) work with a typed object instead of `dict[str, Any]`.

`no_usable_data` is THE verdict for "this fetch gave nothing usable" (no samples, or every
column is fill/NaN): the agents' tool bridge, the offline interpreter and the servers all
ask it, so they never disagree about whether data arrived.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["LABEL_TOOLS", "ToolResult", "no_usable_data"]

LABEL_TOOLS = frozenset({"fetch_data", "custom_operation", "store_dataframe"})
"""Tools whose successful result names a DataStore label they created or replaced."""

_ERROR_FIELDS = frozenset({"type", "message"})


def no_usable_data(result: dict[str, Any]) -> str | None:
    """Why a successful fetch result holds no usable data, or None when it does.

    Args:
        result: A `fetch_data` result (the funnel's dict).

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


class ToolResult(BaseModel):
    """One tool call's outcome.

    Attributes:
        tool: The tool that ran.
        status: "ok" or "error".
        error_type: The error's type name (an `xhelio.errors` class, `ValidationError`,
            `LoopGuard`, `Cancelled`, `SandboxUnavailable`, ...) when status is "error".
        error: The error message for people and models.
        labels: DataStore labels the call created or replaced.
        payload: Everything else the tool returned.
    """

    tool: str
    status: Literal["ok", "error"] = "ok"
    error_type: str | None = None
    error: str | None = None
    labels: list[str] = Field(default_factory=list[str])
    payload: dict[str, Any] = Field(default_factory=dict[str, Any])

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "ok"

    @property
    def no_usable_data(self) -> str | None:
        """The one "nothing usable arrived" verdict (see `no_usable_data`)."""
        if self.tool != "fetch_data":
            return None
        return no_usable_data(self.to_dict())

    @classmethod
    def from_dict(cls, tool: str, result: dict[str, Any]) -> ToolResult:
        """Type a funnel result dict (`to_dict` gives the same dict back)."""
        status = "error" if result.get("status") == "error" else "ok"
        label = result.get("label")
        labels = (
            [label] if tool in LABEL_TOOLS and isinstance(label, str) and status == "ok" else []
        )
        # `type` and `message` are the error's own fields only on an error: a successful
        # result may carry fields of those names (an entry's "type", a note for the model).
        own = _ERROR_FIELDS if status == "error" else frozenset[str]()
        payload = {k: v for k, v in result.items() if k != "status" and k not in own}
        return cls(
            tool=tool,
            status=status,
            error_type=str(result.get("type") or "error") if status == "error" else None,
            error=str(result.get("message") or "") if status == "error" else None,
            labels=labels,
            payload=payload,
        )

    @classmethod
    def failure(cls, tool: str, error_type: str, error: str, **payload: Any) -> ToolResult:
        """An error result made by a caller (e.g. a verdict on what the tool returned)."""
        return cls(tool=tool, status="error", error_type=error_type, error=error, payload=payload)

    def to_dict(self) -> dict[str, Any]:
        """The funnel's dict form (what the model and the operations log see)."""
        out: dict[str, Any] = {"status": self.status}
        if self.status == "error":
            out["type"] = self.error_type or "error"
            out["message"] = self.error or ""
        out.update(self.payload)
        return out
