"""An instrument acronym typed in lower case right after its spacecraft is the instrument."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.acronyms import instrument_capitals
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("wind mfi 2019-W10", "WI_H0_MFI"),
        ("ace swepam 2019-03-04", "AC_H2_SWE"),
        ("thd fgm 2008-02-26 04:00-05:30", "THD_L2_FGM"),
    ],
)
def test_a_lower_case_instrument_after_its_spacecraft_is_fetched(
    vocab: Vocabulary, text: str, dataset: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    fetched = {s.calls[0].args["dataset_id"] for s in plan.steps if s.kind == "fetch"}
    assert fetched == {dataset}


def test_only_an_acronym_after_its_own_spacecraft_is_capitalised() -> None:
    assert instrument_capitals("wind mfi and ace swepam") == "wind MFI and ace SWEPAM"
    assert instrument_capitals("the fgm data") == "the fgm data"  # "the" is no probe
    assert instrument_capitals("ace step") == "ace step"  # ACE has no STEP


def test_an_acronym_after_a_list_of_probes_is_capitalised() -> None:
    assert instrument_capitals("rbsp a and b hope density") == "rbsp a and b HOPE density"
    assert instrument_capitals("mms1, 2 & 3 fpi") == "mms1, 2 & 3 FPI"
    assert instrument_capitals("wind and ace mfi") == "wind and ace MFI"


def test_each_listed_probe_gets_the_instrument_named_after_the_list(vocab: Vocabulary) -> None:
    text = "rbsp a and b hope proton density jan 10 2014"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    fetched = [s.calls[0].args["dataset_id"] for s in plan.steps if s.kind == "fetch"]
    assert fetched == ["RBSPA_REL04_ECT-HOPE-MOM-L3", "RBSPB_REL04_ECT-HOPE-MOM-L3"]


def test_a_spacecraft_named_by_an_everyday_word_before_its_instrument_is_the_spacecraft(
    vocab: Vocabulary,
) -> None:
    assert instrument_capitals("polar timas o+ flux") == "Polar TIMAS o+ flux"
    assert instrument_capitals("polar cap flux") == "polar cap flux"  # no instrument
    intent = parse_request("polar timas o+ flux 1998-05-04", vocab, NOW)
    assert [w.text for w in intent.slots.leftover] == []  # "polar" is the spacecraft


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("polar k0 mfe bz 1998-05-04", "PO_K0_MFE"),  # a level between them
        ("wind k0 swe proton density 2001-03-31", "WI_K0_SWE"),  # the level typed in lower case
    ],
)
def test_a_data_level_typed_in_lower_case_names_the_product(
    vocab: Vocabulary, text: str, dataset: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    fetched = [s.calls[0].args["dataset_id"] for s in plan.steps if s.kind == "fetch"]
    assert fetched[:1] == [dataset]
