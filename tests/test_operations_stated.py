"""Computations asked with their own words and parameters: read, honoured or declined.

A stated Welch segment length is used, a derived quantity asked of a named dataset is
computed at that dataset's mission (never OMNI instead), a list of lower-case instrument
acronyms after the spacecraft names each instrument, "beta_p" is the proton beta, and a
series masked by a threshold (not done offline) is said not done.
"""

from __future__ import annotations

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.acronyms import instrument_capitals
from xhelio.language.parse import Vocabulary, parse_request


def _calls(vocab: Vocabulary, text: str) -> list[tuple[str, dict[str, object]]]:
    plan = build_plan(vocab, parse_request(text, vocab))
    return [(c.tool, dict(c.args)) for s in plan.steps for c in s.calls]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("psd of ace bz 2015-03-17, 1 hr welch segments", 3600.0),
        ("power spectrum of OMNI Bz on 2015-03-17 with 2-hour segments", 7200.0),
    ],
)
def test_stated_welch_segment_is_used(vocab: Vocabulary, text: str, seconds: float) -> None:
    calls = [args for tool, args in _calls(vocab, text) if tool == "power_spectrum"]
    assert calls and calls[0].get("segment_s") == seconds, calls


def test_derived_quantity_of_a_named_dataset_is_computed_at_its_mission(
    vocab: Vocabulary,
) -> None:
    text = "clock angle of the imf from dscovr mag, 2018-08-26"
    plan = build_plan(vocab, parse_request(text, vocab))
    fetched = {c.args["dataset_id"] for s in plan.steps for c in s.calls if c.tool == "fetch_data"}
    assert fetched == {"DSCOVR_H0_MAG"}, fetched
    assert not any("No mission was named" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("beta from wind swe and mfi", "beta from wind SWE and MFI"),
        ("ace swepam/mag pdyn", "ace SWEPAM/MAG pdyn"),
        ("wind swe, mfi and 3dp", "wind SWE, MFI and 3DP"),
    ],
)
def test_listed_acronyms_after_the_spacecraft_are_instruments(text: str, expected: str) -> None:
    assert instrument_capitals(text) == expected


def test_field_of_a_derived_quantity_comes_from_the_listed_magnetometer(
    vocab: Vocabulary,
) -> None:
    calls = _calls(vocab, "plasma beta from wind swe and mfi 2016-01-01")
    fetched = {str(a["dataset_id"]) for tool, a in calls if tool == "fetch_data"}
    assert any(d.endswith("_MFI") for d in fetched), fetched


def test_beta_p_is_the_plasma_beta(vocab: Vocabulary) -> None:
    calls = _calls(vocab, "beta_p at wind 2016-01-01")
    assert any("beta" in str(a.get("code", "")).lower() or "beta" in str(a) for _, a in calls)


def test_threshold_mask_is_said_not_done(vocab: Vocabulary) -> None:
    plan = build_plan(vocab, parse_request("omni bz only where bz < -5 nT, 2015-03-17", vocab))
    said = [n for n in plan.notes if n.startswith("Not done")]
    assert said and "could not honour" in said[0], plan.notes


@pytest.mark.parametrize(
    "text", ["plasma beta from wind swe and mfi 2016-01-01", "proton beta at Wind SWE 2016-01-01"]
)
def test_a_proton_input_is_never_an_electron_parameter(vocab: Vocabulary, text: str) -> None:
    # The beta's temperature input is the proton's: before, the catalog's own words
    # ("temperature") picked WI_H5_SWE.T_elec, "Te Electron total-temperature", silently.
    fetched = [str(a["parameter_id"]) for tool, a in _calls(vocab, text) if tool == "fetch_data"]
    assert fetched and not any("elec" in p.lower() for p in fetched), fetched
