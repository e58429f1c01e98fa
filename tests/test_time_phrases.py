"""Time phrases both modes read with one grammar.

`agents.offline.when.find_time` is used by the offline parser and by the planner's
`resolve_plan_time`.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.when import find_time
from xhelio.agents.planning.routing import resolve_plan_time

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
    ],
)
def test_time_phrases(text: str, start: str, end: str) -> None:
    found = find_time(f"ACE magnetic field {text}", NOW)
    assert found.error is None and found.range is not None, found
    assert found.range.start == datetime.fromisoformat(start).replace(tzinfo=UTC)
    assert found.range.end == datetime.fromisoformat(end).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["on 2015-02-30", "on 2019-13-01", "at 25:00 on 2015-03-17", "2015-04-31"]
)
def test_impossible_dates_and_times_are_errors(text: str) -> None:
    found = find_time(f"ACE magnetic field {text}", NOW)
    assert found.range is None and found.error, found


def test_years_are_not_clock_times() -> None:
    found = find_time("Voyager 1 magnetic field 1979 to 1980", NOW)
    assert found.range is not None and found.range.start.year == 1979
    assert found.range.end.year == 1981


def test_planner_reads_events_like_the_offline_parser() -> None:
    resolved = resolve_plan_time("Compare ACE and Wind during the Halloween storm of 2003", NOW)
    assert resolved is not None
    assert str(resolved[0]) == "2003-10-28T00:00:00Z to 2003-11-02T00:00:00Z"
