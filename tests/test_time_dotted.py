"""Dotted European dates, nights across midnight and hours said 'around'."""

from datetime import datetime

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 27)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Wind field for 1.-3.12.2006", "2006-12-01T00:00", "2006-12-04T00:00"),
        ("OMNI SYM-H 7.-9. Nov 2004", "2004-11-07T00:00", "2004-11-10T00:00"),
        ("ACE Bz 3.-5. Okt 2003", "2003-10-03T00:00", "2003-10-06T00:00"),
        ("ACE Bz on 17. M\u00e4rz 2015", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("MMS1 FGM the night of 22/23 June 2015", "2015-06-22T18:00", "2015-06-23T06:00"),
        ("Wind density on 2012-03-12 around 9 UT", "2012-03-12T08:00", "2012-03-12T10:00"),
        ("ACE about 0800 UT on 2015-03-17", "2015-03-17T07:00", "2015-03-17T09:00"),
    ],
)
def test_written_as_in_europe_and_loosely(text: str, start: str, end: str) -> None:
    found = find_time(text, NOW)
    assert found.range is not None, found.error
    assert found.range.start.strftime("%Y-%m-%dT%H:%M") == start
    assert found.range.end.strftime("%Y-%m-%dT%H:%M") == end


def test_a_night_whose_days_do_not_follow_is_not_a_night() -> None:
    found = find_time("ACE the night of 17/19 March 2015", NOW)
    assert found.range is None or found.range.start.hour == 0


def test_a_decimal_number_is_not_a_dotted_day() -> None:
    found = find_time("ACE above 2.5 nT on 2015-03-17", NOW)
    assert found.range is not None
    assert found.range.start.strftime("%Y-%m-%d") == "2015-03-17"


@pytest.mark.parametrize(
    "text", ["OMNI sunspot number during solar max", "ACE Bz at the solar minimum of cycle 24"]
)
def test_a_solar_cycle_epoch_without_years_is_asked(text: str) -> None:
    found = find_time(text, NOW)
    assert found.range is None
    assert found.error is not None and "epoch" in found.error


def test_a_solar_cycle_epoch_with_its_year_is_that_year() -> None:
    found = find_time("ACE Bz during solar minimum 2008", NOW)
    assert found.range is not None and found.range.start.year == 2008


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Parker FIELDS data at perihelion 1", "2018-11-06"),
        ("PSP magnetic field during encounter 2", "2019-04-04"),
        ("PSP SWEAP around the third perihelion", "2019-09-01"),
    ],
)
def test_a_listed_perihelion_is_read_from_the_vocabulary(text: str, day: str) -> None:
    found = find_time(text, NOW)
    assert found.range is not None, found.error
    assert found.range.start.strftime("%Y-%m-%d") < day < found.range.end.strftime("%Y-%m-%d")


@pytest.mark.parametrize(
    "text", ["Parker FIELDS at perihelion 22", "Solar Orbiter MAG at the 5th perihelion"]
)
def test_an_unlisted_perihelion_is_asked(text: str) -> None:
    found = find_time(text, NOW)
    assert found.range is None
    assert found.error is not None and "perihelion" in found.error
