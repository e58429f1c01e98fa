"""Abundance and charge-state ratios of two ions: "Fe/O", "O7/O6", "C6+/C5+".

A request names a ratio by two ions with a slash; the catalog writes one in a
description ("O+7/O+6 Solar Wind charge_state Ratio", "Fe/O ... abundance ratio") or a
name ("O7to6", "FetoO", "C6to4"). Both are read into (element, charge) pairs with the
element symbols of the vocabulary's species (`symbol`), so the parameter served is the
ratio asked, never a sibling ratio of the same file. Symbols typed in lower case count
when the ions carry their charges ("o7+/o6+") or one symbol has two letters ("fe/o"), so
a lower-case "s/n" or "n/s" stays words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from xhelio.catalog.model import ParameterInfo
from xhelio.vocabulary import load_vocabulary

__all__ = ["IonRatio", "parameter_ratio", "ratio_spans", "requested_ratios"]


@dataclass(frozen=True)
class IonRatio:
    """Two ions, each an element symbol and a charge (0: the element as a whole)."""

    top: tuple[str, int]
    bottom: tuple[str, int]

    def __str__(self) -> str:
        def ion(element: str, charge: int) -> str:
            return f"{element}{charge}+" if charge else element

        return f"{ion(*self.top)}/{ion(*self.bottom)}"


@cache
def _symbols() -> dict[str, str]:
    """Each element symbol of the vocabulary's species, by its lower-case form."""
    return {s.symbol.lower(): s.symbol for s in load_vocabulary().species if s.symbol}


@cache
def _element() -> str:
    symbols = sorted(_symbols().values(), key=len)
    return "|".join(reversed(symbols))  # two letters before one ("He" before "H")


@cache
def _typed() -> re.Pattern[str]:
    """Two ions with a slash as typed: "Fe/O", "O7/O6", "O^7+/O^6+", "C6+/C5+"."""
    ion = r"(?P<e{n}>{el})(?:\^?\+?(?P<q{n}>\d{{1,2}})\+?)?"
    return re.compile(
        r"(?i)(?<![A-Za-z0-9])"
        + ion.format(n=1, el=_element())
        + r"\s*/\s*"
        + ion.format(n=2, el=_element())
        + r"(?![A-Za-z0-9])"
    )


def _typed_ratios(text: str) -> list[re.Match[str]]:
    """Ratios as typed: symbols as written, or in lower case with charges or two letters."""
    symbols = _symbols()
    return [
        m
        for m in _typed().finditer(text)
        if {m["e1"], m["e2"]} <= set(symbols.values())
        or (m["q1"] and m["q2"])
        or max(len(m["e1"]), len(m["e2"])) == 2
    ]


@cache
def _named() -> re.Pattern[str]:
    """A ratio written in a parameter name: "O7to6", "FetoO", "C6to4", "HetoO"."""
    el = _element()
    return re.compile(rf"^(?P<e1>{el})(?P<q1>\d{{0,2}})to(?P<e2>{el})?(?P<q2>\d{{0,2}})$")


def _ratio(m: re.Match[str]) -> IonRatio:
    symbols = _symbols()
    top = (symbols[m["e1"].lower()], int(m["q1"] or 0))
    bottom = (symbols[(m["e2"] or m["e1"]).lower()], int(m["q2"] or 0))
    return IonRatio(top, bottom)


def requested_ratios(text: str) -> list[IonRatio]:
    """The ratios of two ions a request names, in text order (not "S/C", a spacecraft)."""
    found = [_ratio(m) for m in _typed_ratios(text)]
    return [r for r in found if r.top != r.bottom and str(r) != "S/C"]


def ratio_spans(text: str) -> list[tuple[int, int]]:
    """Where the request names ratios of two ions ("C6/C5" names no Cluster spacecraft)."""
    return [m.span() for m in _typed_ratios(text) if str(_ratio(m)) != "S/C"]


def parameter_ratio(p: ParameterInfo) -> IonRatio | None:
    """The ratio of two ions a parameter holds, from its name or its description."""
    named = _named().match(p.name)
    if named is not None:
        return _ratio(named)
    if not re.search(r"(?i)\bratio\b", p.description):
        return None
    said = [r for r in map(_ratio, _typed_ratios(p.description)) if str(r) != "S/C"]
    return said[0] if said else None
