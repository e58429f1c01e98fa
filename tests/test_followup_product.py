"""A follow-up that only moves the time keeps the product the last request named.

"SOHO ERNE HED protons" names a product, not a quantity; "now for the next day" or
"extend it through 16 July" say nothing of what to show, so the product reading of the
earlier request still decides it. A follow-up naming a product of its own uses that.
"""

from __future__ import annotations

import pytest

from conftest import OfflineSession


@pytest.mark.parametrize(
    ("first", "then", "dataset", "window"),
    [
        (
            "SOHO ERNE HED protons 2000-07-14",
            "now for 2000-07-15",
            "SOHO_ERNE-HED",
            ("2000-07-15", "2000-07-15"),
        ),
        (
            "Wind SWE alphas 2005-01-01",
            "extend it through 4 Jan",
            "WI_H1_SWE",
            ("2005-01-01", "2005-01-04"),
        ),
    ],
)
def test_a_time_only_follow_up_keeps_the_product(
    session: OfflineSession, first: str, then: str, dataset: str, window: tuple[str, str]
) -> None:
    before = session.ask(first)
    shown = [d.dataset for d in before.data if d.dataset]
    assert shown, before.answer
    turn = session.ask(then)
    got = [d for d in turn.data if d.dataset]
    assert got and all(d.dataset in shown for d in got), (got, turn.answer)
    assert all(d.dataset and d.dataset.startswith(dataset) for d in got), got
    start, stop = window
    assert got[0].start and got[0].start.startswith(start), got
    assert got[0].stop and got[0].stop.startswith(stop), got
