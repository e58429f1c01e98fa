"""Repetition detection: a model saying or calling nearly the same thing again and again.

The LoopGuard blocks exact duplicate calls and repeated rounds; a stuck model slips past
it by varying a word, a digit or an argument's spelling ("2024-01-01" then "2024-01-01T00").
`RepeatDetector` compares each new model output (its text) and each tool call (tool name
plus canonical arguments) with the earlier ones of the same run, after normalising them
(case, whitespace, digits kept), and counts those that are near-identical (a
`difflib.SequenceMatcher` ratio at or above `similarity`). When an output has occurred
`limit` times, or a call has come back in `limit` responses (seed 004: five; calls of one
response are a fan-out, not a loop), `observe` returns a message that ends the run. Short texts
(under `min_chars`) are compared exactly, so "OK." twice is not a loop while a long answer
repeated with a changed word is. Calls compare argument by argument: an identifier (a
dataset id, a label, a time) must be equal, only long free text may differ a little, so
inspecting five datasets one by one is work, not a loop. Imports nothing from xhelio.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

__all__ = ["RepeatDetector"]

_SPACES = re.compile(r"\s+")

Call = tuple[str, dict[str, str]]


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower())


def _call(tool: str, args: Mapping[str, Any]) -> Call:
    """A call with each argument as normalised text (containers as canonical JSON)."""
    values = {
        str(key): _normal(
            value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        )
        for key, value in args.items()
    }
    return tool, values


@dataclass
class RepeatDetector:
    """Counts near-identical outputs and tool calls within one run."""

    limit: int = 5
    similarity: float = 0.9
    min_chars: int = 24
    _outputs: list[str] = field(default_factory=list[str])
    _rounds: list[list[Call]] = field(default_factory=list[list[Call]])

    def _similar(self, a: str, b: str) -> bool:
        if a == b:
            return True
        if min(len(a), len(b)) < self.min_chars:
            return False
        matcher = SequenceMatcher(None, a, b, autojunk=False)
        return matcher.quick_ratio() >= self.similarity and matcher.ratio() >= self.similarity

    def _same_call(self, a: Call, b: Call) -> bool:
        """Same tool and arguments; only long free text (a query, a request) may differ a little."""
        if a[0] != b[0] or a[1].keys() != b[1].keys():
            return False
        return all(self._similar(value, b[1][key]) for key, value in a[1].items())

    def _count(self, history: list[str], item: str) -> int:
        history.append(item)
        return sum(self._similar(item, earlier) for earlier in history)

    def observe(self, text: str, calls: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> str | None:
        """Record one model response; return why the run must end, or None."""
        said = _normal(text)
        if said and self._count(self._outputs, said) >= self.limit:
            return (
                f"Loop detected: the model gave nearly the same answer {self.limit} times "
                f"({said[:80]!r}...); the turn was stopped. Rephrase the request or narrow it."
            )
        made = [_call(tool, args) for tool, args in calls]
        earlier, self._rounds = self._rounds, [*self._rounds, made]
        for tool, call in ((c[0], c) for c in made):
            seen = sum(any(self._same_call(call, old) for old in past) for past in earlier)
            if seen + 1 >= self.limit:
                return (
                    f"Loop detected: the model called {tool} with nearly the same arguments "
                    f"{self.limit} times; the turn was stopped. The results so far are kept; "
                    "rephrase the request or narrow it."
                )
        return None
