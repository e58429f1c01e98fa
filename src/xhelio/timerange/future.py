"""Times still to come: "tomorrow", "next week", "next Monday", "the coming 3 days".

No spacecraft has measured them yet, so they are read as the future range they name and
the planner asks about it (`plan/build.py` `_not_yet`), never replaced by the last 7 days
of data. Read only when the request names no other time. Imports only `timerange.words`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from xhelio.timerange.words import NUMBER_WORDS, UNIT_WORDS, alternatives, count, unit

__all__ = ["future_range"]

_DAY = timedelta(days=1)
_WEEKDAYS: list[str] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
]
_NEXT = r"(?:next|coming|upcoming)"
_FUTURE = re.compile(
    r"\b(?:(?P<after>the\s+day\s+after\s+tomorrow)|(?P<tomorrow>tomorrow|tonight)"
    rf"|(?:the\s+)?{_NEXT}\s+(?P<n>\d+(?:\.\d+)?|{alternatives(NUMBER_WORDS)})[\s-]*"
    rf"(?P<u>{alternatives(UNIT_WORDS)})"
    rf"|(?:the\s+)?(?P<which>{_NEXT})\s+(?P<period>day|week|month|year)"
    rf"|(?:this\s+)?{_NEXT}\s+(?P<weekday>{'|'.join(_WEEKDAYS)}))\b",
    re.I,
)


def _next_month(day: datetime, months: int = 1) -> datetime:
    year, index = divmod(day.year * 12 + day.month - 1 + months, 12)
    return day.replace(year=year, month=index + 1, day=1)


def future_range(text: str, now: datetime) -> tuple[datetime, datetime, str] | None:
    """The future range a word of `text` names, with those words; None when none does."""
    m = _FUTURE.search(text)
    if m is None:
        return None
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    # "From now" starts at the next whole minute: still after now when the plan is built.
    now = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    if m["after"]:
        start, end = midnight + 2 * _DAY, midnight + 3 * _DAY
    elif m["tomorrow"]:
        tonight = m["tomorrow"].lower() == "tonight"
        start, end = (now, midnight + _DAY) if tonight else (midnight + _DAY, midnight + 2 * _DAY)
    elif m["u"]:
        start, end = now, now + count(m["n"]) * unit(m["u"])
    elif m["weekday"]:
        ahead = (_WEEKDAYS.index(m["weekday"].lower()) - now.weekday() - 1) % 7 + 1
        start = midnight + ahead * _DAY
        end = start + _DAY
    else:
        period = m["period"].lower()
        if m["which"].lower() != "next" and period in ("day", "week"):
            start, end = now, now + unit(period)  # "the coming week": the 7 days from now
        elif period == "day":
            start = midnight + _DAY
            end = start + _DAY
        elif period == "week":
            start = midnight + (7 - now.weekday()) * _DAY
            end = start + 7 * _DAY
        elif period == "month":
            start = _next_month(midnight.replace(day=1))
            end = _next_month(start)
        else:
            start = midnight.replace(year=now.year + 1, month=1, day=1)
            end = start.replace(year=start.year + 1)
    return start, end, m[0]
