"""A mission word that is a part of another named mission's dataset id is not a spacecraft.

"MMS3 EDP FAST DCE" is the MMS product MMS3_EDP_FAST_L2_DCE (fast mode), not MMS and the
FAST spacecraft; "C1 STA SM" is Cluster's STAFF product, not Cluster and STEREO-A. Two
spacecraft named as such stay two. Parsed and planned against the shipped catalog.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.idwords import spaced_dataset_ids
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "mission", "dataset"),
    [
        ("MMS3 EDP FAST DCE 2017-07-11", "mms", "MMS3_EDP_FAST_L2_DCE"),
        ("C1 STA SM on 2005-03-01", "cluster", "C1_CP_STA_SM"),
        ("mms2 dsp fast bpsd, 2016-01-05", "mms", "MMS2_DSP_FAST_L2_BPSD"),
    ],
)
def test_an_id_part_is_not_another_spacecraft(
    vocab: Vocabulary, text: str, mission: str, dataset: str
) -> None:
    intent = parse_request(text, vocab, NOW)
    assert {m.mission_id for m in intent.missions} <= {mission}
    fetched = [
        c.args["dataset_id"]
        for s in build_plan(vocab, intent, NOW).steps
        for c in s.calls
        if c.tool == "fetch_data"
    ]
    assert fetched[:1] == [dataset]


@pytest.mark.parametrize(
    "text",
    ["compare FAST and MMS1 electron density 2017-07-11", "STA and C1 magnetic field 2008-01-01"],
)
def test_two_spacecraft_named_as_such_stay_two(vocab: Vocabulary, text: str) -> None:
    assert len(parse_request(text, vocab, NOW).missions) == 2


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("THG MAG FRN on 2022-04-18", "THG_L2_MAG_FRN"),
        ("BAR 1G MSPC on January 21, 2013", "BAR_1G_L2_MSPC"),
        ("omni hro2 1min BZ_GSM 2015-03-17", "OMNI_HRO2_1MIN"),
    ],
)
def test_a_dataset_id_written_as_words_names_that_dataset(
    vocab: Vocabulary, text: str, dataset: str
) -> None:
    assert parse_request(text, vocab, NOW).dataset_ids == (dataset,)


def test_words_that_fit_several_ids_name_none() -> None:
    by_prefix = {"AC": ["AC_H0_MFI", "AC_H1_MFI", "AC_K1_MFI"]}
    assert spaced_dataset_ids(by_prefix, "AC MFI on 2008-12-25") == []
    assert spaced_dataset_ids(by_prefix, "AC H1 MFI on 2008-12-25") == [("AC_H1_MFI", (0, 9))]


@pytest.mark.parametrize(
    ("text", "datasets"),
    [
        ("tha and the ESA ion density overplotted for 2008-02-26", ("THA_L2_ESA", "THE_L2_ESA")),
        ("tha, thd and the FGM on 2008-02-26", ("THA_L2_FGM", "THD_L2_FGM", "THE_L2_FGM")),
        ("thb & thc ESA 2008-02-26", ("THB_L2_ESA", "THC_L2_ESA")),
    ],
)
def test_first_words_listed_before_an_id_name_their_own_ids(
    vocab: Vocabulary, text: str, datasets: tuple[str, ...]
) -> None:
    assert parse_request(text, vocab, NOW).dataset_ids == datasets


def test_a_listed_word_that_fits_no_id_is_left_alone() -> None:
    by_prefix = {"THE": ["THE_L2_ESA"], "THA": ["THA_L2_ESA"]}
    assert spaced_dataset_ids(by_prefix, "ACE and the ESA") == [("THE_L2_ESA", (8, 15))]
