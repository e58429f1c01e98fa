"""Which sibling dataset serves a request: the words typed, science level, ephemeris (issue 20).

A sub-instrument, telescope or sensor typed ("EPACT/STEP", "sensor 2") picks the sibling
whose own id or title says that word, never a higher-scored sibling that only shares the
instrument's name through a vocabulary synonym. Science-quality data goes before
low-latency, beacon or quick-look siblings unless those are asked for (or alone cover
the time, which the answer says). A distance or position comes from an ephemeris
dataset, never from a science file that carries a position variable.

Plans are read with the shipped catalog; phrasings here differ from tests/eval on purpose.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.grounding import open_request, rank_open
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import product_terms
from xhelio.language.resolve import is_ephemeris
from xhelio.timerange import TimeRange


def _plan(vocab: Vocabulary, text: str) -> OfflinePlan:
    return build_plan(vocab, parse_request(text, vocab))


def _fetched(plan: OfflinePlan) -> list[tuple[str, str]]:
    return [
        (s.candidates[0].dataset_id, s.candidates[0].parameter)
        for s in plan.steps
        if s.kind == "fetch" and s.candidates
    ]


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        # STEP is a telescope of Wind EPACT: LEMT, its sibling, says only EPACT.
        ("wind epact/STEP iron flux 2003-10-29", "WI_EPACT_STEP-"),
        ("Wind STEP Fe flux 2001-04-15", "WI_EPACT_STEP-"),
        # MAVEN SEP's two sensors are S1 and S2 in the ids.
        ("MAVEN SEP sensor 2 ion spectrogram 2017-09-12", "MVN_SEP_L2_S2-"),
    ],
)
def test_a_sub_instrument_typed_picks_the_sibling_that_says_it(
    vocab: Vocabulary, text: str, prefix: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched
    assert all(d.startswith(prefix) for d, _ in fetched), fetched


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("Solar Orbiter STEP ion flux on 2021-05-22", "SOLO_L2_EPD-STEP-"),
        ("SolO EPT sunward electron flux 2022-04-01, science data not low latency", "SOLO_L2_"),
    ],
)
def test_science_data_goes_before_a_low_latency_sibling(
    vocab: Vocabulary, text: str, prefix: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched
    assert all(d.startswith(prefix) for d, _ in fetched), fetched


def test_low_latency_asked_is_served(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "Solar Orbiter low latency STEP ion flux 2021-05-22")
    assert [d for d, _ in _fetched(plan)] == ["SOLO_LL02_EPD-STEP-RATES"]
    assert not any("Only quick-look" in n for n in plan.notes)


def test_beacon_data_alone_covering_the_time_is_shown_and_said(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "STEREO-A PLASTIC proton speed 2025-10-01")
    assert [d for d, _ in _fetched(plan)] == ["STA_LB_PLA_BROWSE"]
    said = [n for n in plan.notes if n.startswith("Only quick-look")]
    assert said and "STA_L2_PLA_" in said[0] and "2025-06-30" in said[0]


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # The radio receiver's file carries a position_RTN vector: never the answer.
        (
            "Parker Solar Probe heliocentric distance during November 2018",
            "PSP_HELIO1HR_POSITION",
            "RAD_AU",
        ),
        ("how far from Earth was THEMIS-A (radial distance) on 2015-01-10", "THA_OR_SSC", "RADIUS"),
    ],
)
def test_a_distance_is_the_scalar_radius_of_an_ephemeris_dataset(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    assert _fetched(_plan(vocab, text)) == [(dataset, parameter)]


def test_ephemeris_datasets_are_read_from_ids_and_titles() -> None:
    def info(ident: str, title: str) -> DatasetInfo:
        return DatasetInfo(id=ident, title=title)

    assert is_ephemeris(info("PSP_ISOIS_L2-EPHEM", "Parker Solar Probe ISOIS Level 2 ephem"))
    assert is_ephemeris(info("MMS1_MEC_SRVY_L2_EPHT89D", "Magnetic ephemeris and support data"))
    # "Solid State Telescope" is no state vector; a radio file is no ephemeris.
    assert not is_ephemeris(info("THA_L2_SST", "THEMIS-A: Solid State Telescope (SST)"))
    assert not is_ephemeris(info("PSP_FLD_L3_RFS_HFR", "PSP FIELDS RFS High Frequency Receiver"))


def test_a_refused_product_word_is_no_term() -> None:
    assert [t.typed for t in product_terms("EPT data, not low latency")] == []
    assert [t.typed for t in product_terms("EPT low latency data")] == ["low latency"]
    assert "burst" not in [t.typed for t in product_terms("non-burst FGM")]


def test_the_open_ranking_puts_science_data_before_low_latency_too() -> None:
    # The metadata-driven ranking (quantities outside the table, LLM tool ranking) orders
    # by the same key: a finer-cadence science file beats a better-sized low-latency one.
    start, stop = datetime(2020, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)
    flux = ParameterInfo("Electron_Flux", units="1/(cm2 s sr MeV)", description="Electron flux")
    low_latency = DatasetInfo(
        "XX_LL02_EPT-RATES", "XX Low Latency EPT", start=start, stop=stop, cadence="PT60S",
        parameters=(flux,),
    )  # fmt: skip
    science = DatasetInfo(
        "XX_L2_EPT-RATES", "XX Level 2 EPT", start=start, stop=stop, cadence="PT1S",
        parameters=(flux,),
    )  # fmt: skip
    window = TimeRange(datetime(2021, 1, 1, tzinfo=UTC), datetime(2021, 3, 1, tzinfo=UTC))
    request = open_request("electron flux", "XX electron flux")
    ranked = rank_open(request, [low_latency, science], time_range=window)
    assert [c.dataset_id for c in ranked] == ["XX_L2_EPT-RATES", "XX_LL02_EPT-RATES"]


def test_a_dataset_id_naming_electrons_never_serves_protons(vocab: Vocabulary) -> None:
    # GOES-13's EPEAD title spells "Energetic Proton Electron and Alpha Detector"; its id
    # says ELECTRONS, and GOES-13 has no proton dataset in the catalog: said, not swapped.
    plan = _plan(vocab, "GOES-13 HEPAD proton flux 2012-05-17")
    assert _fetched(plan) == []
    assert any("No GOES-13 dataset" in n and "proton" in n for n in (*plan.notes, *plan.missing))


def test_an_instrument_named_by_its_id_abbreviation_is_no_missing_word(vocab: Vocabulary) -> None:
    # Cluster RAPID's ids say RAP: 'RAPID' is found; 'IIMS', said by no dataset, is said.
    plan = _plan(vocab, "Cluster 1 RAPID IIMS proton flux 2004-01-10")
    assert [d for d, _ in _fetched(plan)] == ["C1_CP_RAP_HSPCT"]
    differs = [n for n in plan.notes if n.startswith("Differs from the request")]
    assert differs and "'IIMS'" in differs[0] and "'RAPID'" not in differs[0]


@pytest.mark.parametrize(
    "text",
    [
        "Solar Orbiter EPT sunward electrons 2022-04-01 (science data, not low latency)",
        "Solar Orbiter EPT sunward electrons 2022-04-01",
    ],
)
def test_a_product_named_by_words_draws_the_species_typed_in_the_plural(
    vocab: Vocabulary, text: str
) -> None:
    # "electrons" is the Electron_Flux of the EPT file, never its first (ion) parameter;
    # the refused "low latency" words are no words the product must say.
    assert _fetched(_plan(vocab, text)) == [("SOLO_L2_EPD-EPT-SUN-RATES", "Electron_Flux")]
