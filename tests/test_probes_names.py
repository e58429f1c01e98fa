"""Spacecraft of a constellation named by nickname, in the plural, by a count, or cited.

"STEREO Ahead and Behind" names both probes, "both Voyagers" both spacecraft; a count
that does not fit the constellation ("all four THEMIS", which has five) is asked about,
or, in a follow-up, said; a citation ("(see Fig. 2)") names no probe.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.followup import merge
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_wanted

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def _probes(vocab: Vocabulary, text: str) -> list[tuple[str, str | None]]:
    intent = parse_request(text, vocab, NOW)
    assert not intent.doubts, intent.doubts
    return [(m.mission_id, probe_wanted(m.text)) for m in intent.missions]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("STEREO Ahead and Behind magnetic field 2010-08-01", [("stereo", "A"), ("stereo", "B")]),
        ("STEREO Behind and Ahead proton speed 2009-05-01", [("stereo", "B"), ("stereo", "A")]),
        ("both STEREOs proton speed 2009-05-01", [("stereo", "A"), ("stereo", "B")]),
        ("both Voyagers magnetic field 1979-03-05", [("voyager", "1"), ("voyager", "2")]),
        ("the Voyagers magnetic field 1979-03-05", [("voyager", "1"), ("voyager", "2")]),
        ("Cluster 1 and Samba magnetic field 2005-01-10", [("cluster", "1"), ("cluster", "3")]),
        ("STA & STB magnetic field 2010-08-01", [("stereo", "A"), ("stereo", "B")]),
        ("all 4 MMS magnetic field 2017-09-08", [("mms", p) for p in "1234"]),
    ],
)
def test_probes_named_by_nickname_or_in_the_plural(
    vocab: Vocabulary, text: str, expected: list[tuple[str, str | None]]
) -> None:
    assert _probes(vocab, text) == expected


@pytest.mark.parametrize(
    ("text", "has"),
    [
        ("all four THEMIS probes magnetic field 2010-01-05", "5"),
        ("all three Cluster spacecraft magnetic field 2005-01-10", "4"),
        ("both MMS ion density 2017-09-08", "4"),
    ],
)
def test_a_count_that_does_not_fit_is_asked(vocab: Vocabulary, text: str, has: str) -> None:
    doubts = parse_request(text, vocab, NOW).doubts
    assert len(doubts) == 1 and f"has {has}" in doubts[0], doubts


@pytest.mark.parametrize(
    "text",
    [
        "Wind (see Fig. 2) magnetic field 2015-03-17",
        "ACE magnetic field 2015-03-17 (cf. Figure 3b)",
        "Wind (at L1) magnetic field 2015-03-17",
    ],
)
def test_a_remark_in_parentheses_names_no_probe(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert [probe_wanted(m.text) for m in intent.missions] == [None]
    assert not intent.unknown_names and not intent.doubts


@pytest.mark.parametrize(
    ("then", "shown"),
    [("now all four spacecraft", 5), ("same for all five probes", 5), ("all of them", 5)],
)
def test_a_follow_up_count_that_does_not_fit_is_said(
    vocab: Vocabulary, then: str, shown: int
) -> None:
    base = parse_request("THA magnetic field 2010-01-05", vocab, NOW)
    merged, notes = merge(base, parse_request(then, vocab, NOW))
    assert len(merged.missions) == shown
    said = [n for n in notes if n.startswith("Differs from the request")]
    assert bool(said) == ("four" in then), notes
