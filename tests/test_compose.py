"""The answer composer: inclusive readable ranges, each line once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.api.compose import compose_answer, readable_range


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("start", "stop", "expected"),
    [
        ("2000-07-14", "2000-07-18", "2000-07-14 to 2000-07-17"),
        ("2024-01-15", "2024-01-16", "2024-01-15"),
        ("2024-01-15T06:00", "2024-01-15T12:30", "2024-01-15 06:00 to 12:30 UTC"),
        ("2024-01-15T06:00", "2024-01-17T00:00", "2024-01-15 06:00 to 2024-01-17 00:00 UTC"),
        ("2024-01-15T06:00:05", "2024-01-15T06:00:35", "2024-01-15 06:00:05 to 06:00:35 UTC"),
    ],
)
def test_ranges_read_inclusive(start: str, stop: str, expected: str):
    assert readable_range(_t(start), _t(stop)) == expected


def test_raw_end_exclusive_ranges_in_an_answer_are_rewritten():
    text = "Fetched Dst from 2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z (96 points)."
    assert compose_answer(text) == "Fetched Dst from 2000-07-14 to 2000-07-17 (96 points)."
    hours = "Window 2003-10-29T06:00:00+00:00 \u2013 2003-10-29T18:00:00+00:00."
    assert compose_answer(hours) == "Window 2003-10-29 06:00 to 18:00 UTC."


def test_dates_a_person_wrote_and_reversed_ranges_are_left_alone():
    for text in ("From 2000-07-14 to 2000-07-17.", "2024-02-01T00:00Z to 2024-01-01T00:00Z"):
        assert compose_answer(text) == text


def test_a_repeated_error_line_shows_once_and_short_lines_may_repeat():
    error = "The HAPI server answered 1406: unknown dataset."
    text = f"{error}\n- a\n- a\n{error}\nDone."
    assert compose_answer(text) == f"{error}\n- a\n- a\nDone."
