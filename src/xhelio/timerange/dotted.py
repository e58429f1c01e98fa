"""Dates as physicists in Europe write them, and nights and hours said loosely.

"17.-18.3.2015" (days dotted, one month and year), "3.-5. Okt 2003" and "17. März 2015"
(a dotted day before a month name, German abbreviations too), "the night of 17/18 March
2015" (evening to morning across midnight: 18:00 to 06:00 UT, said as such) and "around
14 UT" (the hour either side). Each is a rewrite into a form `parse_time_range` reads.
Imports nothing of xhelio.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = [
    "AROUND_HOUR",
    "DOTTED_DAYS",
    "DOTTED_DAY_MONTH",
    "NIGHT_OF",
    "around_hour",
    "dotted_days",
]
__all__ += ["dotted_day_month", "night_of"]

# Month words, English and the German spellings that differ ("Okt", "Dez", "März", "Mai").
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "mär": 3, "mae": 3, "apr": 4, "may": 5, "mai": 5,
    "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "okt": 10, "nov": 11, "dec": 12,
    "dez": 12,
}  # fmt: skip
_MONTH = r"(?P<m>jan|feb|mar|m\u00e4r|mae|apr|may|mai|jun|jul|aug|sep|oct|okt|nov|dec|dez)[a-z]*\.?"
_YEAR = r"(?P<y>(?:1[6-9]|2[0-2])\d\d)(?!\d)"
_DASH = r"\s*(?:-|\u2013|bis|to)\s*"

# "17.-18.3.2015", "17-18.03.2015", "29.10.-2.11.2003": the days dotted (each with its
# month or not), the month and year once.
DOTTED_DAYS = re.compile(
    rf"(?<![\d.])(?P<a>[0-3]?\d)\.?(?:(?P<am>[01]?\d)\.)?{_DASH}"
    rf"(?P<b>[0-3]?\d)\.\s*(?P<mn>[01]?\d)\.\s*{_YEAR}"
)
# "3.-5. Okt 2003", "17. März 2015", "17. March": a dotted day (or days) before a month name.
DOTTED_DAY_MONTH = re.compile(
    rf"(?<![\d.])(?P<a>[0-3]?\d)\.(?:{_DASH}(?P<b>[0-3]?\d)\.)?\s*{_MONTH}(?:\s*,?\s*{_YEAR})?",
    re.I,
)
# "the night of 17/18 March 2015", "night of 17-18 Mar 2015", "the night of 31/1 Jan 2016".
NIGHT_OF = re.compile(
    rf"\b(?:the\s+)?night\s+of\s+(?:the\s+)?(?P<a>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:/|-|\u2013|to)\s*"
    rf"(?P<b>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s*,?\s*{_YEAR}",
    re.I,
)
# "around 14 UT", "about 0800 UT", "near 14:30 UT": the hour either side of the time.
AROUND_HOUR = re.compile(
    r"\b(?:around|about|near|approximately|approx\.?|~)\s*(?P<h>[01]?\d|2[0-3])(?::?(?P<mi>[0-5]\d))?\s*"
    r"(?:h\s*)?(?P<z>UTC?|Z|GMT)\b(?!\s*(?:plus|\+|\u00b1))",
    re.I,
)

_NIGHT_FROM, _NIGHT_HOURS = 18, 12


def _month(word: str) -> int:
    return _MONTHS[word.lower()[:3]]


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day)
    except ValueError:
        return None


def dotted_days(m: re.Match[str]) -> str | None:
    """'17.-18.3.2015' -> '2015-03-17 to 2015-03-18'; '29.10.-2.11.2003' across months."""
    year, month = int(m["y"]), int(m["mn"])
    first = _day(year, int(m["am"] or month), int(m["a"]))
    last = _day(year, month, int(m["b"]))
    if first is None or last is None or last < first:
        return None
    return f"{first:%Y-%m-%d} to {last:%Y-%m-%d}"


def dotted_day_month(m: re.Match[str]) -> str:
    """'3.-5. Okt 2003' -> '3-5 Oct 2003'; '17. März' -> '17 Mar'."""
    month = datetime(2000, _month(m["m"]), 1).strftime("%b")
    days = f"{int(m['a'])}-{int(m['b'])}" if m["b"] else f"{int(m['a'])}"
    return f"{days} {month}" + (f" {m['y']}" if m["y"] else "")


def night_of(m: re.Match[str]) -> str | None:
    """'the night of 17/18 March 2015' -> 18:00 on the 17th to 06:00 on the 18th."""
    evening = _day(int(m["y"]), _month(m["m"]), int(m["a"]))
    if evening is None:
        return None
    start = evening + timedelta(hours=_NIGHT_FROM)
    end = start + timedelta(hours=_NIGHT_HOURS)
    if end.day != int(m["b"]):
        return None
    return f"{start:%Y-%m-%dT%H:%M} to {end:%Y-%m-%dT%H:%M}"


def around_hour(m: re.Match[str]) -> str:
    """'around 14 UT' -> 'around 14:00 UT plus or minus 1 hour'."""
    return f"around {int(m['h']):02d}:{m['mi'] or '00'} {m['z']} plus or minus 1 hour"
