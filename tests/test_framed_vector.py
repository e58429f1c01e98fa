"""A vector quantity named with a frame is asked as its components.

A bare "solar wind velocity" is its speed (the velocity's default form is the magnitude),
but "ion velocity GSE" or "VGSE" name a frame, which only the components have: those are
fetched and drawn, not a computed |V|. "Speed", "|V|" and "magnitude" keep the magnitude.
"""

from __future__ import annotations

import pytest

from conftest import OfflineSession
from xhelio.language.parse import Vocabulary, parse_request


@pytest.mark.parametrize(
    ("text", "component"),
    [
        ("Geotail LEP ion velocity GSE 1995-11-10", "vector"),
        ("THEMIS-C ion bulk velocity in GSM, 2008-02-26", "vector"),
        ("ACE VGSE on 2003-10-29", "vector"),
        ("Wind proton velocity 2003-10-29", None),
        ("ACE solar wind speed GSE 2003-10-29", None),
        ("ACE |V| GSE 2003-10-29", "magnitude"),
        ("Cluster C1 ion velocity magnitude GSE, 2003-02-01", "magnitude"),
    ],
)
def test_the_form_asked(vocab: Vocabulary, text: str, component: str | None) -> None:
    wishes = [w for w in parse_request(text, vocab).quantities if w.quantity == "velocity"]
    assert len(wishes) == 1, wishes
    assert wishes[0].component == component, wishes


def test_a_framed_velocity_is_drawn_as_components(session: OfflineSession) -> None:
    turn = session.ask("Geotail LEP ion velocity GSE 1995-11-10")
    assert [d.parameter for d in turn.data if d.dataset] == ["VGSE"], turn.answer
    assert "|V|" not in turn.answer and "velocity (ion, GSE)" in turn.answer, turn.answer


@pytest.mark.parametrize(
    ("text", "component"),
    [
        ("Solar Orbiter MAG normal mode RTN 2021-10-09 06:00 to 12:00", None),
        ("SolO MAG normal-rate B RTN, 2021-10-09", None),
        ("Solar Orbiter MAG normal component, 2021-10-09", "n"),
        ("PSP B normal (RTN) 2020-01-29", "n"),
    ],
)
def test_normal_mode_is_a_product_not_the_normal_component(
    vocab: Vocabulary, text: str, component: str | None
) -> None:
    wishes = [w for w in parse_request(text, vocab).quantities if w.quantity == "magnetic_field"]
    assert len(wishes) == 1 and wishes[0].component == component, wishes
