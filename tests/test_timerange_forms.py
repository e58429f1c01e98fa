"""Date forms of data tools and log books, abbreviated range ends and named days.

SPEDAS/IDL `YYYY-MM-DD/hh:mm:ss`, compact `yyyymmdd`, an end that leaves out what the
start already said ("1994-09-10 thru 09-12", "2004-05-03..05"), days named by a fixed
date plus a year ("Christmas 2006"), and vague parts of a period ("mid-March 2013"),
which are read with the assumption said, or asked about.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time, parse_time_range

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _window(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    return f"{found.range.start:%Y-%m-%d %H:%M}", f"{found.range.end:%Y-%m-%d %H:%M}"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # SPEDAS / IDL: a slash between the date and the clock, hours alone too
        ("ACE B 2015-10-16/13:00 to 2015-10-16/13:10", "2015-10-16 13:00", "2015-10-16 13:10"),
        (
            "THEMIS-A 2008-02-26/04:00:00 - 2008-02-26/05:30:00",
            "2008-02-26 04:00",
            "2008-02-26 05:30",
        ),
        ("MMS1 2015-10-16/13 to 2015-10-16/15", "2015-10-16 13:00", "2015-10-16 15:00"),
        ("Wind 2015-10-16/13:00 to 13:45", "2015-10-16 13:00", "2015-10-16 13:45"),
        ("Cluster 2015-076/12:00 to 2015-076/14:30", "2015-03-17 12:00", "2015-03-17 14:30"),
        # compact yyyymmdd with a clock or a clock range
        ("Wind B 20150317 0400-0900", "2015-03-17 04:00", "2015-03-17 09:00"),
        ("Wind B 20150317T04:00 to 20150317T06:30", "2015-03-17 04:00", "2015-03-17 06:30"),
        ("OMNI 20031029 to 20031031", "2003-10-29 00:00", "2003-11-01 00:00"),
        ("OMNI 20151016-20151018", "2015-10-16 00:00", "2015-10-19 00:00"),
        # day-month-year as IDL and CDAWeb write it, dotted European dates, yyyy:ddd
        ("ACE B 16-Oct-2015 13:00 to 16-Oct-2015 14:00", "2015-10-16 13:00", "2015-10-16 14:00"),
        ("ACE B 16.10.2015", "2015-10-16 00:00", "2015-10-17 00:00"),
        ("ACE B 2003:301", "2003-10-28 00:00", "2003-10-29 00:00"),
        # an end that leaves out the year (and month) of its start
        ("Wind 1994-09-10 thru 09-12", "1994-09-10 00:00", "1994-09-13 00:00"),
        ("ACE 2010-12-31 to 01-02", "2010-12-31 00:00", "2011-01-03 00:00"),
        ("ACE 2004-05-03..05", "2004-05-03 00:00", "2004-05-06 00:00"),
        ("ACE 2007-01-30 to 02-02", "2007-01-30 00:00", "2007-02-03 00:00"),
        ("ACE 2015-03-17 to 19", "2015-03-17 00:00", "2015-03-20 00:00"),
        ("ACE 2015-03-30 - 02", "2015-03-30 00:00", "2015-04-03 00:00"),
        ("OMNI Mar 3-5 2012", "2012-03-03 00:00", "2012-03-06 00:00"),
        ("ACE from the 3rd to the 5th of May 2004", "2004-05-03 00:00", "2004-05-06 00:00"),
        ("Wind Jan 30 - Feb 2 2007", "2007-01-30 00:00", "2007-02-03 00:00"),
    ],
)
def test_forms_of_data_tools_and_short_ends(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


def test_an_end_number_that_is_a_length_is_no_day() -> None:
    """'2015-03-17 to 20 minutes' is not 17 to 20 March."""
    found = find_time("ACE on 2015-03-17 to 20 minutes after noon", NOW)
    assert found.range is None or found.range.end.day != 21


def test_slash_form_is_read_by_the_tool_grammar_too() -> None:
    found = parse_time_range("2015-10-16/13:00:30 to 2015-10-16/13:10", NOW)
    assert (found.start.second, found.end.minute) == (30, 10)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("ACE density around Christmas Day 2006", "2006-12-25"),
        ("OMNI Dst on New Year's Day 2005", "2005-01-01"),
        ("Wind B on New Year's Eve 1999", "1999-12-31"),
        ("ACE B Halloween 2005", "2005-10-31"),
        ("ACE B on St Patrick's Day 2013", "2013-03-17"),
        ("Wind on Independence Day 2012", "2012-07-04"),
        ("OMNI on Bastille Day 2005", "2005-07-14"),
    ],
)
def test_fixed_date_days_with_a_year(text: str, day: str) -> None:
    assert _window(text) == (f"{day} 00:00", _next(day))


def _next(day: str) -> str:
    from datetime import date, timedelta

    return f"{date.fromisoformat(day) + timedelta(days=1)} 00:00"


def test_a_named_day_in_the_year_of_its_storm_is_the_storm() -> None:
    assert _window("ACE B Halloween 2003") == ("2003-10-28 00:00", "2003-11-02 00:00")
    assert _window("ACE B St. Patrick's Day 2015") == ("2015-03-16 00:00", "2015-03-20 00:00")


def test_an_equinox_is_read_with_its_assumption_said() -> None:
    found = find_time("ACE B around the vernal equinox 2012", NOW)
    assert found.range is not None and found.range.start.month == 3
    assert found.text is not None and "approximately" in found.text


@pytest.mark.parametrize(
    "text",
    [
        "ACE B on Founders Day 2012",
        "ACE B on Thanksgiving 2012",
        "Wind on Easter 2010",
        "ACE on Foobar Day 2011",
        "OMNI on Christmas",
    ],
)
def test_an_unknown_or_yearless_named_day_is_asked(text: str) -> None:
    found = find_time(text, NOW)
    assert found.range is None and found.error is not None, (text, found.range)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("ACE B mid-March 2013", "2013-03-11 00:00", "2013-03-21 00:00"),
        ("ACE B early March 2013", "2013-03-01 00:00", "2013-03-11 00:00"),
        ("ACE B late March 2013", "2013-03-21 00:00", "2013-04-01 00:00"),
        ("ACE B late 2013", "2013-09-01 00:00", "2014-01-01 00:00"),
    ],
)
def test_a_vague_part_of_a_period_is_read_with_the_assumption_said(
    text: str, start: str, end: str
) -> None:
    assert _window(text) == (start, end)
    found = find_time(text, NOW)
    assert found.text is not None and "taken as" in found.text


def test_a_year_with_a_decimal_part_is_asked() -> None:
    found = find_time("ACE B 2003.301", NOW)
    assert found.range is None and found.error is not None and "2003.301" in found.error


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("ACE B from Christmas 2006 to New Year 2007", "2006-12-25 00:00", "2007-01-02 00:00"),
        ("ACE B Christmas Eve 2010 from 10 to 14 UT", "2010-12-24 10:00", "2010-12-24 14:00"),
        ("ACE B 2 days before Christmas 2006", "2006-12-23 00:00", "2006-12-25 00:00"),
        ("Wind on New Year's Eve 1999", "1999-12-31 00:00", "2000-01-01 00:00"),
    ],
)
def test_a_named_day_is_a_date_the_grammar_reads_around(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)
    found = find_time(text, NOW)
    assert found.text is not None and "taken as" in found.text


def test_a_lunar_new_year_is_not_new_years_day() -> None:
    found = find_time("ACE B chinese new year 2010", NOW)
    assert found.range is None and found.error is not None
