"""Points in time as physicists write them.

A date and a clock in either order, clocks in every common form, relative-day words,
open ends, and future words.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _window(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    start, end = found.range.start, found.range.end
    return (
        f"{start:%Y-%m-%d %H:%M}" + (f":{start:%S}" if start.second else ""),
        f"{end:%Y-%m-%d %H:%M}",
    )


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # clock before date, each side; a yearless end borrows the start's year
        ("Wind B 1830Z on 3 Mar 2019 to 0200Z 4 Mar", "2019-03-03 18:30", "2019-03-04 02:00"),
        ("ACE 2200 UT 14 July 2015 until 0600 UT 16 July", "2015-07-14 22:00", "2015-07-16 06:00"),
        ("0930 UT 6 Sep 2017 until 0300 UT 8 Sep 2017", "2017-09-06 09:30", "2017-09-08 03:00"),
        (
            "from 10pm on Jul 14th 2000 to 2am on Jul 15th 2000",
            "2000-07-14 22:00",
            "2000-07-15 02:00",
        ),
        # offsets measured from a clock-before-date point
        ("the 90 minutes preceding 12:00 UT on 2012-07-23", "2012-07-23 10:30", "2012-07-23 12:00"),
        ("3 hours ahead of 1415 UT on 2017-09-08", "2017-09-08 11:15", "2017-09-08 14:15"),
        ("the 2 hours prior to 0600Z on 15 May 2005", "2005-05-15 04:00", "2005-05-15 06:00"),
        ("6 hours following 22:00 UT on 14 July 2015", "2015-07-14 22:00", "2015-07-15 04:00"),
        (
            "30 minutes before and after 1015 UT on 2000-07-15",
            "2000-07-15 09:45",
            "2000-07-15 10:45",
        ),
        # date then clock on both sides, the end's year borrowed; days of year as dates
        ("17 March 2015 22:00 UT to 18 March 02:00 UT", "2015-03-17 22:00", "2015-03-18 02:00"),
        ("2003 Oct 29 06:00 to Oct 30 06:00", "2003-10-29 06:00", "2003-10-30 06:00"),
        ("DOY 302 2003 at 0600 UT to DOY 303 at 1200 UT", "2003-10-29 06:00", "2003-10-30 12:00"),
        # lengths from a clock-before-date start
        ("from 1930 UT on 16 Oct 2015 for 40 minutes", "2015-10-16 19:30", "2015-10-16 20:10"),
        # relative-day words across midnight
        ("23:30 on 2015-03-16 to 01:30 the next morning", "2015-03-16 23:30", "2015-03-17 01:30"),
        (
            "from 22:00 on 2015-06-22 until 04:00 the following day",
            "2015-06-22 22:00",
            "2015-06-23 04:00",
        ),
        ("on 2015-03-17 from 22:00 to 02:00 the next day", "2015-03-17 22:00", "2015-03-18 02:00"),
        ("14 July 2015, 18:00 to 23:00 the same day", "2015-07-14 18:00", "2015-07-14 23:00"),
        ("from 21 UT on 2001-03-30 into the following day", "2001-03-30 21:00", "2001-04-01 00:00"),
        # hour forms
        ("between 22h00 and 22h40 on 2008-02-26", "2008-02-26 22:00", "2008-02-26 22:40"),
        ("08h15 to 09h45 UT on 2009-04-06", "2009-04-06 08:15", "2009-04-06 09:45"),
        ("2019-04-05 14:00:30 to 14:10", "2019-04-05 14:00:30", "2019-04-05 14:10"),
        # open-ended ends
        ("from 2017-08-12 through Aug 31", "2017-08-12 00:00", "2017-09-01 00:00"),
        ("from 2004-11-20 to the end of the month", "2004-11-20 00:00", "2004-12-01 00:00"),
        ("from 2010-10-05 until the end of the year", "2010-10-05 00:00", "2011-01-01 00:00"),
        (
            "on 2012-07-23 from 18:00 for the rest of the day",
            "2012-07-23 18:00",
            "2012-07-24 00:00",
        ),
    ],
)
def test_points_and_spans(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("ACE field tomorrow", "2026-11-27 00:00"),
        ("ACE field next week", "2026-11-30 00:00"),
        ("OMNI Dst next Monday", "2026-11-30 00:00"),
        ("Wind B for the next 3 days", "2026-11-26 12:01"),
        ("Wind B over the coming week", "2026-11-26 12:01"),
        ("OMNI Dst next month", "2026-12-01 00:00"),
    ],
)
def test_future_words_give_the_future_range(text: str, start: str) -> None:
    found = find_time(text, NOW)
    assert found.range is not None, found.error
    assert f"{found.range.start:%Y-%m-%d %H:%M}" == start
    assert found.range.end > NOW


def test_an_impossible_date_beside_a_clock_is_still_an_error() -> None:
    found = find_time("ACE B from 2200 UT 30 February 2015 to 0100 UT 1 March 2015", NOW)
    assert found.range is None
    assert found.error is not None and "not a real date" in found.error


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # a day of the month whose month and year are written once, after or before it
        (
            "Wind MFI from 2200 UT on the 16th to 0300 on the 17th of March 2015",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
        (
            "ACE B between 2200 on 16 March and 0300 on the 17th, 2015",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
        (
            "OMNI Bz 16th 2200 UT \u2013 17th 0300 UT March 2015",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
        (
            "Wind field March 2015, from 2200Z on the 16th to 0300Z on the 17th",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
        (
            "Geotail from 2100Z on the 5th to 0400Z on the 6th of November 2001",
            "2001-11-05 21:00",
            "2001-11-06 04:00",
        ),
        (
            "ACE 2015-03-16 from 2200 UT to 0300 UT on the 17th",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
    ],
)
def test_a_clock_on_a_day_of_a_month_named_once(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # a month-first day with a zoneless clock, the year written once at the end
        ("March 16 2200 to March 17 0300, 2015", "2015-03-16 22:00", "2015-03-17 03:00"),
        ("March 16th 2200 UT to March 17th 0300 UT 2015", "2015-03-16 22:00", "2015-03-17 03:00"),
        # the month and year first, a colon after them
        (
            "In March 2015: 2200 UT on the 16th until 0300 UT on the 17th",
            "2015-03-16 22:00",
            "2015-03-17 03:00",
        ),
        # a day of the month after the end of the month written is in the next month
        (
            "from 2359 UT on 31 December 2014 to 0100 UT on the 1st",
            "2014-12-31 23:59",
            "2015-01-01 01:00",
        ),
        ("from 2300 on 30 April 2015 to 0200 on the 1st", "2015-04-30 23:00", "2015-05-01 02:00"),
    ],
)
def test_a_month_day_and_a_year_written_apart(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


def test_a_day_of_no_month_named_is_asked_about() -> None:
    found = find_time("from 2200 UT on the 16th to 0300 on the 17th", NOW)
    assert found.range is None
    assert found.error is not None and "the 16th" in found.error and "month" in found.error


def test_a_year_after_a_month_day_is_no_clock() -> None:
    assert _window("ACE March 16 2015") == ("2015-03-16 00:00", "2015-03-17 00:00")


def test_a_year_written_first_is_no_clock() -> None:
    assert _window("2015 March 17 ACE") == ("2015-03-17 00:00", "2015-03-18 00:00")
