"""A zoom follow-up written with clock times only crops the day already loaded.

The clocks come in every common form ("0300-0700 UT", "14-16 UT", "03:30 to 04:15",
"1400-1600Z"); the previous request's day is kept; a clock range outside the data
loaded is said, never silently clamped to it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.followup import is_follow_up, merge
from xhelio.agents.offline.plan import build_plan
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _zoomed(vocab: Vocabulary, before: str, text: str) -> tuple[str, str, list[str]]:
    base = parse_request(before, vocab, NOW)
    new = parse_request(text, vocab, NOW)
    assert is_follow_up(new, has_base=True)
    merged, notes = merge(base, new)
    assert merged.time_range is not None
    r = merged.time_range
    return f"{r.start:%Y-%m-%d %H:%M}", f"{r.end:%Y-%m-%d %H:%M}", notes


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("zoom into 0300-0700 UT", "2015-03-17 03:00", "2015-03-17 07:00"),
        ("just 14-16 UT", "2015-03-17 14:00", "2015-03-17 16:00"),
        ("zoom 03:30 to 04:15", "2015-03-17 03:30", "2015-03-17 04:15"),
        ("zoom to 1400-1600Z", "2015-03-17 14:00", "2015-03-17 16:00"),
        ("narrow it to 0900 to 1030 UT", "2015-03-17 09:00", "2015-03-17 10:30"),
    ],
)
def test_a_clock_zoom_keeps_the_day_loaded(
    vocab: Vocabulary, text: str, start: str, end: str
) -> None:
    got = _zoomed(vocab, "ACE |B| on 2015-03-17", text)
    assert got[:2] == (start, end)
    assert any("Zoomed to" in n for n in got[2])


def test_a_clock_zoom_outside_the_view_is_said(vocab: Vocabulary) -> None:
    start, end, notes = _zoomed(
        vocab, "ACE |B| on 2015-03-17 from 12:00 to 18:00", "zoom into 0300-0700 UT"
    )
    assert (start, end) == ("2015-03-17 03:00", "2015-03-17 07:00")
    assert any("outside the data already loaded" in n for n in notes), notes


def test_a_clock_zoom_on_several_days_says_which_day(vocab: Vocabulary) -> None:
    _, _, notes = _zoomed(vocab, "ACE |B| for 2015-03-16 to 2015-03-18", "zoom to 06:00-12:00")
    assert any("first day loaded" in n for n in notes), notes


@pytest.mark.parametrize(
    ("before", "text", "start", "end"),
    [
        ("ACE |B| for 2003-10-29 to 2003-10-31", "zoom to 30 Oct 06:00-12:00",
         "2003-10-30 06:00", "2003-10-30 12:00"),
        ("Wind |B| for 2012-03-10 to 2012-03-14", "narrow to 12 March, 0600-0900 UT",
         "2012-03-12 06:00", "2012-03-12 09:00"),
        ("ACE |B| in October 2003", "just doy 302 pls", "2003-10-29 00:00", "2003-10-30 00:00"),
        ("OMNI Dst in 2013", "doy 75-78", "2013-03-16 00:00", "2013-03-20 00:00"),
        ("Wind |B| for 2015-03-01 to 2015-03-10", "the 3rd to the 5th",
         "2015-03-03 00:00", "2015-03-06 00:00"),
        ("ACE |B| in January 2020", "from the 27th thru the 31st",
         "2020-01-27 00:00", "2020-02-01 00:00"),
    ],
)  # fmt: skip
def test_a_follow_up_dates_days_by_the_range_loaded(
    vocab: Vocabulary, before: str, text: str, start: str, end: str
) -> None:
    assert _zoomed(vocab, before, text)[:2] == (start, end)


def _fetched(vocab: Vocabulary, intent: RequestIntent) -> list[tuple[str, str]]:
    plan = build_plan(vocab, intent, NOW)
    return [
        (s.calls[0].args["dataset_id"], s.calls[0].args["parameter_id"])
        for s in plan.steps
        if s.kind == "fetch"
    ]


@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("ACE mag Bz GSM 2003-10-29", "zoom to 06:00-12:00"),
        ("ACE magnetic field 2003-10-29", "zoom to 02:00-03:00"),
    ],
)
def test_a_zoom_keeps_the_dataset_and_parameter_shown(
    vocab: Vocabulary, before: str, text: str
) -> None:
    base = parse_request(before, vocab, NOW)
    merged, _ = merge(base, parse_request(text, vocab, NOW))
    shown = _fetched(vocab, base)
    assert shown and _fetched(vocab, merged) == shown


@pytest.mark.parametrize(
    "text",
    ["go back to the whole day", "show the full interval again", "zoom out", "the original range"],
)
def test_the_whole_span_again_undoes_the_zooms(vocab: Vocabulary, text: str) -> None:
    """After zooms, "the whole day again" / "zoom out" shows the span before the zooms."""
    base = parse_request("ACE |B| for 2015-03-16 to 2015-03-18", vocab, NOW)
    for zoom in ("zoom to 2015-03-17 06:00-12:00", "zoom to 08:00-10:00"):
        new = parse_request(zoom, vocab, NOW)
        base, _ = merge(base, new)
    new = parse_request(text, vocab, NOW)
    assert is_follow_up(new, has_base=True)
    merged, notes = merge(base, new)
    assert merged.time_range is not None
    r = merged.time_range
    assert (f"{r.start:%Y-%m-%d %H:%M}", f"{r.end:%Y-%m-%d %H:%M}") == (
        "2015-03-16 00:00",
        "2015-03-19 00:00",
    )
    assert any("whole span" in n for n in notes)


def test_the_whole_day_without_a_zoom_seen_is_the_days_around_it(vocab: Vocabulary) -> None:
    base = parse_request("ACE |B| on 2015-03-17 from 12:00 to 18:00", vocab, NOW)
    merged, _ = merge(base, parse_request("go back to the whole day", vocab, NOW))
    assert merged.time_range is not None
    assert f"{merged.time_range.start:%d %H}-{merged.time_range.end:%d %H}" == "17 00-18 00"
