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
from xhelio.catalog.model import ParameterInfo
from xhelio.language.grounding import continued
from xhelio.language.named_parts import named_parts
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.quantity_words import SPECIES_WORDS, quantity_wishes
from xhelio.language.resolve import notation_said


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


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("TED electron energy flux (0 deg telescope)", "0 degree telescope"),
        ("MEPED protons from the 90-degree telescope", "90 degree telescope"),
        ("MAGED electrons in telescope #3", "telescope 3"),
    ],
)
def test_a_numbered_part_is_read_with_its_catalog_spellings(text: str, says: str) -> None:
    (part,) = named_parts(text)
    assert says in part.spellings


def test_no_numbered_part_in_a_pitch_angle_or_a_range() -> None:
    assert named_parts("electrons at 90 deg pitch angle, detectors 1-4") == []


def test_a_named_telescope_picks_its_parameter(vocab: Vocabulary) -> None:
    text = "NOAA-19 vs NOAA-18 TED electron energy flux (0 deg telescope), 17 Mar 2015"
    got = fetched(plan_of(vocab, text))
    assert len(got) == 2, got
    assert all(re.fullmatch(r"ted_ele_tel0_(low|hi)_eflux", p) for _, p in got), got


def test_a_formula_the_catalog_describes_picks_that_parameter(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "Arase PWE HFA spectrogram of Eu^2+Ev^2, 8 Sep 2017"))
    assert [p for _, p in got] == ["spectra_esum"], got


def test_a_continued_description_replaces_the_part_it_continues() -> None:
    flux = "Proton integral energy flux, TED, 0 degree telescope, low energy (50-1000 eV)"
    params = [
        ParameterInfo("tel0", "double", "mW/m2-str", description=flux),
        ParameterInfo("tel30", "double", "mW/m2-str", description="---> 30 degree telescope"),
        ParameterInfo("err0", "double", "", description="---> % error, 0 degree telescope"),
    ]
    written = [p.description for p in continued(params)]
    assert written[1] == flux.replace("0 degree", "30 degree")
    assert written[2] == f"{flux}, % error"


def test_a_named_telescope_of_a_continued_description_is_found(vocab: Vocabulary) -> None:
    text = "NOAA-18 TED proton energy flux from the 30 degree telescope, 2015-03-17"
    got = fetched(plan_of(vocab, text))
    assert [p for _, p in got] and all(
        re.fullmatch(r"ted_pro_tel30_(low|hi)_eflux", p) for _, p in got
    ), got


def test_notation_typed_as_the_catalog_writes_it() -> None:
    efs = ParameterInfo("e", "double", "mV/m", description="EFS_DOT0 (spin-fit, using E dot B=0)")
    assert notation_said("E dot B = 0", efs)
    assert not notation_said("electric field", efs)


def test_e_dot_b_zero_in_a_frame_of_the_spacecraft(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "THEMIS-D EFI E dot B=0 in DSL, 2009-03-01"))
    assert got == [("THD_L2_EFI", "thd_efs_dot0_dsl")], got


def test_a_part_named_in_a_clause_of_its_own_is_the_quantity_s(vocab: Vocabulary) -> None:
    text = "NOAA-19 TED electron energy flux, 0 degree telescope, 2015-03-17"
    got = fetched(plan_of(vocab, text))
    assert [p for _, p in got] and all(
        re.fullmatch(r"ted_ele_tel0_(low|hi)_eflux", p) for _, p in got
    ), got


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("THEMIS-A EFI spin-fit E in GSM", ["electric_field"]),
        ("MMS1 E and B", ["electric_field", "magnetic_field"]),
        ("Cluster C3 E field", ["electric_field"]),
        ("THEMIS probe E density", ["density"]),
        # a letter in a list of probes names a probe, never a field or a velocity
        ("ion density at tha and the (probes A and E)", ["density"]),
        ("THEMIS probes C, D and E ion density", ["density"]),
        ("Van Allen Probes spacecraft A & B density", ["density"]),
    ],
)
def test_a_bare_e_is_the_electric_field(text: str, wanted: list[str]) -> None:
    assert [w.quantity for w in quantity_wishes(text)] == wanted
