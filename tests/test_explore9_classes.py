"""Classes found by fresh requests over rarely covered missions (issue 20).

- A species cue must not hit inside an instrument acronym that names both species
  (POES "MEPED": Medium Energy Proton and Electron Detector), or "electron flux" is served
  by a proton channel.
- "plasma wave(s)" names waves, not the plasma bundle (speed, density, temperature).
- A mission the catalog lacks (`absent_missions.toml`: SuperMAG, Swarm) is said wherever
  it is named, even when no quantity is understood.
- A cadence word ("hourly", "daily") says its own cadence, times a count written onto it
  ("3-hourly"); a product's cadence elsewhere in the request ("OMNI 1-min") is not it.

Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.vocabulary import load_vocabulary
from xhelio.vocabulary.absent import absent_missions_named


def test_an_acronym_naming_both_species_is_no_electron_cue() -> None:
    electron = load_vocabulary().species_cue("electron")
    assert electron is not None
    assert not electron.search("mep_pro_flux_p6 Proton integral flux, MEPED, >6174 keV")
    assert electron.search("ERG_MEPE_L2")  # ERG's MEP-e is the electron instrument


def test_electron_flux_of_poes_is_an_electron_parameter(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "POES NOAA-19 electron flux 2015-03-17")
    (got,) = fetched(plan)
    assert got[0] == "NOAA19_POES-SEM2_FLUXES-2SEC" and "_ele_" in got[1], got


@pytest.mark.parametrize(
    "text", ["Voyager 2 plasma wave spectrum, January 1986", "Voyager 2 plasma waves, January 1986"]
)
def test_plasma_waves_are_not_the_plasma_bundle(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab)
    assert {q.quantity for q in intent.quantities} <= {"spectrogram"}, intent.quantities
    plan = plan_of(vocab, text)
    assert all(re.search(r"^VG2_PWS", d) for d, _ in fetched(plan)), fetched(plan)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("OMNI 1-min Bz GSM 2015-03-17, hourly averages", 3600),
        ("hourly averages of 5-min OMNI flow speed on 2015-03-17", 3600),
        ("3-hourly averages of OMNI Bz 2015-03-17", 3 * 3600),
        ("OMNI Bz 2015-03-17 6 hourly means", 6 * 3600),
        ("OMNI Bz 2015-03-17 hourly means", 3600),
        ("OMNI Bz for March 17 hourly means, 2015", 3600),
        ("daily minimum Dst for March 2015", 86400),
    ],
)
def test_a_cadence_word_says_its_own_cadence(vocab: Vocabulary, text: str, seconds: int) -> None:
    assert parse_request(text, vocab).cadence_s == seconds


@pytest.mark.parametrize(
    ("text", "nearest"),
    [
        ("SuperMAG SML 2015-03-17", "OMNI"),
        ("Swarm SML 2015-03-17", "DMSP"),
        ("swarm b field NEC 2016-05-08", "DMSP"),  # names are typed in lower case too
        ("sdo eve irradiance 2012-03-07", "SOHO"),
    ],
)
def test_an_absent_mission_is_said_even_with_no_quantity_understood(
    vocab: Vocabulary, text: str, nearest: str
) -> None:
    plan = plan_of(vocab, text)
    assert fetched(plan) == []
    said = " ".join((*plan.missing, *plan.notes))
    assert "no mission by that name" in said and nearest in said, said


def test_a_mission_the_planetary_source_answers_is_not_absent() -> None:
    assert absent_missions_named("Juno MAG and SuperMAG SML, 2017-03-27") == ("SuperMAG",)


def test_a_name_kept_as_written_is_not_read_in_lower_case() -> None:
    # "hope probe" in lower case is RBSP HOPE on a Van Allen Probe, not the EMM orbiter.
    assert absent_missions_named("rbsp hope probe a proton flux 2015-03-17") == ()
    assert absent_missions_named("the Hope probe at Mars") == ("Hope probe",)


@pytest.mark.parametrize(
    "text", ["OMNI Bz 17/18 March 2015", "OMNI Bz March 17/18, 2015", "OMNI Bz 17-18 March 2015"]
)
def test_two_days_written_with_a_slash_are_both_days(vocab: Vocabulary, text: str) -> None:
    found = parse_request(text, vocab).time_range
    assert found is not None
    assert (found.start.day, found.end.day, found.start.month) == (17, 19, 3), found


def test_fpi_is_the_mms_instrument_and_f_pi_the_ion_plasma_frequency() -> None:
    from xhelio.vocabulary import load_vocabulary

    def named(text: str) -> list[str]:
        return [d.key for d in load_vocabulary().derived if d.words.search(text)]

    assert named("now the fpi electron density too") == []
    assert named("f_pi from the HPCA density") == ["ion_plasma_frequency"]
    assert named("fpp and fpe") == ["electron_plasma_frequency", "ion_plasma_frequency"]
