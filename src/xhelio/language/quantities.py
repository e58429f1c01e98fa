"""The physics vocabulary of the offline interpreter: words people type -> catalog hints.

A `Quantity` says how people name a quantity (`phrases`), what to search the catalog for
(`search`), and how to recognise a parameter that holds it from its metadata (`units`,
`describes`, `names`, and for vectors a `magnitude_cue`). No dataset id appears here:
`resolve.py` finds datasets and parameters for (mission, quantity) through the catalog.
The entries are data, `vocabulary/quantities.toml`: a new quantity is one entry there.
Imports only `xhelio.vocabulary` (to read the table).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from xhelio.vocabulary import read_table

__all__ = [
    "FORM_WORDS",
    "GROUP_WORDS",
    "QUANTITIES",
    "SYMBOL_SPECIES",
    "SYNONYM_WORDS",
    "Quantity",
    "quantity",
]

Shape = Literal["vector", "scalar", "spectrum", "spectrogram"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """One physical quantity and how to recognise it in text and in catalog metadata."""

    key: str
    label: str
    phrases: re.Pattern[str]
    search: str
    units: re.Pattern[str] | None
    describes: re.Pattern[str]
    names: re.Pattern[str]
    shape: Shape
    default_component: str | None = None
    magnitude_cue: re.Pattern[str] | None = None
    component_letter: str | None = None
    default_mission: str | None = None
    solar_wind: bool = False
    symbol: str | None = None
    """The letter physicists write it with ("n" in "Ne", "b" in "B_RTN")."""
    vector_label: str | None = None
    """The name of its components, where the label names the magnitude ("velocity")."""
    excludes: re.Pattern[str] | None = None
    """A description that says a parameter holds something else (the spacecraft's velocity)."""
    instrument: re.Pattern[str] | None = None
    """The catalog's instrument type that measures it ("Magnetic Fields"): its datasets
    rank before another instrument's copy of the quantity."""


_PATTERN_FIELDS = (
    "phrases",
    "units",
    "describes",
    "names",
    "magnitude_cue",
    "excludes",
    "instrument",
)


def _quantity(entry: dict[str, Any]) -> Quantity:
    fields: dict[str, Any] = {"units": None}  # a quantity without units words omits them
    for name, value in entry.items():
        fields[name] = _rx(value) if name in _PATTERN_FIELDS else value
    return Quantity(**fields)


def _group(entry: dict[str, Any]) -> tuple[re.Pattern[str], tuple[tuple[str, str | None], ...]]:
    members = tuple((str(key), str(component) or None) for key, component in entry["members"])
    return _rx(str(entry["phrases"])), members


_TABLE = read_table("quantities.toml")
# Order matters: longer, more specific phrases are claimed first ("electric field"
# before the bare "field" of the magnetic field).
QUANTITIES: tuple[Quantity, ...] = tuple(_quantity(entry) for entry in _TABLE["quantity"])
# Words that stand for a group of quantities: "solar wind" or "plasma" alone.
GROUP_WORDS: tuple[tuple[re.Pattern[str], tuple[tuple[str, str | None], ...]], ...] = tuple(
    _group(entry) for entry in _TABLE["group"]
)
# Species letters written after a quantity's symbol ("Ne", "T_i"): letter -> species key.
SYMBOL_SPECIES: dict[str, str] = {
    str(k): str(v) for k, v in _TABLE.get("symbol_species", {}).items()
}
# How requests write the quantities found from catalog metadata (`[[synonym]]` words):
# "spacecraft potential", "charge state". Their words are the quantity's, filler or not.
SYNONYM_WORDS: tuple[re.Pattern[str], ...] = tuple(
    _rx(str(row["words"])) for row in _TABLE.get("synonym", [])
)

# How a request asks for one form of a vector: "magnitude" ("|B|", "Btotal") or "vector".
FORM_WORDS: dict[str, str] = {str(k): str(v) for k, v in _TABLE["forms"].items()}

_BY_KEY = {q.key: q for q in QUANTITIES}


def quantity(key: str) -> Quantity:
    """The vocabulary entry for `key` (e.g. 'magnetic_field')."""
    return _BY_KEY[key]
