"""Product words the request says pick the product, from the catalog's own metadata (issue 20).

Modes ("fast survey", "brst"), levels and kinds ("key parameters", "moments"), a named
instrument, marker words a product carries that the request did not say ("auxiliary",
"merged", "omni-directional"), and the abbreviations physicists use for missions.
Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.catalog.aliases import AliasTable
from xhelio.catalog.model import DatasetInfo, Mission
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import (
    coverage_score,
    product_terms,
    title_words,
    unasked_markers,
)


def _fetched(plan: OfflinePlan) -> list[str]:
    return [s.candidates[0].dataset_id for s in plan.steps if s.kind == "fetch" and s.candidates]


def _plan(vocab: Vocabulary, text: str) -> OfflinePlan:
    return build_plan(vocab, parse_request(text, vocab))


def test_mode_words_are_terms_and_the_mission_or_physics_is_not() -> None:
    terms = {t.typed: t for t in product_terms("MMS1 fast survey and slow data, brst, srvy")}
    assert set(terms) >= {"fast survey", "slow", "brst", "srvy"}
    assert not terms["fast survey"].soft and terms["slow"].soft
    assert not [t for t in product_terms("FAST TEAMS during fast solar wind") if "fast" in t.typed]


def test_title_words_split_at_case_changes() -> None:
    assert {"FAST", "SURVEY", "RESOLUTION"} <= title_words("FastSurvey-resolution moments")


@pytest.mark.parametrize(
    ("dataset", "title", "text", "markers"),
    [
        ("MMS1_FPI_FAST_L2_DIS-MOMSAUX", "FastSurvey auxiliary moments", "ion moments", 1),
        ("MMS1_FPI_FAST_L2_DIS-MOMSAUX", "FastSurvey auxiliary moments", "aux moments", 0),
        ("THB_L2_MERGED", "ESA and FGM merged parameters", "magnetic field", 1),
        ("WI_PLSP_3DP", "Ion omnidirectional fluxes and moments", "alpha density", 1),
        ("MMS1_FPI_FAST_L2_DIS-MOMS", "Survey-resolution distribution moments", "ion moments", 0),
    ],
)
def test_unasked_markers(dataset: str, title: str, text: str, markers: int) -> None:
    found = unasked_markers(DatasetInfo(dataset, title), product_terms(text))
    assert len(found) == markers, found


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("MMS2 FPI slow survey electron moments 2017-07-11", r"MMS2_FPI_SLOW_L2_DES-MOMS"),
        ("MMS4 EDP electric field, slow mode, 2017-07-11", r"MMS4_EDP_SLOW_L2_DCE"),
        ("MMS1 DES brst electron density 2017-07-11", r"MMS1_FPI_BRST_L2_DES-MOMS"),
        ("MMS3 fast survey DIS moments ion density on 2017-07-11", r"MMS3_FPI_FAST_L2_DIS-MOMS"),
        ("THEMIS-C magnetic field on 2016-01-01", r"THC_L2_FGM"),
        ("DE-1 magnetometer data 1983-03-01", r"DE1_(6SEC_MAGAGMS|62MS_MAGA-GMS)"),
        ("Wind 3DP alpha density on 2005-01-01", r"WI_PM_3DP"),
        ("ACE SWEPAM key parameters proton speed 2018-01-01", r"AC_K0_SWE"),
        ("FAST TEAMS ion composition on 1998-01-01", r"FA_K0_TMS"),
    ],
)
def test_the_product_words_pick_the_product(vocab: Vocabulary, text: str, dataset: str) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched and re.fullmatch(dataset, fetched[0]), fetched


def test_a_mode_the_mission_lacks_is_said(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "ACE burst mode magnetic field 2010-01-01")
    assert _fetched(plan) and any("Differs from the request" in n for n in plan.notes)


def test_id_prefixes_that_abbreviate_the_mission_are_aliases_in_capitals() -> None:
    table = AliasTable(
        [
            Mission("wind", "Wind", dataset_ids=("WI_H0_MFI", "WIND_WAVES_QTNFIT")),
            Mission("geotail", "Geotail", dataset_ids=("GE_K0_MGF",)),
            Mission("ace", "ACE", dataset_ids=("AC_H0_MFI",)),
            Mission("lanl", "LANL", dataset_ids=("L1_K0_MPA",)),
        ]
    )
    found = {m.text: m.mission_id for m in table.find_mentions("WI and GE, not ge, AC or L1")}
    assert found == {"WI": "wind", "GE": "geotail"}


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("PVO magnetic field 1985-03-01", "PIONEERVENUS_"),
        ("Pioneer Venus Orbiter solar wind density 1985-03-01", "PIONEERVENUS_"),
        ("Pioneer 10 magnetic field 1975-01-01", "PIONEER10_"),
        ("WI proton density 2005-01-01", "WI_"),
        ("GE magnetic field on 2000-01-01", "GE_"),
        ("I8 magnetic field 1995-01-01", "I8_"),
        ("IMP-8 plasma density 1995-01-01", "I8_"),
        ("UY magnetic field 1995-01-01", "UY_"),
        ("V2 magnetic field 1980-01-01", "VOYAGER2_"),
        ("STB magnetic field 2010-01-01", "STB_"),
    ],
)
def test_mission_abbreviations(vocab: Vocabulary, text: str, prefix: str) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched and fetched[0].startswith(prefix), fetched


def test_a_named_product_without_data_in_the_time_is_said_by_name(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "ACE SWEPAM key parameters proton density 2010-01-01")
    said = [n for n in plan.notes if "Differs from the request" in n]
    assert _fetched(plan) and said and "AC_K0_SWE" in said[0], plan.notes


def test_a_cadence_the_title_names_covers_the_cadence_word() -> None:
    info = DatasetInfo("WI_H0_MFI", "Wind Magnetic Fields: 3 sec, 1 min, and hourly Data")
    assert coverage_score(info, product_terms("1-minute field"), None) > 0
    assert not coverage_score(info, product_terms("5-minute field"), None)


@pytest.mark.parametrize("text", ["ace swics zorblax 2003-10-29", "Wind SWE quibbity 2004-11-08"])
def test_a_stray_word_beside_a_product_is_said_not_used(vocab: Vocabulary, text: str) -> None:
    # The product is taken for its id-like word; the word its metadata does not say is
    # named as not used, never folded into "Read '...' as the product".
    plan = _plan(vocab, text)
    stray = text.split()[2]
    notes = " ".join(plan.notes)
    assert _fetched(plan), (plan.notes, plan.missing)
    assert f"Not used from the request: '{stray}'" in notes, notes
    assert not re.search(rf"Read '[^']*{stray}", notes), notes
