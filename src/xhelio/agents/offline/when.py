"""The time range of a request, with the sentence forms `find_time_range` leaves out.

`find_time` wraps `timerange.find_time_range` (the longest piece of the sentence that
`parse_time_range` accepts) and adds what people write around a date: a clock range on
that day ("on 2017-07-11 from 22:00 to 23:00", "2008-02-26 04:00 to 06:00"), a day of
year with the year apart ("2024 DOY 100 to DOY 105", "day 75 of 2015"), and weeks
("the week of 2017-09-06", "the first week of February 2024"). It returns every span it
used so the parser can mask them. Imports only `timerange` and `errors` from xhelio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from xhelio.errors import BadTimeRangeError
from xhelio.timerange import TimeRange, find_time_range, parse_time_range

__all__ = ["TimeFound", "find_time"]

_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?"
_ZONE = r"(?:\s*(?:UTC?|Z)\b)?"
_CLOCK_RANGE = re.compile(
    rf"(?:\b(?:from|between)\s+)?(?<!\S)(?P<a>{_CLOCK}){_ZONE}\s*"
    rf"(?:to|until|till|through|and|-|\u2013)\s*(?P<b>{_CLOCK}){_ZONE}",
    re.I,
)
_DOY_WORD = r"(?:doy|day(?:\s+of\s+(?:the\s+)?year)?)"
_DOY_TAIL = rf"(?:\s*(?:to|through|until|-|\u2013)\s*(?:{_DOY_WORD}\s*)?(?P<b>\d{{1,3}})(?!\d))?"
_DOY_FORMS = (
    re.compile(rf"\b(?P<y>\d{{4}})\s*,?\s*{_DOY_WORD}\s*(?P<a>\d{{1,3}})(?!\d){_DOY_TAIL}", re.I),
    re.compile(
        rf"\b{_DOY_WORD}\s*(?P<a>\d{{1,3}})(?!\d){_DOY_TAIL}\s*(?:,|of|in)?\s*(?P<y>\d{{4}})\b",
        re.I,
    ),
)
_NTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
_ORDINAL = "|".join([*_NTH, "last"])
_WEEK_OF = re.compile(rf"(?:\b(?P<nth>{_ORDINAL})\s+)?\bweek\s+of\s+(?:the\s+)?$", re.I)
_NTH_WEEK = re.compile(rf"\b(?:{_ORDINAL})\s+week\s+of\b", re.I)
_WEEK = timedelta(days=7)
_TAIL = re.compile(r"^\s*(?:to|until|till|through|-)\s+(?P<rest>.+)$", re.I | re.S)


@dataclass(frozen=True)
class TimeFound:
    """The range, the words that named it, a rejection worth telling, the spans used."""

    range: TimeRange | None
    text: str | None
    error: str | None = None
    spans: tuple[tuple[int, int], ...] = ()


def _whole_day(r: TimeRange) -> bool:
    midnight = r.start.replace(hour=0, minute=0, second=0, microsecond=0)
    return r.start == midnight and r.duration == timedelta(days=1)


def _clock(day: datetime, text: str) -> datetime:
    parts = [int(p) for p in text.split(":")]
    return day + timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2] if parts[2:] else 0)


def _day_of_year(text: str, now: datetime | None) -> TimeFound | None:
    for form in _DOY_FORMS:
        match = form.search(text)
        if match is None:
            continue
        year, first, last = match["y"], int(match["a"]), int(match["b"] or match["a"])
        piece = f"{year}-{first:03d}" + (f" to {year}-{last:03d}" if last != first else "")
        try:
            found = parse_time_range(piece, now)
        except BadTimeRangeError as exc:
            return TimeFound(None, None, exc.message)
        return TimeFound(found, match[0], None, (match.span(),))
    return None


def _week(text: str, start: int, found: TimeRange) -> tuple[TimeRange, int] | None:
    """'week of DAY' is the 7 days from DAY; 'the first/last week of MONTH' a week in it."""
    lead = _WEEK_OF.search(text[:start])
    if lead is None:
        return None
    nth = (lead["nth"] or "").lower()
    if _whole_day(found) and not nth:
        return TimeRange(found.start, found.start + _WEEK), lead.start()
    if found.duration < _WEEK or not nth:
        return None
    begin = found.end - _WEEK if nth == "last" else found.start + _NTH[nth] * _WEEK
    return TimeRange(begin, min(begin + _WEEK, found.end)), lead.start()


def _reversed(text: str, end: int, start_text: str, now: datetime | None) -> str | None:
    """The rejection of 'X to Y' with Y before X, which would otherwise shrink to X."""
    tail = _TAIL.match(text[end:])
    if tail is None:
        return None
    words = tail["rest"].split()
    for n in range(min(len(words), 4), 0, -1):
        try:
            parse_time_range(f"{start_text} to {' '.join(words[:n])}", now)
        except BadTimeRangeError as exc:
            if "reversed" in exc.message:
                return exc.message
            continue
        return None
    return None


def find_time(text: str, now: datetime | None = None) -> TimeFound:
    """The request's time range and the spans of text that named it."""
    doy = _day_of_year(text, now)
    if doy is not None:
        return doy
    clock = _CLOCK_RANGE.search(text)
    rest = text
    # "last week of March": the month is the range, not "last week".
    for used in (clock, _NTH_WEEK.search(text)):
        if used is not None:
            rest = rest[: used.start()] + " " * (used.end() - used.start()) + rest[used.end() :]
    found = find_time_range(rest, now)
    if found.range is None or found.text is None:
        return TimeFound(None, None, found.error)
    start = rest.find(found.text)
    span = (start, start + len(found.text))
    backwards = _reversed(rest, span[1], found.text, now)
    if backwards is not None:
        return TimeFound(None, None, backwards)
    result, words = found.range, found.text
    spans = [span]
    week = _week(text, start, result)
    if week is not None:
        result, lead = week
        spans[0] = (lead, span[1])
        words = text[lead : span[1]]
    elif clock is not None and _whole_day(result):
        begin, end = _clock(result.start, clock["a"]), _clock(result.start, clock["b"])
        if end <= begin:
            end += timedelta(days=1)
        result = TimeRange(begin, end)
        spans.append(clock.span())
        words = f"{found.text} {clock[0].strip()}"
    return TimeFound(result, words, None, tuple(spans))
