"""What a follow-up takes away, told apart from what it adds in the same breath.

"drop the running mean and put By GSM in a panel below instead" removes the smoothing and
adds the By GSM component: only the words of the removing clause (from "drop" to the next
"and", comma or "instead") name what goes; the quantities and operations said elsewhere
are added as usual. A replacing clause names what goes the same way: "swap the density
for the temperature", "replace X with Y", "change X to Y" and "Y instead of X" take X
away and add Y. Imports `language.intent` and `language.wishes`.
"""

from __future__ import annotations

import re
from typing import Any

from xhelio.language.intent import MissionRef, OperationWish, QuantityWish, RequestIntent
from xhelio.language.wishes import find_operations

__all__ = ["Removal", "panel_edit", "removal"]

_REMOVING = re.compile(
    r"\b(?:remove|drop|delete|without|take out|hide|get rid of|lose)\b"
    r".*?(?=\s*(?:\band\b|\bbut\b|\bthen\b|\binstead\b|[,;.]|$))",
    re.I,
)

# "swap the density for the temperature", "replace X with Y", "switch from X to Y": X goes.
_REPLACED_FIRST = re.compile(
    r"\b(?:swap|switch|exchange|trade|replace|change|substitute)\s+(?:out\s+)?"
    r"(?P<old>.+?)\s+(?:for|with|by|to|into)\b",
    re.I,
)
# "the temperature instead of the density", "Y rather than X", "instead of X, Y": X goes.
_REPLACED_AFTER = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+"
    r"(?P<old>.+?)(?=\s*(?:\band\b|\bbut\b|\bthen\b|[,;.]|$))",
    re.I,
)


def _going(text: str) -> list[tuple[int, int]]:
    """The spans of the words naming what a follow-up takes away."""
    spans = [m.span() for m in _REMOVING.finditer(text)]
    for pattern in (_REPLACED_FIRST, _REPLACED_AFTER):
        spans += [m.span("old") for m in pattern.finditer(text)]
    return spans


class Removal:
    """The removing clauses of a follow-up and what they name."""

    def __init__(self, intent: RequestIntent) -> None:
        self.spans = _going(intent.text)
        self.phrases = [intent.text[a:b].lower() for a, b in self.spans]
        self.quantities = tuple(w for w in intent.quantities if self._inside(w.position))
        named = {op.kind for p in self.phrases for op in find_operations(p, [])}
        self.operations = tuple(op for op in intent.operations if op.kind in named)

    def _inside(self, position: int) -> bool:
        return any(a <= position < b for a, b in self.spans)

    def added(self, wishes: tuple[QuantityWish, ...], shift: int) -> tuple[QuantityWish, ...]:
        """The wishes (moved by `shift` into the merged text) said outside removing clauses."""
        return tuple(w for w in wishes if not self._inside(w.position - shift))

    def kept_operations(
        self, base: tuple[OperationWish, ...], new: tuple[OperationWish, ...]
    ) -> tuple[OperationWish, ...]:
        """The last operations and the new ones, less the kinds a removing clause names."""
        gone = {op.kind for op in self.operations}
        return tuple(op for op in (*base, *new) if op.kind not in gone)


def removal(intent: RequestIntent) -> Removal:
    """The removing clauses of `intent` and what they name."""
    return Removal(intent)


_ORDINALS = {"first": 0, "top": 0, "second": 1, "middle": 1, "third": 2, "fourth": 3}
_PANEL = re.compile(
    r"\b(?:remove|drop|delete|hide|take out|get rid of|lose)\s+(?:the\s+)?"
    r"(?P<n>first|top|second|middle|third|fourth|last|bottom)\s+(?:panel|trace|plot|curve|line)\b",
    re.I,
)
_SWAP = re.compile(r"\b(?:swap|reverse|flip|switch)\s+(?:the\s+)?(?:order|panels|two)\b", re.I)


def panel_edit(
    base: RequestIntent, new: RequestIntent
) -> tuple[tuple[MissionRef, ...], tuple[QuantityWish, ...], str] | None:
    """The missions and quantities after "remove the second panel" or "swap the order".

    A figure of several missions and one quantity has a panel per mission, one of one
    mission and several quantities a panel per quantity: the panel named is that one.
    None when the follow-up names no panel; the third item says what could not be done.
    """
    missions, quantities = base.missions, base.quantities
    by_mission = len(missions) > 1 and len(quantities) <= 1
    by_quantity = len(quantities) > 1 and len(missions) <= 1
    items: tuple[Any, ...] = missions if by_mission else quantities
    asked = _SWAP.search(new.text) or _PANEL.search(new.text)
    if asked is None:
        return None
    if not (by_mission or by_quantity):
        return missions, quantities, f"Could not honour '{asked[0]}': no panel is one item alone."
    if asked.re is _SWAP:
        kept = tuple(reversed(items))
    else:
        word = asked["n"].lower()
        at = len(items) - 1 if word in ("last", "bottom") else _ORDINALS[word]
        if at >= len(items):
            return missions, quantities, f"Could not honour '{asked[0]}': there are {len(items)}."
        kept = items[:at] + items[at + 1 :]
    return (kept, quantities, "") if by_mission else (missions, kept, "")
