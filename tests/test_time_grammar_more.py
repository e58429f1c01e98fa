"""Every date form crossed with every clock / duration form gives the exact window.

The grammar is composed of pieces (a date, a clock range, a length, an anchor); a piece
read in one combination must be read in all of them, so each date spelling below is
crossed with each clock or duration spelling and the exact window compared.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)
DAY = datetime(2015, 3, 17, tzinfo=UTC)

# Spellings of 2015-03-17.
DATES = [
    "2015-03-17",
    "March 17, 2015",
    "17 March 2015",
    "2015 Mar 17",
    "2015-076",
    "day 76 of 2015",
    "2015 day 076",
    "doy 076 of 2015",
    "03/17/2015",
    "2015/03/17",
]

# A clock range or a length on that day, and the window it names (offsets from midnight).
H = timedelta(hours=1)
M = timedelta(minutes=1)
CLOCKS = [
    ("from 13:00 to 14:30", 13 * H, 14 * H + 30 * M),
    ("13:00-14:30 UT", 13 * H, 14 * H + 30 * M),
    ("1300-1430 UT", 13 * H, 14 * H + 30 * M),
    ("between 13:00 and 14:30", 13 * H, 14 * H + 30 * M),
    ("13h-14h UT", 13 * H, 14 * H),
    ("from 10 UT to 14 UT", 10 * H, 14 * H),
    ("from 22:00 to 02:00", 22 * H, 26 * H),
    ("starting at 13:00 for 90 minutes", 13 * H, 14 * H + 30 * M),
    ("from noon to midnight", 12 * H, 24 * H),
    ("at 13:00 plus or minus 30 minutes", 12 * H + 30 * M, 13 * H + 30 * M),
]


@pytest.mark.parametrize("date", DATES)
@pytest.mark.parametrize(("clock", "start", "end"), CLOCKS)
def test_date_crossed_with_clock(date: str, clock: str, start: timedelta, end: timedelta) -> None:
    for text in (f"ACE field {date}, {clock}", f"ACE field on {date} {clock}"):
        found = find_time(text, NOW)
        assert found.range is not None, (text, found.error)
        assert (found.range.start, found.range.end) == (DAY + start, DAY + end), text


# A clock written with its date on each side of a range crossing midnight.
PAIRS = [
    ("2015-03-17", "2015-03-18"),
    ("March 17, 2015", "March 18, 2015"),
    ("17 March 2015", "18 March 2015"),
    ("2015-076", "2015-077"),
]
CLOCK_PAIRS = [
    ("22 UT", "04 UT"),
    ("2200 UT", "0400 UT"),
    ("22:00 UT", "04:00 UT"),
    ("22:00", "04:00"),
]


@pytest.mark.parametrize(("first", "second"), PAIRS)
@pytest.mark.parametrize(("a", "b"), CLOCK_PAIRS)
@pytest.mark.parametrize("joint", ["to", "until", "-"])
def test_clock_on_each_date(first: str, second: str, a: str, b: str, joint: str) -> None:
    text = f"Wind field from {a} on {first} {joint} {b} on {second}"
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    assert (found.range.start, found.range.end) == (DAY + 22 * H, DAY + 28 * H), text


# A start instant in many spellings, then a length.
STARTS = [
    "2015-03-17 22:00",
    "2015-03-17T22:00Z",
    "2015-03-17 22 UT",
    "2015-03-17 2200 UT",
    "March 17, 2015 22:00",
    "2015-076 22:00",
]
LENGTHS = [("for 6 hours", 6 * H), ("for 90 minutes", 90 * M), ("for 2 days", 48 * H)]


@pytest.mark.parametrize("begin", STARTS)
@pytest.mark.parametrize(("length", "span"), LENGTHS)
@pytest.mark.parametrize("lead", ["starting ", "from ", ""])
def test_start_then_length(begin: str, length: str, span: timedelta, lead: str) -> None:
    text = f"OMNI data {lead}{begin}, {length}"
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    assert (found.range.start, found.range.end) == (DAY + 22 * H, DAY + 22 * H + span), text


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2015-03-17 1300Z to 1500Z", "2015-03-17T13:00", "2015-03-17T15:00"),
        ("2015-03-17T13:00 to 15:30", "2015-03-17T13:00", "2015-03-17T15:30"),
        ("2015-03-17 22:00 to 02:00", "2015-03-17T22:00", "2015-03-18T02:00"),
        ("between doy 100 and doy 105 of 2003", "2003-04-10T00:00", "2003-04-16T00:00"),
        ("2003 doy 100 and 105", "2003-04-10T00:00", "2003-04-16T00:00"),
        ("1979 March 1-10", "1979-03-01T00:00", "1979-03-11T00:00"),
        ("ISO week 2015-W12", "2015-03-16T00:00", "2015-03-23T00:00"),
        ("week 12 of 2015", "2015-03-16T00:00", "2015-03-23T00:00"),
        ("2015-W12", "2015-03-16T00:00", "2015-03-23T00:00"),
        ("the week of 2015-03-17", "2015-03-17T00:00", "2015-03-24T00:00"),
        ("the first 6 hours of 2015-03-17", "2015-03-17T00:00", "2015-03-17T06:00"),
        ("over the 3 days after 2015-03-17 04:00", "2015-03-17T04:00", "2015-03-20T04:00"),
        ("30 minutes either side of 2015-03-17 13:00", "2015-03-17T12:30", "2015-03-17T13:30"),
        ("2015-03-17 13:00 +/- 30 min", "2015-03-17T12:30", "2015-03-17T13:30"),
        ("2015-03-17 through 2015-03-20", "2015-03-17T00:00", "2015-03-21T00:00"),
    ],
)
def test_more_forms(text: str, start: str, end: str) -> None:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    want = (datetime.fromisoformat(start + "Z"), datetime.fromisoformat(end + "Z"))
    assert (found.range.start, found.range.end) == want, text


@pytest.mark.parametrize(
    "text",
    [
        "OMNI data for Carrington rotation 2160",
        "OMNI data for CR 2160",
        "ACE field for week 54 of 2015",
    ],
)
def test_unsupported_time_words_are_asked_not_widened(text: str) -> None:
    found = find_time(text, NOW)
    assert found.range is None, (text, found.range)
    assert found.error, text


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Voyager 2 field at the Neptune encounter", "1989-08-24T00:00", "1989-08-27T00:00"),
        ("Cassini MAG during the Jupiter flyby", "2000-12-29T00:00", "2001-01-01T00:00"),
        ("Ulysses field around its Jupiter flyby", "1992-02-07T00:00", "1992-02-10T00:00"),
        (
            "Voyager 1 field 2 days before the Saturn encounter",
            "1980-11-09T00:00",
            "1980-11-11T00:00",
        ),
        ("MESSENGER field, second Mercury flyby", "2008-10-05T00:00", "2008-10-08T00:00"),
    ],
)
def test_planetary_encounters_are_vocabulary_events(text: str, start: str, end: str) -> None:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    want = (datetime.fromisoformat(start + "Z"), datetime.fromisoformat(end + "Z"))
    assert (found.range.start, found.range.end) == want, text


def test_encounter_of_an_unnamed_spacecraft_is_asked() -> None:
    """Several spacecraft flew past Jupiter: without one named, the dates are asked."""
    found = find_time("magnetic field during the Jupiter flyby", NOW)
    assert found.range is None
    assert found.error is not None and "Jupiter flyby" in found.error


def test_a_component_named_br_before_a_date_is_no_rotation_number() -> None:
    found = find_time("Solar Orbiter MAG RTN BR 2021-06-01", NOW)
    assert found.range is not None, found.error
    assert found.range.start == datetime(2021, 6, 1, tzinfo=UTC)
