"""Tests for `xhelio.timerange`: every accepted form, every rejection, and `format_time`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from xhelio.errors import BadTimeRangeError, UserError
from xhelio.timerange import TimeRange, format_time, parse_time_range

# A Friday afternoon in a leap year; relative forms count back from here.
NOW = datetime(2024, 3, 15, 12, 34, 56, tzinfo=UTC)
TODAY = datetime(2024, 3, 15, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


SEED_FORMS = [
    ("last week", NOW - timedelta(days=7), NOW),
    ("last 3 days", NOW - timedelta(days=3), NOW),
    ("last month", utc(2024, 2, 15, 12, 34, 56), NOW),
    ("last year", utc(2023, 3, 15, 12, 34, 56), NOW),
    ("January 2024", utc(2024, 1, 1), utc(2024, 2, 1)),
    ("2024-01-15", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("2024-01-15 to 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15T06:00 to 2024-01-15T18:00", utc(2024, 1, 15, 6), utc(2024, 1, 15, 18)),
    ("2024-01-15 12:00:00 to 2024-01-16", utc(2024, 1, 15, 12), utc(2024, 1, 17)),
    ("2024-01-15T06:00", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
]

RELATIVE_FORMS = [
    ("yesterday", utc(2024, 3, 14), TODAY),
    ("today", TODAY, NOW),
    ("last 24 hours", NOW - timedelta(hours=24), NOW),
    ("the last 24 hours", NOW - timedelta(hours=24), NOW),
    ("last 24h", NOW - timedelta(hours=24), NOW),
    ("last hour", NOW - timedelta(hours=1), NOW),
    ("last 90 minutes", NOW - timedelta(minutes=90), NOW),
    ("past 5 days", NOW - timedelta(days=5), NOW),
    ("past day", NOW - timedelta(days=1), NOW),
    ("previous 2 weeks", NOW - timedelta(weeks=2), NOW),
    ("last two weeks", NOW - timedelta(weeks=2), NOW),
    ("over the past 3 days", NOW - timedelta(days=3), NOW),
    ("in the last 10 d", NOW - timedelta(days=10), NOW),
    ("last 3 months", utc(2023, 12, 15, 12, 34, 56), NOW),
    ("last 14 months", utc(2023, 1, 15, 12, 34, 56), NOW),
    ("last 2 years", utc(2022, 3, 15, 12, 34, 56), NOW),
    ("since 2024-01-10", utc(2024, 1, 10), NOW),
    ("since yesterday", utc(2024, 3, 14), NOW),
    ("since March 2024", utc(2024, 3, 1), NOW),
    ("2024-03-10 to now", utc(2024, 3, 10), NOW),
    ("2024-03-10 to today", utc(2024, 3, 10), NOW),
    ("yesterday to now", utc(2024, 3, 14), NOW),
    ("this week", utc(2024, 3, 11), NOW),  # ISO weeks start on Monday
    ("this month", utc(2024, 3, 1), NOW),
    ("this year so far", utc(2024, 1, 1), NOW),
]

RANGE_FORMS = [
    ("from 2024-01-15 to 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("between 2024-01-15 and 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15 through 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15 until 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15 - 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15 \u2014 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15\u20132024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15/2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15T06:00Z/2024-01-15T09:30Z", utc(2024, 1, 15, 6), utc(2024, 1, 15, 9, 30)),
    ("2024-01-15..2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-01-15T06:00 to 2024-01-15", utc(2024, 1, 15, 6), utc(2024, 1, 16)),
    ("Jan 5-10 2024", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("Jan 5 - 10, 2024", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("January 5 to 10, 2024", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("5-10 Jan 2024", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("5th to 10th January 2024", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("Jan 5 2024 to Feb 2 2024", utc(2024, 1, 5), utc(2024, 2, 3)),
    ("Jan 5 to Feb 2, 2024", utc(2024, 1, 5), utc(2024, 2, 3)),
    ("January 2024 to March 2024", utc(2024, 1, 1), utc(2024, 4, 1)),
    ("2003 to 2005", utc(2003, 1, 1), utc(2006, 1, 1)),
    ("2000-07 - 2000-08", utc(2000, 7, 1), utc(2000, 9, 1)),
    ("2024-015 to 2024-020", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("20240115 to 20240120", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-015/2024-020", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("2024-015T12:00/2024-015T18:00", utc(2024, 1, 15, 12), utc(2024, 1, 15, 18)),
    ("2024/01/15/2024/01/20", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("Jan 5 2024 to Jan 10", utc(2024, 1, 5), utc(2024, 1, 11)),
    ("Jan-Mar 2024", utc(2024, 1, 1), utc(2024, 4, 1)),
    ("January to March, 2024", utc(2024, 1, 1), utc(2024, 4, 1)),
    # Side by side, as copied from a plot title or a HAPI request.
    ("2024-01-15T06:00:00Z 2024-01-15T18:00:00Z", utc(2024, 1, 15, 6), utc(2024, 1, 15, 18)),
    ("2024-01-15 06:00:00 2024-01-15 18:00:00", utc(2024, 1, 15, 6), utc(2024, 1, 15, 18)),
    ("2024-01-15 2024-01-20", utc(2024, 1, 15), utc(2024, 1, 21)),
]

SINGLE_FORMS = [
    ("July 2000", utc(2000, 7, 1), utc(2000, 8, 1)),
    ("Jul 2000", utc(2000, 7, 1), utc(2000, 8, 1)),
    ("Sept. 2000", utc(2000, 9, 1), utc(2000, 10, 1)),
    ("December 2023", utc(2023, 12, 1), utc(2024, 1, 1)),
    ("February 2024", utc(2024, 2, 1), utc(2024, 3, 1)),
    ("2000-07", utc(2000, 7, 1), utc(2000, 8, 1)),
    ("2003", utc(2003, 1, 1), utc(2004, 1, 1)),
    ("2024-015", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("2024/015", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("2024015", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("2024-366", utc(2024, 12, 31), utc(2025, 1, 1)),
    ("2024-015T12:00", utc(2024, 1, 15, 12), utc(2024, 1, 15, 13)),
    ("2024/01/15", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("20240115", utc(2024, 1, 15), utc(2024, 1, 16)),
    ("20240115T0630", utc(2024, 1, 15, 6, 30), utc(2024, 1, 15, 7, 30)),
    ("2024-01-15T06", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
    ("2024-01-15T06:00Z", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
    ("2024-01-15T06:00:00+00:00", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
    ("2024-01-15T06:00+05:30", utc(2024, 1, 15, 0, 30), utc(2024, 1, 15, 1, 30)),
    ("2024-01-15T06:00-0200", utc(2024, 1, 15, 8), utc(2024, 1, 15, 9)),
    ("2024-01-15 06:00 UTC", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
    (
        "2024-01-15T06:00:00.250",
        utc(2024, 1, 15, 6, 0, 0, 250000),
        utc(2024, 1, 15, 7, 0, 0, 250000),
    ),
    (
        "2024-01-15T06:00:00.123456789Z",
        utc(2024, 1, 15, 6, 0, 0, 123456),
        utc(2024, 1, 15, 7, 0, 0, 123456),
    ),
    ("Jan 5 2024", utc(2024, 1, 5), utc(2024, 1, 6)),
    ("January 5th, 2024", utc(2024, 1, 5), utc(2024, 1, 6)),
    ("5 Jan 2024", utc(2024, 1, 5), utc(2024, 1, 6)),
    ("2024-02-29", utc(2024, 2, 29), utc(2024, 3, 1)),
]

LENIENCY_FORMS = [
    ("  LAST   3   DAYS  ", NOW - timedelta(days=3), NOW),
    ("Last Week.", NOW - timedelta(days=7), NOW),
    ("2024-01-15   TO   2024-01-20.", utc(2024, 1, 15), utc(2024, 1, 21)),
    ("JANUARY 2024", utc(2024, 1, 1), utc(2024, 2, 1)),
    ("\t2024-01-15t06:00z\n", utc(2024, 1, 15, 6), utc(2024, 1, 15, 7)),
]


@pytest.mark.parametrize(
    ("text", "start", "end"),
    SEED_FORMS + RELATIVE_FORMS + RANGE_FORMS + SINGLE_FORMS + LENIENCY_FORMS,
)
def test_parses_form(text: str, start: datetime, end: datetime) -> None:
    parsed = parse_time_range(text, now=NOW)
    assert (parsed.start, parsed.end) == (start, end)
    assert parsed.start.tzinfo == UTC
    assert parsed.end.tzinfo == UTC


@pytest.mark.parametrize(
    ("now", "start"),
    [
        # Calendar months clamp to the shorter month instead of spilling over.
        (utc(2024, 3, 31, 10), utc(2024, 2, 29, 10)),
        (utc(2023, 3, 31, 10), utc(2023, 2, 28, 10)),
        (utc(2024, 1, 31), utc(2023, 12, 31)),
    ],
)
def test_last_month_counts_calendar_months(now: datetime, start: datetime) -> None:
    assert parse_time_range("last month", now=now) == TimeRange(start, now)


def test_last_year_from_leap_day_clamps_to_february_28() -> None:
    now = utc(2024, 2, 29, 8)
    assert parse_time_range("last year", now=now).start == utc(2023, 2, 28, 8)


def test_naive_now_is_taken_as_utc() -> None:
    parsed = parse_time_range("last 2 hours", now=datetime(2024, 3, 15, 12))
    assert parsed == TimeRange(utc(2024, 3, 15, 10), utc(2024, 3, 15, 12))


def test_now_with_offset_is_converted_to_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    parsed = parse_time_range("today", now=datetime(2024, 3, 16, 1, 0, tzinfo=plus_two))
    assert parsed == TimeRange(utc(2024, 3, 15), utc(2024, 3, 15, 23))


def test_default_now_is_the_current_utc_time() -> None:
    before = datetime.now(UTC)
    parsed = parse_time_range("last 3 days")
    after = datetime.now(UTC)
    assert before <= parsed.end <= after
    assert parsed.duration == timedelta(days=3)


NOT_UNDERSTOOD = [
    "next tuesday-ish",
    "banana",
    "last",
    "last 3",
    "last 3 lunations",
    "2024-01-15 to",
    "to 2024-01-15",
    "2024-1-5",
    "15/01/2024",
    "Janvier 2024",
    "24",
    "2024-01-15 and 2024-01-20",
    "2024-01-15 to 2024-01-20 to 2024-01-25",
    "last h",
    "2024-01-15 banana",
    "2024 2025",
    "this decade",
]


@pytest.mark.parametrize("text", NOT_UNDERSTOOD)
def test_rejects_what_it_does_not_understand(text: str) -> None:
    with pytest.raises(BadTimeRangeError) as caught:
        parse_time_range(text, now=NOW)
    message = caught.value.message
    assert "Could not understand" in message
    assert "Try: '2024-01-15'" in message
    assert "'last 3 days'" in message
    assert "'2024-015'" in message


def test_not_understood_message_quotes_the_whole_input() -> None:
    with pytest.raises(BadTimeRangeError, match=r"Could not understand 'next tuesday-ish'\."):
        parse_time_range("next tuesday-ish", now=NOW)


@pytest.mark.parametrize(
    ("text", "bad_piece"),
    [
        ("2024-01-15 to next tuesday", "'next tuesday'"),
        ("someday to 2024-01-20", "'someday'"),
        ("between 2024-01-15 and later", "'later'"),
        ("since the dawn of time", "'the dawn of time'"),
    ],
)
def test_range_error_names_the_side_not_understood(text: str, bad_piece: str) -> None:
    with pytest.raises(BadTimeRangeError) as caught:
        parse_time_range(text, now=NOW)
    assert f"Could not understand {bad_piece} in" in caught.value.message
    assert "Try:" in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-20 to 2024-01-10",
        "2024-01-15T18:00 to 2024-01-15T06:00",
        "March 2024 - January 2024",
        "between 2005 and 2003",
        "Jan 10-5 2024",
        "Nov-Feb 2024",
        "2024-01-20 2024-01-10",
        "now to 2024-01-01",
    ],
)
def test_rejects_reversed_ranges(text: str) -> None:
    with pytest.raises(BadTimeRangeError) as caught:
        parse_time_range(text, now=NOW)
    message = caught.value.message
    assert "is reversed" in message
    assert repr(text) in message
    assert "Put the earlier time first" in message


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "."])
def test_rejects_blank_text(text: str) -> None:
    with pytest.raises(BadTimeRangeError, match=r"The time range is empty\. Try: "):
        parse_time_range(text, now=NOW)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2024-02-30", "day is out of range for month"),
        ("2023-02-29", "day is out of range for month"),
        ("2024-13-01", "month must be in 1..12"),
        ("2024-01-15T25:00", "hour must be in 0..23"),
        ("2024-01-15T12:60", "minute must be in 0..59"),
        ("2024-367", "day of year 367 is outside 001-366 for 2024"),
        ("2023-366", "day of year 366 is outside 001-365 for 2023"),
        ("2024-000", "day of year 0 is outside"),
        ("2024-13", "month must be in 1..12"),
        ("February 30, 2024", "day is out of range for month"),
        ("Feb 28-30 2023", "day is out of range for month"),
        ("2024-01-15T06:00+25:00", "UTC offset +25:00 is out of range"),
        ("2024-02-30 to 2024-03-05", "day is out of range for month"),
        ("0000", "year 0 is out of range"),
    ],
)
def test_rejects_impossible_dates(text: str, reason: str) -> None:
    with pytest.raises(BadTimeRangeError) as caught:
        parse_time_range(text, now=NOW)
    message = caught.value.message
    assert "is not a real date or time" in message
    assert reason in message
    assert "Try:" in message


def test_rejects_relative_range_of_zero_length() -> None:
    with pytest.raises(
        BadTimeRangeError, match=r"'last 0 days' covers no time; ask for at least 1"
    ):
        parse_time_range("last 0 days", now=NOW)


def test_rejects_relative_range_beyond_the_calendar() -> None:
    with pytest.raises(BadTimeRangeError, match=r"'last 5000 years' is not a real date or time"):
        parse_time_range("last 5000 years", now=NOW)


def test_rejects_since_in_the_future() -> None:
    with pytest.raises(BadTimeRangeError, match=r"not before now \(2024-03-15T12:34:56Z\)"):
        parse_time_range("since 2024-06-01", now=NOW)


@pytest.mark.parametrize("text", ["from 2024-01-15", "between 2024-01-15"])
def test_rejects_range_prefix_without_an_end(text: str) -> None:
    with pytest.raises(BadTimeRangeError, match=r"needs both ends, e\.g\. 'from 2024-01-15 to"):
        parse_time_range(text, now=NOW)


@pytest.mark.parametrize(
    ("text", "now"),
    [
        ("2024-01-15T06:00 to 2024-01-15T06:00", NOW),
        ("now", NOW),
        ("today", TODAY),
    ],
)
def test_rejects_empty_ranges(text: str, now: datetime) -> None:
    with pytest.raises(BadTimeRangeError, match=r"is empty: it starts and ends at"):
        parse_time_range(text, now=now)


def test_rejects_text_far_too_long_to_be_a_time_range() -> None:
    text = " to ".join(["2024-01-15"] * 100)
    with pytest.raises(BadTimeRangeError, match=r"1396 characters long \(at most 200\)"):
        parse_time_range(text, now=NOW)


def test_errors_are_user_errors() -> None:
    with pytest.raises(UserError):
        parse_time_range("nonsense", now=NOW)


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (utc(2024, 1, 15, 6, 7, 8), "2024-01-15T06:07:08Z"),
        (utc(2024, 1, 15, 6, 7, 8, 999999), "2024-01-15T06:07:08Z"),
        (datetime(2024, 1, 15, 6, 7, 8), "2024-01-15T06:07:08Z"),
        (
            datetime(2024, 1, 15, 8, 7, 8, tzinfo=timezone(timedelta(hours=2))),
            "2024-01-15T06:07:08Z",
        ),
        (utc(1999, 12, 31, 23, 59, 59), "1999-12-31T23:59:59Z"),
    ],
)
def test_format_time(t: datetime, expected: str) -> None:
    assert format_time(t) == expected


def test_time_range_str_uses_format_time() -> None:
    parsed = parse_time_range("2024-01-15 to 2024-01-20", now=NOW)
    assert str(parsed) == "2024-01-15T00:00:00Z to 2024-01-21T00:00:00Z"


def test_time_range_still_normalises_and_validates() -> None:
    plus_two = timezone(timedelta(hours=2))
    shifted = TimeRange(datetime(2024, 1, 1, 2, tzinfo=plus_two), datetime(2024, 1, 2))
    assert shifted.start == utc(2024, 1, 1)
    assert shifted.duration == timedelta(days=1)
    with pytest.raises(BadTimeRangeError, match="Put the earlier time first"):
        TimeRange(utc(2024, 1, 2), utc(2024, 1, 1))
