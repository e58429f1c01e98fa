"""Windows relative to a time: "N hours before the shock at T", "± N days around T".

The one time grammar (`timerange.find_time`) reads a length, a relation (before, after,
starting, around, from ... before to ... after) and an anchor, with the words that name
what happened at the anchor ("shock arrival", "the CME", "the storm onset") in between or
after it. Dates in every common order and named events with their inclusive day ranges
are read the same way.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time
from xhelio.vocabulary import load_vocabulary

NOW = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _window(text: str) -> tuple[datetime, datetime]:
    found = find_time(f"Wind proton speed {text}", NOW)
    assert found.error is None and found.range is not None, (text, found)
    return found.range.start, found.range.end


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # before / preceding / leading up to, with the event named in between
        (
            "for the 18 h before shock arrival at 2003-10-29 06:11",
            "2003-10-28T12:11",
            "2003-10-29T06:11",
        ),
        ("18 hours before the shock at 2003-10-29 06:11", "2003-10-28T12:11", "2003-10-29T06:11"),
        (
            "the 6 h leading up to the shock arrival at 2003-10-29 06:11",
            "2003-10-29T00:11",
            "2003-10-29T06:11",
        ),
        (
            "the 90 minutes preceding the sudden commencement at 2015-03-17 04:45",
            "2015-03-17T03:15",
            "2015-03-17T04:45",
        ),
        (
            "two days preceding the storm onset on 2015-03-17",
            "2015-03-15T00:00",
            "2015-03-17T00:00",
        ),
        (
            "3 hours prior to the CME arrival at 2012-07-23T21:00",
            "2012-07-23T18:00",
            "2012-07-23T21:00",
        ),
        ("the hour before the shock at 2015-03-17 04:45", "2015-03-17T03:45", "2015-03-17T04:45"),
        (
            "12 hours before the arrival of the ICME on 2012-07-23 21:00",
            "2012-07-23T09:00",
            "2012-07-23T21:00",
        ),
        # after / following, from the instant (or from the end of a whole day)
        (
            "12 hours after the CME arrival on 2012-07-23 21:00",
            "2012-07-23T21:00",
            "2012-07-24T09:00",
        ),
        (
            "30 minutes following the X8.2 flare at 2017-09-10 16:06",
            "2017-09-10T16:06",
            "2017-09-10T16:36",
        ),
        ("the 2 days following the storm on 2015-03-17", "2015-03-18T00:00", "2015-03-20T00:00"),
        ("the day after 2015-03-17", "2015-03-18T00:00", "2015-03-19T00:00"),
        (
            "six hours after shock arrival at 2003-10-29 06:11",
            "2003-10-29T06:11",
            "2003-10-29T12:11",
        ),
        # both sides
        (
            "from 2 h before to 4 h after the shock at 2003-10-29 06:11",
            "2003-10-29T04:11",
            "2003-10-29T10:11",
        ),
        (
            "between 1 hour before and 3 hours after the shock at 2015-03-17 04:45",
            "2015-03-17T03:45",
            "2015-03-17T07:45",
        ),
        ("1 day before to 2 days after 2015-03-17", "2015-03-16T00:00", "2015-03-20T00:00"),
        # starting / beginning / from, with dates in every order and DOY
        ("3 days starting 2004 Jun 29", "2004-06-29T00:00", "2004-07-02T00:00"),
        ("a week from 5 March 2015", "2015-03-05T00:00", "2015-03-12T00:00"),
        ("two days beginning DOY 120 of 2003", "2003-04-30T00:00", "2003-05-02T00:00"),
        ("2 days starting on day 75 of 2015", "2015-03-16T00:00", "2015-03-18T00:00"),
        ("3 days starting June 29th 2004", "2004-06-29T00:00", "2004-07-02T00:00"),
        ("four days from Jun 29, 2004", "2004-06-29T00:00", "2004-07-03T00:00"),
        ("6 hours beginning 29 Jun 2004 12:00", "2004-06-29T12:00", "2004-06-29T18:00"),
        ("half a day starting 2015-03-17 06:00", "2015-03-17T06:00", "2015-03-17T18:00"),
        # around: the day itself ± N, inclusive; an instant ± N
        ("± 1 day around the 2012-07-23 CME", "2012-07-22T00:00", "2012-07-25T00:00"),
        ("+/- 1 day around the CME on 2012-07-23", "2012-07-22T00:00", "2012-07-25T00:00"),
        ("+/- 6 h around the shock at 2003-10-29 06:11", "2003-10-29T00:11", "2003-10-29T12:11"),
        ("within 2 days of the 2012-07-23 CME", "2012-07-21T00:00", "2012-07-26T00:00"),
        (
            "3 hours either side of the shock at 2015-03-17 04:45",
            "2015-03-17T01:45",
            "2015-03-17T07:45",
        ),
        ("the 2012-07-23 CME ± 2 days", "2012-07-21T00:00", "2012-07-26T00:00"),
        ("2003-10-29 06:11 plus or minus 30 minutes", "2003-10-29T05:41", "2003-10-29T06:41"),
    ],
)
def test_windows_relative_to_a_time(text: str, start: str, end: str) -> None:
    assert _window(text) == (_at(start), _at(end))


@pytest.mark.parametrize(
    "text",
    ["29 Jun 2004", "Jun 29, 2004", "2004 Jun 29", "June 29th 2004", "29th June 2004",
     "June 29 2004", "29 June, 2004", "the 29th of June 2004", "2004 June 29th", "Jun. 29 2004"],
)  # fmt: skip
def test_month_name_dates_in_every_order(text: str) -> None:
    assert _window(f"on {text}") == (_at("2004-06-29T00:00"), _at("2004-06-30T00:00"))


def test_relative_window_before_a_named_event() -> None:
    start, end = _window("for the 2 days before the Halloween storm")
    assert (start, end) == (_at("2003-10-26T00:00"), _at("2003-10-28T00:00"))


def test_every_named_event_is_an_inclusive_day_range() -> None:
    """The table's 'A to B' means the days A..B: each window starts and ends at midnight."""
    for event in load_vocabulary().events:
        name = re.sub(r"\s*\(.*?\)", "", event.name)  # "Gannon (Mother's Day) storm"
        found = find_time(f"OMNI Dst during the {name}", NOW)
        assert found.range is not None, event.name
        first, last = event.range.split(" to ")
        assert found.range.start == _at(f"{first}T00:00"), event.name
        assert (found.range.end - found.range.start).days == (
            _at(f"{last}T00:00") - _at(f"{first}T00:00")
        ).days + 1, event.name


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("during the Bastille Day storm", "2000-07-14T00:00", "2000-07-17T00:00"),
        ("for the Halloween storms of 2003", "2003-10-28T00:00", "2003-11-02T00:00"),
        ("during the St. Patrick's Day storm", "2015-03-16T00:00", "2015-03-20T00:00"),
        ("during the Gannon storm", "2024-05-10T00:00", "2024-05-14T00:00"),
    ],
)
def test_named_events_read_as_a_physicist_dates_them(text: str, start: str, end: str) -> None:
    assert _window(text) == (_at(start), _at(end))


@pytest.mark.parametrize(
    "text",
    [
        "12 hours before the Carrington event",
        "during the 2019 Smith storm",
        "± 2 days around the Jones flare",
    ],
)
def test_an_unknown_event_is_asked_about(text: str) -> None:
    found = find_time(f"Wind proton speed {text}", NOW)
    assert found.range is None and found.error and "do not know" in found.error, found


@pytest.mark.parametrize(
    "text",
    [
        "3 days starting 2004 Jun 31",
        "6 hours before the shock at 2015-02-30 04:45",
        "± 1 day around the 2011-02-29 flare",
    ],
)
def test_impossible_anchor_dates_are_errors(text: str) -> None:
    found = find_time(f"Wind proton speed {text}", NOW)
    assert found.range is None and found.error, found


@pytest.mark.parametrize(
    "text",
    [
        "Wind proton speed for the 18 h before shock arrival",
        "Wind proton speed ± 2 days around the CME",
        "Wind proton speed for 3 days starting Jun 29",
        "Wind proton speed from 2 h before to 4 h after the shock",
    ],
)
def test_time_words_without_a_date_are_asked_not_defaulted(text: str) -> None:
    from xhelio.catalog.index import open_catalog
    from xhelio.language.parse import Vocabulary, parse_request

    with open_catalog() as catalog:
        intent = parse_request(text, Vocabulary.from_catalog(catalog), NOW)
    assert intent.time_range is None and intent.time_error, intent


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("the 24 hours around 2015-03-17 12:00", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("the 3 days surrounding 2015-03-17", "2015-03-16T00:00", "2015-03-19T00:00"),
        ("the 6 hours centred on 2015-03-17 04:45", "2015-03-17T01:45", "2015-03-17T07:45"),
    ],
)
def test_a_length_around_a_time_is_centred_on_it(text: str, start: str, end: str) -> None:
    assert _window(text) == (_at(start), _at(end))


def test_a_spacecraft_named_in_the_event_phrase_stays_for_the_parser() -> None:
    text = "ACE density 2 hours before Wind saw the shock at 2003-10-29 06:11"
    found = find_time(text, NOW)
    assert found.range is not None
    assert (found.range.start, found.range.end) == (
        _at("2003-10-29T04:11"),
        _at("2003-10-29T06:11"),
    )
    wind = text.index("Wind")
    assert not any(a <= wind < b for a, b in found.spans), found.spans
    assert any(a <= text.index("saw") < b for a, b in found.spans), found.spans


def test_dates_written_beside_an_event_name_are_not_eaten_by_it() -> None:
    found = find_time("OMNI Dst during the Halloween storm 2003-10-29 to 2003-10-31", NOW)
    assert found.range is not None
    assert (found.range.start, found.range.end) == (
        _at("2003-10-29T00:00"),
        _at("2003-11-01T00:00"),
    )
