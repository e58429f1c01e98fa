"""The measured value of a quantity before its companions in the same dataset.

A dataset often carries, beside the measured quantity and in its units, parameters that
are not it: a model (IGRF, T89), the corotation or motional (V x B) electric field, a
roughness, an uncertainty, a quality flag, a raw copy, the copy in the spacecraft
(payload) frame, another spacecraft's data time-shifted to this one. A physicist asking
for the quantity wants the measured value. The vocabulary's `[[auxiliary]]` table
(`vocabulary/quantities.toml`) says the words that mark each kind in a parameter's
metadata; both resolvers (`resolve` for the known quantities, `grounding` for the open
vocabulary) rank a marked parameter below a measured one by the kind's weight, unless
the request asks for that kind ("IGRF model field", "in payload coordinates"), and the
answer says what was drawn when only a marked one serves. Imports `catalog.model` and
`vocabulary` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.vocabulary import read_table

__all__ = ["AuxiliaryKind", "auxiliary_kind", "auxiliary_note", "auxiliary_penalty", "frame_of"]


@dataclass(frozen=True)
class AuxiliaryKind:
    """One kind of parameter that is not the measured quantity (a model, a flag, ...)."""

    key: str
    label: str
    """What it is, as the answer says it ("a model value, not a measurement")."""
    marks: re.Pattern[str]
    unless: re.Pattern[str] | None
    asked: re.Pattern[str] | None
    frame: str | None
    weight: float


def _rx(pattern: object) -> re.Pattern[str] | None:
    return re.compile(str(pattern), re.I) if pattern else None


@cache
def _kinds() -> tuple[AuxiliaryKind, ...]:
    return tuple(
        AuxiliaryKind(
            str(row["key"]),
            str(row["label"]),
            re.compile(str(row["marks"]), re.I),
            _rx(row.get("unless")),
            _rx(row.get("asked")),
            str(row["frame"]) if row.get("frame") else None,
            float(row["weight"]),
        )
        for row in read_table("quantities.toml").get("auxiliary", [])
    )


def _said(p: ParameterInfo) -> str:
    """A parameter's name (spaced at _ - .), description and labels, as one text."""
    name = re.sub(r"[_\-.]+", " ", p.name)
    return f"{name} {p.description} {' '.join(p.labels or ())}"


def auxiliary_kind(p: ParameterInfo) -> AuxiliaryKind | None:
    """The first kind whose words mark `p` (and nothing says it is measured after all)."""
    text = _said(p)
    for kind in _kinds():
        if kind.marks.search(text) and not (kind.unless and kind.unless.search(text)):
            return kind
    return None


def _asked(kind: AuxiliaryKind, request: str, frame: str | None) -> bool:
    if kind.frame is not None and frame == kind.frame:
        return True
    return kind.asked is not None and bool(kind.asked.search(request))


def auxiliary_penalty(p: ParameterInfo, request: str = "", frame: str | None = None) -> float:
    """How far `p` ranks below a measured parameter: its kind's weight, 0 when asked.

    `request` is the request's words, `frame` the frame it names ("SC" asks for the
    payload-frame copy).
    """
    kind = auxiliary_kind(p)
    if kind is None or _asked(kind, request, frame):
        return 0.0
    return kind.weight


def frame_of(p: ParameterInfo) -> str | None:
    """The frame `p`'s words say it is in, when a frame kind marks it ("payload": SC)."""
    kind = auxiliary_kind(p)
    return kind.frame if kind is not None else None


def auxiliary_note(
    info: DatasetInfo, p: ParameterInfo, request: str = "", frame: str | None = None
) -> str | None:
    """What the answer says when the parameter drawn is a marked one nobody asked for.

    None when `p` is measured or its kind was asked. Another quantity than asked (a
    model, a flag) "differs from the request"; the spacecraft frame is a plain note.
    """
    kind = auxiliary_kind(p)
    if kind is None or _asked(kind, request, frame):
        return None
    said_as = re.sub(r"^[\s>-]+", "", p.description).strip() or p.name
    shown = f"shown {info.id}.{p.name} ({said_as}), which is {kind.label}."
    # A frame is no other quantity: the measured values, in axes not asked for.
    return f"Note: {shown}" if kind.frame is not None else f"Differs from the request: {shown}"
