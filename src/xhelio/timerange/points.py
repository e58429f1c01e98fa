"""Points in time as physicists write them, composed from a date piece and a clock piece.

The pieces: `DATE` (ISO "2015-07-14", day of year "2015-195", "14 July 2015", "14th of
July", "Jul 14th, 2015", the year optional), `CLOCK` ("22:00", "22:00:30", "2200 UT",
"1830Z", "22h00", "21 UT", "10pm", "noon"), and a point, a date and a clock in either
order ("2200 UT 14 July", "22:00 on 2015-07-14", "14 July 2015 at 22:00"). Relative-day
words ("01:30 the next morning", "into the following day", "until 18:00 the same day")
and open ends ("to the end of the month", "for the rest of the day") are read against the
date written before them.

Each reader gives a rewrite: the words and the ISO text `parse_time_range` reads
("2015-07-14T22:00"), so `sentences` can read a whole request with one grammar. A date
without its year borrows the nearest year written beside it ("1830Z on 3 Mar 2019 to
0200Z 4 Mar"); a day of the month alone borrows its month and year too ("from 2200 UT on
the 16th to 0300 on the 17th of March 2015"), and a 4-digit clock without a zone is a time
of day only right before "on" a date or right after a day ("2200 on 16 March", "16th
2200"), never where it could be a year. Impossible dates are written through unchanged
in ISO form, so the grammar still says they are not real dates. Imports nothing from xhelio.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, timedelta

__all__ = ["CLOCK", "DATE", "REWRITES", "clock_text", "clock_words", "undated_day"]

# The first three letters of each month name.
_MONTHS: list[str] = [
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
]
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_NTH = r"(?:st|nd|rd|th)?"
_ZONE = r"(?:\s*(?:UTC?|GMT|Z)\b)"
_HOUR = r"(?:[01]?\d|2[0-3])"
# Every common clock: 22:00[:30], 22h00, 2200 UT, 1830Z, 21 UT, 10pm, 10:30 a.m., noon.
CLOCK = (
    rf"(?:{_HOUR}:[0-5]\d(?::[0-5]\d)?{_ZONE}?"
    rf"|{_HOUR}h[0-5]\d{_ZONE}?"
    rf"|(?:[01]\d|2[0-3])[0-5]\d{_ZONE}"
    rf"|{_HOUR}h?{_ZONE}"
    r"|(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s*[ap]\.?m\b\.?"
    r"|noon|midnight)"
)
_DOY_WORD = r"(?:doy|day(?:\s+of\s+(?:the\s+)?year)?)"
# Every common date: ISO, day of year, day-month and month-day with or without a year.
DATE = (
    r"(?:(?:\d{4}-\d{2}-\d{2}|\d{4}-\d{3})(?![\d:-])"
    rf"|(?:(?:the\s+)?[0-3]?\d{_NTH}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?"
    rf"|{_MONTH}\s+(?:the\s+)?[0-3]?\d{_NTH}(?:,?\s+\d{{4}})?"
    rf"|{_DOY_WORD}\s*\d{{1,3}}(?:\s*,?\s*(?:of\s+|in\s+)?\d{{4}})?"
    rf"|\d{{4}}\s*,?\s*{_DOY_WORD}\s*\d{{1,3}})(?![\w:]))"
)
_CLOCK_PARTS = re.compile(
    r"(?P<h>\d{1,2}):?h?(?P<m>\d{2})?(?::(?P<s>\d{2}))?\s*(?P<ap>[ap])?", re.I
)
_DATE_PARTS = re.compile(
    r"(?P<y>\d{4})-(?:(?P<m>\d{2})-(?P<d>\d{2})|(?P<doy>\d{3}))"
    r"|(?:the\s+)?(?P<d2>[0-3]?\d)\D*?\s(?:of\s+)?(?P<mn>[a-z]{3})[a-z]*\.?(?:,?\s+(?P<y2>\d{4}))?"
    r"|(?:doy|day)\D*?(?P<n>\d{1,3})(?:\D*(?P<ny>\d{4}))?|(?P<ny2>\d{4})\D+(?P<n2>\d{1,3})"
    r"|(?P<mn3>[a-z]{3})[a-z]*\.?\s+(?:the\s+)?(?P<d3>[0-3]?\d)\D*?(?:,?\s+(?P<y3>\d{4}))?",
    re.I,
)
_DAY_AFTER = r"(?:the\s+)?(?:next|following)\s+(?:morning|day|evening|night|afternoon)"
_SAME_DAY = r"(?:the\s+)?same\s+(?:day|morning|evening|night|afternoon)"
_ON_DAY = rf"\s*,?\s*(?:on\s+|in\s+)?(?:{_DAY_AFTER}|{_SAME_DAY})"
_SEPARATOR = r"\s*(?:-|\u2013|to|until|till|through|thru|and)\s*"
_ON = r"\s*,?\s*(?:on\s+(?:the\s+)?)?"
_CLOCK_THEN_DATE = re.compile(rf"(?<![\w:.-])(?P<c>{CLOCK}){_ON}(?P<d>{DATE})", re.I)
# A clock after its date, unless it opens a clock range on that day ("D 06:00 to 09:30").
_DATE_THEN_CLOCK = re.compile(
    rf"(?<![\w:.-])(?P<d>{DATE})\s*,?\s*(?:at\s+|from\s+|starting\s+(?:at\s+)?)?(?P<c>{CLOCK})"
    rf"(?!{_SEPARATOR}{CLOCK}(?!{_ON}{DATE}|{_ON_DAY}))(?![\w:])",
    re.I,
)
_STANDALONE_CLOCK = re.compile(rf"(?<![\w:./-])(?P<c>{CLOCK})(?![\w:])", re.I)

Rewrite = Callable[[re.Match[str]], str | None]


def clock_text(words: str) -> str:
    """A clock in any common form as HH:MM[:SS] ("2200 UT" 22:00, "10pm" 22:00)."""
    lower = words.lower().strip()
    if lower in ("noon", "midnight"):
        return "12:00" if lower == "noon" else "00:00"
    digits = re.sub(r"\s*(?:utc?|gmt|z)$", "", lower)
    if re.fullmatch(r"\d{4}", digits):
        digits = f"{digits[:2]}:{digits[2:]}"
    parts = _CLOCK_PARTS.match(digits)
    assert parts is not None  # every CLOCK matches
    hour = int(parts["h"])
    if parts["ap"]:
        hour = hour % 12 + (12 if parts["ap"] == "p" else 0)
    seconds = f":{parts['s']}" if parts["s"] else ""
    return f"{hour:02d}:{parts['m'] or '00'}{seconds}"


def _day_of_year(year: int, number: int) -> tuple[int, int, int] | None:
    if not 1 <= number <= (366 if calendar.isleap(year) else 365):
        return None
    day = date(year, 1, 1) + timedelta(days=number - 1)
    return year, day.month, day.day


def _date_parts(words: str, year_hint: int | None = None) -> tuple[int | None, int, int] | None:
    """(year or None, month, day) of a DATE; a day of year needs its year (or the hint)."""
    m = _DATE_PARTS.fullmatch(" ".join(words.split()))
    if m is None:
        return None
    if m["doy"]:
        return _day_of_year(int(m["y"]), int(m["doy"]))
    if m["n"] or m["n2"]:
        year = m["ny"] or m["ny2"]
        year_number = int(year) if year else year_hint
        number = int(m["n"] or m["n2"])
        return None if year_number is None else _day_of_year(year_number, number)
    if m["y"]:
        return int(m["y"]), int(m["m"]), int(m["d"])
    name, day = (m["mn"], m["d2"]) if m["mn"] else (m["mn3"], m["d3"])
    if name.lower() not in _MONTHS:
        return None
    year = m["y2"] or m["y3"]
    return (int(year) if year else None), _MONTHS.index(name.lower()) + 1, int(day)


def _years(text: str) -> list[tuple[int, int]]:
    """(position, year) of every DATE written with its year."""
    out: list[tuple[int, int]] = []
    for m in re.finditer(DATE, text, re.I):
        parts = _date_parts(m[0])
        if parts is not None and parts[0] is not None:
            out.append((m.start(), parts[0]))
    return out


def _iso(parts: tuple[int | None, int, int], year: int) -> str:
    return f"{parts[0] or year:04d}-{parts[1]:02d}-{parts[2]:02d}"


def _dated(text: str, words: str, at: int) -> str | None:
    """A DATE as ISO, its year borrowed from the nearest dated words when missing."""
    years = [] if re.search(r"\d{4}", words) else _years(text)
    before = [y for pos, y in years if pos < at]
    after = [y for pos, y in years if pos > at]
    hint = before[-1] if before else (after[0] if after else None)
    parts = _date_parts(words, hint)
    if parts is None or (parts[0] is None and hint is None):
        return None
    return _iso(parts, parts[0] or hint or 0)


_ENDS_CLOCK_RANGE = re.compile(
    rf"(?<![\w:.-])(?:{CLOCK}|{_HOUR}h?|(?:[01]\d|2[0-3])[0-5]\d){_SEPARATOR}$", re.I
)
_ENDS_DATE_RANGE = re.compile(rf"{DATE}{_SEPARATOR}$", re.I)


def _point(text: str, clock_first: bool) -> Rewrite:
    def rewrite(m: re.Match[str]) -> str | None:
        head = text[: m.start()]
        ends_range = _ENDS_CLOCK_RANGE.search(head) and not _ENDS_DATE_RANGE.search(head)
        if clock_first and ends_range:
            return None  # the end of a clock range on that day ("10 to 14 UT on D")
        day = _dated(text, m["d"], m.start("d"))
        return None if day is None else f"{day}T{clock_text(m['c'])}"

    return rewrite


def clock_then_date(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'2200 UT 14 July 2015', '1830Z on 3 Mar' as "YYYY-MM-DDTHH:MM"."""
    return _CLOCK_THEN_DATE, _point(text, clock_first=True)


def date_then_clock(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'14 July 2015 at 22:00', '2012-07-23 from 18:00' as "YYYY-MM-DDTHH:MM"."""
    return _DATE_THEN_CLOCK, _point(text, clock_first=False)


def clock_words() -> tuple[re.Pattern[str], Rewrite]:
    """The rewrite of a clock standing alone into HH:MM ("22h40" 22:40, "2200 UT")."""
    return _STANDALONE_CLOCK, lambda m: clock_text(m["c"])


# --- a clock on a day of a month named elsewhere -----------------------------------------

# "the 16th", "17th": a day of the month whose month (and year) the request names once
# elsewhere ("from 2200 UT on the 16th to 0300 on the 17th of March 2015").
_DAY_ONLY = rf"(?:the\s+)?[0-3]?\d(?:st|nd|rd|th)(?!\s*,?\s*(?:of\s+)?{_MONTH})(?![\w:])"
# A 4-digit clock without a zone is a time of day only right before "on" a date
# ("2200 on 16 March") or right after a day of the month ("16th 2200"); elsewhere a year.
_BARE_CLOCK = r"(?:[01]\d|2[0-3])[0-5]\d(?![\d:/-])"
_MONTH_DAY_POINT = re.compile(
    rf"(?<![\w:.-])(?:(?P<c>{CLOCK}|{_BARE_CLOCK}(?=\s*,?\s*on\s))\s*,?\s*(?:on\s+)?"
    rf"(?P<d>{_DAY_ONLY}|{DATE})"
    rf"|(?P<d2>{_DAY_ONLY}|{_MONTH}\s+(?:the\s+)?[0-3]?\d{_NTH}\b)\s*,?\s*(?:at\s+)?"
    rf"(?P<c2>{CLOCK}|(?!(?:19|20)\d\d)(?<!\d){_BARE_CLOCK}))(?![\w:])",
    re.I,
)
_MONTH_WORD = re.compile(rf"(?<![\w-]){_MONTH}", re.I)
_ISO_DAY = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-\d{2}\b")
_YEAR = re.compile(r"(?<![\w:.-])(?:19|20)\d\d(?!\w|[:.-]\d)")


def _anchors(text: str, clocks: list[tuple[int, int]]) -> list[tuple[int, int | None, int | None]]:
    """(position, year, month) of every year, month name and ISO date of `text`.

    A year inside one of the `clocks` is a time of day ("2015 on the 3rd": 20:15).
    """
    out: list[tuple[int, int | None, int | None]] = []
    for m in _ISO_DAY.finditer(text):
        out.append((m.start(), int(m["y"]), int(m["m"])))
    for m in _MONTH_WORD.finditer(text):
        out.append((m.start(), None, _MONTHS.index(m[0][:3].lower()) + 1))
    for m in _YEAR.finditer(text):
        if not any(a <= m.start() < b for a, b in clocks):
            out.append((m.start(), int(m[0]), None))
    return sorted(out)


def _borrowed(anchors: list[tuple[int, int | None, int | None]], at: int, index: int) -> int | None:
    """The year (index 1) or month (index 2) written nearest before `at`, else after it."""
    before = [a[index] for a in anchors if a[0] < at and a[index] is not None]
    after = [a[index] for a in anchors if a[0] > at and a[index] is not None]
    return before[-1] if before else (after[0] if after else None)


def month_day_points(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'2200 UT on the 16th', '17th 0300 UT', '2200 on 16 March' as "YYYY-MM-DDTHH:MM".

    The day's month and year are borrowed from the words written nearest it (before it
    first): "from 2200 UT on the 16th to 0300 on the 17th of March 2015" is one night.
    """
    matches = list(_MONTH_DAY_POINT.finditer(text))
    clocks = [m.span("c") if m["c"] else m.span("c2") for m in matches]
    anchors = _anchors(text, clocks)

    def rewrite(m: re.Match[str]) -> str | None:
        words, clock = (m["d"], m["c"]) if m["d"] else (m["d2"], m["c2"])
        at = m.start("d") if m["d"] else m.start("d2")
        day_only = re.fullmatch(_DAY_ONLY, words, re.I) is not None
        parts = None if day_only else _date_parts(words)
        if parts is not None and parts[0] is not None and not re.fullmatch(_BARE_CLOCK, clock):
            return None  # a clock and a whole date: `clock_then_date` reads it
        head = text[: m.start()]
        if m["c"] and _ENDS_CLOCK_RANGE.search(head) and not _ENDS_DATE_RANGE.search(head):
            return None  # the end of a clock range on that day ("22:00 to 0300 on the 17th")
        year = _borrowed(anchors, at, 1)
        if day_only:
            month = _borrowed(anchors, at, 2)
            if month is None or year is None:
                return None
            day = int(re.sub(r"\D", "", words))
            before = _day_before(text, at)
            if before is not None and (before.year, before.month, before.day) > (year, month, day):
                # "from 2359 UT on 31 December 2014 to 0100 UT on the 1st": the next month
                year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            return f"{year:04d}-{month:02d}-{day:02d}T{clock_text(clock)}"
        if parts is None or (parts[0] is None and year is None):
            return None
        return f"{_iso(parts, parts[0] or year or 0)}T{clock_text(clock)}"

    return _MONTH_DAY_POINT, rewrite


def undated_day(text: str) -> str | None:
    """The words of a clock on a day of the month when no month is written anywhere.

    "from 2200 UT on the 16th to 0300 on the 17th" alone names no month: asked, never
    read as a year 2200 nor as the days of some month.
    """
    if any(month is not None for _, _, month in _anchors(text, [])):
        return None
    days = (m for m in _MONTH_DAY_POINT.finditer(text) if m["d"] or m["d2"])
    return next((m[0] for m in days if re.fullmatch(_DAY_ONLY, m["d"] or m["d2"], re.I)), None)


# --- words measured from the date written before them ------------------------------------

_RELATIVE_DAY = re.compile(
    rf"(?:(?P<into>\binto)\s+(?P<whole>{_DAY_AFTER})"
    rf"|\b(?P<c>{CLOCK})\s*,?\s*(?:on\s+|in\s+)?(?:(?P<next>{_DAY_AFTER})|(?P<same>{_SAME_DAY})))\b",
    re.I,
)
_END_OF = re.compile(
    r"\b(?P<sep>to|until|till|through|thru)\s+(?:the\s+)?end\s+of\s+(?:the|that)\s+"
    r"(?P<p>day|week|month|year)\b"
    r"|\b(?:for|through|during|over)\s+(?:the\s+)?rest\s+of\s+(?:the|that)\s+(?P<rest>day)\b",
    re.I,
)


def _day_before(text: str, at: int) -> date | None:
    """The last date written before `at` (its year borrowed when missing), or None."""
    for m in reversed(list(re.finditer(DATE, text[:at], re.I))):
        iso = _dated(text, m[0], m.start())
        if iso is not None:
            try:
                return date.fromisoformat(iso)
            except ValueError:
                return None
    return None


def relative_days(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'01:30 the next morning', 'into the following day', '18:00 the same day'."""

    def rewrite(m: re.Match[str]) -> str | None:
        day = _day_before(text, m.start())
        if day is None:
            return None
        if m["into"]:
            return f"to {day + timedelta(days=1)}"
        shift = timedelta(days=0 if m["same"] else 1)
        return f"{day + shift}T{clock_text(m['c'])}"

    return _RELATIVE_DAY, rewrite


def _end_of(day: date, period: str) -> date:
    """The last day of the day, week (Monday-first), month or year holding `day`."""
    if period == "week":
        return day + timedelta(days=6 - day.weekday())
    if period == "month":
        return day.replace(day=calendar.monthrange(day.year, day.month)[1])
    if period == "year":
        return day.replace(month=12, day=31)
    return day


def open_ends(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'to the end of the month' (a date end, whole day included), 'the rest of the day'."""

    def rewrite(m: re.Match[str]) -> str | None:
        day = _day_before(text, m.start())
        if day is None:
            return None
        if m["rest"]:
            return f"to {day + timedelta(days=1)}T00:00"
        return f"{m['sep']} {_end_of(day, m['p'].lower())}"

    return _END_OF, rewrite


# "to the end of March 2015", "until the end of 2015-03-19": a written period that ends a
# range already includes its whole; the words "the end of" add nothing.
_END_OF_WRITTEN = re.compile(
    rf"\b(?P<sep>to|until|till|through|thru)\s+(?:the\s+)?(?:very\s+)?end\s+of\s+"
    rf"(?=\d|{_MONTH})",
    re.I,
)


def end_of_written(text: str) -> tuple[re.Pattern[str], Rewrite]:
    """'to the end of March 2015': to March 2015, whose end is the range's end."""
    return _END_OF_WRITTEN, lambda m: f"{m['sep']} "


# In order: a point is read before the words measured from it.
REWRITES: tuple[Callable[[str], tuple[re.Pattern[str], Rewrite]], ...] = (
    month_day_points,
    clock_then_date,
    date_then_clock,
    relative_days,
    open_ends,
    end_of_written,
)
"""Each makes, from the text as rewritten so far, a pattern and its rewrite."""
