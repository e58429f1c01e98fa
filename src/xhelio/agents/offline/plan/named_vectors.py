"""Vector parameters a request names by their id ("|V| from ACE SWEPAM V_GSE", "B1GSE").

A word that is a vector parameter's exact id in the named mission's datasets (an id
written with an underscore, a digit or a frame inside it, so plain words never count)
is fetched itself: its wish is written as the id, which the resolver ranks first. A
magnitude asked of the same quantity ("|V|", "magnitude", "norm", "total") is computed
from that vector, never another scalar parameter standing in for it.
"""

from __future__ import annotations

import re

from xhelio.agents.offline.plan.steps import Builder
from xhelio.catalog.model import ParameterInfo
from xhelio.language.intent import QuantityWish
from xhelio.language.resolve import written_as_id

__all__ = ["named_vectors"]

_WORD = re.compile(r"(?<![\w-])[A-Za-z]\w*(?![\w-])")
_MAGNITUDE = re.compile(
    r"\|\s*\w{1,3}\s*\||\bmagnitudes?\b|\bnorms?\b|\btotal\b|\bstrength\b", re.I
)
_KIND_BY_UNITS = (("magnetic_field", re.compile(r"^\s*nT\b", re.I)),
                  ("velocity", re.compile(r"km\s*/\s*s|km\s*s\^?-1", re.I)))  # fmt: skip


def _vector_ids(b: Builder) -> dict[str, tuple[ParameterInfo, int]]:
    """The vector parameters (3 or 4 columns) whose id the text writes, and where."""
    params: dict[str, ParameterInfo] = {}
    for ref in b.intent.missions:
        for info in b.vocab.catalog.browse(ref.mission_id, include_auxiliary=False):
            for p in info.data_parameters:
                if p.components in (3, 4):
                    params.setdefault(p.name.lower(), p)
    found: dict[str, tuple[ParameterInfo, int]] = {}
    for match in _WORD.finditer(b.intent.text):
        p = params.get(match[0].lower()) if written_as_id(match[0]) else None
        if p is not None:
            found.setdefault(p.name, (p, match.start()))
    return found


def _kind(p: ParameterInfo) -> str | None:
    return next((k for k, rx in _KIND_BY_UNITS if rx.search(p.units or "")), None)


def named_vectors(b: Builder, wishes: list[QuantityWish]) -> list[QuantityWish]:
    """The wishes with each named vector parameter standing for its quantity.

    A wish of the same quantity
    is asked of that vector (its magnitude when the request asks one), and a named
    vector no wish stands for gets a wish of its own.
    """
    named = _vector_ids(b)
    if not named:
        return wishes
    magnitude = _MAGNITUDE.search(b.intent.text) is not None
    out = list(wishes)
    for name, (p, position) in named.items():
        kind = _kind(p)
        if kind is None:
            continue
        same = [w for w in out if w.quantity == kind]
        kept = same[0].component if same else None  # "Bz of BGSM": the component asked
        component = (
            "magnitude" if magnitude else kept if kept not in (None, "magnitude") else "vector"
        )
        merged = QuantityWish(kind, name, position, component)
        if same:
            first = out.index(same[0])
            out = [w for w in out if w.quantity != kind]
            out.insert(min(first, len(out)), merged)
        else:
            out.append(merged)
    return out
