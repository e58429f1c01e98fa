"""Instrument acronyms typed in lower case right after their spacecraft ("wind mfi").

An acronym in the vocabulary counts as an instrument only in capitals ("STEP", not
"step"), since many are English words. Right after the name of its own spacecraft or
probe ("wind mfi", "ace swepam", "thd fgm", "mms1 fpi") it can only be the instrument,
so it is written in capitals there before the request is read, also after a list of its
probes ("rbsp a and b hope", "mms1, 2 & 3 fpi") or a data level ("polar k0 mfe"). The
text keeps its length, so every span found later still points at the words typed.
Imports only `vocabulary`.
"""

from __future__ import annotations

import re
from functools import cache

from xhelio.vocabulary import load_vocabulary

__all__ = ["instrument_capitals"]


@cache
def _after_spacecraft() -> tuple[re.Pattern[str], ...]:
    """One pattern per mission: a name of it, then one of its instruments' acronyms."""
    domain = load_vocabulary()
    patterns: list[re.Pattern[str]] = []
    for mission_id, entry in domain.missions.items():
        acronyms = {
            name
            for instrument in domain.instruments_of(mission_id)
            for name in instrument.names
            if not re.search("[a-z]", name)
        }
        names = {*entry.names, *(n for probe in entry.probes.values() for n in probe)}
        exact = {n.lower() for n in entry.exact}
        names = {n for n in names if n.lower() not in exact}
        if not acronyms or not names:
            continue
        spacecraft = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        instrument = "|".join(re.escape(a) for a in sorted(acronyms, key=len, reverse=True))
        # "wind swe and mfi", "ace swepam/mag": a list of its acronyms right after it
        one = rf"(?:{instrument})(?![\w-])"
        patterns.append(
            re.compile(
                rf"(?<![\w-])(?P<s>{spacecraft}){_PROBES}{_LEVEL}[\s/-]+(?P<a>{one}(?:{_JOIN}{one})*)",
                re.IGNORECASE,
            )
        )
    return tuple(patterns)


_JOIN = r"(?:\s*[,/&+]\s*|\s+and\s+|\s+)"
# More probes listed after the first ("rbsp a and b", "mms1, 2 & 3"): letters or numbers.
_PROBES = r"(?:(?:\s*[,/&+]\s*|\s+and\s+|[\s-]+)(?:[a-z]|\d{1,2})(?![\w-]))*"
# A data level between them ("polar k0 mfe", "wind h1 swe").
_LEVEL = r"(?:[\s/-]+[kh]\d(?![\w-]))?"
_AND = re.compile(r"(\band\b)", re.IGNORECASE)


def _capitals(listed: str) -> str:
    """The acronyms of a list in capitals, its "and" as typed."""
    return "".join(part if part.lower() == "and" else part.upper() for part in _AND.split(listed))


def instrument_capitals(text: str) -> str:
    """`text` with instrument acronyms typed right after their spacecraft in capitals.

    A spacecraft whose name is an everyday word ("polar", "image", "erg", "fast") is
    capitalised too: before its own instrument ("polar timas") it is the spacecraft.
    """
    words = load_vocabulary().english_word_aliases

    def capitalised(m: re.Match[str]) -> str:
        craft = m["s"].capitalize() if m["s"].lower() in words else m["s"]
        middle = m[0][m.end("s") - m.start() : m.start("a") - m.start()]
        return craft + middle + _capitals(m["a"])

    for pattern in _after_spacecraft():
        text = pattern.sub(capitalised, text)
    return text
