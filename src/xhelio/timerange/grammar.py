"""Time ranges: the `TimeRange` value and `parse_time_range` for what people type.

All times are timezone-aware UTC; `end` is exclusive. Imports nothing from xhelio but
`errors`.

Semantics chosen by `parse_time_range` (relative forms count back from `now`):

* A date, month or year names the whole period: `2024-01-15` is that day, `2000-07` and
  `July 2000` that month, `2003` that year, `2024-015` day 15 of 2024.
* A datetime alone (`2024-01-15T06:00`) is the one-hour window starting there.
* In a range, the start is the beginning of the left side. A date-only (or month, year)
  end includes that whole period, so `2024-01-15 to 2024-01-20` ends at
  2024-01-21T00:00Z; a datetime end is exact.
* `last N minutes/hours/days/weeks` is the window of that length ending at `now`;
  `last N months/years` counts back calendar months from `now` (Mar 31 minus one month
  is Feb 29 or 28), not N*30 days. `last week` is the 7 days ending now.
* `today` runs from today's UTC midnight to `now` (never into the future, so nothing
  asks servers for data that cannot exist yet); `yesterday` is the whole previous day;
  `this week/month/year` runs from the start of the (ISO, Monday-first) week, month or
  year to `now`; `since X` runs from X to `now`; `now` may end a range.
* Two dates or datetimes side by side (`2024-01-15T06:00Z 2024-01-15T18:00Z`) are a range,
  as if joined by `to`; a side without a year borrows the other's (`Jan 5 2024 to Jan 10`,
  `Jan-Mar 2024`).
* Explicit offsets (`Z`, `UTC`, `+05:30`) are converted to UTC; times without one are UTC.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from xhelio.errors import BadTimeRangeError
from xhelio.timerange.readable import readable_range
from xhelio.timerange.words import WHOLE_NUMBER_WORDS

__all__ = [
    "MONTH_WORD",
    "YEARLESS_DAY",
    "TimeInText",
    "TimeRange",
    "find_time_range",
    "format_time",
    "parse_time_range",
    "readable_text",
]


@dataclass(frozen=True)
class TimeRange:
    """A UTC interval [start, end)."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value: datetime = getattr(self, name)
            if value.tzinfo is None:
                object.__setattr__(self, name, value.replace(tzinfo=UTC))
            else:
                object.__setattr__(self, name, value.astimezone(UTC))
        if self.end <= self.start:
            raise BadTimeRangeError(
                f"Time range end {self.end.isoformat()} is not after start "
                f"{self.start.isoformat()}. Put the earlier time first."
            )

    @property
    def duration(self) -> timedelta:
        """Length of the interval."""
        return self.end - self.start

    def __str__(self) -> str:
        return f"{format_time(self.start)} to {format_time(self.end)}"

    def readable(self) -> str:
        """The range as people write it, inclusive: "2000-07-14 to 2000-07-17"."""
        return readable_range(self.start, self.end)


def format_time(t: datetime) -> str:
    """Format a datetime as `YYYY-MM-DDTHH:MM:SSZ` in UTC (naive means UTC)."""
    utc = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


_EXAMPLES = (
    "Try: '2024-01-15', '2024-01-15 to 2024-01-20', '2024-01-15T06:00 to 2024-01-15T18:00', "
    "'last 3 days', 'January 2024', '2024-015'."
)
_Built = TypeVar("_Built")
# Longer text is not a time range, and splitting it at every separator costs O(n^2).
_MAX_LENGTH = 200
_SINGLE_DATETIME_WINDOW = timedelta(hours=1)
_ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class _Span:
    """What one side of a range names: [start, end), `exact` when it names an instant."""

    start: datetime
    end: datetime
    exact: bool


# --- vocabulary -------------------------------------------------------------------------

# Spelled out rather than taken from `calendar`, whose names follow the process locale.
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTH_NUMBERS = {
    spelling: number
    for number, name in enumerate(_MONTH_NAMES, start=1)
    for spelling in (name, name[:3])
} | {"sept": 9}
_COUNT_WORDS = WHOLE_NUMBER_WORDS
# Unit word -> (fixed length, calendar months); exactly one of the two is non-zero.
_UNIT_SPELLINGS: tuple[tuple[str, tuple[timedelta, int]], ...] = (
    ("minute minutes min mins", (timedelta(minutes=1), 0)),
    ("hour hours hr hrs h", (timedelta(hours=1), 0)),
    ("day days d", (timedelta(days=1), 0)),
    ("week weeks wk wks w", (timedelta(weeks=1), 0)),
    ("fortnight fortnights", (timedelta(weeks=2), 0)),
    ("month months mo mos", (timedelta(0), 1)),
    ("year years yr yrs y", (timedelta(0), 12)),
)
_UNITS = {word: unit for words, unit in _UNIT_SPELLINGS for word in words.split()}


def _alternatives(words: list[str]) -> str:
    # Longest first so `months` is not cut short to `mo`.
    return "|".join(sorted(words, key=len, reverse=True))


_MONTH_WORD = _alternatives(list(_MONTH_NUMBERS))
_MONTH = rf"(?P<mname>{_MONTH_WORD})\.?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_ZONE = r"(?:\s*(?P<zone>z|utc|ut|gmt|[+-]\d{2}(?::?\d{2})?))?"
_TIME = r"(?P<hour>\d{2})(?::(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<frac>\d+))?)?)?"
_COMPACT_TIME = r"t(?P<hour>\d{2})(?P<minute>\d{2})?(?P<second>\d{2})?(?:\.(?P<frac>\d+))?"
_DAY_SEPARATOR = r"\s*(?:/|-|\u2013|\u2014|to|through|thru|until|till)\s*"
_LONG_UNITS = [word for word in _UNITS if len(word) > 1]


# --- one side of a range ----------------------------------------------------------------


def _zone_offset(zone: str | None) -> timedelta:
    if zone is None or zone in ("z", "utc", "ut", "gmt"):
        return timedelta(0)
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"UTC offset {zone} is out of range")
    offset = timedelta(hours=hours, minutes=minutes)
    return -offset if zone.startswith("-") else offset


def _with_time(day_start: datetime, match: re.Match[str]) -> _Span:
    parts = match.groupdict()
    offset = _zone_offset(parts.get("zone"))
    if parts.get("hour") is None:
        return _Span(day_start - offset, day_start - offset + _ONE_DAY, exact=False)
    fraction = (parts.get("frac") or "")[:6].ljust(6, "0")  # beyond microseconds is dropped
    start = day_start.replace(
        hour=int(parts["hour"]),
        minute=int(parts["minute"] or 0),
        second=int(parts["second"] or 0),
        microsecond=int(fraction),
    )
    return _Span(start - offset, start - offset + _SINGLE_DATETIME_WINDOW, exact=True)


def _month_number(match: re.Match[str]) -> int:
    """The month of a match, whether written in digits or as a name."""
    if "mname" in match.re.groupindex:
        return _MONTH_NUMBERS[match["mname"]]
    return int(match["month"])


def _date(match: re.Match[str], now: datetime) -> _Span:
    day = datetime(int(match["year"]), _month_number(match), int(match["day"]), tzinfo=UTC)
    return _with_time(day, match)


def _day_of_year(match: re.Match[str], now: datetime) -> _Span:
    year, day_number = int(match["year"]), int(match["doy"])
    days_in_year = 366 if calendar.isleap(year) else 365
    if not 1 <= day_number <= days_in_year:
        raise ValueError(f"day of year {day_number} is outside 001-{days_in_year} for {year}")
    day = datetime(year, 1, 1, tzinfo=UTC) + timedelta(days=day_number - 1)
    return _with_time(day, match)


def _shift_months(t: datetime, months: int) -> datetime:
    """Move by calendar months, clamping the day to the target month's length."""
    year, month_index = divmod(t.year * 12 + t.month - 1 + months, 12)
    last_day = calendar.monthrange(year, month_index + 1)[1]
    return t.replace(year=year, month=month_index + 1, day=min(t.day, last_day))


def _month(match: re.Match[str], now: datetime) -> _Span:
    start = datetime(int(match["year"]), _month_number(match), 1, tzinfo=UTC)
    return _Span(start, _shift_months(start, 1), exact=False)


def _year(match: re.Match[str], now: datetime) -> _Span:
    start = datetime(int(match["year"]), 1, 1, tzinfo=UTC)
    return _Span(start, start.replace(year=start.year + 1), exact=False)


def _iso_week(match: re.Match[str], now: datetime) -> _Span:
    start = datetime.fromisocalendar(int(match["year"]), int(match["week"]), 1).replace(tzinfo=UTC)
    return _Span(start, start + timedelta(weeks=1), exact=False)


def _word(match: re.Match[str], now: datetime) -> _Span:
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if match["word"] == "now":
        return _Span(now, now, exact=True)
    if match["word"] == "today":
        return _Span(midnight, now, exact=False)
    return _Span(midnight - _ONE_DAY, midnight, exact=False)


_ISO_DATE = r"(?P<year>\d{4})(?P<sep>[-/])(?P<month>\d{2})(?P=sep)(?P<day>\d{2})"
_COMPACT_DATE = r"(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})"
_DAY_OF_YEAR = r"(?P<year>\d{4})[-/:]?(?P<doy>\d{3})"
# A clock after a date written with words needs its colon ("Jun 29 2004 12:00").
_CLOCK_AFTER = (
    r",?\s+(?:at\s+)?(?P<hour>\d{1,2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:[.,](?P<frac>\d+))?)?"
)
_NAMED_DATE = (
    rf"{_MONTH}\s*(?P<day>\d{{1,2}}){_ORDINAL},?\s+(?P<year>\d{{4}})(?:{_CLOCK_AFTER})?{_ZONE}"
)
# "16 Oct 2015", "16-Oct-2015" (as IDL and CDAWeb write it).
_DAY_MONTH_YEAR = (
    rf"(?P<day>\d{{1,2}}){_ORDINAL}[\s-]*{_MONTH},?[\s-]*(?P<year>\d{{4}})"
    rf"(?:{_CLOCK_AFTER})?{_ZONE}"
)
_PointParser = Callable[[re.Match[str], datetime], _Span]
_POINT_PARSERS: list[tuple[re.Pattern[str], _PointParser]] = [
    (re.compile(pattern), build)
    for pattern, build in (
        # "/" before the clock is how SPEDAS and IDL write it ("2015-10-16/13:00").
        (rf"{_ISO_DATE}(?:(?:t|/|\s+(?:at\s+)?){_TIME})?{_ZONE}", _date),
        (rf"{_COMPACT_DATE}(?:{_COMPACT_TIME})?{_ZONE}", _date),
        (rf"{_COMPACT_DATE}(?:t|/|\s+){_TIME}{_ZONE}", _date),
        (rf"{_DAY_OF_YEAR}(?:(?:t|/|\s+){_TIME})?{_ZONE}", _day_of_year),
        (r"(?P<year>\d{4})[-/](?P<month>\d{2})", _month),
        (r"(?:iso\s+)?(?:week\s+)?(?P<year>\d{4})-?w(?P<week>\d{1,2})", _iso_week),
        (rf"{_MONTH},?\s*(?P<year>\d{{4}})", _month),
        (_NAMED_DATE, _date),
        (_DAY_MONTH_YEAR, _date),
        (r"(?P<year>\d{4})", _year),
        (r"(?P<word>now|today|yesterday)", _word),
    )
]
# "16 July", "March 25th": a day written without its year (lower case, as `_normalise` leaves it).
# A month's name or its abbreviation ("October", "Oct").
MONTH_WORD = re.compile(_MONTH_WORD, re.I)
YEARLESS_DAY = re.compile(
    rf"(?:{_MONTH_WORD})\.?\s*\d{{1,2}}{_ORDINAL}|\d{{1,2}}{_ORDINAL}\s*(?:{_MONTH_WORD})\.?"
)


def _parse_point(piece: str, now: datetime) -> _Span | None:
    """Parse one side of a range; None when no form matches, an error when it is invalid."""
    for pattern, build in _POINT_PARSERS:
        match = pattern.fullmatch(piece)
        if match:
            return _apply(build, match, now)
    return None


def _apply(
    build: Callable[[re.Match[str], datetime], _Built], match: re.Match[str], now: datetime
) -> _Built:
    """Run a parser, turning calendar errors (Feb 30, year 0, overflow) into user errors."""
    try:
        return build(match, now)
    except (ValueError, OverflowError) as exc:
        raise BadTimeRangeError(
            f"'{match[0]}' is not a real date or time ({exc}). {_EXAMPLES}"
        ) from exc


# --- whole ranges -----------------------------------------------------------------------


def _relative(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    count_text = match["count"] or match["count_word"]
    count = 1 if count_text is None else _COUNT_WORDS.get(count_text) or int(count_text)
    if count < 1:
        raise BadTimeRangeError(f"'{match[0]}' covers no time; ask for at least 1. {_EXAMPLES}")
    length, months = _UNITS[match["unit"] or match["long_unit"]]
    start = _shift_months(now, -months * count) if months else now - length * count
    return start, now


def _since(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    span = _parse_point(match["what"], now)
    if span is None:
        raise _not_understood(match["what"], f" in {match[0]!r}")
    if span.start >= now:
        raise BadTimeRangeError(
            f"'{match[0]}' starts at {format_time(span.start)}, which is not before now "
            f"({format_time(now)}). Give a start in the past, e.g. 'since 2024-01-10'."
        )
    return span.start, now


def _this(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if match["period"] == "week":
        return midnight - timedelta(days=midnight.weekday()), now
    if match["period"] == "month":
        return midnight.replace(day=1), now
    return midnight.replace(month=1, day=1), now


def _months_of_year(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    year = int(match["year"])
    first = datetime(year, _MONTH_NUMBERS[match["mname"]], 1, tzinfo=UTC)
    last = datetime(year, _MONTH_NUMBERS[match["last_month"]], 1, tzinfo=UTC)
    return first, _shift_months(last, 1)


def _days_of_month(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    year, month = int(match["year"]), _MONTH_NUMBERS[match["mname"]]
    first = datetime(year, month, int(match["first"]), tzinfo=UTC)
    return first, datetime(year, month, int(match["last"]), tzinfo=UTC) + _ONE_DAY


_RELATIVE = (
    r"(?:(?:in|over|during|for|within)\s+)?(?:the\s+)?(?:last|past|previous|prior)\s+"
    rf"(?:(?P<count>\d+)\s*(?P<unit>{_alternatives(list(_UNITS))})"
    rf"|(?:(?P<count_word>{_alternatives(list(_COUNT_WORDS))})\s+)?"
    rf"(?P<long_unit>{_alternatives(_LONG_UNITS)}))"
)
_DAYS = r"(?P<first>\d{1,2})" + _ORDINAL + _DAY_SEPARATOR + r"(?P<last>\d{1,2})" + _ORDINAL
_RangeParser = Callable[[re.Match[str], datetime], tuple[datetime, datetime]]
_RANGE_PARSERS: list[tuple[re.Pattern[str], _RangeParser]] = [
    (re.compile(pattern), build)
    for pattern, build in (
        (_RELATIVE, _relative),
        (r"(?:so\s+far\s+)?this\s+(?P<period>week|month|year)(?:\s+so\s+far)?", _this),
        (r"since\s+(?P<what>.+)", _since),
        (
            rf"{_MONTH}{_DAY_SEPARATOR}(?P<last_month>{_MONTH_WORD})\.?,?\s*(?P<year>\d{{4}})",
            _months_of_year,
        ),
        (rf"{_MONTH}\s*{_DAYS},?\s*(?P<year>\d{{4}})", _days_of_month),
        (rf"{_DAYS}\s*{_MONTH},?\s*(?P<year>\d{{4}})", _days_of_month),
    )
]
_WORD_SEPARATORS = re.compile(
    r"\s+(?:to|through|thru|until|till)\s+|\s+-\s+|\s*[\u2013\u2014]\s*"
)  # en/em dash
_BETWEEN_SEPARATOR = re.compile(r"\s+and\s+")
# "A/B" (ISO 8601), "A..B", and a bare dash between compact dates ("20151016-20151018").
_INTERVAL_SEPARATOR = re.compile(r"/|\.\.|(?<=\d{8})-(?=\d{8})")


# A clock time with no date: the end of a range whose start has one ("T13:00 to 15:30").
_BARE_CLOCK = re.compile(
    rf"(?P<hour>\d{{1,2}}):(?P<minute>\d{{2}})(?::(?P<second>\d{{2}})(?:[.,](?P<frac>\d+))?)?{_ZONE}"
)


def _same_day_clock(left: _Span, right_text: str) -> _Span | None:
    """A bare clock after a start instant: on the start's day, or the next when earlier."""
    match = _BARE_CLOCK.fullmatch(right_text)
    if match is None or not left.exact:
        return None
    day = left.start.replace(hour=0, minute=0, second=0, microsecond=0)
    span = _apply(lambda m, _now: _with_time(day, m), match, left.start)
    if span.start <= left.start:
        return _Span(span.start + _ONE_DAY, span.end + _ONE_DAY, exact=True)
    return span


def _parse_pair(left_text: str, right_text: str, now: datetime) -> tuple[_Span, _Span] | None:
    right = _parse_point(right_text, now)
    left = _parse_point(left_text, now)
    if right is None and left is not None:
        right = _same_day_clock(left, right_text)
    if left is None and right is not None and YEARLESS_DAY.fullmatch(left_text):
        # `Jan 5 to Feb 2, 2024`: the start borrows the end's year.
        left = _parse_point(f"{left_text} {right.start.year}", now)
    if right is None and left is not None and YEARLESS_DAY.fullmatch(right_text):
        # `Jan 5 2024 to Jan 10`: the end borrows the start's year.
        right = _parse_point(f"{right_text} {left.start.year}", now)
    if right is None and left is not None:
        right = _short_end(left, right_text, now)
    if left is None or right is None:
        return None
    return left, right


# An end that leaves out what its start said: "09-12" (month-day) or "12" (day).
_SHORT_END = re.compile(r"(?:(?P<month>\d{2})-)?(?P<day>\d{1,2})" + _ORDINAL)


def _short_end(left: _Span, right_text: str, now: datetime) -> _Span | None:
    """The end of "1994-09-10 thru 09-12" or "2004-05-03..05" after a whole-day start.

    The end takes the start's year (and month); an end before the start is in the next
    year ("2010-12-31 to 01-02") or month ("2015-03-30 - 02").
    """
    match = _SHORT_END.fullmatch(right_text)
    if match is None or left.exact or left.end - left.start != _ONE_DAY:
        return None
    day = int(match["day"])
    for later in (0, 12 if match["month"] else 1):
        month_start = _shift_months(left.start, later)
        month = int(match["month"]) if match["month"] else month_start.month
        span = _parse_point(f"{month_start.year:04d}-{month:02d}-{day:02d}", now)
        if span is None or span.start >= left.start:
            return span
    return None


def _parse_two_ended(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """Parse `X to Y` and its variants; None when the text has no usable separator."""
    prefix = re.match(r"(from|between)\s+", text)
    body = text[prefix.end() :] if prefix else text
    if prefix and prefix[1] == "between":
        separators = [_BETWEEN_SEPARATOR]
    else:
        separators = [_WORD_SEPARATORS, _INTERVAL_SEPARATOR]
    first_unknown: str | None = None
    for separator in separators:
        for found in separator.finditer(body):
            left_text, right_text = body[: found.start()].strip(), body[found.end() :].strip()
            pair = _parse_pair(left_text, right_text, now)
            if pair:
                left, right = pair
                return left.start, right.start if right.exact else right.end
            if first_unknown is None and separator is not _INTERVAL_SEPARATOR:
                known = _parse_point(left_text, now)
                first_unknown = right_text if known else left_text
    if first_unknown is not None:
        raise _not_understood(first_unknown, f" in {text!r}")
    if prefix:
        raise BadTimeRangeError(
            f"{text!r} needs both ends, e.g. 'from 2024-01-15 to 2024-01-20' or "
            f"'between 2024-01-15 and 2024-01-20'."
        )
    return None


def _not_understood(piece: str, where: str = "") -> BadTimeRangeError:
    return BadTimeRangeError(f"Could not understand {piece!r}{where}. {_EXAMPLES}")


def _normalise(text: str) -> str:
    collapsed = " ".join(text.split()).lower()
    return collapsed.rstrip(".").strip()


# pandas (nanosecond timestamps) holds 1677-09-21 to 2262-04-11: data outside cannot be
# represented, so such a range is refused here rather than failing deep in a fetch.
_EARLIEST = datetime(1678, 1, 1, tzinfo=UTC)
_LATEST = datetime(2262, 1, 1, tzinfo=UTC)


def _checked(text: str, start: datetime, end: datetime) -> TimeRange:
    if start < _EARLIEST or end > _LATEST:
        raise BadTimeRangeError(
            f"Time range {text!r} ({format_time(start)} to {format_time(end)}) is outside "
            "the years xhelio can hold (1678 to 2261). Give dates within those years."
        )
    if end < start:
        raise BadTimeRangeError(
            f"Time range {text!r} is reversed: its end ({format_time(end)}, exclusive) comes "
            f"before its start ({format_time(start)}). Put the earlier time first, e.g. "
            "'2024-01-10 to 2024-01-20'."
        )
    if end == start:
        raise BadTimeRangeError(
            f"Time range {text!r} is empty: it starts and ends at {format_time(start)}. {_EXAMPLES}"
        )
    return TimeRange(start, end)


def parse_time_range(text: str, now: datetime | None = None) -> TimeRange:
    """Parse what a person types (dates, ranges, `last 3 days`, ...) into a UTC `TimeRange`.

    Args:
        text: The time range as typed; case and extra spaces do not matter.
        now: The moment relative forms count back from; default is the current UTC time.
            A naive `now` is taken as UTC.

    Returns:
        The half-open UTC interval; see the module docstring for the exact semantics.

    Raises:
        BadTimeRangeError: The text is empty, not understood, an impossible date, or a
            reversed or empty range; the message says which and shows forms that work.
    """
    if now is None:
        now = datetime.now(UTC)
    now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    cleaned = _normalise(text)
    if not cleaned:
        raise BadTimeRangeError(f"The time range is empty. {_EXAMPLES}")
    if len(cleaned) > _MAX_LENGTH:
        raise BadTimeRangeError(
            f"The time range text is {len(cleaned)} characters long (at most {_MAX_LENGTH}): "
            f"give only the range, not a sentence. {_EXAMPLES}"
        )
    for pattern, build in _RANGE_PARSERS:
        match = pattern.fullmatch(cleaned)
        if match:
            return _checked(text, *_apply(build, match, now))
    bounds = _parse_two_ended(cleaned, now)
    if bounds:
        return _checked(text, *bounds)
    span = _parse_point(cleaned, now)
    if span is None:
        bounds = _side_by_side(cleaned, now)
        if bounds is None:
            raise _not_understood(text)
        return _checked(text, *bounds)
    return _checked(text, span.start, span.end)


def _side_by_side(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """`X Y` with no word between: a range when both halves are dates or datetimes."""
    for space in re.finditer(r"\s+", text):
        left = _parse_point(text[: space.start()], now)
        right = _parse_point(text[space.end() :], now) if left else None
        if left and right and _looks_dated(text[: space.start()]):
            return left.start, right.start if right.exact else right.end
    return None


def _looks_dated(piece: str) -> bool:
    """Whether a piece is a full date (not a bare year or word, which `2024 Jan` would be)."""
    return bool(re.search(r"\d{4}[-/]?\d{2,3}|\d{8}", piece))


@dataclass(frozen=True)
class TimeInText:
    """The time range found inside a sentence: the range and the words that named it.

    When no piece is a valid range, `error` keeps the most useful rejection seen (an
    impossible or reversed date the user did write), so callers can say what was wrong.
    """

    range: TimeRange | None
    text: str | None
    error: str | None = None


_MAX_TIME_WORDS = 12
_TIME_HINT = re.compile(
    r"\d|today|yesterday|last|past|previous|since|week|month|year|jan|feb|mar|apr|may|jun"
    r"|jul|aug|sep|oct|nov|dec",
    re.IGNORECASE,
)


# A number the next word counts ("20 minutes", "19 UT"): no date or day ends there.
_COUNTED = re.compile(
    rf"(?<![\d:/.-])\d{{1,2}}\s*(?:{_alternatives(list(_UNITS))}|ut|utc|gmt|z|am|pm)\b", re.I
)


def _counted(text: str, end: int) -> bool:
    """Whether the piece ending at `end` ends with a number the next word counts."""
    number = re.search(r"\d{1,2}$", text[:end])
    return number is not None and _COUNTED.match(text, number.start()) is not None


def find_time_range(text: str, now: datetime | None = None) -> TimeInText:
    """The longest piece of `text` (up to 12 words) that `parse_time_range` accepts."""
    tokens = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    error: str | None = None
    # Where an impossible date was written ("31 June 2015"): a shorter piece inside it
    # ("June 2015") is never the answer; the impossible date is the error to tell.
    impossible: list[tuple[int, int]] = []
    for length in range(min(len(tokens), _MAX_TIME_WORDS), 0, -1):
        for i in range(len(tokens) - length + 1):
            start, end = tokens[i][0], tokens[i + length - 1][1]
            piece = text[start:end].strip(" ,;:!?()[]\"'")
            if not piece or not _TIME_HINT.search(piece) or _counted(text, end):
                continue
            try:
                found = parse_time_range(piece, now)
            except BadTimeRangeError as exc:
                message = exc.message
                useful = not message.startswith(("Could not understand", "The time range text"))
                if error is None and useful and re.search(r"\d{4}", piece):
                    error = message
                if "is not a real date" in message:
                    impossible.append((start, end))
                continue
            if any(a <= start and end <= b for a, b in impossible):
                return TimeInText(None, None, error)
            return TimeInText(found, piece)
    return TimeInText(None, None, error)


def readable_text(text: str) -> str:
    """A stored range ("2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z") as people read it.

    Text that is not a time range is given back as it is.
    """
    try:
        return parse_time_range(text).readable()
    except BadTimeRangeError:
        return text
