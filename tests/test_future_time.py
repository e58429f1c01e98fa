"""A time range after now is asked about, never fetched; one running past now is said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "ACE magnetic field on 2027-03-01",
        "Wind proton density in March 2027",
        "OMNI Dst from 2026-11-23 to 2026-11-25",
        "THEMIS-A FGM Bz 2031-01-05 10:00-11:00",
    ],
)
def test_a_range_after_now_is_asked_about(vocab: Vocabulary, text: str) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    assert not plan.steps
    assert any("after now" in m and "2026-11-22" in m for m in plan.missing), plan.missing


def test_a_range_running_past_now_is_fetched_and_said(vocab: Vocabulary) -> None:
    text = "OMNI Dst from 2026-11-20 to 2026-12-05"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    assert any(s.kind == "fetch" for s in plan.steps)
    assert any("runs past now" in n for n in plan.notes), plan.notes


def test_a_past_range_has_no_such_note(vocab: Vocabulary) -> None:
    plan = build_plan(vocab, parse_request("ACE Bz 2026-11-20", vocab, NOW), NOW)
    assert plan.steps and not any("now" in n for n in plan.notes)


@pytest.mark.parametrize(
    "text",
    [
        "ACE magnetic field tomorrow",
        "Wind proton density next week",
        "OMNI Dst next Monday",
        "ACE Bz for the next 6 hours",
        "Wind magnetic field over the coming 3 days",
    ],
)
def test_future_words_are_asked_about_never_the_last_7_days(vocab: Vocabulary, text: str) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    assert not plan.steps
    assert any("after now" in m for m in plan.missing), plan.missing


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ACE magnetic field last Tuesday", "last Tuesday"),
        ("Wind magnetic field this weekend", "this weekend"),
        ("OMNI Dst until the end of the month", "end of the month"),
        ("ACE magnetic field the next morning", "next morning"),
    ],
)
def test_day_words_without_a_date_are_asked_about(vocab: Vocabulary, text: str, words: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert intent.time_range is None
    assert intent.time_error is not None and words in intent.time_error


def test_a_part_of_the_day_is_read_as_its_hours_and_said(vocab: Vocabulary) -> None:
    # "evening" was once left unread; it is now read as 18:00 to midnight, said in the
    # answer (test_time_phrases checks the wording).
    intent = parse_request("ACE magnetic field in the evening of 2015-03-17", vocab, NOW)
    assert intent.time_range is not None
    assert (intent.time_range.start.hour, intent.time_range.duration.total_seconds()) == (
        18,
        6 * 3600,
    )
