"""Qualifier words: which parameter of a product the request names, grounded in metadata.

A word beside the mission and the quantity ("Bw", "burst", "mid") picks among the
parameters of one dataset that say it and those that do not; a statistic (peaks,
maximum, minimum) or a direction of the quantity is not the quantity; a word that tells
the candidates apart but is not said by the one drawn is stated.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.measured import auxiliary_kind
from xhelio.language.parse import Vocabulary
from xhelio.language.qualifiers import (
    discriminating,
    of_parameters,
    qualifier_fit,
    request_words,
)


def _p(name: str, description: str = "") -> ParameterInfo:
    return ParameterInfo(name, units="", description=description)


def test_a_component_word_picks_the_diagonal_element_that_says_it() -> None:
    params = [_p("BuBu", "BuBu amplitude"), _p("BvBv", "BvBv amplitude"), _p("BwBw")]
    assert qualifier_fit(request_words("Bw"), params) == {"BuBu": 0, "BvBv": 0, "BwBw": 1}


def test_a_mode_word_in_the_description_picks_that_mode() -> None:
    params = [
        _p("tha_peif_density", "ESA Full (High Angular Resolution) Mode, Ion Density"),
        _p("tha_peib_density", "ESA Burst (High Time and Angular Resolution) Mode, Ion Density"),
    ]
    fit = qualifier_fit(request_words("ESA burst"), params)
    assert fit == {"tha_peif_density": 0, "tha_peib_density": 1}


def test_a_word_every_candidate_says_decides_nothing() -> None:
    params = [_p("den", "electron density"), _p("dens2", "electron density (fit)")]
    assert discriminating(request_words("electron density"), params) == []


def test_an_energy_range_word_reaches_its_synonyms() -> None:
    params = [_p("lowen_flux"), _p("midanergy_flux"), _p("highen_flux")]
    fit = qualifier_fit(request_words("mid energies"), params)
    assert fit == {"lowen_flux": 0, "midanergy_flux": 1, "highen_flux": 0}


def test_a_word_of_the_dataset_id_named_the_product_not_a_parameter() -> None:
    info = DatasetInfo("GOES11_K0_MAG", "GOES-11 Magnetometer")
    kept = of_parameters(request_words("mag GSM burst"), info)
    assert [w.typed for w in kept] == ["GSM", "burst"]


def test_a_cadence_word_is_no_qualifier() -> None:
    params = [_p("B_comp", "magnetic field vector"), _p("B2_avg", "average of field square")]
    assert discriminating(request_words("1 min averages"), params) == []


@pytest.mark.parametrize(
    ("name", "description", "kind"),
    [
        ("psp_fld_l2_rfs_lfr_auto_peaks_ch0_V1", "LFR Auto Peaks, Ch0: V1", "statistic"),
        ("Minimum_voltage_RAD2", "Daily receiver minimum voltage (RAD2)", "statistic"),
        ("B_dir", "magnetic field direction vector", "direction"),
        ("Vr_Over_V_RTN", "Direction cosine of radial velocity", "direction"),
        ("B_comp", "magnetic field vector", None),
        ("BGSM", "1 min averaged magnetic field in GSM", None),
    ],
)
def test_statistic_and_direction_parameters_are_marked(
    name: str, description: str, kind: str | None
) -> None:
    found = auxiliary_kind(_p(name, description))
    assert (found.key if found else None) == kind


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        (
            "RBSP-A EMFISIS WFR Bw spectra 2015-03-17",
            "RBSP-A_WFR-SPECTRAL-MATRIX",
            "BwBw",
        ),
        (
            "PSP FIELDS RFS LFR spectrogram 2020-01-29",
            "PSP_FLD_L2_RFS_LFR",
            "auto_averages",
        ),
        ("ISEE-3 magnetometer 1 min averages 1979-01-10", "ISEE-3_MAG_1MIN", "B_comp"),
        ("THEMIS-E ESA burst electron density 2008-02-26", "THE_L2_ESA", "the_peeb_density"),
    ],
)
def test_the_parameter_named_by_a_qualifier_is_fetched(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    first = fetched(plan_of(vocab, text))[0]
    assert first[0].startswith(dataset)
    assert parameter in first[1]


def test_a_qualifier_the_drawn_parameter_does_not_say_is_stated(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "THEMIS-A ESA burst reduced mode ion density 2008-02-26")
    said = " ".join(plan.notes)
    assert re.search(r"Could not honour '(burst|reduced)'", said)
