"""The answer composer: each line once."""

from __future__ import annotations

from xhelio.api.compose import compose_answer


def test_times_are_left_to_their_writers() -> None:
    text = "Fetched Dst from 2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z (96 points)."
    assert compose_answer(text) == text


def test_a_repeated_error_line_shows_once_and_short_lines_may_repeat():
    error = "The HAPI server answered 1406: unknown dataset."
    text = f"{error}\n- a\n- a\n{error}\nDone."
    assert compose_answer(text) == f"{error}\n- a\n- a\nDone."
