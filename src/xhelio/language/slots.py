"""A request read into slots, with every content word accounted for.

A slot is one thing the request says (a mission, a quantity, the time, a frame, an
operation, a place, a formula, ...) and the span of the words that said it. The parsers
that read each kind live elsewhere; `account` takes the spans they claimed and finds
the rest: a word is consumed by a slot, known to the request-word tables of the
vocabulary (`vocabulary/request_words.toml`: filler, figure, operation, follow-up,
catalog-question and unit words), or *left over*. A left-over word could change the
answer, so the answer states it was not used, or asks about it when it stands where a
spacecraft name goes (`name_runs`).

Three kinds are found here because they decide what must NOT be read as something else:
places ("at geosynchronous orbit", "in lunar orbit", "at L1") say where, not what to
fetch; formulas ("n v^2", "B^2/2mu0") are symbols, not spacecraft names; spacecraft
designations ("LANL 1994-084") are names, not dates.
Imports `vocabulary` only (for the word tables).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Literal

from xhelio.vocabulary import load_vocabulary, read_table

__all__ = [
    "Slot",
    "SlotKind",
    "SlotReading",
    "Word",
    "account",
    "content_words",
    "filler_words",
    "find_designations",
    "find_formulas",
    "find_places",
    "masked",
    "name_runs",
]

SlotKind = Literal[
    "mission",
    "dataset",
    "parameter",
    "instrument",
    "product",
    "quantity",
    "component",
    "species",
    "frame",
    "cadence",
    "operation",
    "time",
    "figure",
    "followup",
    "discovery",
    "unit",
    "place",
    "formula",
]
_TABLE_KINDS: tuple[SlotKind, ...] = ("figure", "operation", "followup", "discovery", "unit")


@dataclass(frozen=True)
class Slot:
    """One thing the request says, and where: `value` is what it was read as."""

    kind: SlotKind
    value: str
    start: int
    end: int

    def text(self, request: str) -> str:
        """The words of `request` that fed this slot."""
        return request[self.start : self.end]


@dataclass(frozen=True)
class Word:
    """A content word of the request and its span."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class SlotReading:
    """The slots of one request and the words no slot and no word table took."""

    text: str
    slots: tuple[Slot, ...] = ()
    leftover: tuple[Word, ...] = ()

    def of(self, kind: SlotKind) -> tuple[Slot, ...]:
        """The slots of one kind, in text order."""
        return tuple(s for s in self.slots if s.kind == kind)

    def phrase(self, kind: SlotKind, value: str) -> str | None:
        """The words that asked for `value` of `kind` ("proton density" for density)."""
        slot = next((s for s in self.slots if s.kind == kind and s.value == value), None)
        return slot.text(self.text) if slot else None


@dataclass(frozen=True)
class _Tables:
    filler: frozenset[str]
    kinds: dict[str, SlotKind]
    places: tuple[re.Pattern[str], ...]


@cache
def _tables() -> _Tables:
    raw = read_table("request_words.toml")
    kinds: dict[str, SlotKind] = {}
    for kind in _TABLE_KINDS:
        for word in str(raw[kind]["words"]).split():
            kinds.setdefault(word, kind)
    filler = frozenset(str(raw["filler"]["words"]).split())
    # The words of follow-ups that move the time ("preceding", "widen"), as follow-up words.
    for phrases in raw["followup_time"].values():
        for word in " ".join(phrases).split():
            if word not in filler:
                kinds.setdefault(word, "followup")
    places = tuple(re.compile(p, re.I) for p in raw["place"]["phrases"])
    return _Tables(filler, kinds, places)


def filler_words() -> frozenset[str]:
    """The words that name nothing for the answer ("please", "show", "the")."""
    return _tables().filler


# A content word holds a letter; "km/s", "He2+", "Zephyr-3" and "let's" are one word each.
_WORD = re.compile(r"(?<![\w/^*])[A-Za-z][\w'+/-]*(?<![-'/])")


def content_words(text: str) -> list[Word]:
    """Every word of `text` that holds a letter, with its span."""
    return [Word(m[0], *m.span()) for m in _WORD.finditer(text)]


def _key(word: str) -> str:
    lowered = word.lower()
    return lowered[:-2] if lowered.endswith("'s") else lowered


def account(text: str, found: Iterable[Slot]) -> SlotReading:
    """Slots from the spans the parsers claimed, plus table words; the rest is left over.

    Args:
        text: The request as the parsers read it (same character positions).
        found: A slot for every span a parser consumed.
    """
    tables = _tables()
    slots = [s for s in found if s.end > s.start]
    taken = [(s.start, s.end) for s in slots]
    leftover: list[Word] = []
    for word in content_words(text):
        key = _key(word.text)
        end = word.start + len(key)  # "Earth's" is taken with "at Earth"
        if _covered(word.start, end, taken):
            continue
        kind = tables.kinds.get(key)
        if kind is not None:
            slots.append(Slot(kind, key, word.start, word.end))
        elif key not in tables.filler and key.strip("'") not in tables.filler:
            leftover.append(word)
    slots.sort(key=lambda s: (s.start, s.end))
    return SlotReading(text, tuple(slots), tuple(leftover))


def _covered(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    """Whether the spans taken cover [start, end) together, without a gap.

    One written word may hold several slots: "dBz/dt" is an operation around a quantity.
    """
    at = start
    for a, b in sorted(taken):
        if a <= at < b:
            at = b
            if at >= end:
                return True
    return False


def find_places(text: str) -> list[tuple[int, int]]:
    """Spans of phrases that say where a spacecraft is ("in lunar orbit", "at L1")."""
    return [m.span() for p in _tables().places for m in p.finditer(text)]


def find_designations(text: str) -> list[tuple[int, int]]:
    """Spans of the numbers of spacecraft designations ("1994-084" of "LANL 1994-084").

    The product words marked `designation` in `vocabulary/domain.toml` say how they are
    written; the numbers they capture are a name, so the time reader must not take them.
    """
    return [
        m.span(group)
        for p in load_vocabulary().products
        if p.designation
        for m in p.words.finditer(text)
        for group, value in m.groupdict().items()
        if value
    ]


# A formula: symbols joined by ^ * / ("v^2", "B^2/2mu0", "rho*v^2"), with the bare
# symbols written in front of it by juxtaposition ("n v^2", "0.5 rho v^2").
_SYMBOL = r"(?:\d+(?:\.\d+)?)?(?:[A-Za-z\u03bc\u03c1]{1,3}\d?|\d+)(?:\^-?\d+|[\u00b2\u00b3])?"
_CHAIN = re.compile(
    rf"(?<![\w|]){_SYMBOL}(?:\s*[\^*/]\s*\(?{_SYMBOL}\)?)*(?:\^-?\d+|[\u00b2\u00b3])"
    rf"(?:\s*[*/]\s*\(?{_SYMBOL}\)?)*(?![\w|])"
    rf"|(?<![\w|]){_SYMBOL}(?:\s*[*/]\s*\(?{_SYMBOL}\)?)+(?![\w|])"
)
_JUXTAPOSED = re.compile(
    r"(?:(?<![\w|])(?:\d+(?:\.\d+)?|1/2|n|rho|\u03c1|[nmpNPBTV]|mu0|\u03bc0)\s+)+$"
)


def find_formulas(text: str) -> list[tuple[int, int]]:
    """Spans of formulas written in symbols ("n v^2", "B^2/2mu0", "rho*v^2")."""
    spans: list[tuple[int, int]] = []
    for match in _CHAIN.finditer(text):
        piece = match[0]
        if re.fullmatch(r"[\d.\s/*]+", piece) or re.fullmatch(r"\d+\s*/\s*\d+", piece):
            continue  # a date or a plain number ("2015/03/17", "1/2"), not symbols
        if not re.search(r"[\^*\u00b2\u00b3]|mu0|\u03bc0|\d[A-Za-z]", piece):
            continue  # "km/s", "and/or", "n/cc": units and words, not a formula
        start = match.start()
        before = _JUXTAPOSED.search(text[:start])
        spans.append((before.start() if before else start, match.end()))
    return spans


_NAME_SHAPE = re.compile(r"[A-Z]|.*[A-Za-z]-?\d")


def name_runs(reading: SlotReading) -> list[tuple[int, int]]:
    """Spans of left-over words shaped like a name: "Demo Observatory", "Zephyr-3".

    A run is consecutive content words, each left over or a capitalised filler word that
    continues a name ("Observatory", "Probe"), holding at least one left-over word with a
    capital or a digit. The caller decides whether it stands where a spacecraft goes.
    """
    leftover = {w.start for w in reading.leftover}
    runs: list[tuple[int, int]] = []
    current: list[Word] = []

    def close() -> None:
        named = [w for w in current if w.start in leftover and _NAME_SHAPE.match(w.text)]
        if named:
            runs.append((current[0].start, current[-1].end))
        current.clear()

    for word in content_words(reading.text):
        joins = word.start in leftover or (
            current and word.text[:1].isupper() and _key(word.text) in _tables().filler
        )
        gap = reading.text[current[-1].end : word.start] if current else " "
        if joins and (not current or gap.strip(" -") == ""):
            current.append(word)
            continue
        close()
        if word.start in leftover:
            current.append(word)
    close()
    return runs


def masked(text: str, start: int, end: int) -> str:
    """`text` with [start, end) blanked: spaces, so every other span keeps its place."""
    return text[:start] + " " * (end - start) + text[end:]
