"""Parameter-level words pick the parameter that says them, or the answer says none does.

The shipped catalog is read (no network). Within the dataset chosen for a quantity, a
word of the request that tells sibling parameters apart ("thermal speed" beside the bulk
speed, "energy flux" beside a number flux, "omni" beside a pitch-angle distribution) is a
constraint on the parameter; a word the dataset cannot honour is said. Support variables
(flags, spin phases, tables, telemetry indices) are never the drawn data. The
request-vs-data check, used by both modes, names every such word the fetched data does
not honour, and `list_parameters(about=...)` ranks the same way.
"""

from __future__ import annotations

import re

import pytest

from check_support import fetch_record
from plan_helpers import fetched as _fetched
from plan_helpers import plan_of as _plan
from xhelio.agents.check import check_turn
from xhelio.catalog.index import Catalog
from xhelio.language.grounding import order_parameters
from xhelio.language.parse import Vocabulary
from xhelio.language.resolve import scorable


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # thermal speed beside the bulk speed, in several missions' own words
        ("Wind SWE proton thermal speed on 2019-06-01", r"^WI_H1_SWE", r"^Proton_W_"),
        (
            "STEREO-A PLASTIC proton thermal speed 2012-07-23",
            r"^STA_L2_PLA_1DMAX",
            r"^proton_thermal_speed",
        ),
        ("DSCOVR Faraday cup thermal speed 2017-09-07", r"^DSCOVR_H1_FC$", r"^THERMAL_SPD$"),
        ("IMP 8 MIT proton thermal speed 1995-03-01", r"^I8_H0_MITPLASMA$", r"^protonV_thermal"),
        ("SOHO CELIAS proton thermal velocity 2003-10-29", r"^SOHO_CELIAS-PM", r"^Vth_p$"),
        ("Wind SWE alpha thermal speed on 2019-06-01", r"^WI_H1_SWE", r"^Alpha_W_nonlin$"),
        ("Wind SWE proton parallel thermal speed on 2019-06-01", r"^WI_H1_SWE", r"^Proton_Wpar_"),
        # number flux beside energy flux (units are evidence), species kept
        ("Polar TIMAS H+ number flux 1997-05-15", r"^PO_H2_TIM$", r"^H_Fluence$"),
        ("Polar TIMAS O+ energy flux 1997-05-15", r"^PO_H2_TIM$", r"^O_Eflux$"),
        # omni beside pitch-angle resolved, in one dataset
        ("FAST TEAMS oxygen omni flux 1998-05-01", r"^FAST_TEAMS_PA_L2$", r"^oxygen_omni_flux$"),
        (
            "FAST TEAMS O+ pitch angle distribution 1998-05-01",
            r"^FAST_TEAMS_PA_L2$",
            r"^oxygen_distribution$",
        ),
        # integral beside differential; energy flux never a background or count column
        (
            "Helios 1 integral proton flux 1976-04-01",
            r"^HELIOS1_E6_KUNOW_1HOUR_PARTICLE-FLUX$",
            r"^p_flux_int$",
        ),
        (
            "NOAA-15 MEPED proton energy flux 2015-03-17",
            r"^NOAA15_POES-SEM2_FLUXES-2SEC$",
            r"^ted_pro_(?!.*(?:_bg_|_cps))\w*eflux",
        ),
        # a frame typed after an instrument word is the data's frame
        ("Geotail MGF data in GSM for 2005-01-10", r"^GE_ED[AB]3SEC_MGF$", r"^BGSM$"),
    ],
)
def test_the_parameter_that_says_the_word_is_drawn(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched, text
    got_dataset, got_parameter = fetched[0]
    assert re.search(dataset, got_dataset), (text, fetched[0])
    assert re.search(parameter, got_parameter), (text, fetched[0])


def test_each_quantity_keeps_its_own_words(vocab: Vocabulary) -> None:
    """'thermal' belongs to the speed of its clause, not to the density beside it."""
    fetched = _fetched(_plan(vocab, "Wind SWE proton thermal speed and proton density 2019-06-01"))
    names = [p for _, p in fetched]
    assert any(n.startswith("Proton_W_") for n in names), fetched
    assert any("Np" in n for n in names), fetched


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("ACE SWEPAM proton thermal speed 2015-03-17", "thermal speed"),
        ("Helios 1 proton thermal speed 1976-04-01", "thermal speed"),
        # GE_K0_EPI's integral intensity is the electrons'; its ion flux is differential
        ("Geotail EPIC integral ion flux 2000-01-01", "integral"),
        ("Wind 3DP electron energy flux 2019-06-01", "energy flux"),
    ],
)
def test_a_word_the_dataset_cannot_honour_is_said(vocab: Vocabulary, text: str, word: str) -> None:
    plan = _plan(vocab, text)
    said = " ".join(plan.notes)
    assert "Differs from the request" in said and word in said, plan.notes


def test_the_omni_mission_is_no_omni_word(vocab: Vocabulary) -> None:
    """'OMNI' naming the mission alone picks no 'omni' parameter."""
    assert _fetched(_plan(vocab, "OMNI IMF Bz GSM 2024-05-10 to 2024-05-12"))[0][1] == "BZ_GSM"


def test_a_product_word_of_the_whole_dataset_is_honoured(vocab: Vocabulary) -> None:
    """WI_ELSP_3DP's title says omnidirectional; its FLUX needs no note."""
    plan = _plan(vocab, "Wind 3DP omnidirectional electron flux 2019-06-01")
    assert _fetched(plan)[0][0] == "WI_ELSP_3DP"
    assert not any("omnidirectional" in n for n in plan.notes), plan.notes


def test_the_check_names_a_variant_word_the_fetched_data_lacks(catalog: Catalog) -> None:
    def say(text: str, dataset: str, parameter: str, day: str) -> str:
        return " ".join(check_turn(text, [fetch_record(dataset, parameter, day)], catalog))

    bulk = say(
        "Wind SWE proton thermal speed 2019-06-01", "WI_H1_SWE", "Proton_V_nonlin", "2019-06-01"
    )
    assert "thermal speed" in bulk and "Proton_W_nonlin" in bulk
    energy = say("Polar TIMAS O+ number flux 1997-05-15", "PO_H2_TIM", "O_Eflux", "1997-05-15")
    assert "number flux" in energy and "O_Fluence" in energy
    omni = say(
        "FAST TEAMS oxygen omni flux 1998-05-01",
        "FAST_TEAMS_PA_L2",
        "oxygen_distribution",
        "1998-05-01",
    )
    assert "omni" in omni and "oxygen_omni_flux" in omni
    none_here = say("ACE SWEPAM thermal speed 2015-03-17", "AC_H0_SWE", "Vp", "2015-03-17")
    assert "no parameter of AC_H0_SWE says 'thermal speed'" in none_here
    # Honoured: nothing to say.
    assert "thermal" not in say(
        "Wind SWE proton thermal speed 2019-06-01", "WI_H1_SWE", "Proton_W_nonlin", "2019-06-01"
    )


def test_the_check_names_a_frame_the_dataset_does_not_have(catalog: Catalog) -> None:
    """A frameless magnitude shown for a field asked in a frame the dataset lacks."""
    said = " ".join(
        check_turn(
            "Cluster 1 FGM magnetic field in GSM, 2005-01-10",
            [fetch_record("C1_CP_FGM_SPIN", "B_mag__C1_CP_FGM_SPIN", "2005-01-10")],
            catalog,
        )
    )
    assert "no parameter in GSM" in said and "GSE" in said
    fine = check_turn(
        "Geotail MGF data in GSM for 2005-01-10",
        [fetch_record("GE_EDB3SEC_MGF", "BGSM", "2005-01-10")],
        catalog,
    )
    assert not fine


def test_list_parameters_ranks_by_the_same_words(catalog: Catalog) -> None:
    """What the LLM agents see first is what the offline path draws."""
    first = order_parameters(catalog.dataset("WI_H1_SWE"), "proton thermal speed")[0]
    assert first.name.startswith("Proton_W_"), first.name
    first = order_parameters(catalog.dataset("PO_H2_TIM"), "O+ energy flux")[0]
    assert first.name == "O_Eflux", first.name


@pytest.mark.parametrize(
    ("dataset", "parameter", "data"),
    [
        ("GE_K0_SPHA", "SPIN_PHASE", False),
        ("IM_K0_RPI", "ProgramSpecs", False),
        ("DE2_LAPI_ELECTRON-FLUX-COUNTS-PPS1", "LAPI__e__0_pos_deg_1_Telemetry_Index", False),
        ("ERG_PWE_HFA_L2_SPEC_MONIT", "obs_stat", False),
        ("I8_H0_MITPLASMA", "mode", False),
        # Data whose description mentions a flag in passing stays data.
        ("PO_H0_TIM", "Flux_OVQ", True),
        ("C1_PP_WHI", "N_e_res__C1_PP_WHI", True),
    ],
)
def test_support_variables_are_never_data(
    catalog: Catalog, dataset: str, parameter: str, data: bool
) -> None:
    p = catalog.dataset(dataset).parameter(parameter)
    assert p is not None
    assert scorable(p) is data


def test_a_species_named_is_never_served_by_a_parameter_that_names_none(
    vocab: Vocabulary,
) -> None:
    """PO_H2_TIM's title names H+, O+, He+ and He++; its SW_density is Wind's solar wind."""
    plan = _plan(vocab, "Polar TIMAS O+ density 1997-05-15")
    assert ("PO_H2_TIM", "SW_density") not in _fetched(plan)
    assert _fetched(_plan(vocab, "Polar TIMAS O+ energy flux 1997-05-15"))[0][1] == "O_Eflux"
