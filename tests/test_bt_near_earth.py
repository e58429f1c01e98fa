"""What a product already is decides the plan: "Bt" near Earth is the total field |B|."""

from __future__ import annotations

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary


@pytest.mark.parametrize(
    ("text", "parameters"),
    [
        ("Wind Bt 2019-06-01", {"BF1"}),
        ("DSCOVR Bt 2020-01-01", {"B1F1"}),
        ("OMNI hourly Bt 2015-03-17", {"F", "ABS_B"}),
        ("ACE Bt and Bz 2015-03-17", {"Magnitude"}),
    ],
)
def test_bt_near_earth_is_the_instruments_own_total_field(
    vocab: Vocabulary, text: str, parameters: set[str]
) -> None:
    plan = plan_of(vocab, text)
    assert fetched(plan)[0][1] in parameters
    assert any("total field |B|" in n for n in plan.notes)


def test_bt_away_from_earth_keeps_the_rtn_t_component(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "PSP Bt 2021-04-29")
    assert not any("total field |B|" in n for n in plan.notes)
