"""Calendar periods written tersely, rewritten into forms `parse_time_range` reads.

Quarters and halves ("Q1 2015", "2015 Q4", "the second quarter of 2016", "H2 2016") are
their months ("jan-mar 2015"); a month with the year first ("2001 Jan") or a two-digit
year ("january '01", "5 Jan '01") is that month or day; ISO weeks as log books write them
("2019 W10", "W10 2019", "wk 10 of 2019") are "2019-W10"; ordinal day ranges before the
month ("between the 3rd and 5th of May 2012") are "3-5 May 2012"; and a day-of-year range
with the year once ("2003/302-304") is "2003-302 to 2003-304". Each rewrite is a pattern
and the text that replaces a match, applied by `sentences` before the grammar reads the
request. Seasons are the northern meteorological ones ("summer 2015" is June-August,
"winter 2014/15" December-February), said in the answer; a winter with one year is asked.
Imports only `timerange.grammar`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from xhelio.timerange.grammar import TimeRange

__all__ = ["PERIOD_REWRITES", "season_taken", "unreadable_period"]

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov")
_NTH = r"(?:st|nd|rd|th)"
_YEAR = r"(?:19|20)\d\d"
# Two-digit years from here on are of this century, earlier ones of the last ('57 is 1957).
_CENTURY_PIVOT = 50


def _months(first: int, count: int, year: str) -> str:
    """'jan-mar 2015': `count` months from month `first` (1-based) of `year`."""
    last = first + count - 1
    names = (*_ABBREVIATIONS, "dec")
    return f"{names[first - 1]}-{names[last - 1]} {year}"


_ORDINALS = {
    word: n
    for n, words in enumerate(("first 1st", "second 2nd", "third 3rd", "fourth 4th last"), 1)
    for word in words.split()
}
_ORDINAL_WORDS = "|".join(sorted(_ORDINALS, key=len, reverse=True))


def _quarter_words(tag: str) -> str:
    """A quarter ("Q1 2015", "2015 Q1", "the first quarter of 2015"), its parts tagged."""
    return (
        rf"(?:(?:Q(?P<{tag}q>[1-4])|(?P<{tag}q3>[1-4])Q)\s*(?:[/,-]|\s+of)?\s*(?P<{tag}y>{_YEAR})"
        rf"|(?P<{tag}y2>{_YEAR})\s*[/-]?\s*Q(?P<{tag}q2>[1-4])"
        rf"|(?:the\s+)?(?P<{tag}nth>{_ORDINAL_WORDS})\s+quarter\s+(?:of\s+)?(?P<{tag}y3>{_YEAR}))"
    )


_QUARTER = re.compile(rf"\b{_quarter_words('')}(?![\w-])", re.I)
# "Q4 2015 to Q1 2016": from the first month of one to the last month of the other.
_QUARTERS = re.compile(
    rf"\b{_quarter_words('a')}\s*(?:to|through|thru|until|till|-|\u2013)\s*"
    rf"{_quarter_words('b')}(?![\w-])",
    re.I,
)


def _quarter_of(m: re.Match[str], tag: str) -> tuple[int, str]:
    """The quarter's number and year."""
    nth = m[f"{tag}nth"]
    written = m[f"{tag}q"] or m[f"{tag}q2"] or m[f"{tag}q3"]
    number = int(written) if written else _ORDINALS[nth.lower()]
    return number, m[f"{tag}y"] or m[f"{tag}y2"] or m[f"{tag}y3"]


def _quarter(m: re.Match[str]) -> str:
    number, year = _quarter_of(m, "")
    return _months(3 * number - 2, 3, year)


def _quarters(m: re.Match[str]) -> str:
    (first, first_year), (last, last_year) = _quarter_of(m, "a"), _quarter_of(m, "b")
    names = (*_ABBREVIATIONS, "dec")
    return f"{names[3 * first - 3]} {first_year} to {names[3 * last - 1]} {last_year}"


_HALF = re.compile(
    rf"\b(?:H(?P<h>[12])\s*[/,-]?\s*(?P<y>{_YEAR})|(?P<y2>{_YEAR})\s*[/-]?\s*H(?P<h2>[12]))(?![\w-])",
    re.I,
)


def _half(m: re.Match[str]) -> str:
    return _months(6 * int(m["h"] or m["h2"]) - 5, 6, m["y"] or m["y2"])


# "2001 Jan": the month, not the year ("1999 may be" is a verb, left alone).
_YEAR_THEN_MONTH = re.compile(
    rf"\b(?P<y>{_YEAR})\s*[,-]?\s+(?!(?-i:may)\b)(?P<m>{_MONTH}(?:\s*[-/\u2013]\s*{_MONTH})?)"
    r"(?!\s*\d)(?![\w-])",
    re.I,
)
# "May/June 2012": two months joined by a slash are the range between them.
_MONTH_SLASH = re.compile(rf"\b(?P<a>{_MONTH})\s*/\s*(?P<b>{_MONTH})", re.I)
# "05/2012": a month and its year.
_MONTH_YEAR = re.compile(rf"(?<![\d/.-])(?P<m>0?[1-9]|1[0-2])/(?P<y>{_YEAR})(?![\d/.-])")
# "january '01", "Jan 5 '01", "5 Jan \u201901": the year written with two digits after a month.
_SHORT_YEAR = re.compile(
    rf"\b(?P<head>{_MONTH}(?:\s+(?:the\s+)?[0-3]?\d{_NTH}?)?|[0-3]?\d{_NTH}?\s+(?:of\s+)?{_MONTH})"
    r"\s*,?\s*['\u2018\u2019](?P<yy>\d\d)(?![\w'\u2019])",
    re.I,
)


def _short_year(m: re.Match[str]) -> str:
    yy = int(m["yy"])
    century = 2000 if yy < _CENTURY_PIVOT else 1900
    return f"{m['head'].rstrip('.')} {century + yy}"


_WEEK = re.compile(
    rf"\b(?:W|wk\.?\s*)(?P<w>\d{{1,2}})\s*(?:,|/|of|in)?\s*(?P<y>{_YEAR})\b"
    rf"|\b(?P<y2>{_YEAR})\s*[,/]?\s+W(?P<w2>\d{{1,2}})\b"
    rf"|\bwk\.?\s*(?P<w3>\d{{1,2}})\s+(?:of|in)\s+(?P<y3>{_YEAR})\b",
    re.I,
)


def _week(m: re.Match[str]) -> str:
    return f"{m['y'] or m['y2'] or m['y3']}-W{int(m['w'] or m['w2'] or m['w3']):02d}"


# "between the 3rd and 5th of May", "from the 27th to the 31st of Jan".
_ORDINAL_DAYS = re.compile(
    rf"(?:\b(?:between|from)\s+)?(?:\bthe\s+)?(?<![\d:./-])(?P<a>[0-3]?\d){_NTH}?"
    r"\s*(?:and|to|thru|through|until|till|-|\u2013)\s*"
    rf"(?:the\s+)?(?P<b>[0-3]?\d){_NTH}\s+(?:of\s+)?(?P<m>{_MONTH})",
    re.I,
)
# "2003/302-304", "2003-302 - 304": a day-of-year range with the year written once.
_DOY_RANGE = re.compile(
    r"\b(?P<y>\d{4})[-/:](?P<a>\d{3})\s*(?:-|\u2013|to|thru|through)\s*(?P<b>\d{3})(?![\d/:-])",
    re.I,
)

# "28 Oct-1 Nov", "Oct 28-Nov 1": a dash between two dates, spaced so it is read as one.
_DASHED_DATES = re.compile(
    rf"(?P<a>\b[0-3]?\d\s+{_MONTH}|\b{_MONTH}\s+[0-3]?\d)\s*[-\u2013]\s*"
    rf"(?P<b>[0-3]?\d\s+{_MONTH}|{_MONTH}\s+[0-3]?\d\b)",
    re.I,
)
# "2015-03-17T04:00/PT6H", "2015-03-17/P3D": an ISO 8601 start and duration.
_ISO_DURATION = re.compile(
    r"\b(?P<a>\d{4}-\d{2}-\d{2}(?:T\d{2}(?::\d{2}){0,2})?Z?)\s*/\s*P(?!\b)"
    r"(?:(?P<w>\d+)W)?(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?)?(?![\w/])",
    re.I,
)


def _iso_duration(m: re.Match[str]) -> str | None:
    """The start and its end as "A to B" (seconds are not a length people ask for here)."""
    amounts = [int(m[k] or 0) for k in ("w", "d", "h", "m")]
    length = timedelta(weeks=amounts[0], days=amounts[1], hours=amounts[2], minutes=amounts[3])
    if not length:
        return None
    start_text = m["a"].upper().rstrip("Z")
    try:
        start = datetime.fromisoformat(start_text)
    except ValueError:
        return None  # an impossible start stays as written, for the grammar to reject
    return f"{start_text} to {(start + length).isoformat(timespec='minutes')}"


# Seasons, taken as the northern meteorological ones (the answer says so): spring is
# March-May, summer June-August, autumn September-November, winter December-February.
_SEASON_MONTHS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9}
_SEASON = re.compile(
    rf"\b(?:the\s+)?(?P<s>spring|summer|autumn|fall)\s+(?:of\s+)?(?P<y>{_YEAR})(?![\w/-])", re.I
)
_WINTER = re.compile(
    rf"\b(?:the\s+)?winter\s+(?:of\s+)?(?P<y>{_YEAR})\s*[/-]\s*(?P<y2>\d\d(?:\d\d)?)(?![\w/-])",
    re.I,
)
_ONE_WINTER = re.compile(rf"\b(?:the\s+)?winter\s+(?:of\s+)?(?P<y>{_YEAR})(?!\s*[\w/-])", re.I)
_ANY_SEASON = re.compile(r"\b(?:spring|summer|autumn|fall|winter)\b", re.I)


def _winter(m: re.Match[str]) -> str | None:
    year = int(m["y"])
    if int(m["y2"]) % 100 != (year + 1) % 100:
        return None  # "winter 2014/16" is no winter; left for the grammar to reject
    return f"dec {year} to feb {year + 1}"


def season_taken(text: str, spans: tuple[tuple[int, int], ...], found: TimeRange) -> str | None:
    """The words of a range read from a season, with the months it was taken as."""
    for a, b in spans:
        if _ANY_SEASON.search(text[a:b]):
            return f"{text[a:b].strip()} (taken as {found.readable()}, the meteorological season)"
    return None


Rewrite = tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]
PERIOD_REWRITES: tuple[Rewrite, ...] = (
    (_ISO_DURATION, _iso_duration),
    (_QUARTERS, _quarters),
    (_SEASON, lambda m: _months(_SEASON_MONTHS[m["s"].lower()], 3, m["y"])),
    (_WINTER, _winter),
    (_QUARTER, _quarter),
    (_HALF, _half),
    (_SHORT_YEAR, _short_year),
    (_MONTH_SLASH, lambda m: f"{m['a'].rstrip('.')}-{m['b'].rstrip('.')}"),
    (_YEAR_THEN_MONTH, lambda m: f"{m['m'].rstrip('.').replace('/', '-')} {m['y']}"),
    (_MONTH_YEAR, lambda m: f"{m['y']}-{int(m['m']):02d}"),
    (_WEEK, _week),
    (_ORDINAL_DAYS, lambda m: f"{int(m['a'])}-{int(m['b'])} {m['m'].rstrip('.')}"),
    (_DOY_RANGE, lambda m: f"{m['y']}-{m['a']} to {m['y']}-{m['b']}"),
    (_DASHED_DATES, lambda m: f"{m['a']} - {m['b']}"),
)
"""In order; applied after the year-first day forms ("1989 Aug 20-30") are read."""


# A quarter, half or week number no calendar has ("Q5 2015", "H3", "week 54 of 2015").
_NO_SUCH_PERIOD = re.compile(
    rf"\b(?:Q(?P<q>[05-9])|H(?P<h>[03-9]))\s*[/,-]?\s*{_YEAR}(?![\w-])"
    rf"|\b{_YEAR}\s*[/-]?\s*(?:Q(?P<q2>[05-9])|H(?P<h2>[03-9]))(?![\w-])"
    rf"|\b(?:iso\s+)?(?:week|wk\.?|W)\s*(?P<w>0|5[4-9]|[6-9]\d)\s*(?:,|/|of|in)?\s*{_YEAR}\b",
    re.I,
)


def unreadable_period(text: str) -> str | None:
    """The error for a period no calendar has, the question for a one-year winter, or None.

    A quarter, half or week number out of range ("Q5 2015", "week 54 of 2015") is an
    error; "winter 2015" may be either end of the year, so it is asked.
    """
    winter = _ONE_WINTER.search(text)
    if winter is not None:
        year = int(winter["y"])
        return (
            f"'{winter[0]}' could be January-February {year} or December {year} to February "
            f"{year + 1}; please give the months (for example Dec {year} to Feb {year + 1})"
        )
    match = _NO_SUCH_PERIOD.search(text)
    if match is None:
        return None
    if match["w"] is not None:
        return f"'{match[0]}' is not a week of the year (ISO weeks run 1 to 52 or 53)"
    if match["q"] or match["q2"]:
        return f"'{match[0]}' is not a quarter (quarters run Q1 to Q4)"
    return f"'{match[0]}' is not a half year (halves are H1 and H2)"
