"""Time ranges: the `TimeRange` value and `parse_time_range` for what people type.

All times are timezone-aware UTC; `end` is exclusive. Imports nothing from xhelio but
`errors`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from xhelio.errors import BadTimeRangeError

__all__ = ["TimeRange", "parse_time_range"]


@dataclass(frozen=True)
class TimeRange:
    """A UTC interval [start, end)."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value: datetime = getattr(self, name)
            if value.tzinfo is None:
                object.__setattr__(self, name, value.replace(tzinfo=UTC))
            else:
                object.__setattr__(self, name, value.astimezone(UTC))
        if self.end <= self.start:
            raise BadTimeRangeError(
                f"Time range end {self.end.isoformat()} is not after start "
                f"{self.start.isoformat()}. Put the earlier time first."
            )

    @property
    def duration(self) -> timedelta:
        """Length of the interval."""
        return self.end - self.start

    def __str__(self) -> str:
        return f"{_iso(self.start)} to {_iso(self.end)}"


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time_range(text: str, now: datetime | None = None) -> TimeRange:
    """Parse what a person types into a UTC `TimeRange` (placeholder; being written)."""
    raise BadTimeRangeError(f"Could not understand time range {text!r}.")
