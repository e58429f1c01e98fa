"""Instruments and products named by the catalog's own words (issue 20).

The vocabulary lists the instruments people name most; the rest are named by words of
the catalog's own metadata, and must select the dataset the catalog says is that
instrument:

- a support dataset by its instrument kind (MMS ASPOC is "Engineering") named by its own
  id word is the data asked for;
- a sub-sensor the parameter descriptions name (CAMMICE "MICS") covers the product word;
- two instruments of one mission named by id words ("ERNE LED ... COSTEP EPHIN") are
  each their own product, with the species' main data, at a cadence the day can show;
- a CDAWeb plot view ("---> Spectrograms by energy at sample pitch angles") is its
  primary's data, never drawn in its place;
- the strahl is a detector of its own (Wind SWE STRAHL0), and its main data is the
  distribution, not the angle table beside it;
- a plain word a dataset's title says ("solar wind": Geotail "CPI/SWA ... Solar Wind
  Analyzer") ranks that product above a sibling analyser's.

Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.model import ParameterInfo
from xhelio.language.parse import Vocabulary
from xhelio.language.products import is_view


def test_a_support_dataset_named_by_its_id_word_is_fetched(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "MMS2 ASPOC ion emission current, 2017-03-01"))
    assert got and got[0][0] == "MMS2_ASPOC_SRVY_L2", got
    assert re.fullmatch(r"mms2_(aspoc|asp1|asp2)_ionc", got[0][1]), got


def test_a_sub_sensor_said_by_parameter_descriptions_names_the_product(
    vocab: Vocabulary,
) -> None:
    got = fetched(plan_of(vocab, "Polar CAMMICE MICS He+ rate, 1997-11-02"))
    assert got and re.fullmatch(r"PO_(K0|H0)_CAM", got[0][0]), got
    assert got[0][1].lower() == "he_plus", got


def test_two_instruments_named_by_id_words_are_each_their_own_product(
    vocab: Vocabulary,
) -> None:
    got = fetched(plan_of(vocab, "SOHO ERNE LED protons vs COSTEP EPHIN protons, 2012-03-07"))
    assert [d for d, _ in got][:1] == ["SOHO_ERNE-LED_L2-1MIN"], got
    assert got[0][1] == "PL", got
    assert len(got) == 2 and got[1][0].startswith("SOHO_COSTEP-EPHIN_L3I-"), got
    assert got[1][1] == "P_int" and not got[1][0].endswith("1DAY"), got


def _param(name: str, description: str, size: tuple[int, ...] = (17, 12)) -> ParameterInfo:
    return ParameterInfo(name=name, type="double", units="", description=description, size=size)


def test_a_plot_view_is_its_primary_data() -> None:
    primary = _param("FEDU_0to180", "FEDU_0to180 - Unidirectional Differential Electron Flux")
    view = _param("FEDU_0to180_byE_atA", "---> Spectrograms at sample pitch angles")
    alone = _param("P_VELS", "---> Proton velocity vector (GSE)", (3,))
    spread = _param("FEDU_0to180_sd", "---> FEDU_0to180 standard deviation")
    params = [primary, view, alone, spread]
    assert is_view(view, params)
    assert not any(is_view(p, params) for p in (primary, alone, spread))


def test_pitch_angle_resolved_flux_is_the_primary_not_its_plot_view(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "RBSP-B REPT pitch angle resolved electron flux, 2014-06-01"))
    assert got and got[0][0] == "RBSPB_REL03_ECT-REPT-SCI-L3", got
    assert re.fullmatch(r"FEDU(_0to180)?", got[0][1]), got


def test_the_strahl_is_its_own_detector(vocab: Vocabulary) -> None:
    got = fetched(plan_of(vocab, "Wind strahl electrons, 1998-05-01"))
    assert got == [("WI_STRAHL0_SWE", "f_strahl")], got


@pytest.mark.parametrize(
    "text",
    [
        "Geotail CPI solar wind ion temperature, 1996-05-01",
        "geotail cpi solar wind ion density 1997-02-10",
    ],
)
def test_solar_wind_beside_cpi_is_its_solar_wind_analyser(vocab: Vocabulary, text: str) -> None:
    got = fetched(plan_of(vocab, text))
    assert got and re.fullmatch(r"GE_(K0|H0|SW)_CPI", got[0][0]), got


def test_a_species_in_a_title_names_no_product(vocab: Vocabulary) -> None:
    # OMNI's 5-minute title adds "Energetic Proton Fluxes": "proton density" is still the
    # 1-minute plasma's, not the product whose title says "proton".
    got = fetched(plan_of(vocab, "OMNI proton density and dynamic pressure for 2017-09-08"))
    assert any(re.fullmatch(r"OMNI_HRO2?_1MIN", d) and p == "proton_density" for d, p in got), got
