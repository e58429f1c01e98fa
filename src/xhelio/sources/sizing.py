"""How big a request is before it is made, and how to cut it into pieces that fit.

A request's size is estimated from the dataset's cadence, the time span and the number
of value columns (vector components and spectrogram bins count one each): rows =
span / cadence, bytes = rows x (8 bytes of time + 8 per column). Estimates use the
in-memory size of float64 columns, which is what a loaded DataFrame costs; a dataset
without a known cadence cannot be estimated (None) and is fetched as asked.

`plan_pieces` cuts a range into consecutive pieces whose estimate stays under a byte
limit, aligned to `align` (the cache's fragment length), so each piece can be fetched,
cached and written out before the next one is asked for. Imports only `timerange`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from xhelio.timerange import TimeRange

__all__ = [
    "RequestEstimate",
    "cadence_seconds",
    "estimate_request",
    "human_bytes",
    "plan_pieces",
    "reaches",
    "total_columns",
]

BYTES_PER_VALUE = 8

_DURATION = re.compile(
    r"P(?:([\d.]+)Y)?(?:([\d.]+)M)?(?:([\d.]+)W)?(?:([\d.]+)D)?"
    r"(?:T(?:([\d.]+)H)?(?:([\d.]+)M)?(?:([\d.]+)S)?)?"
)
_DURATION_SECONDS = (365.25 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1)


def cadence_seconds(cadence: str | None) -> float | None:
    """Return an ISO 8601 duration such as ``PT1M`` in seconds, or None if unreadable."""
    if not cadence:
        return None
    match = _DURATION.fullmatch(cadence.strip().upper())
    if match is None:
        return None
    try:
        seconds = sum(
            float(part) * weight
            for part, weight in zip(match.groups(), _DURATION_SECONDS, strict=True)
            if part
        )
    except ValueError:
        return None
    return seconds if seconds > 0 and math.isfinite(seconds) else None


def reaches(last: datetime, end: datetime, cadence: str | None) -> bool:
    """Whether data whose last record is at `last` reaches `end`: within one cadence (+1%).

    With no known cadence only a record at or after `end` reaches it.
    """
    step = cadence_seconds(cadence) or 0.0
    return last + timedelta(seconds=step * 1.01) >= end


@dataclass(frozen=True)
class RequestEstimate:
    """The expected size of a request."""

    rows: int
    columns: int
    bytes: int
    cadence_s: float

    @property
    def bytes_per_second(self) -> float:
        """Bytes per second of covered time."""
        return (BYTES_PER_VALUE * (self.columns + 1)) / self.cadence_s


def estimate_request(
    cadence: str | None, time_range: TimeRange, columns: int
) -> RequestEstimate | None:
    """Estimate rows and in-memory bytes of `columns` values over `time_range`, if possible."""
    seconds = cadence_seconds(cadence)
    if seconds is None:
        return None
    span = (time_range.end - time_range.start).total_seconds()
    rows = math.ceil(span / seconds)
    width = max(1, columns)
    return RequestEstimate(rows, width, rows * BYTES_PER_VALUE * (width + 1), seconds)


def plan_pieces(
    time_range: TimeRange, estimate: RequestEstimate | None, max_bytes: int, align: timedelta
) -> list[TimeRange]:
    """Cut `time_range` into consecutive pieces each estimated under `max_bytes`."""
    if estimate is None or estimate.bytes <= max_bytes:
        return [time_range]
    span_s = max(max_bytes / estimate.bytes_per_second, 1.0)
    step = max(align, timedelta(seconds=span_s) // align * align)
    pieces: list[TimeRange] = []
    start = time_range.start
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    while start < time_range.end:
        # Cut on multiples of `align` from the epoch, so pieces match cache fragments.
        boundary = epoch + ((start - epoch) // step + 1) * step
        end = min(boundary, time_range.end)
        pieces.append(TimeRange(start, end))
        start = end
    return pieces


def human_bytes(count: float) -> str:
    """Return a size such as '1.5 GB' (powers of 1024)."""
    size = float(count)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def total_columns(components: Sequence[int]) -> int:
    """Sum the value columns of several parameters."""
    return sum(max(1, c) for c in components)
