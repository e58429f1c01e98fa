"""Request words the catalog's own metadata covers (issue 20).

Product words, constellations, follow-ups to other probes and clock zooms.

Plans only (no fetch): what the offline resolver would fetch for a request, read with
the shipped catalog. Phrasings here differ from tests/eval/heldout.toml on purpose.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.followup import merge
from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import product_terms


def _fetched(plan: OfflinePlan) -> list[str]:
    return [s.candidates[0].dataset_id for s in plan.steps if s.kind == "fetch" and s.candidates]


def _plan(vocab: Vocabulary, text: str, before: str | None = None) -> OfflinePlan:
    intent = parse_request(text, vocab)
    if before is not None:
        intent, _ = merge(parse_request(before, vocab), intent)
    return build_plan(vocab, intent)


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("Solar Orbiter EPT south-facing electron flux 2021-11-05", r"SOLO_L2_EPD-EPT-SOUTH-RATES"),
        ("SolO HET sun telescope rates on 2021-11-05", r"SOLO_L2_EPD-HET-SUN-RATES"),
        ("Wind RAD2 spectrogram 2012-07-23", r"WI_L2_WAV_RAD2"),
        ("RBSP-A magnetic field in GSM, 2013-03-17", r"RBSP-A_MAGNETOMETER_\w+-GSM_EMFISIS-L3"),
        ("Cluster 4 PEACE prime parameters 2004-01-01", r"C4_PP_PEA"),
    ],
)
def test_product_words_pick_the_product_named(vocab: Vocabulary, text: str, dataset: str) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched and re.fullmatch(dataset, fetched[0]), fetched


def test_a_product_word_no_metadata_covers_is_asked(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "ACE gravimeter readings 2015-03-17")
    assert not _fetched(plan) and plan.missing


def test_cadence_adjectives_and_look_directions_are_terms() -> None:
    typed = [t.typed for t in product_terms("hourly sunward 5-minute omni-directional data")]
    assert typed == ["sunward", "omni-directional", "hourly", "5-minute"]
    assert not product_terms("smoothed with a 5-minute boxcar, 3 hours before noon")


@pytest.mark.parametrize(
    ("text", "prefixes"),
    [
        ("every MMS spacecraft magnetic field 2016-01-10", ["MMS1_", "MMS2_", "MMS3_", "MMS4_"]),
        ("Cluster 2-3 FGM 2004-01-01", ["C2_", "C3_"]),
        ("both RBSP probes magnetic field 2014-01-01", ["RBSP-A_", "RBSP-B_"]),
    ],
)
def test_constellations_expand(vocab: Vocabulary, text: str, prefixes: list[str]) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert [f[: len(p)] for f, p in zip(fetched, prefixes, strict=True)] == prefixes


def test_follow_up_for_another_probe_and_for_all(vocab: Vocabulary) -> None:
    before = "THEMIS-C magnetic field 2010-01-05"
    assert _fetched(_plan(vocab, "the same for probe D", before)) == ["THD_L2_FGM"]
    assert len(_fetched(_plan(vocab, "now every probe", before))) == 5


def test_zoom_to_a_clock_range_keeps_the_day(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "zoom to 21:00-23:30", "OMNI SYM-H 2013-06-01")
    assert str(plan.time_range) == "2013-06-01T21:00:00Z to 2013-06-01T23:30:00Z"


def _fetched_parameters(plan: OfflinePlan) -> list[str]:
    return [s.candidates[0].parameter for s in plan.steps if s.kind == "fetch" and s.candidates]


@pytest.mark.parametrize(
    ("text", "parameter"),
    [
        # A look direction is a product word, not a leftover that leaves the request unplaced;
        # the parameter whose (continued "--->") description says it is the one drawn.
        ("GOES-15 EPEAD electrons above 2 MeV, west-facing detector, 2012-03-08", r"E2W_\w+"),
        ("GOES-15 EPEAD electrons above 2 MeV, east-facing detector, 2012-03-08", r"E2E_\w+"),
    ],
)
def test_a_look_direction_picks_its_telescope(vocab: Vocabulary, text: str, parameter: str) -> None:
    params = _fetched_parameters(_plan(vocab, text))
    assert params and re.fullmatch(parameter, params[0]), params


def test_continued_descriptions_are_written_out() -> None:
    from xhelio.catalog.model import ParameterInfo
    from xhelio.language.grounding import continued

    first = ParameterInfo("A1", description="A/W Detector: flux E1 >0.8 MeV")
    second = ParameterInfo("B1", description="---> B/E Detector")
    third = ParameterInfo("C1", description="---> more")
    out = continued([ParameterInfo("X", description="Ion density"), third, first, second])
    assert [p.description for p in out] == [
        "Ion density",
        "---> more",
        "A/W Detector: flux E1 >0.8 MeV",
        "B/E Detector: flux E1 >0.8 MeV",
    ]


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        # A probe named apart from its mission ("..., probe B") is that spacecraft, and its
        # letter is no magnetic field.
        ("MagEIS electron flux on 2015-03-17, probe B", r"RBSPB_[\w-]+MAGEIS[\w-]*"),
        ("Van Allen Probes HOPE ion moments, probe A, 2015-03-17", r"RBSPA_[\w-]+HOPE[\w-]*"),
        ("THEMIS FGM field, spacecraft E, 2015-03-17", r"THE_\w+"),
    ],
)
def test_a_probe_named_apart_from_its_mission(vocab: Vocabulary, text: str, dataset: str) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert len(fetched) == 1 and re.fullmatch(dataset, fetched[0]), fetched
