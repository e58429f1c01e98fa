"""The time range of a request, with the sentence forms `find_time_range` leaves out.

`find_time` wraps `timerange.find_time_range` (the longest piece of the sentence that
`parse_time_range` accepts) and adds what people write around a date: a clock range on
that day ("on 2017-07-11 from 22:00 to 23:00", "2008-02-26 04:00 to 06:00"), a day of
year with the year apart ("2024 DOY 100 to DOY 105", "day 75 of 2015"), and weeks
("the week of 2017-09-06", "the first week of February 2024"). It returns every span it
used so the parser can mask them. Both modes read time here: the offline parser and the
planner's `resolve_plan_time`. Imports only `timerange.grammar`, `errors`, `vocabulary`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from xhelio.errors import BadTimeRangeError
from xhelio.timerange.days import DayFound, named_day
from xhelio.timerange.dotted import (
    AROUND_HOUR,
    DOTTED_DAY_MONTH,
    DOTTED_DAYS,
    NIGHT_OF,
    around_hour,
    dotted_day_month,
    dotted_days,
    night_of,
)
from xhelio.timerange.future import future_range
from xhelio.timerange.grammar import TimeRange, find_time_range, parse_time_range
from xhelio.timerange.labels import Named, window_words
from xhelio.timerange.parts import (
    HYPHENED_PART,
    day_part_after,
    decimal_year,
    month_first_said,
    part_of_period,
)
from xhelio.timerange.periods import PERIOD_REWRITES, season_taken, unreadable_period
from xhelio.timerange.points import REWRITES, clock_words, undated_day
from xhelio.timerange.refine import days_in_month
from xhelio.timerange.relative import (
    around,
    event_words_after,
    phrase_spans,
    relation_before,
    suffix_around,
)
from xhelio.timerange.words import NUMBER_WORDS, UNIT_WORDS, alternatives, count, unit
from xhelio.vocabulary import load_vocabulary

__all__ = ["TimeFound", "clock_range_on", "find_time", "stray_clocks"]

_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?"
_ZONE = r"(?:\s*(?:UTC?|Z)\b)?"
_CLOCK_RANGE = re.compile(
    rf"(?:\b(?:from|between)\s+)?(?<!\S)(?P<a>{_CLOCK}){_ZONE}\s*"
    rf"(?:to|until|till|through|and|-|\u2013)\s*(?P<b>{_CLOCK}){_ZONE}",
    re.I,
)
_DOY_WORD = r"(?:doys?|days?(?:\s+of\s+(?:the\s+)?year)?)"
_DOY_TAIL = (
    rf"(?:\s*(?:to|through|until|and|-|\u2013)\s*(?:{_DOY_WORD}\s*)?(?P<b>\d{{1,3}})(?!\d))?"
)
_DOY_FORMS = (
    re.compile(
        rf"(?:\bbetween\s+)?\b(?P<y>\d{{4}})\s*,?\s*{_DOY_WORD}\s*(?P<a>\d{{1,3}})(?!\d)"
        + _DOY_TAIL,
        re.I,
    ),
    re.compile(
        rf"(?:\bbetween\s+)?\b{_DOY_WORD}\s*(?P<a>\d{{1,3}})(?!\d){_DOY_TAIL}"
        r"\s*(?:,|of|in|/)?\s*(?P<y>\d{4})\b",
        re.I,
    ),
)
_NTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
_ORDINAL = "|".join([*_NTH, "last"])
_WEEK_OF = re.compile(rf"(?:\b(?P<nth>{_ORDINAL})\s+)?\bweek\s+of\s+(?:the\s+)?$", re.I)
_NTH_WEEK = re.compile(rf"\b(?:{_ORDINAL})\s+week\s+of\b", re.I)
_WEEK = timedelta(days=7)
_ONE_DAY = timedelta(days=1)
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


def _whole_year(r: TimeRange) -> bool:
    return r.start == r.start.replace(
        month=1, day=1, hour=0, minute=0, second=0, microsecond=0
    ) and (r.end == r.start.replace(year=r.start.year + 1))


def _clock(day: datetime, text: str) -> datetime:
    """The time `text` ("09:30", "09:30:15", "0930") on `day`."""
    text = text if ":" in text else f"{text[:-2]}:{text[-2:]}"
    parts = [int(p) for p in text.split(":")]
    return day + timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2] if parts[2:] else 0)


_MONTH_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$", re.I
)
_DOY_SAID = re.compile(r"\bdoys?\b|\bof\s+(?:the\s+)?year\b", re.I)


def _day_of_year(text: str, now: datetime | None) -> TimeFound | None:
    for form in _DOY_FORMS:
        match = form.search(text)
        if match is None:
            continue
        if _MONTH_BEFORE.search(text[: match.start()]) and not _DOY_SAID.search(match[0]):
            continue  # "march 2015, days 17-18": days of the month, not of the year
        year, first, last = match["y"], int(match["a"]), int(match["b"] or match["a"])
        piece = f"{year}-{first:03d}" + (f" to {year}-{last:03d}" if last != first else "")
        try:
            found = parse_time_range(piece, now)
        except BadTimeRangeError as exc:
            return TimeFound(None, None, exc.message)
        return TimeFound(found, match[0], None, (match.span(),))
    return None


def clock_range_on(text: str, span: TimeRange) -> TimeRange | None:
    """A clock range with no date ("06:00 to 12:00") on the first day of `span`, or None.

    For a follow-up that zooms into the data already loaded; an end before the start
    runs past midnight.
    """
    clock = _CLOCK_RANGE.search(_rewrite(text).text)
    if clock is None:
        return None
    day = span.start.replace(hour=0, minute=0, second=0, microsecond=0)
    begin, end = _clock(day, clock["a"]), _clock(day, clock["b"])
    if end <= begin:
        end += timedelta(days=1)
    return TimeRange(begin, end)


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


class _Rewritten:
    """Text with pieces rewritten into forms `parse_time_range` reads.

    Each pass is remembered so a span of the rewritten text maps back to the original
    (the parser masks what the time range used).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # Per pass: (new_start, new_end, old_start, old_end) of every rewritten piece.
        self.passes: list[list[tuple[int, int, int, int]]] = []

    def sub(self, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str | None]) -> None:
        """Rewrite every match of `pattern` for which `repl` gives a replacement."""
        out: list[str] = []
        pos, length = 0, 0
        pieces: list[tuple[int, int, int, int]] = []
        for match in pattern.finditer(self.text):
            new = repl(match)
            if new is None:
                continue
            before = self.text[pos : match.start()]
            out += [before, new]
            length += len(before)
            pieces.append((length, length + len(new), match.start(), match.end()))
            length += len(new)
            pos = match.end()
        if pieces:
            self.text = "".join(out) + self.text[pos:]
            self.passes.append(pieces)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that [start, end) of the current text came from."""
        for pieces in reversed(self.passes):
            start, end = _back(pieces, start, True), _back(pieces, end, False)
        return start, end


def _back(pieces: list[tuple[int, int, int, int]], position: int, left: bool) -> int:
    """A position before one rewrite pass."""
    shift = 0
    for n_start, n_end, o_start, o_end in pieces:
        if position < n_start or (not left and position == n_start):
            break
        if position < n_end or (not left and position == n_end):
            return o_start if left else o_end
        shift = o_end - n_end
    return position + shift


_CLOCK4 = r"(?:[01]\d|2[0-3])[0-5]\d"
_US_DATE = re.compile(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})\b")
_SLASH_ISO = re.compile(r"\b(?P<y>\d{4})[/.](?P<m>\d{1,2})[/.](?P<d>\d{1,2})\b")
_DATE_HOUR = re.compile(r"\b(?P<date>\d{4}-\d{2}-\d{2})[ T](?P<h>[01]?\d|2[0-3])\s*h\b", re.I)
_CLOCK4_PAIR = re.compile(
    rf"(?<![\d:/-])(?P<a>{_CLOCK4})(?P<mid>\s*(?:UTC?\s*)?(?:to|until|till|through|and|-|\u2013)\s*)"
    rf"(?P<b>{_CLOCK4})(?![\d:/-])",
    re.I,
)
# A 4-digit clock right after a date ("2015-03-17 2200", "2015-03-17T2200").
_DATE_CLOCK4 = re.compile(rf"\b(?P<date>\d{{4}}-\d{{2}}-\d{{2}})[ T](?P<c>{_CLOCK4})(?![\d:/-])")
# "2015-03-17 until 14:00": the day from its start up to the clock time.
_DAY_UNTIL = re.compile(
    r"\b(?P<date>\d{4}-\d{2}-\d{2})\s+(?:until|till|up\s+to)\s+(?P<c>\d{1,2}:\d{2})"
    r"(?:\s*(?:UTC?|Z|GMT)\b)?(?![\d:])",
    re.I,
)
# "at 0930" beside a date elsewhere: a time of day, not a year.
_AT_CLOCK4 = re.compile(rf"\bat\s+(?P<c>{_CLOCK4})(?![\d:/-])", re.I)
_HOUR = r"(?:[01]?\d|2[0-3])"
_ZONE_WORD = r"\s*(?:UTC?|Z|GMT)\b"
# Whole hours with a zone ("from 10 UT to 14 UT", "10-14 UT") or an "h" ("10h to 14h").
_HOUR_PAIR = re.compile(
    rf"(?<![\w:./-])(?P<a>{_HOUR})(?P<za>{_ZONE_WORD}|h\b)?"
    rf"(?P<mid>\s*(?:to|until|till|through|and|-|\u2013)\s*)"
    rf"(?P<b>{_HOUR})(?P<zb>{_ZONE_WORD}|h\b)",
    re.I,
)
# Clock-like words the range did not use: a time the grammar could not place.
_CLOCKISH = re.compile(
    r"(?<![\w:./-])(?:\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:UTC?|Z|GMT)\b)?"
    r"|\d{1,4}\s*(?:UTC?|GMT)\b|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)"
    r"|\d{1,4}\s*Z\b|noon|midnight|[0-3]?\d(?:st|nd|rd|th)"
    # "dawn-dusk (electric field)" is a direction, no time of day
    r"|morning|afternoon|evening|night|dawn(?![-\s](?:to[-\s])?dusk)"
    r"|(?<!dawn-)(?<!dawn )(?<!dawn-to-)(?<!dawn to )dusk)(?![\w:])",
    re.I,
)
_HAS_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\b\d{4}-\d{3}\b|\b(?:1[6-9]|2[0-2])\d\d(?:0[1-9]|1[0-2])[0-3]\d\b|\b(?:doy|day)\s*\d{1,3}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
    re.I,
)
_BAD_CLOCK = re.compile(r"(?<![\d:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d])")
_COUNT = rf"(?P<n>\d+(?:\.\d+)?|{alternatives(NUMBER_WORDS)})"
_UNIT = rf"(?P<u>{alternatives(UNIT_WORDS)})\b"
_PART_OF = re.compile(
    rf"\b(?:the\s+)?(?P<w>last|first|final|opening)\s+(?:{_COUNT}[\s-]*)?{_UNIT}\s+of\s+(?:the\s+)?",
    re.I,
)
_HALF_OF = re.compile(
    r"\b(?:the\s+)?(?P<w>first|1st|second|2nd|last)\s+half\s+of\s+(?:the\s+)?", re.I
)
_AGO = re.compile(rf"\b(?:from\s+|on\s+)?{_COUNT}\s+(?P<u>days?|weeks?)\s+ago\b", re.I)
_PLUS_MINUS = re.compile(
    rf"\b(?:at|around|about|near)\s+(?P<c>\d{{1,2}}:\d{{2}})\s*(?:UTC?|Z)?\s*,?\s*"
    rf"(?:plus or minus|\+/-|\u00b1|\+-)\s*"
    rf"{_COUNT}\s*{_UNIT}",
    re.I,
)


# "16.10.2015": dots are written day first.
_DOTTED_DATE = re.compile(r"(?<![\d.])(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)\.(?P<y>\d{4})\b")


def _us_date(m: re.Match[str]) -> str | None:
    a, b, year = int(m["a"]), int(m["b"]), m["y"]
    month, day = (a, b) if a <= 12 else (b, a)  # US month-first; day-first when it must be
    return f"{year}-{month:02d}-{day:02d}"


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# "the 17th of March 2015", "March the 17th": the day-month order parse_time_range reads.
_ORDINAL_DAY = re.compile(
    rf"\b(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)\s+(?:of\s+)?(?P<m>{_MONTH})(?!\w)", re.I
)
_MONTH_THE_DAY = re.compile(rf"\b(?P<m>{_MONTH})\s+the\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\b", re.I)


# A clock range ending at the end of its day ("06-24 UT", "0600-2400", "06:00-24:00"):
# 24 is written 00, which a clock range reads as the next midnight.
_SEP = r"\s*(?:to|until|till|through|and|-|\u2013)\s*"
_END_OF_DAY = re.compile(
    rf"(?<![\w:./-])(?P<a>\d{{1,2}}:\d{{2}}(?::\d{{2}})?{_ZONE}{_SEP})24:00(?::00)?(?![\d:])"
    rf"|(?<![\w:./-])(?P<b>{_CLOCK4}(?:{_ZONE_WORD})?{_SEP})2400(?![\d:/-])"
    rf"|(?<![\w:./-])(?P<c>{_HOUR}(?:{_ZONE_WORD}|h\b)?{_SEP})24(?=(?:{_ZONE_WORD})|h\b)",
    re.I,
)


def _end_of_day(m: re.Match[str]) -> str:
    if m["a"]:
        return f"{m['a']}00:00"
    return f"{m['b']}0000" if m["b"] else f"{m['c']}00"


def _hour_pair(m: re.Match[str]) -> str:
    zone = "" if m["zb"].strip().lower() == "h" else m["zb"]
    return f"{int(m['a']):02d}:00{m['mid']}{int(m['b']):02d}:00{zone}"


# "1989 Aug 20-30", "2015 March 17": the year first, as log books write it.
_YEAR_MONTH_DAYS = re.compile(
    rf"\b(?P<y>(?:19|20)\d\d)\s*,?\s+(?P<m>{_MONTH})\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?(?P<rest>\s*[-\u2013]\s*[0-3]?\d)?"
    rf"(?![\d:])",
    re.I,
)


# Two ISO dates (or a datetime and a date) joined by a bare dash: "2003-10-29T06:00-2003-10-30".
_ISO_DAY = r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?"
_TIGHT_DASH = re.compile(rf"\b(?P<a>{_ISO_DAY})\s*[-\u2013]\s*(?P<b>{_ISO_DAY})(?![\d:])")


# "week 12 of 2015", "2015 week 12", "weeks 10-12 of 2016": ISO weeks, read as 2015-W12.
_WEEK_NUMBER = re.compile(
    r"\b(?:iso\s+)?weeks?\s+(?:no\.?\s*|number\s+|#\s*)?(?P<w>\d{1,2})"
    r"(?:\s*(?:-|\u2013|to|through|thru)\s*(?P<last>\d{1,2}))?\s*(?:of|in|,)?\s*(?P<y>\d{4})\b"
    r"|\b(?P<y2>\d{4}),?\s+(?:iso\s+)?week\s+(?P<w2>\d{1,2})\b",
    re.I,
)


def _week_number(m: re.Match[str]) -> str:
    year = m["y"] or m["y2"]
    first = f"{year}-W{int(m['w'] or m['w2']):02d}"
    return f"{first} to {year}-W{int(m['last']):02d}" if m["last"] else first


def _rewrite(text: str) -> _Rewritten:
    """Forms people type, in the spellings `parse_time_range` reads."""
    r = _Rewritten(text)
    r.sub(NIGHT_OF, night_of)  # before "17/18" reads as a US date
    r.sub(_END_OF_DAY, _end_of_day)
    r.sub(DOTTED_DAYS, dotted_days)
    r.sub(DOTTED_DAY_MONTH, dotted_day_month)
    r.sub(AROUND_HOUR, around_hour)
    r.sub(HYPHENED_PART, lambda m: f"{m['w']} ")
    r.sub(_YEAR_MONTH_DAYS, lambda m: f"{m['m']} {int(m['d'])}{m['rest'] or ''} {m['y']}")
    for pattern, period in PERIOD_REWRITES:  # "Q1 2015", "2001 Jan", "the 3rd to 5th of May"
        r.sub(pattern, period)
    r.sub(_ORDINAL_DAY, lambda m: f"{int(m['d'])} {m['m']}")
    r.sub(_MONTH_THE_DAY, lambda m: f"{m['m']} {int(m['d'])}")
    r.sub(_US_DATE, _us_date)
    r.sub(_DOTTED_DATE, lambda m: f"{m['y']}-{int(m['m']):02d}-{int(m['d']):02d}")
    r.sub(_SLASH_ISO, lambda m: f"{m['y']}-{int(m['m']):02d}-{int(m['d']):02d}")
    for rewrite in REWRITES:  # a date and a clock in either order, words measured from it
        r.sub(*rewrite(r.text))
    r.sub(_HOUR_PAIR, _hour_pair)
    r.sub(_DATE_HOUR, lambda m: f"{m['date']}T{int(m['h']):02d}:00")
    # Two 4-digit clock times joined by "to" are read so only beside a date elsewhere
    # ("on 2024-01-15 from 0600 to 1800"), never alone, where they would be years.
    if _HAS_DATE.search(r.text):
        r.sub(
            _CLOCK4_PAIR,
            lambda m: f"{m['a'][:2]}:{m['a'][2:]}{m['mid']}{m['b'][:2]}:{m['b'][2:]}",
        )
        r.sub(_AT_CLOCK4, lambda m: f"at {m['c'][:2]}:{m['c'][2:]}")
    r.sub(_DATE_CLOCK4, lambda m: f"{m['date']}T{m['c'][:2]}:{m['c'][2:]}")
    r.sub(_TIGHT_DASH, lambda m: f"{m['a']} to {m['b']}")
    r.sub(*clock_words())
    r.sub(_DAY_UNTIL, lambda m: f"{m['date']}T00:00 to {m['date']}T{m['c']}")
    r.sub(_WEEK_NUMBER, _week_number)
    return r


_BAD_CLOCK4 = re.compile(
    r"(?<![\w:./-])(?P<c>\d{3,4})\s*(?:UTC?|Z|GMT)\b"
    r"|\b\d{4}-\d{2}-\d{2}[ T](?P<d>\d{4})(?![\d:/-])"
    r"|\bat\s+(?P<a>\d{4})(?![\d:/-])",
    re.I,
)
_BAD_HOUR = re.compile(r"(?<![\w:./-])(?P<h>\d{1,2})\s*(?:UTC?|Z|GMT)\b", re.I)


def _bad_clock(text: str) -> str | None:
    for m in _BAD_CLOCK.finditer(text):
        if int(m["h"]) > 24 or int(m["m"]) > 59 or (int(m["h"]) == 24 and m["m"] != "00"):
            return f"{m[0]} is not a time of day (hours run 00-23, minutes 00-59)"
    dated = _HAS_DATE.search(text) is not None
    for m in _BAD_CLOCK4.finditer(text):
        digits = m["c"] or m["d"] or m["a"]
        if m["a"] and not dated:
            continue  # "at 2600" with no date elsewhere may be anything
        hours, minutes = int(digits[:-2]), int(digits[-2:])
        if hours > 23 or minutes > 59:
            return f"{m[0].strip()} is not a time of day (hours run 00-23, minutes 00-59)"
    for m in _BAD_HOUR.finditer(text):
        if int(m["h"]) > 24:
            return f"{m[0].strip()} is not a time of day (hours run 00-23)"
    return None


# Periods counted in units the grammar has no calendar for: asked, never widened.
_ROTATION = re.compile(
    r"(?i:\b(?:carrington|bartels|solar)\s+rotations?\b)(?:\s*(?i:number|no\.?|#)?\s*\d{1,4}\b)?"
    r"|\b(?:CR|BR)\s*#?\s*\d{3,4}\b(?![-/.]\d)",  # "BR 2021-06-01": B_R on a date
)


def _unread_period(text: str) -> str | None:
    """A rotation number ("Carrington rotation 2160", "CR 2160"): say its dates are needed."""
    match = _ROTATION.search(text)
    if match is None:
        return None
    return (
        f"I cannot turn '{match[0].strip()}' into dates (solar rotation numbers are not "
        "read); please give the dates, for example 2015-03-17 to 2015-04-13"
    )


def stray_clocks(text: str) -> tuple[str, ...]:
    """Clock-like words ("2200 UT", "10am", "noon") in text the time range did not use.

    The parser masks what the time range used; a clock left over is a time of day the
    grammar could not place, which the answer must say rather than silently widen.
    """
    return tuple(m[0].strip() for m in _CLOCKISH.finditer(text))


def _anchored(text: str, now: datetime | None) -> TimeFound | None:
    """Parts of a period named after them, and 'N days ago' counted from `now`.

    'the last N days of March 2015', 'the second half of 2015-03-17'.
    """
    for form in (_PART_OF, _HALF_OF):
        for match in form.finditer(text):
            rest = text[match.end() :]
            found = find_time_range(rest, now)
            if (
                found.range is None
                or found.text is None
                or not rest.lstrip().startswith(found.text[:1])
            ):
                continue
            base = found.range
            at = rest.find(found.text)
            if at > 3:
                continue
            end = match.end() + at + len(found.text)
            if form is _HALF_OF:
                half = base.duration / 2
                if base.duration > _ONE_DAY and not base.duration % _ONE_DAY:
                    half = _ONE_DAY * (base.duration // _ONE_DAY // 2)  # March: 1-15, 16-31
                if _whole_year(base):  # a year's halves are January-June, July-December
                    half = base.start.replace(month=7) - base.start
                second = match["w"].lower() in ("second", "2nd", "last")
                result = (
                    TimeRange(base.start + half, base.end)
                    if second
                    else TimeRange(base.start, base.start + half)
                )
            else:
                length = count(match["n"] or "1") * unit(match["u"])
                if match["w"].lower() in ("last", "final"):
                    result = TimeRange(max(base.end - length, base.start), base.end)
                else:
                    result = TimeRange(base.start, min(base.start + length, base.end))
            return TimeFound(result, text[match.start() : end], None, ((match.start(), end),))
    ago = _AGO.search(text)
    if ago is not None:
        current = now or datetime.now(UTC)
        day = current.replace(hour=0, minute=0, second=0, microsecond=0)
        start = day - count(ago["n"]) * unit(ago["u"])
        length = unit(ago["u"])
        return TimeFound(TimeRange(start, start + length), ago[0], None, (ago.span(),))
    return None


def _plus_minus(text: str, found: TimeFound) -> TimeFound:
    """'on DAY at 09:30 plus or minus 2 hours': the window around that clock time."""
    match = _PLUS_MINUS.search(text)
    if match is None or found.range is None or not _whole_day(found.range):
        return found
    centre = _clock(found.range.start, match["c"])
    half = count(match["n"]) * unit(match["u"])
    return TimeFound(
        TimeRange(centre - half, centre + half),
        f"{found.text} {match[0]}",
        None,
        (*found.spans, match.span()),
    )


_CLOCK_AT = rf"(?P<c>\d{{1,2}}:\d{{2}}|{_CLOCK4})(?![\d:/-])\s*(?:UTC?|Z|GMT)?"
_LENGTH = rf"(?:the\s+)?(?:next\s+|following\s+)?{_COUNT}[\s-]*{_UNIT}"
# A length that is a cadence, not a duration: "22:00, 5 min averages".
_NOT_CADENCE = (
    r"(?![\s-]*(?:averages?|means?|medians?|resolution|res\b|cadence|bins?|data|samples?"
    r"|sampling|smooth\w*|window|running|boxcar|intervals?|steps?|segments?|welch|fft))"
)
# "for", a comma, "+" or "plus" between the start and the length.
_LENGTH_JOIN = r"(?:,?\s*(?:and\s+)?for\s+|\s*,\s*|\s*(?:\+|\bplus\b)\s*)"
# A clock and a length on a day named elsewhere: "starting at 10 UT for 3 hours",
# "for 3 hours from 10:00".
_CLOCK_FOR = (
    re.compile(
        rf"\b(?:starting|beginning|from|at)\s+(?:at\s+)?{_CLOCK_AT}{_LENGTH_JOIN}{_LENGTH}\b"
        + _NOT_CADENCE,
        re.I,
    ),
    re.compile(
        rf"\bfor\s+{_LENGTH}\s+(?:starting|beginning|from|after)\s+(?:at\s+)?{_CLOCK_AT}",
        re.I,
    ),
)


# A length right after a start instant: "2015-03-17 22:00, for 6 hours".
_THEN_LENGTH = re.compile(rf"\s*{_LENGTH_JOIN}{_LENGTH}\b{_NOT_CADENCE}", re.I)
_FOR = re.compile(r",?\s*(?:and\s+)?for\s", re.I)


def _then_length(text: str, found: TimeFound) -> TimeFound:
    """'from T for N hours' after an instant or a day T: N hours from T's start."""
    if found.range is None or not found.spans:
        return found
    if found.range.duration > timedelta(hours=1) and not _whole_day(found.range):
        return found
    last = max(b for _, b in found.spans)
    match = _THEN_LENGTH.match(text, last)
    if match is None or (_whole_day(found.range) and not _FOR.match(match[0])):
        return found  # a day then ", 1 hr ..." is no length of it; "for 3 days" is
    begin = found.range.start
    length = count(match["n"]) * unit(match["u"])
    return TimeFound(
        TimeRange(begin, begin + length),
        f"{found.text}{match[0]}",
        None,
        (*found.spans, match.span()),
    )


# "around noon on D", "about 2015-03-17 04:00": an instant said loosely, the hour either side
# (as "around 14 UT").
_ABOUT = re.compile(r"\b(?:around|about|near|approximately|approx\.?|~)\s*(?:at\s+)?$", re.I)
_ABOUT_HALF = timedelta(hours=1)


def _about_instant(text: str, found: TimeFound) -> TimeFound:
    """An instant after 'around': the hour either side of it, not the hour from it."""
    if found.range is None or len(found.spans) != 1 or found.range.duration != _ABOUT_HALF:
        return found
    first, last = found.spans[0]
    lead = _ABOUT.search(text[:first])
    if lead is None:
        return found
    return TimeFound(
        TimeRange(found.range.start - _ABOUT_HALF, found.range.start + _ABOUT_HALF),
        f"{text[lead.start() : last]} (taken as plus or minus 1 hour)",
        None,
        ((lead.start(), last),),
    )


# "on 2012-05-03 for the first 6 hours": a part of the period named after it.
_PART_AFTER = re.compile(
    rf"\s*,?\s*(?:(?:for|during|over|in)\s+)?(?:the\s+)?(?P<w>first|last|final|opening)\s+"
    rf"(?:{_COUNT}[\s-]*)?{_UNIT}(?!\s+(?:of|before|after|around)\b)",
    re.I,
)


def _part_after(text: str, found: TimeFound) -> TimeFound:
    """The first or last N of the period found, named after it."""
    if found.range is None or not found.spans:
        return found
    match = _PART_AFTER.match(text, max(b for _, b in found.spans))
    if match is None:
        return found
    base, length = found.range, count(match["n"] or "1") * unit(match["u"])
    if length >= base.duration:
        return found
    last = match["w"].lower() in ("last", "final")
    part = (
        TimeRange(base.end - length, base.end)
        if last
        else TimeRange(base.start, base.start + length)
    )
    return TimeFound(part, f"{found.text}{match[0]}", None, (*found.spans, match.span()))


def _clock_for(text: str, found: TimeFound) -> TimeFound:
    """'on DAY starting at 10 UT for 3 hours': that many hours from the clock time."""
    if found.range is None or not _whole_day(found.range):
        return found
    for form in _CLOCK_FOR:
        match = form.search(text)
        if match is None:
            continue
        begin = _clock(found.range.start, match["c"])
        length = count(match["n"]) * unit(match["u"])
        return TimeFound(
            TimeRange(begin, begin + length),
            f"{found.text} {match[0]}",
            None,
            (*found.spans, match.span()),
        )
    return found


def _find_time(text: str, now: datetime | None = None) -> TimeFound:
    """The request's time range and the spans of text that named it."""
    clock = _CLOCK_RANGE.search(text)
    doy = _day_of_year(text, now)
    if doy is not None:
        return _on_day(doy, clock)
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
        return TimeFound(result, words, None, tuple(spans))
    return _on_day(TimeFound(result, words, None, tuple(spans)), clock)


def _night(r: TimeRange) -> bool:
    """Two whole days, as a clock range across their midnight names them ("3-4 March")."""
    return _whole_day(TimeRange(r.start, r.start + timedelta(days=1))) and r.duration == 2 * (
        timedelta(days=1)
    )


def _on_day(found: TimeFound, clock: re.Match[str] | None) -> TimeFound:
    """A clock range ("13:00-14:30", "22:00 to 02:00") on the day found, past midnight too.

    A clock range that runs past midnight on two days ("22:00-02:00 on 3-4 March") starts
    on the first and ends on the second.
    """
    if clock is None or found.range is None:
        return found
    begin, end = _clock(found.range.start, clock["a"]), _clock(found.range.start, clock["b"])
    crosses = end <= begin
    if not (_whole_day(found.range) or (crosses and _night(found.range))):
        return found
    if crosses:
        end += timedelta(days=1)
    return TimeFound(
        TimeRange(begin, end),
        f"{found.text} {clock[0].strip()}",
        None,
        (*found.spans, clock.span()),
    )


@cache
def _mission_names() -> frozenset[str]:
    """Every one-word mission name, lower case: never part of an event's noun phrase."""
    return frozenset(
        name.lower()
        for entry in load_vocabulary().missions.values()
        for name in entry.names
        if " " not in name
    )


def _relative(text: str, found: TimeFound, *, whole: bool) -> TimeFound:
    """A window measured from the time found: "6 h before the shock at T", "T ± 2 days".

    `whole` says the time is one named thing (an event); otherwise an explicit range of
    several days is no anchor for "from" ("1-hour averages from A to B" is that range).
    """
    if found.range is None or not found.spans:
        return found
    first, last = min(a for a, _ in found.spans), max(b for _, b in found.spans)
    end = event_words_after(text, last)
    relation = relation_before(text, first)
    several_days = found.range.duration > timedelta(days=1) and not whole
    if relation is not None and not (relation.kind == "start" and several_days):
        gap = phrase_spans(text, relation.end, first, _mission_names())
        spans = (*found.spans, (relation.start, relation.end), *gap, (last, end))
        spans = tuple((a, b) for a, b in spans if b > a)
        return TimeFound(relation.window(found.range), text[relation.start : end], None, spans)
    suffix = suffix_around(text, end)
    if suffix is None:
        return found
    half, stop = suffix
    spans = (*found.spans, (last, stop))
    return TimeFound(around(found.range, half), text[first:stop], None, spans)


def find_time(text: str, now: datetime | None = None) -> TimeFound:
    """The request's time range and the spans of the original text that named it.

    Dates typed US-style ("03/17/2015") or with slashes, clock times without colons
    ("0600 to 1800 UT", "1430-1700"), hours written "12h", durations anchored at a start
    ("6 hours starting 2019-06-01 14:00"), parts of a period ("the last 5 days of March
    2015", "the second half of 2015-03-17"), "N days ago", "at T plus or minus N
    hours" and named events from the vocabulary ("the Halloween storm of 2003") are read
    here; an impossible clock time ("25:00") is an error.
    """
    bad = _bad_clock(text) or _unread_period(text) or decimal_year(text)
    bad = bad or unreadable_period(text)
    if bad is None and (day := undated_day(text)) is not None:
        bad = (
            f"'{day}' names a day of a month the request does not name; please write "
            "the date (for example 2015-03-16T22:00 to 2015-03-17T03:00)"
        )
    if bad is not None:
        return TimeFound(None, None, bad)
    day = named_day(text, now)
    if day is not None:
        return _on_named_day(text, day, now)
    event = _named_event(text, now)
    if event is None:
        return _written_time(text, now)
    masked = text
    for a, b in event.spans:
        masked = masked[:a] + " " * (b - a) + masked[b:]
    written = _written_time(masked, now)
    if written.range is None or event.range is None or written.text is None:
        return event
    if len(event.spans) > 1:  # a window measured from the event ("6 hours before ...")
        return _beside_measured(written, event)
    # An explicit window wins over an event that only labels it ("the week starting
    # 2015-07-13 (Pluto flyby)"); a calendar period that only places the event does not.
    words = window_words(
        text,
        Named(written.range, written.text, written.spans),
        Named(event.range, event.text or "", event.spans),
    )
    if words is None:
        return event
    read = written.spans if "falls outside" in words else (*written.spans, *event.spans)
    return TimeFound(written.range, words, None, read)


def _beside_measured(written: TimeFound, event: TimeFound) -> TimeFound:
    """A window measured from an event, with a time written beside it.

    A time narrower than the window wins ("for the 2017 September storm, 12 hours before
    2017-09-07T23:00"); one it misses wins with the clash said ("during the Jupiter flyby,
    Jan 2001").
    """
    assert written.range is not None and event.range is not None
    if written.range.duration < event.range.duration:
        return written
    if not _overlap(written.range, event.range):
        said = f"{written.text}, as written; the event named, {event.text}, falls outside it"
        return TimeFound(written.range, said, None, written.spans)
    return event


def _overlap(a: TimeRange, b: TimeRange) -> bool:
    return a.start < b.end and b.start < a.end


def _on_named_day(text: str, day: DayFound, now: datetime | None) -> TimeFound:
    """A named day, narrowed by a clock range written beside it.

    A question about the day yields to a date written out ("on 2006-12-25, Christmas").
    """
    a, b = day.span
    written = _written_time(text[:a] + " " * (b - a) + text[b:], now)
    if day.range is None:
        if written.range is not None and written.range.duration <= _WEEK:
            return written
        return TimeFound(None, None, day.question)
    # The day is written as its date, so the one grammar reads what is around it
    # ("from Christmas 2006 to New Year's Day 2007", "Christmas Eve 2010 from 10 to 14 UT").
    iso = f"{day.range.start:%Y-%m-%d}"
    found = find_time(text[:a] + iso + text[b:], now)
    shift = len(iso) - (b - a)

    def back(at: int) -> int:
        return at if at <= a else b if at < a + len(iso) else at - shift

    spans = tuple((back(x), back(y)) for x, y in found.spans)
    words = f"{found.text} ({day.words})" if found.text else None
    return TimeFound(found.range, words, found.error, spans)


def _named_event(text: str, now: datetime | None) -> TimeFound | None:
    """A named event of the vocabulary and any window measured from it."""
    for event in load_vocabulary().events:
        match = event.words.search(text)
        if match is not None and (event.spacecraft is None or event.spacecraft.search(text)):
            found = parse_time_range(event.range, now)
            named = TimeFound(found, f"{match[0]} ({event.range})", None, (match.span(),))
            return _relative(text, named, whole=True)
    return None


def _part_of(text: str, found: TimeFound) -> TimeFound:
    """'mid-March 2013', 'late 2004': a third of the month or year, the assumption said."""
    if found.range is None or not found.spans:
        return found
    first = min(a for a, _ in found.spans)
    part = part_of_period(text, first, found.range)
    if part is None:
        last = max(b for _, b in found.spans)
        after = day_part_after(text, last, found.range)
        if after is None:
            return found
        narrowed, stop = after
        words = f"{found.text}{text[last:stop]} (taken as {narrowed.readable()})"
        return TimeFound(narrowed, words, None, (*found.spans, (last, stop)))
    narrowed, lead = part
    words = f"{text[lead:first]}{found.text} (taken as {narrowed.readable()})"
    return TimeFound(narrowed, words, None, ((lead, first), *found.spans))


def _written_time(text: str, now: datetime | None) -> TimeFound:
    """The time written out in the request (no named event of the vocabulary)."""
    rewritten = _rewrite(text)
    found = _anchored(rewritten.text, now) or _relative(
        rewritten.text, _find_time(rewritten.text, now), whole=False
    )
    found = _clock_for(rewritten.text, _plus_minus(rewritten.text, found))
    found = _then_length(rewritten.text, found)
    found = _about_instant(rewritten.text, found)
    found = _part_after(rewritten.text, found)
    found = _part_of(rewritten.text, found)
    spans = tuple(rewritten.original(a, b) for a, b in found.spans)
    if found.range is not None and (days := days_in_month(text, found.range, spans)):
        (narrowed, days_span), words = days, text[days[1][0] : days[1][1]]
        found = TimeFound(narrowed, f"{found.text}, {words}", None, (*spans, days_span))
        spans = found.spans
    if found.range is not None and found.text is not None:
        season = season_taken(text, spans, found.range)
        found = found if season is None else TimeFound(found.range, season, None, spans)
        if (order := month_first_said(text)) is not None:
            found = TimeFound(found.range, f"{found.text} ({order})", None, spans)
    if found.range is None and found.error is None:
        found, spans = _future(text, now) or (found, spans)
    epoch = _SOLAR_EPOCH.search(text)
    if epoch is not None and found.range is None and found.error is None:
        return TimeFound(
            None,
            None,
            f"'{epoch[0]}' is an epoch of the solar cycle, not dates; please give the years "
            "(for example 2000-01-01 to 2002-12-31 for the maximum of cycle 23)",
        )
    unknown = _unknown_event(text)
    if unknown is not None and (found.range is None or found.range.duration > _VAGUE):
        return TimeFound(
            None,
            None,
            f"I do not know the dates of '{unknown}'; please give them "
            "(for example 2015-03-17 to 2015-03-19)",
        )
    return TimeFound(found.range, found.text, found.error, spans)


def _future(text: str, now: datetime | None) -> tuple[TimeFound, tuple[tuple[int, int]]] | None:
    """'tomorrow', 'next week': the future range named, for the planner to ask about."""
    future = future_range(text, now or datetime.now(UTC))
    if future is None:
        return None
    start, end, words = future
    at = text.find(words)
    return TimeFound(TimeRange(start, end), words, None, ((at, at + len(words)),)), (
        (at, at + len(words)),
    )


# "perihelion 22", "the 9th perihelion", "aphelion 3": a numbered pass of an orbit the
# vocabulary does not list (a listed one is read as its event first).
_NUMBERED_PASS = re.compile(
    r"\b(?:peri|ap)heli(?:on|a)\s*(?:#\s*|no\.?\s*|number\s+)?\d{1,3}(?![\d.])"
    r"|\b(?:\d{1,3}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth|last)\s+(?:peri|ap)helion\b",
    re.I,
)


# "solar max", "the solar minimum of cycle 24": an epoch whose years are asked when none
# is written beside it, never the statistic nor the last 7 days.
_SOLAR_EPOCH = re.compile(
    r"\bsolar\s+(?:cycle\s+(?:\d{1,2}\s+)?)?(?:max(?:imum|ima)?|min(?:imum|ima)?)\b"
    r"(?:\s+of\s+(?:solar\s+)?cycle\s+\d{1,2})?",
    re.I,
)


# A named event ("the Kessler storm", "the 2020 foo-bar event") the vocabulary does not
# list: its dates are asked, never widened to the year or month written beside it.
_EVENT_NAME = re.compile(
    r"\b(?:during|for|in|around|of|at|before|after|following|preceding|to|since|until)\s+"
    r"(?:the\s+)?(?P<name>(?:[\w'.-]+\s+){1,3}?)"
    r"(?P<kind>storms?|events?|flares?|CMEs?|substorms?|eclipses?|encounters?|fly-?bys?"
    r"|swing-?bys?|insertion|closest\s+approach)\b",
    re.I,
)
_NOT_A_NAME = re.compile(
    r"^(?:the|a|an|this|that|big|large|main|same|whole|entire|geomagnetic|magnetic|solar"
    r"|\d{4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)$",
    re.I,
)
_VAGUE = timedelta(days=27)


def _unknown_event(text: str) -> str | None:
    """The words of an event name the vocabulary does not know, or None."""
    numbered = _NUMBERED_PASS.search(text)
    if numbered is not None:
        return numbered[0]
    for match in _EVENT_NAME.finditer(text):
        words = match["name"].split()
        if all(_NOT_A_NAME.match(w) for w in words):
            continue  # "the 2015 storm", "the geomagnetic storm": no name to look up
        return f"the {' '.join(words)} {match['kind']}"
    return None
