"""A day range said after a month narrows it to those days.

"during the sept 2017 flares, 6-10 sep", "march 2015, days 17-18", "August 2018 storm,
25th to 27th": the month names the year, the later days the window. Days that do not
fall in the month (or name another month) leave the month as it was.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from xhelio.timerange.grammar import TimeRange

__all__ = ["days_in_month"]

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DAY = r"[0-3]?\d(?:st|nd|rd|th)?"
_DASH = r"\s*(?:-|\u2013|to|through|thru|until)\s*"
# "days 17-18", "6-10 sep", "sep 6-10", "the 25th to 27th", "day 17".
_DAYS = re.compile(
    rf"(?<![\w:./-])(?:(?P<lead>days?\s+)|(?P<m1>{_MONTH})\s+|the\s+)?"
    rf"(?P<a>{_DAY})(?:{_DASH}(?:the\s+)?(?P<b>{_DAY}))?"
    rf"(?:\s+(?:of\s+)?(?P<m2>{_MONTH}))?(?![\w:./-])",
    re.I,
)


def _whole_month(r: TimeRange) -> bool:
    start = r.start
    if (start.day, start.hour, start.minute, start.second) != (1, 0, 0, 0):
        return False
    following = datetime(start.year + start.month // 12, start.month % 12 + 1, 1, tzinfo=UTC)
    return r.end == following


def _number(day: str) -> int:
    return int(re.sub(r"\D", "", day))


def days_in_month(
    text: str, found: TimeRange, used: tuple[tuple[int, int], ...]
) -> tuple[TimeRange, tuple[int, int]] | None:
    """The days said after the month `found` in `text`, and their span, or None."""
    if not _whole_month(found) or not used:
        return None
    after = max(b for _, b in used)
    for match in _DAYS.finditer(text, after):
        month_word = match["m1"] or match["m2"]
        ordinal = bool(re.search(r"[a-z]", match["a"] + (match["b"] or ""), re.I))
        if month_word is None and not match["lead"] and not (ordinal and match["b"]):
            continue  # a bare number may be anything ("goes 15")
        if month_word is not None and _MONTHS[month_word.lower()[:3]] != found.start.month:
            continue
        first, last = _number(match["a"]), _number(match["b"] or match["a"])
        if not 1 <= first <= last:
            continue
        begin = found.start + timedelta(days=first - 1)
        end = found.start + timedelta(days=last)
        if end > found.end:
            continue
        return TimeRange(begin, end), match.span()
    return None
