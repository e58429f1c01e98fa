"""A day range said after a month narrows the month ("sept 2017 flares, 6-10 sep")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import find_time

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _window(text: str) -> tuple[str, str]:
    found = find_time(text, NOW)
    assert found.range is not None, (text, found.error)
    return f"{found.range.start:%Y-%m-%d}", f"{found.range.end:%Y-%m-%d}"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("GOES 15 during the sept 2017 flares, 6-10 sep", "2017-09-06", "2017-09-11"),
        ("OMNI SYM-H march 2015, days 17-18", "2015-03-17", "2015-03-19"),
        ("Wind density in june 2015, 22-23 june", "2015-06-22", "2015-06-24"),
        ("ACE B in sept 2017, the 6th to the 10th", "2017-09-06", "2017-09-11"),
    ],
)
def test_later_days_narrow_the_month(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("OMNI march 2015, 6-10 april", "2015-03-01", "2015-04-01"),  # another month
        ("OMNI 2015 doy 76", "2015-03-17", "2015-03-18"),  # days of the year
        ("OMNI 2015, days 17-18", "2015-01-17", "2015-01-19"),  # no month: days of the year
        ("OMNI march 2015 with 5-min averages", "2015-03-01", "2015-04-01"),
    ],
)
def test_other_numbers_leave_the_window(text: str, start: str, end: str) -> None:
    assert _window(text) == (start, end)


def test_the_days_are_spans_of_the_time() -> None:
    text = "goes 15 during the sept 2017 flares, 6-10 sep"
    found = find_time(text, NOW)
    assert "6-10 sep" in "".join(text[a:b] for a, b in found.spans)
