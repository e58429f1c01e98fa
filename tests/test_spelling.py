"""Misspelt words read as the vocabulary word they are one slip from (issue 20).

"Polar HYDRA electron desnity" fetched nothing: "desnity" was left over. A left-over
word one slip (a letter dropped, added, or two swapped; a letter changed only in a long
word) from exactly one vocabulary word is read as it, and the answer says so; a tie,
a code, a short word or a word the vocabulary holds itself is never respelt.
"""

from __future__ import annotations

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.spelling import respelt, spelling_fixes


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("desnity", "density"),  # two letters swapped
        ("feild", "field"),
        ("temprature", "temperature"),  # a letter dropped
        ("presure", "pressure"),
        ("electorn", "electron"),
        ("spectogram", "spectrogram"),
        ("derivitive", "derivative"),  # a letter changed in a long word
        ("smoothd", "smooth"),  # as near 'smoothed': one word either way
    ],
)
def test_a_slip_is_read_as_the_one_word_it_is_near(typed: str, read: str) -> None:
    assert spelling_fixes([typed]) == ((typed, read),)


@pytest.mark.parametrize(
    "typed",
    [
        "chage",  # as near 'charge' as 'change': a tie is never decided
        "storm",  # a word of the vocabulary itself (an event word), not a slip of 'store'
        "spped",  # one letter changed in a short word: as often another word as a slip
        "speeds",  # a plural is the same word
        "DESNITY",  # capitals: a code or an id
        "desn1ty",  # a digit: a code or an id
        "flux",  # too short to tell
    ],
)
def test_no_guess_where_a_slip_is_not_clear(typed: str) -> None:
    assert spelling_fixes([typed]) == ()


def test_only_the_whole_word_is_respelt() -> None:
    text = "electron desnity, not the desnity-2 id"
    assert respelt(text, [("desnity", "density")]) == "electron density, not the desnity-2 id"


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("Polar HYDRA electron desnity for 12 Apr 1997 please", "density"),
        ("THEMIS-A ESA ion densty 2015-03-17", "density"),
        ("Wind proton temprature 2015-03-17", "temperature"),
        # a slip some catalog descriptions hold too is no id part: still a slip
        ("Polar electon density 1997-04-12", "density"),
    ],
)
def test_the_request_is_read_respelt_and_the_answer_says_so(
    vocab: Vocabulary, text: str, phrase: str
) -> None:
    intent = parse_request(text, vocab)
    assert any(phrase in w.text for w in intent.quantities), intent.quantities
    assert not intent.slots.leftover
    assert intent.spellings
    plan = build_plan(vocab, intent)
    assert any(n.startswith("Read '") and "slip" in n for n in plan.notes), plan.notes


def test_a_slip_the_catalog_search_placed_is_read_as_the_species(vocab: Vocabulary) -> None:
    intent = parse_request("Polar electon density 1997-04-12", vocab)
    assert ("electon", "electron") in intent.spellings
    assert any(
        s.value == "electron" or "electron" in s.text(intent.slots.text)
        for s in intent.slots.of("species")
    ), intent.slots
