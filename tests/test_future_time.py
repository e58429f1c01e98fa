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
