"""Vague parts of a period ("mid-March 2013", "early 2004", "late on 2015-03-17").

A third of the period, with the assumption said in the words of the range ("mid March
2013 (taken as 2013-03-11 to 2013-03-20)"): early/beginning/start is the first third,
mid/middle the second, late/end the last (days 1-10, 11-20, 21-end of a month; January-
April, May-August, September-December of a year; 00-08, 08-16, 16-24 UT of a day, whose
morning, afternoon and evening are 00-12, 12-18 and 18-24 UT). A year with a decimal part
("2003.301") is day 301 or a fraction of the year: asked, never guessed.
Imports only `timerange.grammar`.
"""

from __future__ import annotations

import re
from datetime import timedelta

from xhelio.timerange.grammar import TimeRange

__all__ = [
    "HYPHENED_PART",
    "day_part_after",
    "decimal_year",
    "month_first_said",
    "part_of_period",
]

# "mid-March", "mid-2010" as two words, so "March 2013" is read as the month.
HYPHENED_PART = re.compile(r"\b(?P<w>early|mid|late)-(?=[a-z]|\d{4}\b)", re.I)
_PART = re.compile(
    r"\b(?:(?:in|during|around|on)\s+)?(?:the\s+)?(?P<w>early|mid|middle\s+of|late"
    r"|(?:beginning|start|end)\s+of|morning\s+of|afternoon\s+of|evening\s+of)"
    r"(?:\s+in\s+the\s+day)?(?:\s+on)?\s+(?:the\s+)?$",
    re.I,
)
_AN_END = re.compile(r"(?:\b(?:to|until|till|through|thru)|-|\u2013)\s*(?:the\s+)?$", re.I)
_THIRD = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
# The hours of a day a part names: thirds, and the morning (before noon), afternoon, evening.
_DAY_HOURS = {0: (0, 8), 1: (8, 16), 2: (16, 24), "morning": (0, 12), "afternoon": (12, 18)}
_DAY_HOURS["evening"] = (18, 24)
# "2015-03-17 morning", "17 March 2015, in the afternoon": a part of the day named after it.
_DAY_PART_AFTER = re.compile(
    r"\s*,?\s*(?:(?:in|during)\s+the\s+)?(?P<w>morning|afternoon|evening)\b"
    r"(?![\s-]*(?:sector|side|MLT|local|flank|hemisphere))",  # "morning sector": a place
    re.I,
)
# "3/4/2015": month first or day first? Either order makes a date.
_EITHER_ORDER = re.compile(r"(?<![\w/])(?P<a>0?[1-9]|1[0-2])/(?P<b>0?[1-9]|1[0-2])/(?P<y>\d{4})\b")
_DECIMAL_YEAR = re.compile(r"(?<![\w.])(?P<y>(?:19|20)\d\d)\.(?P<f>\d{1,3})(?![\w.])")


def part_of_period(text: str, start: int, period: TimeRange) -> tuple[TimeRange, int] | None:
    """The third of a month or year named by the words before `start`, and where they begin."""
    words = _PART.search(text[:start])
    if words is None or _AN_END.search(text[: words.start()]):
        return None  # "from D to the end of May": the end of a range, read elsewhere
    word = words["w"].split()[0].lower()
    third = _THIRD.get(word, -1)
    days = period.duration.days
    if period.duration == timedelta(days=1):
        first_hour, last_hour = _DAY_HOURS[word if third < 0 else third]
        first = period.start + timedelta(hours=first_hour)
        last = period.start + timedelta(hours=last_hour)
    elif third < 0:
        return None
    elif 28 <= days <= 31:
        first = period.start + timedelta(days=10 * third)
        last = period.end if third == 2 else first + timedelta(days=10)
    elif days in (365, 366):
        first = period.start.replace(month=1 + 4 * third)
        last = period.end if third == 2 else first.replace(month=first.month + 4)
    else:
        return None
    return TimeRange(first, last), words.start()


def day_part_after(text: str, end: int, period: TimeRange) -> tuple[TimeRange, int] | None:
    """The hours of the one-day `period` that words right after `end` name, and their end."""
    words = _DAY_PART_AFTER.match(text, end)
    if words is None or period.duration != timedelta(days=1):
        return None
    first_hour, last_hour = _DAY_HOURS[words["w"].lower()]
    start = period.start + timedelta(hours=first_hour)
    return TimeRange(start, period.start + timedelta(hours=last_hour)), words.end()


def decimal_year(text: str) -> str | None:
    """The question for a year written with a decimal part ("2003.301"), or None."""
    match = _DECIMAL_YEAR.search(text)
    if match is None:
        return None
    return (
        f"'{match[0]}' could be day {int(match['f'])} of {match['y']} or a fraction of the "
        f"year; please write the day of year as {match['y']}-{int(match['f']):03d} or give "
        "the date"
    )


def month_first_said(text: str) -> str | None:
    """How a date that reads both ways ("3/4/2015") was read (month first), or None."""
    match = _EITHER_ORDER.search(text)
    if match is None or int(match["a"]) == int(match["b"]):
        return None
    a, b, y = int(match["a"]), int(match["b"]), match["y"]
    return (
        f"{match[0]} read month first as {y}-{a:02d}-{b:02d}; "
        f"write {y}-{b:02d}-{a:02d} for day first"
    )
