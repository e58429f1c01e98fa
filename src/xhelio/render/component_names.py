"""Readable names for vector components that arrive with generic column names.

HAPI gives a vector parameter without per-component labels as ``BGSEc_0``, ``BGSEc_1``,
``BGSEc_2``; a legend reading "BGSEc_0" tells a scientist nothing. When the parameter
name carries its coordinate frame, the components are named the way papers write them:
``Bx GSE``, ``By GSE``, ``Bz GSE``, or ``BR RTN``, ``BT RTN``, ``BN RTN``. Anything
else keeps its column name: labels from the data (CDF ``LABL_PTR``, HAPI ``label``)
always win, and a guess is only made for exactly three generic columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CARTESIAN = ("x", "y", "z")
_RADIAL = ("R", "T", "N")
# Frames named in CDAWeb parameter ids, matched as whole id tokens (GSEQ is not GSE).
_FRAMES: dict[str, tuple[str, str, str]] = {
    "HEEQ": _CARTESIAN,
    "J2000": _CARTESIAN,
    "GSEQ": _CARTESIAN,
    "GSE": _CARTESIAN,
    "GSM": _CARTESIAN,
    "GEO": _CARTESIAN,
    "GEI": _CARTESIAN,
    "GCI": _CARTESIAN,
    "HAE": _CARTESIAN,
    "HEE": _CARTESIAN,
    "HCI": _CARTESIAN,
    "RTN": _RADIAL,
    "SM": _CARTESIAN,
}


def component_names(parameter: str, columns: Sequence[str]) -> list[str]:
    """Display names for a parameter's columns; generic ``NAME_i`` triples get frame names."""
    generic = [f"{parameter}_{i}" for i in range(len(columns))]
    if len(columns) != 3 or list(columns) != generic:
        return list(columns)
    tokens = re.split(r"[^A-Za-z0-9]+", parameter)
    for token in tokens:
        found = _frame_of(token)
        if found is not None:
            symbol, frame = found
            prefix = symbol or _symbol_of(tokens) or f"{parameter} "
            return [f"{prefix}{axis} {frame}" for axis in _FRAMES[frame]]
    return list(columns)


def _symbol_of(tokens: Sequence[str]) -> str:
    """The quantity's symbol from separate tokens: ``V_GSE`` -> V, ``..._mag_RTN`` -> B."""
    lowered = [t.lower() for t in tokens]
    if lowered[0] in ("b", "v", "e", "j"):
        return lowered[0].upper()
    if "mag" in lowered:
        return "B"
    return ""


def _frame_of(token: str) -> tuple[str, str] | None:
    """``GSE`` -> ("", "GSE"); ``BGSEc`` -> ("B", "GSE"); ``BRTN`` -> ("B", "RTN")."""
    upper = token.upper()
    if upper in _FRAMES:
        return "", upper
    # One physical symbol (B field, V velocity, E field, J current) glued to the frame,
    # CDAWeb's trailing 'c' (GSE computed) allowed: BGSEc, BGSM, VRTN.
    glued = re.fullmatch(r"([BVEJ])([A-Z0-9]+?)C?", upper)
    if glued and glued.group(2) in _FRAMES and glued.group(2) != "SM":
        return glued.group(1), glued.group(2)
    return None
