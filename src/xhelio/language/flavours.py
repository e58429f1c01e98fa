"""Flavours of a moment: the scalar temperature or pressure versus its parts.

A temperature (or pressure) comes as a scalar ("Average Temperature", "Scalar
Temperature", the trace of the tensor) or as parts of it: parallel and perpendicular to
the field, the tensor, its diagonal, an anisotropy ratio. The catalog says which in the
parameter's name and description. An unqualified "ion temperature" means the scalar; a
part is drawn for it only when no scalar exists, and then the answer says so. A flavour
the request names ("Tpar", "perpendicular") is honoured by the variant words
(`[[synonym]]` with `variant = true` in quantities.toml).
"""

from __future__ import annotations

import re

from xhelio.catalog.model import DatasetInfo, ParameterInfo

__all__ = ["FLAVOURED_QUANTITIES", "flavour_note", "flavour_score", "is_part"]

FLAVOURED_QUANTITIES = frozenset({"temperature", "pressure"})
"""Scalar moments the catalog also holds in parts."""

# Parts of a moment as name tokens write them ("temppara", "T_p_perp", "TxTyTz", "t3")
# and as descriptions do; a description that also says the scalar ("Average of Trace of
# ... Tensor") is the scalar.
_PART_TOKEN = re.compile(
    r"(?:t|p|w|temp|pres|press)?(?:par|para|parallel|perp|perpendicular|prp\w*|tensor|tens"
    r"|t3|magt3|anisotropy)|(?:t|p)[xyz]{1,2}|ratio",
    re.I,
)
_PART_WORDS = re.compile(
    r"\b(?:parallel|perp(?:endicular)?|tensor|anisotropy|diagonali[sz]ed|eigenvalues"
    r"|components|field[- ]aligned|T_?(?:par|perp|prp)\w*)\b",
    re.I,
)
_SCALAR_WORDS = re.compile(r"\b(?:scalar|average|avg|trace|total|isotropic)\b", re.I)


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return [t for t in re.split(r"[_\s\-/]+", spaced) if t]


def is_part(p: ParameterInfo) -> bool:
    """Whether `p` is a part of a moment (parallel, perpendicular, tensor, anisotropy)."""
    if any(_PART_TOKEN.fullmatch(t) for t in _tokens(p.name)):
        return True
    return bool(_PART_WORDS.search(p.description)) and not _SCALAR_WORDS.search(p.description)


def flavour_score(quantity: str, p: ParameterInfo) -> float:
    """+0.5 a scalar said in words, -1.5 a part of the moment, 0 otherwise."""
    if quantity not in FLAVOURED_QUANTITIES:
        return 0.0
    if is_part(p):
        return -1.5
    return 0.5 if _SCALAR_WORDS.search(f"{p.name} {p.description}") else 0.0


def flavour_note(quantity: str, info: DatasetInfo, p: ParameterInfo) -> str | None:
    """What the answer says when a part stands in for an unqualified scalar moment.

    None when `p` is no part (or the quantity has no parts). Names the sibling parts of
    the dataset, so the physicist sees what else is there ("perpendicular: ...").
    """
    if quantity not in FLAVOURED_QUANTITIES or not is_part(p):
        return None
    said_as = re.sub(r"^[\s>-]+", "", p.description).strip() or p.name
    others = [
        q.name for q in info.data_parameters if q is not p and is_part(q) and _same_kind(q, p)
    ]
    said = f"; the other parts are {', '.join(others[:3])}" if others else ""
    return (
        f"Differs from the request: {info.id} holds no scalar {quantity}; shown: {p.name} "
        f"({said_as}), one part of it{said}. The scalar is "
        f"(T_par + 2 T_perp)/3 of the parallel and perpendicular parts."
        if quantity == "temperature"
        else f"Differs from the request: {info.id} holds no scalar {quantity}; shown: "
        f"{p.name} ({said_as}), one part of it{said}."
    )


def _same_kind(p: ParameterInfo, other: ParameterInfo) -> bool:
    """Same units: a temperature part beside temperature parts, not a pressure tensor."""
    return p.units.strip().lower() == other.units.strip().lower()
