"""What a render returns: the browser-ready figure and a summary of every trace in it.

`TraceSummary` says what one resolved trace holds (points in the source, points sent,
unit); `RenderResult` carries the figure, the normalised spec, those summaries and the
notes for the model. Both are re-exported by `render.figure`.

Imports only `timerange` from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xhelio.timerange import TimeRange

__all__ = ["RenderResult", "TraceSummary"]


@dataclass(frozen=True)
class TraceSummary:
    """What one resolved trace holds, for the model and for tests."""

    name: str
    data_label: str | None
    column: str | None
    trace_type: str
    points_total: int
    points_sent: int
    unit: str
    spec_index: int

    @property
    def downsampled(self) -> bool:
        """Whether fewer points were sent than the source has."""
        return self.points_sent < self.points_total


@dataclass
class RenderResult:
    """A resolved figure: what the browser gets, plus what was done to produce it."""

    figure: dict[str, Any]
    spec: dict[str, Any]
    traces: list[TraceSummary]
    panels: int
    notes: list[str] = field(default_factory=list[str])
    time_range: TimeRange | None = None
    trace_panels: list[int] = field(default_factory=list[int])
    """The 1-based panel of each of `traces`, top to bottom (empty: all in panel 1)."""

    @property
    def points_sent(self) -> int:
        """Total data points (heatmap cells included) sent to the browser."""
        return sum(t.points_sent for t in self.traces)

    def summary(self) -> dict[str, Any]:
        """Return a short JSON-able description (no data arrays) for the model."""
        return {
            "status": "ok",
            "panels": self.panels,
            "points_sent": self.points_sent,
            "time_range": str(self.time_range) if self.time_range else None,
            "traces": [
                {
                    "name": t.name,
                    "data_label": t.data_label,
                    "type": t.trace_type,
                    "points": t.points_total,
                    "sent": t.points_sent,
                    "downsampled": t.downsampled,
                    "unit": t.unit,
                    "panel": self.trace_panels[n] if n < len(self.trace_panels) else 1,
                }
                for n, t in enumerate(self.traces)
            ],
            "notes": self.notes,
        }
