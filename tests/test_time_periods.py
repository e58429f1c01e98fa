"""Time phrases physicists write tersely are read exactly, never widened to a default.

Calendar periods (quarters, halves, ISO weeks, a month with the year first or a two-digit
year), ordinal and day-of-year ranges, a start with a length, clock ranges across the
midnight of a two-day range, and impossible periods (an error, never the year around).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 27, 8, 0, tzinfo=UTC)


def _window(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    return (
        found.range.start.strftime("%Y-%m-%dT%H:%M"),
        found.range.end.strftime("%Y-%m-%dT%H:%M"),
    )


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("OMNI Q1 2015", "2015-01-01T00:00", "2015-04-01T00:00"),
        ("OMNI 2015 Q4", "2015-10-01T00:00", "2016-01-01T00:00"),
        ("OMNI 2015Q2", "2015-04-01T00:00", "2015-07-01T00:00"),
        ("the second quarter of 2016", "2016-04-01T00:00", "2016-07-01T00:00"),
        ("first quarter 2016", "2016-01-01T00:00", "2016-04-01T00:00"),
        ("Q4 2015 to Q1 2016", "2015-10-01T00:00", "2016-04-01T00:00"),
        ("H2 2016", "2016-07-01T00:00", "2017-01-01T00:00"),
        ("the first half of 2016", "2016-01-01T00:00", "2016-07-01T00:00"),
        ("2001 Jan", "2001-01-01T00:00", "2001-02-01T00:00"),
        ("2001 January", "2001-01-01T00:00", "2001-02-01T00:00"),
        ("january '01", "2001-01-01T00:00", "2001-02-01T00:00"),
        ("Jan. \u201999", "1999-01-01T00:00", "1999-02-01T00:00"),
        ("Jan 5 '01", "2001-01-05T00:00", "2001-01-06T00:00"),
        ("5 Jan '01", "2001-01-05T00:00", "2001-01-06T00:00"),
        ("2019 W10", "2019-03-04T00:00", "2019-03-11T00:00"),
        ("W10 2019", "2019-03-04T00:00", "2019-03-11T00:00"),
    ],
)
def test_calendar_periods_are_exactly_that_period(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("between the 3rd and 5th of May 2012", "2012-05-03T00:00", "2012-05-06T00:00"),
        ("28 Oct-1 Nov 2003", "2003-10-28T00:00", "2003-11-02T00:00"),
        ("Oct 28-Nov 1, 2003", "2003-10-28T00:00", "2003-11-02T00:00"),
        ("2003/302-304", "2003-10-29T00:00", "2003-11-01T00:00"),
        ("doy 300/2003", "2003-10-27T00:00", "2003-10-28T00:00"),
    ],
)
def test_day_ranges_keep_their_first_day(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("from 0900 for 90 min on 2001-02-02", "2001-02-02T09:00", "2001-02-02T10:30"),
        ("2001-02-02, starting 14:30 UT, 3 h", "2001-02-02T14:30", "2001-02-02T17:30"),
        ("2001-02-02 09:00 + 2h", "2001-02-02T09:00", "2001-02-02T11:00"),
        ("2001-02-02T09:00 plus 2 hours", "2001-02-02T09:00", "2001-02-02T11:00"),
        ("a 6-hour window starting 2015-03-17 04:00", "2015-03-17T04:00", "2015-03-17T10:00"),
        ("2015-03-17T04:00Z/PT6H", "2015-03-17T04:00", "2015-03-17T10:00"),
        ("2015-03-17/P3D", "2015-03-17T00:00", "2015-03-20T00:00"),
    ],
)
def test_a_start_with_a_length_is_that_long(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    "text",
    [
        "22:00-02:00 UT on 3-4 March 2015",
        "3-4 March 2015, 22:00 to 02:00",
        "22:00 to 02:00 UT, 2015-03-03 to 2015-03-04",
    ],
)
def test_a_clock_range_across_the_midnight_of_two_days(text: str) -> None:
    assert _window(text) == ("2015-03-03T22:00", "2015-03-04T02:00")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("OMNI Q5 2015", "quarter"),
        ("OMNI H3 2016", "half"),
        ("OMNI Q0 2015", "quarter"),
    ],
)
def test_periods_no_calendar_has_are_errors(text: str, words: str) -> None:
    found = find_time(text, NOW)
    assert found.range is None
    assert found.error is not None and words in found.error


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Q1 of 2015", "2015-01-01T00:00", "2015-04-01T00:00"),
        ("1Q2015", "2015-01-01T00:00", "2015-04-01T00:00"),
        ("OMNI 2015, Jan 1-3", "2015-01-01T00:00", "2015-01-04T00:00"),
        ("summer 2015", "2015-06-01T00:00", "2015-09-01T00:00"),
        ("the spring of 2012", "2012-03-01T00:00", "2012-06-01T00:00"),
        ("winter 2014/15", "2014-12-01T00:00", "2015-03-01T00:00"),
        ("the winter of 2014-2015", "2014-12-01T00:00", "2015-03-01T00:00"),
    ],
)
def test_more_terse_periods(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


def test_a_season_says_the_months_it_was_taken_as() -> None:
    found = find_time("OMNI speed in summer 2015", NOW)
    assert found.text is not None and "taken as 2015-06-01 to 2015-08-31" in found.text


def test_a_winter_with_one_year_is_asked() -> None:
    found = find_time("OMNI speed in the winter of 2014", NOW)
    assert found.range is None
    assert found.error is not None and "Dec 2014 to Feb 2015" in found.error


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("the first fortnight of May 2012", "2012-05-01T00:00", "2012-05-15T00:00"),
        ("the fortnight after 2012-05-03", "2012-05-04T00:00", "2012-05-18T00:00"),
        ("the last day of March 2015", "2015-03-31T00:00", "2015-04-01T00:00"),
        ("in 2012 May-June", "2012-05-01T00:00", "2012-07-01T00:00"),
        ("May/June 2012", "2012-05-01T00:00", "2012-07-01T00:00"),
        ("05/2012", "2012-05-01T00:00", "2012-06-01T00:00"),
        ("on 2012-05-03 for the first 6 hours", "2012-05-03T00:00", "2012-05-03T06:00"),
        ("2015-03-17 during the first 2 hours", "2015-03-17T00:00", "2015-03-17T02:00"),
    ],
)
def test_parts_and_month_ranges_are_not_the_whole_period(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)
