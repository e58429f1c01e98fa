"""A numbered part of an instrument named in a request: a telescope, detector or sensor.

"0 deg telescope", "90-degree telescope", "telescope 1", "detector #3": the catalog
writes the same part in the parameter's own description or name ("Electron integral
energy flux, TED, 0 degree telescope", "ted_ele_tel0_hi_eflux", "Electron Flux in
Telescope 1"). Each reading gives the spellings that say that part (`[[named_part]]` in
`vocabulary/domain.toml`); the parameter drawn must say one of them. Imports
`vocabulary` only.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from xhelio.vocabulary import read_table

__all__ = ["NamedPart", "named_parts"]


class NamedPart(NamedTuple):
    """One part as typed, where it stands, and its spellings in metadata (lower case)."""

    typed: str
    span: tuple[int, int]
    spellings: frozenset[str]


@cache
def _rows() -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    rows = read_table("domain.toml").get("named_part", [])
    return tuple(
        (re.compile(str(r["words"]), re.I), tuple(str(s).lower() for s in r["says"])) for r in rows
    )


def named_parts(text: str) -> list[NamedPart]:
    """The numbered parts `text` names, in text order (a span is read once)."""
    found: list[NamedPart] = []
    taken: list[tuple[int, int]] = []
    for pattern, says in _rows():
        for m in pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            number = str(int(m["n"]))
            spellings = frozenset(s.replace("{n}", number) for s in says)
            found.append(NamedPart(m[0], m.span(), spellings))
            taken.append(m.span())
    return sorted(found, key=lambda part: part.span)
