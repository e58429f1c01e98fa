"""Two instruments of one spacecraft compared on one quantity give one series each.

"Wind 3DP vs SWE proton density" asks for the density as each instrument measured it;
serving only one of them (with a note that the other "has no parameter read as what was
asked") drops half of the request. Instruments that share datasets ("Cluster CIS HIA")
are one source, and a request without a comparison keeps its single best series.
"""

from __future__ import annotations

import re

import pytest

from conftest import OfflineSession
from xhelio.agents.turn import TurnResult


def _datasets(turn: TurnResult) -> list[str]:
    return [d.dataset for d in turn.data if d.dataset]


@pytest.mark.parametrize(
    ("text", "first", "second"),
    [
        ("Wind 3DP vs SWE proton density 2000-07-14", r"^WI_\w+_3DP$", r"^WI_\w+_SWE$"),
        ("compare ACE SWEPAM and SWICS proton speed, 2003-10-29", r"^AC_\w+_SWE", r"^AC_\w+_SW"),
    ],
)
def test_each_compared_instrument_gives_its_own_series(
    session: OfflineSession, text: str, first: str, second: str
) -> None:
    turn = session.ask(text)
    got = _datasets(turn)
    assert len(got) == 2, (got, turn.answer)
    assert any(re.match(first, d) for d in got) and any(re.match(second, d) for d in got), got
    assert len(set(got)) == 2, got
    assert "has no parameter read as" not in turn.answer, turn.answer


def test_without_a_comparison_one_series_is_kept(session: OfflineSession) -> None:
    turn = session.ask("Wind SWE proton density 2000-07-14")
    got = _datasets(turn)
    assert len(got) == 1 and re.match(r"^WI_\w+_SWE$", got[0]), got
