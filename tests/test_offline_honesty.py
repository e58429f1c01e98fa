"""Offline readings that must ask or say what differs rather than show other data.

Each test is a class of phrasing seen to give silent wrong answers: a time of day the
grammar cannot place, a known name with a misspelt rest ("Parker Solr Probe"), a probe
shorthand in lower case, a thing named that offline mode cannot place (never the solar
wind overview instead), and an instrument whose moments share a dataset with a sibling.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from check_support import catalog_workspace, fetch_record  # noqa: F401  (fixture)
from xhelio.agents.check import check_turn
from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import Workspace

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "unread"),
    [
        ("Wind Bz 2015-03-17 with a jump at some point after 10 UT", "10 UT"),
        ("ACE |B| on 2015-03-17 with the peak near 11am", "11am"),
        ("ACE |B| 2015-03-17 close to midnight", "midnight"),
    ],
)
def test_a_clock_the_range_did_not_use_is_kept_and_stated(
    vocab: Vocabulary, workspace: Workspace, text: str, unread: str
) -> None:
    intent = parse_request(text, vocab, NOW)
    assert unread in intent.time_unread
    notes = check_turn(
        text,
        [fetch_record("WI_H0_MFI", "BF1", "2015-03-17T00:00:00Z to 2015-03-18T00:00:00Z")],
        workspace.context.catalog,
    )
    assert any("could not read" in n and unread in n for n in notes), notes


def test_clocks_the_range_used_are_not_stray(vocab: Vocabulary) -> None:
    for text in (
        "ACE |B| 2019-06-01 from 10 UT to 14 UT",
        "ACE |B| on 2024-01-15 at 0930 UT plus or minus 2 hours",
        "ACE |B| 2019-06-01 starting at 10 UT for 3 hours",
    ):
        intent = parse_request(text, vocab, NOW)
        assert intent.time_range is not None and intent.time_unread == (), text


@pytest.mark.parametrize(
    "text",
    [
        "Parker Solr Probe solar wind density 2021-04-30",
        "Parker Solar Probr proton speed 2021-04-29",
        "Advanced Compositon Explorer magnetic field 2015-03-17",
        "Van Allen Probs A magnetic field 2015-03-17",
    ],
)
def test_a_misspelt_name_is_asked_about(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert intent.doubts, intent
    assert build_plan(vocab, intent, NOW).steps == ()


@pytest.mark.parametrize(
    "text",
    [
        "Cluster C1 CIS HIA ion density 2003-10-29",
        "Parker Solar Probe FIELDS magnetic field 2021-04-29",
        "Parker solar wind speed 2021-04-29",
        "Solar Orbiter SWA proton density 2022-03-02",
    ],
)
def test_names_spelt_right_raise_no_doubt(vocab: Vocabulary, text: str) -> None:
    assert parse_request(text, vocab, NOW).doubts == ()


@pytest.mark.parametrize(
    ("text", "prefix"),
    [("thd magnetic field 2009-03-02", "THD_"), ("c3 field 2003-10-30", "C3_")],
)
def test_probe_shorthands_in_lower_case(vocab: Vocabulary, text: str, prefix: str) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    fetched = [c.args["dataset_id"] for s in plan.steps for c in s.calls if s.kind == "fetch"]
    assert fetched and all(d.startswith(prefix) for d in fetched), fetched


@pytest.mark.parametrize(
    "text",
    [
        "ACE neutron monitor counts 2015-03-17",
        "Wind cosmic ray anisotropy 2019-06-01",
    ],
)
def test_a_thing_named_but_not_placed_is_asked_not_an_overview(
    vocab: Vocabulary, text: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    assert plan.steps == () and plan.missing, plan


def test_a_thing_the_catalog_metadata_names_is_placed_and_said(vocab: Vocabulary) -> None:
    # No quantity of the vocabulary, but a dataset whose own metadata covers every word.
    text = "Solar Orbiter SWA-HIS oxygen charge state 2022-03-02"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    fetched = [s.candidates[0] for s in plan.steps if s.kind == "fetch" and s.candidates]
    assert [c.dataset_id[:16] for c in fetched] == ["SOLO_L3_SWA-HIS-"]
    # The average charge or the charge distribution: both are oxygen charge states.
    assert re.search(r"^O_(AVE_)?CHARGE", fetched[0].parameter), fetched[0].parameter
    assert any(n.startswith("Read '") and "charge state" in n for n in plan.notes)


def test_missions_alone_still_get_the_overview(vocab: Vocabulary) -> None:
    text = "Compare ACE and Wind during the Halloween storm of 2003"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    assert any(s.kind == "fetch" for s in plan.steps) and not plan.missing


def test_shared_dataset_keeps_the_instrument_typed(vocab: Vocabulary, workspace: Workspace) -> None:
    text = "Cluster C1 CIS HIA ion density 2003-10-29"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    first = next(s for s in plan.steps if s.kind == "fetch").calls[0].args
    assert "HIA" in first["parameter_id"], first
    # The check names a sibling instrument's parameter fetched instead.
    notes = check_turn(
        text,
        [
            fetch_record(
                "C1_PP_CIS", "N_p__C1_PP_CIS", "2003-10-29T00:00:00Z to 2003-10-30T00:00:00Z"
            )
        ],
        workspace.context.catalog,
    )
    assert any("CODIF" in n and "HIA" in n for n in notes), notes


@pytest.mark.parametrize(
    "text",
    ["ACE cosmic ray neutron flux 2015-03-18", "GOES gamma-ray counts 2015-03-17"],
)
def test_something_no_quantity_stands_for_is_asked(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert intent.doubts and build_plan(vocab, intent, NOW).steps == ()


def test_bulk_plasma_is_no_stand_in_for_alphas(vocab: Vocabulary, workspace: Workspace) -> None:
    text = "ACE alpha speed 2015-03-18"
    plan = build_plan(vocab, parse_request(text, vocab, NOW), NOW)
    picked = [c.args["parameter_id"] for s in plan.steps if s.kind == "fetch" for c in s.calls]
    assert "Vp" not in picked and all("he" in p.lower() for p in picked), picked
    # The check says so when a mode fetched it anyway.
    notes = check_turn(
        text,
        [fetch_record("AC_H0_SWE", "Vp", "2015-03-18T00:00:00Z to 2015-03-19T00:00:00Z")],
        workspace.context.catalog,
    )
    assert any("alpha" in n for n in notes), notes
