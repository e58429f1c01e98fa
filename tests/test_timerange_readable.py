"""Ranges and sample spans as people write them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.timerange import TimeRange, readable_iso_span, readable_range, readable_span


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("start", "stop", "expected"),
    [
        ("2000-07-14", "2000-07-18", "2000-07-14 to 2000-07-17"),
        ("2024-01-15", "2024-01-16", "2024-01-15"),
        ("2023-12-31", "2024-01-02", "2023-12-31 to 2024-01-01"),
        ("2024-01-15T06:00", "2024-01-15T12:30", "2024-01-15 06:00 to 12:30 UTC"),
        ("2024-01-15T06:00", "2024-01-17T00:00", "2024-01-15 06:00 to 2024-01-17 00:00 UTC"),
        ("2024-01-15T06:00:05", "2024-01-15T06:00:35", "2024-01-15 06:00:05 to 06:00:35 UTC"),
    ],
)
def test_end_exclusive_ranges_read_inclusive(start: str, stop: str, expected: str) -> None:
    assert readable_range(_t(start), _t(stop)) == expected
    assert TimeRange(_t(start), _t(stop)).readable() == expected


def test_sample_spans_keep_their_last_sample() -> None:
    assert readable_span(_t("2024-01-01"), _t("2024-01-05")) == "2024-01-01 to 2024-01-05"
    assert (
        readable_span(_t("2024-01-15T00:00"), _t("2024-01-15T23:59"))
        == "2024-01-15 00:00 to 23:59 UTC"
    )
    assert readable_span(_t("2024-01-15T06:00"), _t("2024-01-15T06:00")) == "2024-01-15 06:00 UTC"


def test_iso_texts_of_tool_results() -> None:
    assert (
        readable_iso_span("2024-01-31T23:00:00+00:00", "2024-02-01T01:00:00Z")
        == "2024-01-31 23:00 to 2024-02-01 01:00 UTC"
    )
    assert readable_iso_span("soon", None) == "soon to None"
