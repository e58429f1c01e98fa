"""A channel, telescope, species or product named inside a dataset picks that parameter.

The catalog's own metadata decides (issue 20): "DE1-DE4" are ACE EPAM's channel
parameters, not the Dynamics Explorer spacecraft; "3He" is ULEIS's He3 channels, not
its hydrogen ones; "E dot B=0" is THEMIS EFI's electric field, not a magnetic field
"B"; a species the instrument does not measure ("HPCA N+") is asked about, never
served by another species. Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.quantity_words import SPECIES_WORDS, quantity_wishes


def test_a_channel_range_spelling_a_mission_is_the_channels(vocab: Vocabulary) -> None:
    intent = parse_request("ace epam deflected electrons DE1-DE4 on 28 Oct 2003", vocab)
    assert [m.mission_id for m in intent.missions] == ["ace"]
    plan = plan_of(vocab, "ace epam deflected electrons DE1-DE4 on 28 Oct 2003")
    got = fetched(plan)
    assert [p for _, p in got] == ["DE1", "DE2", "DE3", "DE4"], got
    assert all(re.fullmatch(r"AC_H\d_EPM", d) for d, _ in got), got


def test_e_dot_b_zero_is_an_electric_field() -> None:
    wishes = quantity_wishes("THEMIS-A EFI spin-fit E dot B=0 in GSM")
    assert [w.quantity for w in wishes] == ["electric_field"], wishes


def test_e_dot_b_zero_picks_the_spin_fit_field_in_the_frame(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "THEMIS-A EFI spin-fit E dot B=0 in GSM for 26 Feb 2008"))
    assert got == [("THA_L2_EFI", "tha_efs_dot0_gsm")], got


@pytest.mark.parametrize(
    ("text", "species"),
    [("ULEIS 3He flux", "helium3"), ("He-3 ions", "helium3"), ("HPCA N+ density", "nitrogen")],
)
def test_isotopes_and_charge_states_are_species(text: str, species: str) -> None:
    found = SPECIES_WORDS.search(text)
    assert found is not None and found.lastgroup == species


def test_an_isotope_and_energy_pick_its_channel(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "ACE ULEIS 3He at 0.16-0.32 MeV/n, 15 April 2001"))
    assert got == [("AC_H2_ULE", "He3_S2")], got


def test_a_species_the_instrument_does_not_measure_is_asked(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "MMS1 HPCA N+ number density 2017-07-11")
    assert not fetched(plan), fetched(plan)
    assert plan.missing
