"""Every spacecraft of a comparison is served, however the list is written (issue 20).

A dataset named by its words ("DSCOVR FC") beside another spacecraft ("compared with
ACE SWEPAM") leaves that spacecraft its own data; a probe shorthand that is also a word
("the" for THEMIS-E, "ac" for ACE) names the spacecraft only in a list of spacecraft,
and a parenthesis restating the probes ("(probes A and E)") is read with them. Plans
only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_wanted


def _craft(vocab: Vocabulary, text: str) -> list[tuple[str, str | None]]:
    intent = parse_request(text, vocab)
    return [(m.mission_id, probe_wanted(m.text)) for m in intent.missions]


def test_a_spacecraft_beside_a_named_dataset_gets_its_own_data(vocab: Vocabulary) -> None:
    text = "how does the DSCOVR FC proton density compare with ACE SWEPAM on 2018-08-26"
    plan = plan_of(vocab, text)
    got = [d for d, _ in fetched(plan)]
    assert "DSCOVR_H1_FC" in got, got
    assert any(re.fullmatch(r"AC_(H\d|K\d)_SWE", d) for d in got), got


@pytest.mark.parametrize(
    "text",
    [
        "compare esa ion density at tha and the (probes A and E) 2008-02-26",
        "compare esa ion density at tha and the on 2008-02-26",
        "esa ion density at tha (probes A and E) 2008-02-26",
    ],
)
def test_an_english_probe_word_in_a_list_is_the_probe(vocab: Vocabulary, text: str) -> None:
    assert _craft(vocab, text) == [("themis", "A"), ("themis", "E")]
    assert not parse_request(text, vocab).slots.leftover


def test_field_word_prefixes_in_a_list_are_spacecraft(vocab: Vocabulary) -> None:
    assert [m for m, _ in _craft(vocab, "wi and ac proton density 2015-03-17")] == [
        "wind",
        "ace",
    ]


@pytest.mark.parametrize(
    ("text", "craft"),
    [
        ("Wind and the ACE data 2015-03-17", ["wind", "ace"]),
        ("tha and the magnetic field 2009-03-01", ["themis"]),
        ("ac electric field from Wind 2015-03-17", ["wind"]),
        ("plot the field from tha 2009-03-01", ["themis"]),
    ],
)
def test_such_words_outside_a_list_stay_words(
    vocab: Vocabulary, text: str, craft: list[str]
) -> None:
    assert [m for m, _ in _craft(vocab, text)] == craft
