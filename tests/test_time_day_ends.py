"""Clock ranges that end at the end of their day, written 24 ("06-24 UT", "0600-2400").

24 is the midnight that closes the day named; the range must narrow the day, never
fall back to the whole day with the clock words left over.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _window(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    return f"{found.range.start:%Y-%m-%d %H:%M}", f"{found.range.end:%Y-%m-%d %H:%M}"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("OMNI Bz, 17 march 2015 main phase 06-24 UT", "2015-03-17 06:00", "2015-03-18 00:00"),
        ("Wind B on 2012-07-14 from 0000 to 2400", "2012-07-14 00:00", "2012-07-15 00:00"),
        ("ACE B 2003-10-29 from 12 to 24 UT", "2003-10-29 12:00", "2003-10-30 00:00"),
        ("OMNI 2015-03-17 06:00Z-24:00Z", "2015-03-17 06:00", "2015-03-18 00:00"),
        ("OMNI 17 march 2015 18:30-24:00", "2015-03-17 18:30", "2015-03-18 00:00"),
    ],
)
def test_a_clock_range_ending_at_24_closes_the_day(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


def test_a_day_of_month_24_is_no_clock() -> None:
    assert _window("OMNI 2015 march 20-24") == ("2015-03-20 00:00", "2015-03-25 00:00")


def test_the_clock_words_are_spans_of_the_time() -> None:
    text = "omni bz, 17 march 2015 06-24 UT"
    found = find_time(text, NOW)
    used = "".join(text[a:b] for a, b in found.spans)
    assert "06-24" in used


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("OMNI Bz 2015-03-17 until 14:00", "2015-03-17 14:00"),
        ("OMNI Bz 2015-03-17 until 1400 UT", "2015-03-17 14:00"),
    ],
)
def test_a_day_until_a_clock_time_ends_there(text: str, end: str) -> None:
    assert _window(text) == ("2015-03-17 00:00", end)
