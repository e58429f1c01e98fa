"""Misspelt words of a request read as the vocabulary word they are one slip from.

Physicists type fast: "electron desnity", "magnetic feild", "proton temprature". A word
left over by every slot (`slots.account`) that is within a small edit distance of
exactly one word of the vocabulary (quantities, synonyms, species, frames, instruments,
missions, operations, figure words: the data files of `vocabulary/`) is read as that
word, and the answer says so. Never when two words are as near (a tie could change the
meaning), never a word with a digit or written in capitals (ids and codes), never a short
word: a slip is one letter dropped, added, changed or two swapped (Damerau-Levenshtein,
adjacent transpositions: rapidfuzz's optimal string alignment distance), two of them
in a long word, and the first letter is kept. Words the catalog holds are never left
over (`parse._account`), so they are never respelt. Imports `vocabulary` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from rapidfuzz.distance import OSA

from xhelio.vocabulary import read_table

__all__ = ["respelt", "spelling_fixes"]

_SHORTEST = 5  # a shorter word is too near too many others to be read as one of them
_LONG = 9  # a word this long may hold two slips
# One letter changed in a short word is as often another word ("storm", "store") as a
# slip; a letter dropped, added or two swapped rarely is.
_CHANGED_FROM = 7
_INFLECTIONS = frozenset({"s", "es", "d", "ed", "ing", "ion", "ions"})
# The parts of the vocabulary that say what to fetch or do: quantities and their
# synonyms, species, derived quantities, operations and statistics, figure and unit
# words. Names (missions, instruments, events) are written in capitals or as names and
# are no target: "plasma" is no slip of the instrument "PlasMag".
_PARTS = {
    "quantities.toml": ("quantity", "synonym", "auxiliary", "group"),
    "domain.toml": ("species", "derived", "operation", "statistic", "declined", "qualifier"),
    "request_words.toml": ("figure", "operation", "unit", "discovery"),
}
_FIELDS = frozenset({"label", "phrases", "search", "words", "asked"})
_ESCAPE = re.compile(r"\\.")
# A whole word of a phrase or a pattern: not a stem a group or quantifier completes
# ("temperat(?:ure)", "fluxe?s").
_WHOLE = re.compile(rf"(?<![)\]])(?<![A-Za-z])[A-Za-z]{{{_SHORTEST - 1},}}(?![A-Za-z?*+{{(\[])")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fields(value: Any) -> Any:
    """The word-holding fields of a table part (its `label`, `phrases`, `words`...)."""
    if isinstance(value, list):
        return [_fields(v) for v in value]
    if isinstance(value, dict):
        return [v for k, v in value.items() if k in _FIELDS]
    return value


@cache
def _known_words() -> frozenset[str]:
    """Every whole word of the vocabulary's data files, lower case (filler left out)."""
    words: set[str] = set()
    for name, parts in _PARTS.items():
        table = read_table(name)
        for text in _strings([_fields(table[part]) for part in parts if part in table]):
            words.update(m[0].lower() for m in _WHOLE.finditer(_ESCAPE.sub(" ", text)))
    filler = set(str(read_table("request_words.toml")["filler"]["words"]).split())
    return frozenset(words - filler)


@cache
def _every_word() -> frozenset[str]:
    """Every whole word of the vocabulary's files: a word it holds is no slip ("storm")."""
    words: set[str] = set()
    for name in ("quantities.toml", "domain.toml", "missions.toml", "request_words.toml"):
        for text in _strings(read_table(name)):
            words.update(m[0].lower() for m in _WHOLE.finditer(_ESCAPE.sub(" ", text)))
    return frozenset(words)


def _changed_letter(a: str, b: str) -> bool:
    """Whether `a` is `b` with one letter changed (not two neighbours swapped)."""
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 1


def _read_as(word: str) -> str | None:
    """The one vocabulary word `word` is a slip from, or None (none, or a tie)."""
    if len(word) < _SHORTEST or not word.isalpha() or word.isupper():
        return None
    typed = word.lower()
    known = _known_words()
    if typed in known or typed in _every_word():
        return None
    limit = 2 if len(typed) >= _LONG else 1
    near: dict[int, list[str]] = {}
    for candidate in known:
        if candidate[0] != typed[0]:
            continue
        d = OSA.distance(typed, candidate, score_cutoff=limit)
        if d == 1 and len(typed) < _CHANGED_FROM and _changed_letter(typed, candidate):
            continue
        if typed in (f"{candidate}s", f"{candidate}es") or candidate == f"{typed}s":
            continue  # a plural is the same word, no slip
        if d <= limit:
            near.setdefault(d, []).append(candidate)
    if not near:
        return None
    closest = sorted(near[min(near)], key=len)
    stem = closest[0]
    # "smoothd": as near "smooth" as "smoothed", one word either way.
    if all(c == stem or (c[len(stem) :] in _INFLECTIONS and c.startswith(stem)) for c in closest):
        return stem
    return None


def spelling_fixes(words: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(typed, read as) for each left-over word that is one slip from one vocabulary word."""
    fixes = ((w, _read_as(w)) for w in dict.fromkeys(words))
    return tuple((typed, read) for typed, read in fixes if read is not None)


def respelt(text: str, fixes: Iterable[tuple[str, str]]) -> str:
    """`text` with each typed word of `fixes` replaced by the word it is read as."""
    for typed, read in fixes:
        text = re.sub(rf"(?<![\w-]){re.escape(typed)}(?![\w-])", read, text)
    return text
