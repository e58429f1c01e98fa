"""Product words that tell sibling datasets apart decide the product, or are said (issue 20).

The words that set one dataset apart from its siblings are the catalog's own: the tokens
of their ids ("BRST", "ASUN", "HIRES", "1MIN", "HCAD"), titles ("SST Foil", "EESA High")
and cadences. A request saying one gets the sibling that says it, over any better-scored
sibling; when no sibling says it with data for the requested time, the answer says so and
names the nearest. Plans only (no fetch), read with the shipped catalog, across missions.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.catalog.model import DatasetInfo
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import product_terms, title_words, variant_count


def _plan(vocab: Vocabulary, text: str) -> OfflinePlan:
    return build_plan(vocab, parse_request(text, vocab))


def _fetched(plan: OfflinePlan) -> list[str]:
    return [s.candidates[0].dataset_id for s in plan.steps if s.kind == "fetch" and s.candidates]


def test_a_compound_the_vocabulary_spells_whole_is_not_read_as_its_parts() -> None:
    words = title_words("Electron Proton Telescope, Anti-Sun Direction, Rates")
    assert "ANTI-SUN" in words and "SUN" not in words
    assert {"BURST", "RESOLUTION"} <= title_words("Burst-resolution moments")


def test_the_sibling_that_says_the_word_counts_it() -> None:
    sun = DatasetInfo("SOLO_L2_EPD-EPT-SUN-RATES", "EPT, Sun Direction, Rates")
    asun = DatasetInfo("SOLO_L2_EPD-EPT-ASUN-RATES", "EPT, Anti-Sun Direction, Rates")
    terms = product_terms("EPT sunward rates")
    assert variant_count(sun, terms, None) > variant_count(asun, terms, None)
    terms = product_terms("burst-mode field")
    assert variant_count(DatasetInfo("MMS1_FGM_BRST_L2", "Burst DC field"), terms, None) == 1
    assert variant_count(DatasetInfo("MMS1_FGM_SRVY_L2", "Survey DC field"), terms, None) == 0


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("MMS1 FGM burst-mode B field 2017-07-11 22:33 to 22:35", r"MMS1_FGM_BRST_L2"),
        ("MMS4 FEEPS brst electron flux 2017-07-11 22:30 to 22:40", r"MMS4_FEEPS_BRST_L2_ELECTRON"),
        ("SolO EPT sunward ion flux 2022-03-10", r"SOLO_L2_EPD-EPT-SUN-RATES"),
        ("Solar Orbiter EPT anti-sun electron flux 2021-06-01", r"SOLO_L2_EPD-EPT-ASUN-RATES"),
        ("SolO EPT high cadence electron flux 2020-08-01", r"SOLO_L2_EPD-EPT-\w+-HCAD"),
        ("STEREO-A MAG burst mode field 2010-05-01 12:00 to 12:10", r"STA_L1_MAGB_(RTN|SC)"),
        ("Wind 3DP SST foil electron flux 2005-01-01", r"WI_SF(SP|PD)_3DP"),
        ("Wind 3DP EESA high electron flux 2005-01-01", r"WI_EH(SP|PD)_3DP"),
        ("PSP 1-minute MAG field in RTN 2021-04-29", r"PSP_FLD_L2_MAG_RTN_1MIN"),
        (
            "RBSP-A EMFISIS hi-res B field in GSM 2015-03-17 04:00 to 05:00",
            r"RBSP-A_MAGNETOMETER_HIRES-GSM_EMFISIS-L3",
        ),
        ("ACE 1-second magnetic field 2015-01-01 06:00 to 07:00", r"AC_H3_MFI"),
        ("THEMIS-C merged ion density 2015-01-01", r"THC_L2_MERGED"),
    ],
)
def test_the_word_that_sets_a_sibling_apart_picks_it(
    vocab: Vocabulary, text: str, dataset: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched and re.fullmatch(dataset, fetched[0]), fetched


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # The burst products of EPT and RFS hold one day each, long before the day asked.
        ("SolO EPT sunward burst ion rates on 2022-03-10", r"'burst'.*2022-03-10.*BURST"),
        ("PSP RFS burst spectra 2021-04-29", r"'burst'.*PSP_FLD_L2_RFS_BURST.*2019-12-26"),
        # DSCOVR has no burst product at all.
        ("DSCOVR burst mode magnetic field 2020-01-01", r"'burst mode'"),
    ],
)
def test_a_variant_without_data_for_the_time_is_said(
    vocab: Vocabulary, text: str, said: str
) -> None:
    plan = _plan(vocab, text)
    assert _fetched(plan)
    notes = [n for n in plan.notes if n.startswith("Differs from the request")]
    assert any(re.search(said, n) for n in notes), plan.notes


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("MMS1 FGM burst-mode B field", "MMS1_FGM_BRST_L2"),
        ("SolO EPT sunward ion rates", r"SOLO_L(2|L02)_EPD-EPT-SUN-RATES"),
        ("RBSP-A EMFISIS hi-res magnetic field in GSM", "RBSP-A_MAGNETOMETER_HIRES-GSM_EMFISIS-L3"),
        ("Wind 3DP SST foil electron flux", r"WI_SF(SP|PD)_3DP"),
    ],
)
def test_search_ranks_the_named_variant_first(vocab: Vocabulary, query: str, first: str) -> None:
    hits = vocab.catalog.search(query, 5)
    assert hits and re.fullmatch(first, hits[0].dataset_id), [h.dataset_id for h in hits]
