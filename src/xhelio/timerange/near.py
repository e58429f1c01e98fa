"""Dates written without their year, read beside a time range already known.

A follow-up says "extend it through 16 July" after a plot of 12-14 July 2021: the date
takes the year that puts it nearest the range already loaded, and the sentence is then
read by `find_time` like any other. No second grammar: this only writes the year in.
Imports only `timerange.grammar` and `timerange.sentences`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from xhelio.timerange.grammar import YEARLESS_DAY, TimeRange
from xhelio.timerange.sentences import TimeFound, find_time

__all__ = ["find_time_near"]

_WITHOUT_YEAR = re.compile(
    rf"(?<![\w-])(?:{YEARLESS_DAY.pattern})(?!\w)(?!\s*,?\s*\d{{4}})(?![-/:]\d)", re.I
)


def _gap(found: TimeRange, near: TimeRange) -> timedelta:
    """How far apart two ranges are (zero when they touch or overlap)."""
    return max(found.start - near.end, near.start - found.end, timedelta(0))


def find_time_near(text: str, near: TimeRange, now: datetime | None = None) -> TimeFound:
    """The time of `text`, a day written without its year taking the year nearest `near`.

    A date with its year, or no date at all, is read exactly as `find_time` reads it.
    """
    found = find_time(text, now)
    day = _WITHOUT_YEAR.search(text)
    if found.range is not None or day is None:
        return found
    best: tuple[timedelta, TimeFound] | None = None
    for year in range(near.start.year - 1, near.end.year + 2):
        written = f" {year}"
        dated = find_time(text[: day.end()] + written + text[day.end() :], now)
        if dated.range is None:
            continue
        gap = _gap(dated.range, near)
        if best is None or gap < best[0]:
            cut = day.end()
            spans = tuple(
                (a - len(written) if a > cut else a, b - len(written) if b > cut else b)
                for a, b in dated.spans
            )
            best = (gap, TimeFound(dated.range, f"{day[0]} {year}", None, spans))
    return found if best is None else best[1]
