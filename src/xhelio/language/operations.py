"""Operation words of a request: which operation, with which stated parameters.

The words live in the vocabulary (`[[operation]]`, `[[statistic]]` and `[[declined]]` in
`vocabulary/domain.toml`); this module reads them and answers small questions about a
request: which operations it names (in text order), which statistic a running window
computes ("running median", "moving standard deviation"), whether a trend to remove is
linear or the mean, a cadence written as a count per unit ("one value per day"), and
which operations it asks for that are declined (each with the reason said in the answer).
Imports only `vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from xhelio.vocabulary import read_table

__all__ = [
    "Declined",
    "declined_operations",
    "detrend_kind",
    "named_operations",
    "per_unit_cadence",
    "running_statistic",
]


@dataclass(frozen=True)
class Declined:
    """An operation asked for that offline mode does not do, and why."""

    label: str
    reason: str


@dataclass(frozen=True)
class _Words:
    key: str
    words: re.Pattern[str]
    reason: str = ""


@cache
def _table(name: str) -> tuple[_Words, ...]:
    rows = read_table("domain.toml").get(name, [])
    return tuple(
        _Words(str(r.get("key") or r["label"]), re.compile(r["words"], re.I), r.get("reason", ""))
        for r in rows
    )


def named_operations(text: str) -> list[tuple[str, int, int]]:
    """(operation key, start, end) of each vocabulary operation the text names, in order."""
    found = [(op.key, *m.span()) for op in _table("operation") if (m := op.words.search(text))]
    return sorted(found, key=lambda f: f[1])


_WINDOW_WORD = re.compile(r"\b(?:running|moving|rolling|sliding|boxcar)\b[- ]?", re.I)


def running_statistic(text: str) -> tuple[str, int, int] | None:
    """The statistic of a running window and its span ("rolling median" -> "median").

    Only a statistic written right after the window word counts, so "running 10 min
    average" is a mean and never a minimum. "boxcar" and "smoothed" are means.
    """
    for window in _WINDOW_WORD.finditer(text):
        for stat in _table("statistic"):
            match = stat.words.match(text, window.end())
            if match is not None:
                return stat.key, window.start(), match.end()
        return "mean", *window.span()
    return None


_TRENDS = re.compile(r"\b(?P<mean>mean|average)\b|\b(?P<linear>linear|trend\w*)\b", re.I)


def detrend_kind(text: str, start: int, end: int) -> str:
    """'mean' when the words around [start, end) remove the mean, else 'linear'."""
    around = text[max(0, start - 20) : end + 20]
    match = _TRENDS.search(around)
    return "mean" if match is not None and match["mean"] else "linear"


_UNIT_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0, "week": 604800.0}
_PER_UNIT = re.compile(
    r"\b(?:one|a|1|single)\s+(?:value|point|sample|average|mean|number|datum|measurement)s?"
    r"\s+(?:per|a|an|every|each|for each)\s+(?:(?P<n>\d+(?:\.\d+)?)[\s-]*)?"
    r"(?P<u>second|sec|minute|min|hour|hr|day|week)s?\b",
    re.I,
)
_SHORT_UNITS = {"sec": "second", "min": "minute", "hr": "hour"}


def per_unit_cadence(text: str) -> tuple[float, int, int] | None:
    """A cadence written as a count per unit ("one value per day" -> 86400 s) and its span."""
    match = _PER_UNIT.search(text)
    if match is None:
        return None
    unit = match["u"].lower()
    count = float(match["n"]) if match["n"] else 1.0
    return count * _UNIT_SECONDS[_SHORT_UNITS.get(unit, unit)], *match.span()


def declined_operations(text: str) -> list[Declined]:
    """Operations the text asks for that offline mode does not do, in vocabulary order."""
    return [Declined(d.key, d.reason) for d in _table("declined") if d.words.search(text)]
