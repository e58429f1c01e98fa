"""What a follow-up takes away, told apart from what it adds in the same breath.

"drop the running mean and put By GSM in a panel below instead" removes the smoothing and
adds the By GSM component: only the words of the removing clause (from "drop" to the next
"and", comma or "instead") name what goes; the quantities and operations said elsewhere
are added as usual. Imports `language.intent` and `language.wishes`.
"""

from __future__ import annotations

import re

from xhelio.language.intent import OperationWish, QuantityWish, RequestIntent
from xhelio.language.wishes import find_operations

__all__ = ["Removal", "removal"]

_REMOVING = re.compile(
    r"\b(?:remove|drop|delete|without|take out|hide|get rid of|lose)\b"
    r".*?(?=\s*(?:\band\b|\bbut\b|\bthen\b|\binstead\b|[,;.]|$))",
    re.I,
)


class Removal:
    """The removing clauses of a follow-up and what they name."""

    def __init__(self, intent: RequestIntent) -> None:
        self.spans = [m.span() for m in _REMOVING.finditer(intent.text)]
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
