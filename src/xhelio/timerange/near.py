"""Dates written without their year (or month), read beside a time range already known.

A follow-up says "extend it through 16 July" after a plot of 12-14 July 2021: the date
takes the year that puts it nearest the range already loaded, and the sentence is then
read by `find_time` like any other. The same holds for a day of year without its year
("just doy 302") and for days of the month without their month ("the 3rd to the 5th"),
which take the month and year of the range loaded. No second grammar: this only writes
the missing year (or month and year) in.
Imports only `timerange.grammar` and `timerange.sentences`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from xhelio.timerange.grammar import MONTH_WORD, YEARLESS_DAY, TimeRange
from xhelio.timerange.sentences import TimeFound, find_time

__all__ = ["find_time_near", "names_time_near"]

_WITHOUT_YEAR = re.compile(
    rf"(?<![\w-])(?:{YEARLESS_DAY.pattern})(?!\w)(?!\s*,?\s*\d{{4}})(?![-/:]\d)", re.I
)
_TO = r"\s*(?:-|\u2013|to|through|thru|till|til|until|and)\s*"
# "doy 302", "day of year 75-78": a day of year with no year beside it.
_DOY_WITHOUT_YEAR = re.compile(
    rf"\b(?:doy|day\s+of\s+(?:the\s+)?year)\s*\d{{1,3}}(?:{_TO}(?:doy\s*)?\d{{1,3}})?\b"
    r"(?!\s*,?\s*(?:of\s+|in\s+)?\d{4})",
    re.I,
)
# "the 3rd to the 5th", "from the 7th thru the 9th": days of a month not written.
_DAYS_WITHOUT_MONTH = re.compile(
    rf"\b(?:the\s+)?[0-3]?\d(?:st|nd|rd|th){_TO}(?:the\s+)?[0-3]?\d(?:st|nd|rd|th)\b"
    r"(?!\s*(?:of\s+)?[a-z]{3,})",
    re.I,
)
# "extend it through October", "until the end of March": a month named without its year,
# after a word that leads to a time (a bare "may" or "march" is a verb).
_INTO = r"(?:to|through|thru|till|til|until|into|in|for|of|over|during|across|from|since)"
_MONTH_WITHOUT_YEAR = re.compile(
    rf"\b{_INTO}\s+(?P<when>(?:(?:all|the\s+(?:whole|rest|end|start|beginning))\s+of\s+)?"
    rf"(?:{MONTH_WORD.pattern})\.?)(?!\w)(?!\s*,?\s*\d)",
    re.I,
)
# Words that lead onward from the time shown: the month or day they name comes after it.
_ONWARD = re.compile(r"(?:to|through|thru|till|til|until|into)\b", re.I)
_BACK = re.compile(r"\b(?:back|earlier|before)\s*$", re.I)
# "stretch it to the 20th", "continue until the 14th": one day of a month not written.
_DAY_WITHOUT_MONTH = re.compile(
    rf"\b(?:{_INTO}|on|by)\s+(?P<when>(?:the\s+)?[0-3]?\d(?:st|nd|rd|th))\b"
    rf"(?!\s*(?:of\s+)?(?:{MONTH_WORD.pattern}))"
    r"(?!\s+(?:panel|plot|trace|row|column|figure|component|probe|spacecraft|order|century))",
    re.I,
)
_MONTHS = (
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
)  # fmt: skip


def _gap(found: TimeRange, near: TimeRange) -> timedelta:
    """How far apart two ranges are (zero when they touch or overlap)."""
    return max(found.start - near.end, near.start - found.end, timedelta(0))


def _months(near: TimeRange, spare: int) -> Iterator[str]:
    """The months of `near`, with `spare` more on each side, as " of Mon YYYY"."""
    index = near.start.year * 12 + near.start.month - 1 - spare
    last = near.end - timedelta(seconds=1)
    while index <= last.year * 12 + last.month - 1 + spare:
        yield f" of {_MONTHS[index % 12]} {index // 12}"
        index += 1


def _fills(text: str, near: TimeRange) -> Iterator[tuple[re.Match[str], str]]:
    """Each place a year (or month and year) is missing, and each way to write it in."""
    years = range(near.start.year - 1, near.end.year + 2)
    for pattern, comma in (
        (_WITHOUT_YEAR, ""),
        (_DOY_WITHOUT_YEAR, ","),
        (_MONTH_WITHOUT_YEAR, ""),
    ):
        match = pattern.search(text)
        if match is not None:
            yield from ((match, f"{comma} {year}") for year in years)
            return
    for pattern, spare in ((_DAYS_WITHOUT_MONTH, 0), (_DAY_WITHOUT_MONTH, 1)):
        match = pattern.search(text)
        if match is not None:
            yield from ((match, month) for month in _months(near, spare))
            return


def names_time_near(text: str) -> bool:
    """Whether `text` names a day that only a time range already known can date."""
    patterns = (
        _WITHOUT_YEAR,
        _DOY_WITHOUT_YEAR,
        _DAYS_WITHOUT_MONTH,
        _MONTH_WITHOUT_YEAR,
        _DAY_WITHOUT_MONTH,
    )
    return any(p.search(text) for p in patterns)


def find_time_near(text: str, near: TimeRange, now: datetime | None = None) -> TimeFound:
    """The time of `text`, a day written without its year taking the year nearest `near`.

    Days of the month without their month take a month of `near`. A date with its year,
    or no date at all, is read exactly as `find_time` reads it.
    """
    found = find_time(text, now)
    if found.range is not None:
        return found
    best: tuple[timedelta, TimeFound] | None = None
    for match, written in _fills(text, near):
        cut = match.end()
        dated = find_time(text[:cut] + written + text[cut:], now)
        if dated.range is None:
            continue
        gap = _gap(dated.range, near)
        onward = _ONWARD.match(match[0]) and not _BACK.search(text[: match.start()])
        if onward and dated.range.end <= near.start:
            gap += timedelta(days=3660)  # "extend through October": the next October
        if best is None or gap < best[0]:
            spans = tuple(
                (a - len(written) if a > cut else a, b - len(written) if b > cut else b)
                for a, b in dated.spans
            )
            said = match.groupdict().get("when") or match[0]
            best = (gap, TimeFound(dated.range, f"{said}{written}", None, spans))
    return found if best is None else best[1]
