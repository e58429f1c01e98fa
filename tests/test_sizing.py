"""Request size estimates and the pieces a large request is cut into."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from xhelio.sources.sizing import cadence_seconds, estimate_request, plan_pieces
from xhelio.timerange import TimeRange

YEARS_20 = TimeRange(datetime(1998, 1, 1, tzinfo=UTC), datetime(2018, 1, 1, tzinfo=UTC))


def test_estimate_is_cadence_times_span_times_columns() -> None:
    estimate = estimate_request("PT1S", YEARS_20, 3)
    assert estimate is not None
    assert estimate.rows == 631_152_000
    assert estimate.bytes == estimate.rows * 8 * 4  # time + 3 values
    assert estimate_request(None, YEARS_20, 1) is None
    assert cadence_seconds("PT0.0625S") == 0.0625 and cadence_seconds("garbage") is None


def test_pieces_cover_the_range_exactly_fit_the_limit_and_align() -> None:
    estimate = estimate_request("PT1S", YEARS_20, 1)
    limit = 64 * 2**20
    pieces = plan_pieces(YEARS_20, estimate, limit, timedelta(hours=24))
    assert pieces[0].start == YEARS_20.start and pieces[-1].end == YEARS_20.end
    assert all(a.end == b.start for a, b in itertools.pairwise(pieces))
    for piece in pieces:
        size = estimate_request("PT1S", piece, 1)
        assert size is not None and size.bytes <= limit
        assert piece.start.hour == 0 and piece.end.hour == 0  # fragment (day) boundaries
    assert len(pieces) > 100
    small = TimeRange(YEARS_20.start, YEARS_20.start + timedelta(days=1))
    assert plan_pieces(small, estimate_request("PT1S", small, 1), limit, timedelta(days=1)) == [
        small
    ]
