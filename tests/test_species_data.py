"""A species named is served by that species' own data, read from the catalog (issue 20).

"Wind SWE alphas", "MMS1 HPCA O+", "Cluster 1 CIS He++": a product and a species with no
quantity is the species' main quantity (its density) in that product, never the
product's first parameter (protons, or a "year" column); a product that holds no data of
the species is asked about. Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.parse import Vocabulary
from xhelio.language.products import main_parameter, species_named, species_of


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        ("Wind SWE alphas 2019-06-01", r"^WI_H1_SWE$", r"^Alpha_Na_nonlin$"),
        ("ACE SWEPAM alphas 2012-07-14", r"^AC_H\d_SWE$", r"^alpha_ratio$"),
        ("PSP SPAN-i alphas 2021-04-29", r"^PSP_SWP_SPI_SF0A_L3_MOM$", r"^DENS$"),
        ("MMS1 HPCA O+ 2016-01-10", r"^MMS1_HPCA_SRVY_L2_MOMENTS$", r"oplus_number_density"),
        ("Cluster 1 CIS He++ 2005-03-01", r"^C1_PP_CIS$", r"^N_He2__"),
        ("RBSP-A HOPE oxygen 2015-03-17", r"^RBSPA_REL04_ECT-HOPE-MOM-L3$", r"^Dens_o_30$"),
    ],
)
def test_a_species_with_no_quantity_is_its_density(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    plan = plan_of(vocab, text)
    assert not plan.missing, plan.missing
    (got,) = fetched(plan)
    assert re.search(dataset, got[0]) and re.search(parameter, got[1]), got


def test_a_product_without_the_species_is_asked_about(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ACE SWEPAM electrons 2012-07-14")
    assert not fetched(plan)
    assert any("electrons" in m and "SWE" in m for m in plan.missing), plan.missing


def test_species_words_and_catalog_spellings() -> None:
    assert species_named("O+ and He++ then alphas, protons") == ("oxygen", "alpha", "proton")
    assert species_named("ion temperature") == ()
    assert species_named("Wind p+ density") == ("proton",)
    assert species_named("cluster codif o+ density") == ("oxygen",)  # as physicists type it
    assert species_named("MMS1 p-mode, p + q") == ()
    he1 = ParameterInfo("N_He1__C1_PP_CIS", "double", "cm^-3", description="He+ Density, CODIF")
    he2 = ParameterInfo("N_He2__C1_PP_CIS", "double", "cm^-3", description="He++ Density, CODIF")
    assert species_of(he1) == {"helium_ion"} and species_of(he2) == {"alpha"}
    # A parameter naming no species is of its dataset's species.
    dens = ParameterInfo("DENS", "double", "cm^-3", description="Partial Moment Density")
    info = DatasetInfo("X_MOM", "Partial moments of the Alpha distribution", parameters=(dens,))
    assert species_of(dens, info) == {"alpha"} and species_of(dens) == set()
    # "select(ed)" is an English word, not an electron cue ("elec"): 382 catalog
    # parameters ("He intensity, at select energies", "H+ ... at 16 selected pitch
    # angles") were read as electron data.
    he = ParameterInfo(
        "flux_He", "double", "1/(cm^2 s sr MeV)", description="He intensity, at select energies"
    )
    h = ParameterInfo(
        "proton_distribution",
        "double",
        "eV",
        description="H+ distribution at 16 selected pitch angles",
    )
    assert "electron" not in species_of(he) and species_of(h) == {"proton"}
    assert species_of(ParameterInfo("Nelec", "double", "cm^-3", description="density")) == {
        "electron"
    }


def test_main_data_is_never_a_clock_column_or_a_listed_only_counter() -> None:
    params = (
        ParameterInfo("year", "double", "(2038=Yr0)", description="---> year"),
        ParameterInfo("SEQN", "integer", "", description="SEQN"),
        ParameterInfo("Proton_V_nonlin", "double", "km/s", description="Proton bulk speed"),
        ParameterInfo("Alpha_V_nonlin", "double", "km/s", description="Alpha bulk speed"),
        ParameterInfo("Alpha_Na_nonlin", "double", "cm^{-3}", description="Alpha number density"),
    )
    info = DatasetInfo("WI_H1_SWE", "Solar Wind Alpha and Proton", parameters=params)
    main = main_parameter(info, [])
    assert main is not None and main.name == "Proton_V_nonlin"
    alpha = main_parameter(info, [], ["alpha"])
    assert alpha is not None and alpha.name == "Alpha_Na_nonlin"
    assert main_parameter(info, [], ["oxygen"]) is None


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        (
            "MMS1 FPI ion and electron number density together, 2017-07-11",
            [("MMS1_FPI_FAST_L2_DIS-MOMS", "dis_numberdensity"),
             ("MMS1_FPI_FAST_L2_DES-MOMS", "des_numberdensity")],
        ),
        (
            "Wind proton and alpha densities 2015-03-17",
            [("WI_H1_SWE", "Proton_Np"), ("WI_H1_SWE", "Alpha_Na")],
        ),
        (
            "THEMIS-A ESA electron & ion temperature on 2008-02-26",
            [("THA_L2_ESA", "peef_avgtemp"), ("THA_L2_ESA", "peif_avgtemp")],
        ),
    ],
)  # fmt: skip
def test_every_species_of_a_list_is_fetched(
    vocab: Vocabulary, text: str, wanted: list[tuple[str, str]]
) -> None:
    got = fetched(plan_of(vocab, text))
    assert len(got) == len(wanted)
    for (dataset, parameter), (want_dataset, want_part) in zip(got, wanted, strict=True):
        assert dataset == want_dataset and want_part in parameter


def test_a_species_beside_another_word_is_the_only_one(vocab: Vocabulary) -> None:
    # "proton density ... electron spectrometer": one species asked, not a list
    got = fetched(plan_of(vocab, "Wind proton density and the 3DP electron flux 2015-03-17"))
    assert ("WI_H1_SWE", "Alpha_Na_nonlin") not in got
