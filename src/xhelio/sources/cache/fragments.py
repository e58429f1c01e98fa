"""How time is cut into cache fragments: fixed lengths aligned to 1970-01-01T00:00Z.

Fragments of `hours` hours start at multiples of `hours` after the epoch (so 24-hour
fragments start at UTC midnight). The length is `cache_fragment_hours` (24 by default),
doubled (up to 32x) while a fragment of the dataset's cadence still holds at most
`TARGET_FRAGMENT_ROWS` rows, so a year of 1-minute data is 13 files per parameter instead
of 365. Imports only `timerange` and `sources.sizing`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from xhelio.sources.sizing import cadence_seconds
from xhelio.timerange import TimeRange

__all__ = [
    "EPOCH",
    "MAX_FRAGMENT_MULTIPLIER",
    "TARGET_FRAGMENT_ROWS",
    "adaptive_fragment_hours",
    "fragment_span",
    "fragment_start",
]

TARGET_FRAGMENT_ROWS = 50_000
MAX_FRAGMENT_MULTIPLIER = 32
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def fragment_start(index: int, hours: int) -> datetime:
    """Return the start of fragment `index` when fragments are `hours` long."""
    return EPOCH + timedelta(hours=hours * index)


def fragment_span(time_range: TimeRange, hours: int) -> tuple[int, int]:
    """Return the first and last fragment index that `time_range` touches."""
    span_us = hours * 3_600_000_000
    start_us = (time_range.start - EPOCH) // _US
    end_us = (time_range.end - EPOCH) // _US
    return start_us // span_us, -(-end_us // span_us) - 1


def adaptive_fragment_hours(base_hours: int, cadence: str | None) -> int:
    """Return `base_hours` doubled while a fragment of this cadence stays under the row target."""
    seconds = cadence_seconds(cadence)
    if seconds is None:
        return base_hours
    rows_per_base = base_hours * 3600 / seconds
    multiplier = 1
    while (
        multiplier * 2 <= MAX_FRAGMENT_MULTIPLIER
        and rows_per_base * multiplier * 2 <= TARGET_FRAGMENT_ROWS
    ):
        multiplier *= 2
    return base_hours * multiplier
