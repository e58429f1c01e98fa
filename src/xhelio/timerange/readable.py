"""Times as people read them: the ranges and spans every answer and figure title shows.

The tools work in end-exclusive ISO ranges ("2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z");
a scientist writes the inclusive "2000-07-14 to 2000-07-17". `readable_range` says an
end-exclusive range that way, `readable_span` says the first and last sample of a series
(both inclusive), and `readable_iso_span` does the latter for the ISO texts tool results
carry. Imports nothing of the project.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = [
    "parse_instant",
    "readable_iso_ranges",
    "readable_iso_span",
    "readable_range",
    "readable_span",
]


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _at_midnight(moment: datetime) -> bool:
    return moment.hour == moment.minute == moment.second == moment.microsecond == 0


def _clock_pair(start: datetime, stop: datetime) -> str:
    fmt = "%Y-%m-%d %H:%M:%S" if start.second or stop.second else "%Y-%m-%d %H:%M"
    if start == stop:
        return f"{start.strftime(fmt)} UTC"
    if start.date() == stop.date():
        return f"{start.strftime(fmt)} to {stop.strftime(fmt[9:])} UTC"
    return f"{start.strftime(fmt)} to {stop.strftime(fmt)} UTC"


def _day_pair(first: datetime, last: datetime) -> str:
    if first.date() == last.date():
        return f"{first:%Y-%m-%d}"
    return f"{first:%Y-%m-%d} to {last:%Y-%m-%d}"


def readable_range(start: datetime, stop: datetime) -> str:
    """`start`..`stop` (end-exclusive, naive means UTC) as an inclusive range people write.

    Whole days read as dates ("2000-07-14 to 2000-07-17", one day as "2000-07-14");
    anything finer keeps its clock time, to the minute (or second) it needs, with "UTC".
    """
    start, stop = _utc(start), _utc(stop)
    if _at_midnight(start) and _at_midnight(stop) and stop > start:
        return _day_pair(start, stop - timedelta(days=1))
    return _clock_pair(start, stop)


def readable_span(first: datetime, last: datetime) -> str:
    """The first and last sample of a series (both inclusive), to the minute or second."""
    first, last = _utc(first), _utc(last)
    if _at_midnight(first) and _at_midnight(last) and last > first:
        return _day_pair(first, last)  # daily samples
    return _clock_pair(first, last)


def parse_instant(text: object) -> datetime | None:
    """An ISO 8601 time from a tool result as a UTC datetime; None when missing or unreadable."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return _utc(moment)


def readable_iso_span(first: object, last: object) -> str:
    """`readable_span` of two ISO texts; the texts as given when either is unreadable."""
    start, stop = parse_instant(first), parse_instant(last)
    if start is None or stop is None or stop < start:
        return f"{first} to {last}"
    return readable_span(start, stop)


_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]00:?00)?"
_ISO_RANGE = re.compile(rf"\b({_ISO})\s+(?:to|-|\u2013)\s+({_ISO})")


def readable_iso_ranges(text: str) -> str:
    """`text` with every tool-style ISO range ("A to B", end-exclusive) said readably.

    "2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z" becomes "2000-07-14 to 2000-07-17";
    anything else in `text` is left as it is.
    """

    def readable(match: re.Match[str]) -> str:
        start, stop = parse_instant(match[1]), parse_instant(match[2])
        if start is None or stop is None or stop < start:
            return match[0]
        return readable_range(start, stop)

    return _ISO_RANGE.sub(readable, text)
