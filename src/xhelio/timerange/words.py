"""The number and length words every time phrase is counted with ("two", "half an", "18 h").

One table for the whole grammar: `grammar` ("the last three days"), `relative` ("two hours
before T") and `sentences` ("for 90 minutes", "plus or minus an hour") read lengths with it.
Imports nothing from xhelio.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta

__all__ = ["NUMBER_WORDS", "UNIT_WORDS", "WHOLE_NUMBER_WORDS", "alternatives", "count", "unit"]

_ONES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}
WHOLE_NUMBER_WORDS: dict[str, int] = (
    {word: n for n, word in enumerate(_ONES, start=1)}
    | {word: n for n, word in enumerate(_TEENS.split(), start=10)}
    | _TENS
    | {f"{ten}-{one}": tens + n for ten, tens in _TENS.items() for n, one in enumerate(_ONES, 1)}
)
"""Numbers written as words ("three", "twenty-four")."""
NUMBER_WORDS: dict[str, float] = WHOLE_NUMBER_WORDS | {
    "a": 1,
    "an": 1,
    "half a": 0.5,
    "half an": 0.5,
    "a couple of": 2,
    "a half": 0.5,
}
"""Every way a count is written before a unit, "a" and "half an" too."""
UNIT_WORDS: dict[str, timedelta] = {
    word: length
    for words, length in (
        ("second seconds sec secs", timedelta(seconds=1)),
        ("minute minutes min mins", timedelta(minutes=1)),
        ("hour hours hr hrs h", timedelta(hours=1)),
        ("day days d", timedelta(days=1)),
        ("week weeks wk wks", timedelta(weeks=1)),
        ("fortnight fortnights", timedelta(weeks=2)),
    )
    for word in words.split()
}
"""Fixed-length units; months and years are calendar steps (see `grammar`)."""


def alternatives(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first ("minutes" before "min")."""
    spelled = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in spelled)


def count(text: str) -> float:
    """The number a count word or digits stand for ("two" 2, "half an" 0.5, "1.5" 1.5)."""
    key = " ".join(text.lower().split())
    return NUMBER_WORDS[key] if key in NUMBER_WORDS else float(key)


def unit(text: str) -> timedelta:
    """The length of one unit word ("hrs" one hour)."""
    return UNIT_WORDS[text.lower()]
