"""Requests naming several instruments, channels or spacecraft, and follow-ups adding to them.

An instrument name alone implies its mission; a constellation named without a spacecraft
is asked about; a channel range picks those channel parameters; a follow-up that drops
one thing and adds another does both.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.followup import merge
from xhelio.language.channel_names import channel_words, named_channels
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    ["THEMIS fgm 2008-02-26", "Cluster FGM 2005-01-10", "MMS FPI ion density 2017-09-08"],
)
def test_a_constellation_without_a_spacecraft_is_asked_about(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert any("which" in d and "spacecraft" in d for d in intent.doubts), intent.doubts


@pytest.mark.parametrize(
    "text",
    [
        "all four MMS FGM 2017-09-08",
        "MMS1 FPI ion density 2017-09-08",
        "LANL-97A MPA density 2001-01-01",
        "LANL 1990-095 MPA density 2000-01-10",
    ],
)
def test_a_named_or_every_spacecraft_is_not_asked_about(vocab: Vocabulary, text: str) -> None:
    assert parse_request(text, vocab, NOW).doubts == ()


def test_instruments_of_one_mission_name_it(vocab: Vocabulary) -> None:
    intent = parse_request("SPAN-i vs SPC proton density 2021-04-29", vocab, NOW)
    assert [m.mission_id for m in intent.missions] == ["psp"]


def test_an_instrument_several_missions_carry_names_none(vocab: Vocabulary) -> None:
    assert parse_request("EFW electric field 2013-03-17", vocab, NOW).missions == ()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("LEMS P1-P8", [f"P{n}" for n in range(1, 9)]),
        ("E1 to E4", ["E1", "E2", "E3", "E4"]),
        ("P5 through P7", ["P5", "P6", "P7"]),
        ("channels 1-3", ["1", "2", "3"]),
        ("P1, P2 and P4", ["P1", "P2", "P4"]),
        ("ACE at L1", []),
    ],
)
def test_channel_ranges_and_lists_are_spelled_out(text: str, words: list[str]) -> None:
    assert channel_words(text) == words


def test_a_channel_range_picks_those_parameters(vocab: Vocabulary) -> None:
    intent = parse_request("ACE EPAM LEMS P1-P8 2012-03-07", vocab, NOW)
    assert intent.dataset_ids and intent.dataset_ids[0].endswith("_EPM")
    assert intent.parameter_names == tuple(f"P{n}" for n in range(1, 9))
    found = named_channels(vocab.catalog, intent.missions, "EPAM P1 to P3", intent.time_range)
    assert found is not None and found.parameters == ("P1", "P2", "P3")


def test_drop_an_operation_and_add_a_component(vocab: Vocabulary) -> None:
    base = parse_request("ACE magnetic field 2015-03-17 with a 1-hour running mean", vocab, NOW)
    new = parse_request("drop the running mean and put By GSM in a panel below instead", vocab, NOW)
    merged, _ = merge(base, new)
    assert merged.operations == ()
    assert [(w.quantity, w.component, w.frame) for w in merged.quantities] == [
        ("magnetic_field", None, None),
        ("magnetic_field", "y", "GSM"),
    ]
    assert merged.plot.layout == "separate"


def test_an_added_quantity_reads_its_own_clause(vocab: Vocabulary) -> None:
    base = parse_request("PSP SPC proton density 2021-04-29", vocab, NOW)
    new = parse_request("and add SPAN-i proton velocity for the same interval", vocab, NOW)
    merged, _ = merge(base, new)
    added = merged.quantities[-1]
    assert merged.text[added.position :].startswith(added.text)


def test_remove_the_second_panel_drops_that_mission(vocab: Vocabulary) -> None:
    base = parse_request("ACE Bz and Wind Bz 2015-03-17 in separate panels", vocab, NOW)
    merged, _ = merge(base, parse_request("remove the second panel", vocab, NOW))
    assert [m.mission_id for m in merged.missions] == ["ace"]


def test_swap_the_order_reverses_the_panels(vocab: Vocabulary) -> None:
    base = parse_request("OMNI Bz, flow speed and density 2015-03-17", vocab, NOW)
    merged, _ = merge(base, parse_request("swap the order", vocab, NOW))
    assert [w.quantity for w in merged.quantities] == [
        w.quantity for w in reversed(base.quantities)
    ]
