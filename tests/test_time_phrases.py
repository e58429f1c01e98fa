"""Time phrases both modes read with one grammar.

`timerange.find_time` is used by the offline parser and by the planner's
`resolve_plan_time`.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.planning.routing import resolve_plan_time
from xhelio.timerange import find_time

NOW = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("on 2024-01-15 from 0600 to 1800 UT", "2024-01-15T06:00", "2024-01-15T18:00"),
        ("2024-01-15 1430-1700", "2024-01-15T14:30", "2024-01-15T17:00"),
        ("on 2024-01-15 between 14:30 UT and 17:00 UT", "2024-01-15T14:30", "2024-01-15T17:00"),
        ("for 6 hours starting 2019-06-01 14:00", "2019-06-01T14:00", "2019-06-01T20:00"),
        ("for 3 days starting 2019-06-01", "2019-06-01T00:00", "2019-06-04T00:00"),
        ("two days from March 17 2015", "2015-03-17T00:00", "2015-03-19T00:00"),
        ("the last 5 days of March 2015", "2015-03-27T00:00", "2015-04-01T00:00"),
        ("the first 3 days of September 2017", "2017-09-01T00:00", "2017-09-04T00:00"),
        ("the second half of 2015-03-17", "2015-03-17T12:00", "2015-03-18T00:00"),
        ("on 03/17/2015", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("on 17/03/2015", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("2015/03/17", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("2015-03-17 12h to 2015-03-18 06h", "2015-03-17T12:00", "2015-03-18T06:00"),
        ("on 2024-01-15 at 0930 UT plus or minus 2 hours", "2024-01-15T07:30", "2024-01-15T11:30"),
        ("10 days ago", "2026-11-14T00:00", "2026-11-15T00:00"),
        ("during the Halloween storm of 2003", "2003-10-28T00:00", "2003-11-02T00:00"),
        ("the Gannon storm", "2024-05-10T00:00", "2024-05-14T00:00"),
        ("for 4 hours starting 2015-03-17 2200", "2015-03-17T22:00", "2015-03-18T02:00"),
        ("on 2019-06-01 from 10 UT to 14 UT", "2019-06-01T10:00", "2019-06-01T14:00"),
        ("2019-06-01 10-14 UT", "2019-06-01T10:00", "2019-06-01T14:00"),
        ("2019-06-01 10h to 14h", "2019-06-01T10:00", "2019-06-01T14:00"),
        ("on 2019-06-01 from 10am to 2pm", "2019-06-01T10:00", "2019-06-01T14:00"),
        ("2019-06-01 noon to 18:00", "2019-06-01T12:00", "2019-06-01T18:00"),
        ("2019-06-01 starting at 10 UT for 3 hours", "2019-06-01T10:00", "2019-06-01T13:00"),
        ("on 2019-06-01, for 2 hours from 14:00", "2019-06-01T14:00", "2019-06-01T16:00"),
        ("on the 17th of March 2015", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("March the 17th, 2015", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("2015-03-17 around noon, plus or minus 6 hours", "2015-03-17T06:00", "2015-03-17T18:00"),
        ("for days 10 to 12 of 2009", "2009-01-10T00:00", "2009-01-13T00:00"),
        ("doys 32-33, 2012", "2012-02-01T00:00", "2012-02-03T00:00"),
        ("2 hours before 2012-07-23T21:00", "2012-07-23T19:00", "2012-07-23T21:00"),
        ("the 3 days prior to 2012-07-23", "2012-07-20T00:00", "2012-07-23T00:00"),
        ("+/- 1 day around 2012-07-23", "2012-07-22T00:00", "2012-07-25T00:00"),
        ("within 30 minutes of 2012-07-23 21:00", "2012-07-23T20:30", "2012-07-23T21:30"),
        ("2012-07-23 \u00b1 2 days", "2012-07-21T00:00", "2012-07-26T00:00"),
        ("2012-07-23 from 23:00 to 01:30", "2012-07-23T23:00", "2012-07-24T01:30"),
        ("2012.07.23", "2012-07-23T00:00", "2012-07-24T00:00"),
        ("2012 Jul 22-24", "2012-07-22T00:00", "2012-07-25T00:00"),
        ("late on 2015-03-17", "2015-03-17T16:00", "2015-03-18T00:00"),
        ("early on 17 March 2015", "2015-03-17T00:00", "2015-03-17T08:00"),
        ("on the morning of 2015-03-17", "2015-03-17T00:00", "2015-03-17T12:00"),
        ("in the evening of 2015-03-17", "2015-03-17T18:00", "2015-03-18T00:00"),
        ("2015-03-17 morning", "2015-03-17T00:00", "2015-03-17T12:00"),
        ("17 March 2015, in the afternoon", "2015-03-17T12:00", "2015-03-17T18:00"),
        ("2015-03-17 morning sector", "2015-03-17T00:00", "2015-03-18T00:00"),
        ("from 2015-03-17 to the end of March 2015", "2015-03-17T00:00", "2015-04-01T00:00"),
        ("from 2015-03-17 until the end of 2015-03-19", "2015-03-17T00:00", "2015-03-20T00:00"),
    ],
)
def test_time_phrases(text: str, start: str, end: str) -> None:
    found = find_time(f"ACE magnetic field {text}", NOW)
    assert found.error is None and found.range is not None, found
    assert found.range.start == datetime.fromisoformat(start).replace(tzinfo=UTC)
    assert found.range.end == datetime.fromisoformat(end).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "on 2015-02-30",
        "on 2019-13-01",
        "at 25:00 on 2015-03-17",
        "2015-04-31",
        "on 2015-03-17 at 2600 UT",
        "on 2015-03-17 at 2460",
        "2015-03-17 at 25 UT",
        "on 31 April 2012",
        "on September 31, 2011",
        "29 Feb 2011 to 2 Mar 2011",
        "during the Smith substorm",
        "for the 2011 Jones event",
    ],
)
def test_impossible_dates_and_times_are_errors(text: str) -> None:
    found = find_time(f"ACE magnetic field {text}", NOW)
    assert found.range is None and found.error, found


def test_a_storm_without_a_name_takes_the_dates_written() -> None:
    found = find_time("OMNI Dst during the geomagnetic storm on 2012-07-15", NOW)
    assert found.range is not None and found.range.start.day == 15


def test_unread_date_words_are_asked_not_defaulted() -> None:
    from xhelio.catalog.index import open_catalog
    from xhelio.language.parse import Vocabulary, parse_request

    with open_catalog() as catalog:
        vocab = Vocabulary.from_catalog(catalog)
        for text in ("ACE magnetic field on 2012-7-23", "ACE field on day 205 in the year 2012"):
            intent = parse_request(text, vocab)
            assert intent.time_range is None and intent.time_error, text


def test_years_are_not_clock_times() -> None:
    found = find_time("Voyager 1 magnetic field 1979 to 1980", NOW)
    assert found.range is not None and found.range.start.year == 1979
    assert found.range.end.year == 1981


def test_planner_reads_events_like_the_offline_parser() -> None:
    resolved = resolve_plan_time("Compare ACE and Wind during the Halloween storm of 2003", NOW)
    assert resolved is not None
    assert str(resolved[0]) == "2003-10-28T00:00:00Z to 2003-11-02T00:00:00Z"


def test_a_part_of_a_day_says_the_hours_taken() -> None:
    found = find_time("ACE mag late on 2015-03-17")
    assert found.text is not None and "taken as 2015-03-17 16:00" in found.text


def test_a_date_beside_an_event_it_misses_wins_and_the_clash_is_said() -> None:
    found = find_time("Cassini MAG during the Jupiter flyby, Jan 2001")
    assert found.range is not None
    assert (f"{found.range.start:%Y-%m-%d}", f"{found.range.end:%Y-%m-%d}") == (
        "2001-01-01",
        "2001-02-01",
    )
    assert found.text is not None and "falls outside it" in found.text
    assert "2000-12-29" in found.text


def test_a_date_that_reads_both_ways_says_the_order_taken() -> None:
    found = find_time("ACE mag 3/4/2015")
    assert found.range is not None and f"{found.range.start:%Y-%m-%d}" == "2015-03-04"
    assert found.text is not None and "read month first" in found.text
    unambiguous = find_time("ACE mag 03/17/2015").text
    assert unambiguous is not None and "month first" not in unambiguous


def _days(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, found.error
    return f"{found.range.start:%Y-%m-%dT%H:%M}", f"{found.range.end:%Y-%m-%dT%H:%M}"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # an explicit window wins over an event that only labels it
        ("OMNI for the week starting 2015-07-13 (pluto flyby)", "2015-07-13", "2015-07-20"),
        ("OMNI Dst 2003-10-27 to 2003-11-03 (Halloween storm)", "2003-10-27", "2003-11-04"),
        ("OMNI Dst for March 2015, with the St Patrick's day storm", "2015-03-01", "2015-04-01"),
        ("OMNI Dst for March 2015 (St Patrick's day storm)", "2015-03-01", "2015-04-01"),
        # a calendar period that only places the event gives the event
        ("OMNI Dst during the 2015 St Patrick's day storm", "2015-03-16", "2015-03-20"),
        ("OMNI Dst, the St Patrick's day storm in March 2015", "2015-03-16", "2015-03-20"),
        ("OMNI Dst, Halloween storm (October 2003)", "2003-10-28", "2003-11-02"),
        # the event alone
        ("New Horizons data during the pluto flyby", "2015-07-13", "2015-07-16"),
    ],
)
def test_an_explicit_window_wins_over_an_event_that_labels_it(
    text: str, start: str, end: str
) -> None:
    assert _days(text) == (f"{start}T00:00", f"{end}T00:00")


def test_an_event_partly_outside_the_window_written_is_said() -> None:
    found = find_time("OMNI Dst 2003-10-30 to 2003-11-05 (Halloween storm)", NOW)
    assert found.range is not None and f"{found.range.start:%Y-%m-%d}" == "2003-10-30"
    assert found.text is not None and "partly outside" in found.text


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("ACE B first half of March 2003", "2003-03-01T00:00", "2003-03-16T00:00"),
        ("ACE B second half of March 2003", "2003-03-16T00:00", "2003-04-01T00:00"),
        ("ACE B from 2015-03-17 for 3 days", "2015-03-17T00:00", "2015-03-20T00:00"),
        ("ACE B from 17 March 2015 for three days", "2015-03-17T00:00", "2015-03-20T00:00"),
        ("ACE B 2003/10/29 06:00-2003/10/30", "2003-10-29T06:00", "2003-10-31T00:00"),
        ("ACE B 2003-10-29T06:00-2003-10-30T12:00", "2003-10-29T06:00", "2003-10-30T12:00"),
        ("ACE B 17.03.2015-19.03.2015", "2015-03-17T00:00", "2015-03-20T00:00"),
        ("ACE B 29-31.10.2003", "2003-10-29T00:00", "2003-11-01T00:00"),
        ("ACE B 29.10.-2.11.2003", "2003-10-29T00:00", "2003-11-03T00:00"),
        ("ACE B around noon on 2015-03-17", "2015-03-17T11:00", "2015-03-17T13:00"),
        ("ACE B about 2015-03-17 04:00 UT", "2015-03-17T03:00", "2015-03-17T05:00"),
        ("ACE B in mid-2010", "2010-05-01T00:00", "2010-09-01T00:00"),
        ("ACE B weeks 10-12 of 2016", "2016-03-07T00:00", "2016-03-28T00:00"),
    ],
)
def test_more_forms_physicists_write(text: str, start: str, end: str) -> None:
    assert _days(text) == (start, end)


def test_a_window_inside_the_event_is_a_part_of_it_not_a_clash() -> None:
    found = find_time("New Horizons during the Pluto flyby on 2015-07-14", NOW)
    assert found.range is not None and f"{found.range.start:%Y-%m-%d}" == "2015-07-14"
    assert found.text is not None and "outside" not in found.text
