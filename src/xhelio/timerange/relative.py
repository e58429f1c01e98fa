"""Windows relative to a time: a length, a relation and the anchor it is measured from.

"18 h before shock arrival at 2003-10-29 06:11", "the 6 h leading up to ...", "from 2 h
before to 4 h after ...", "3 days starting 2004 Jun 29", "± 1 day around the 2012-07-23
CME", "within 2 days of ...", "the 2012-07-23 CME ± 2 days". The words are tables
(numbers, units, relations, event nouns); the anchor is whatever the sentence grammar
already read (a date, an instant, a day of year, a named event). The words naming what
happened at the anchor ("shock arrival", "the X8.2 flare") may stand between relation and
anchor, or just after it ("the 2012-07-23 CME").

Semantics: before an anchor ends at its start; after a whole day (or longer) starts at its
end, after an instant at the instant; starting/from starts at the anchor's start; around a
day is the day itself with N either side (inclusive), around an instant N either side.
Imports only `timerange.grammar`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from xhelio.timerange.grammar import TimeRange
from xhelio.timerange.words import NUMBER_WORDS as _NUMBER_WORDS
from xhelio.timerange.words import UNIT_WORDS as _UNIT_WORDS
from xhelio.timerange.words import alternatives as _alternatives
from xhelio.timerange.words import count as _count

__all__ = [
    "Relation",
    "around",
    "event_words_after",
    "phrase_spans",
    "relation_before",
    "suffix_around",
    "unread_time_words",
]

# --- word tables ------------------------------------------------------------------------

# What a relation word measures from; "around" words need a ± or "within" before them.
_RELATION_WORDS = {
    "start": "starting|beginning|commencing|from|since",
    "after": "after|following|past",
    "before": "before|preceding|prior to|leading up to|leading to|up to|ahead of",
    "centre": "around|surrounding|centred on|centered on|centred at|centered at",
}
_PLUS_MINUS_SIGN = r"(?:\u00b1|\+/-|\+-|plus\s+or\s+minus)"
_PLUS_MINUS = rf"(?:{_PLUS_MINUS_SIGN}|within)"
_AROUND_WORDS = r"around|about|of|from|near|cent(?:red|ered)\s+on|either\s+side\s+of"
_EITHER_SIDE = r"(?:(?:on\s+)?(?:either|each|both)\s+sides?\s+of|before\s+and\s+after)"
# Nouns of what happens at an anchor; any lower-case words may lead up to them.
EVENT_NOUNS = frozenset(
    [
        "storm",
        "storms",
        "cme",
        "cmes",
        "icme",
        "icmes",
        "flare",
        "flares",
        "shock",
        "shocks",
        "event",
        "events",
        "arrival",
        "onset",
        "commencement",
        "ssc",
        "sc",
        "si",
        "substorm",
        "substorms",
        "eruption",
        "crossing",
        "impact",
        "peak",
        "minimum",
        "maximum",
        "hss",
        "cir",
        "sir",
        "gle",
        "sep",
        "burst",
        "passage",
        "encounter",
    ]
)
# Words that end a noun phrase: another clause, list or range starts there.
_STOP_WORDS = frozenset(
    [
        "and",
        "or",
        "to",
        "until",
        "till",
        "through",
        "thru",
        "then",
        "vs",
        "versus",
        "with",
        "for",
        "from",
        "between",
        "plus",
        "compare",
        "plot",
        "show",
        "before",
        "after",
        "following",
        "preceding",
        "prior",
        "starting",
        "beginning",
        "around",
        "within",
        "during",
        "since",
    ]
)
_MAX_GAP_WORDS = 6


def _length(tag: str) -> str:
    """A length ("18 h", "two days", "the hour", "half a day"), its parts tagged."""
    return (
        rf"(?:(?P<{tag}the>the|a)\s+)?"
        rf"(?:(?P<{tag}n>\d+(?:\.\d+)?|{_alternatives(_NUMBER_WORDS)})[\s-]*)?"
        rf"(?P<{tag}u>{_alternatives(_UNIT_WORDS)})\b"
    )


_LEAD = r"(?:\b(?:for|in|during|over)\s+)?"
_ONE_SIDED = re.compile(
    rf"{_LEAD}\b{_length('a')}(?:\s+(?:window|interval|period|span|stretch))?"
    rf"\s+(?P<rel>{'|'.join(_RELATION_WORDS.values())})"
    r"(?:\s+(?:at|on|with))?\s*",
    re.I,
)
_AROUND = re.compile(
    rf"{_LEAD}{_PLUS_MINUS}\s*{_length('a')}\s+(?:{_AROUND_WORDS})(?:\s+(?:at|on))?\s*", re.I
)
_SIDES = re.compile(rf"{_LEAD}\b{_length('a')}\s+{_EITHER_SIDE}(?:\s+(?:at|on))?\s*", re.I)
_BOTH_SIDES = re.compile(
    rf"(?:\b(?:from|between)\s+)?\b{_length('a')}\s+(?:before|prior\s+to|preceding)\s+"
    rf"(?:to|and|until|till|through)\s+{_length('b')}\s+(?:after|following)"
    r"(?:\s+(?:at|on))?\s*",
    re.I,
)
_SUFFIX = re.compile(rf"\s*,?\s*{_PLUS_MINUS_SIGN}\s*{_length('a')}", re.I)
_WORD = re.compile(r"[^\s,;()]+")


@dataclass(frozen=True)
class Relation:
    """A relation phrase found before an anchor: what it asks and where it starts."""

    kind: str  # "start", "after", "before", "centre", "around" or "both"
    length: timedelta
    later: timedelta  # the "after" length of "from N before to M after"
    start: int
    end: int

    def window(self, anchor: TimeRange) -> TimeRange:
        """The window this relation makes of `anchor`."""
        after_from = anchor.end if _is_period(anchor) else anchor.start
        if self.kind == "before":
            return TimeRange(anchor.start - self.length, anchor.start)
        if self.kind == "after":
            return TimeRange(after_from, after_from + self.length)
        if self.kind == "around":
            return around(anchor, self.length)
        if self.kind == "both":
            return TimeRange(anchor.start - self.length, after_from + self.later)
        if self.kind == "centre":  # "the 24 hours around T": that long, T in the middle
            middle = anchor.start + anchor.duration / 2 if _is_period(anchor) else anchor.start
            return TimeRange(middle - self.length / 2, middle + self.length / 2)
        return TimeRange(anchor.start, anchor.start + self.length)


def _is_period(r: TimeRange) -> bool:
    """A whole day or longer (a date, an event), not an instant or a clock range."""
    return r.duration >= timedelta(days=1)


def around(anchor: TimeRange, half: timedelta) -> TimeRange:
    """N either side: of a day (or longer), of its ends; of an instant, of it."""
    if _is_period(anchor):
        return TimeRange(anchor.start - half, anchor.end + half)
    return TimeRange(anchor.start - half, anchor.start + half)


def _amount(match: re.Match[str], tag: str) -> timedelta | None:
    count_text, unit_text = match[f"{tag}n"], match[f"{tag}u"].lower()
    if count_text is None and match[f"{tag}the"] is None:
        return None  # a bare unit ("hour before") is not a length
    count = 1.0 if count_text is None else _count(count_text)
    return count * _UNIT_WORDS[unit_text] if count > 0 else None


def _gap_word(word: str) -> bool:
    """Whether a word may stand in the noun phrase naming what happened at the anchor."""
    bare = word.strip(".,'\u2019").lower()
    if not bare or bare in _STOP_WORDS:
        return False
    if re.fullmatch(r"[abcmx]\d+(?:\.\d+)?", bare):  # a flare class, "X8.2"
        return True
    return re.fullmatch(r"[a-z][a-z'\u2019-]*", bare) is not None


def _gap_ok(gap: str) -> bool:
    words = _WORD.findall(gap)
    if len(words) > _MAX_GAP_WORDS or re.search(r"[;()]", gap):
        return False
    return all(_gap_word(w) for w in words)


def phrase_spans(
    text: str, start: int, end: int, missions: frozenset[str]
) -> tuple[tuple[int, int], ...]:
    """The spans of text[start:end] the time used: all but the spacecraft named in it.

    "2 hours before Wind saw the shock at T" uses every word but "Wind".
    """
    spans: list[tuple[int, int]] = []
    at = start
    for word in _WORD.finditer(text, start, end):
        if not word[0].islower() and word[0].lower().strip(".,") in missions:
            spans.append((at, word.start()))
            at = word.end()
    spans.append((at, end))
    return tuple((a, b) for a, b in spans if b > a)


def relation_before(text: str, anchor_start: int) -> Relation | None:
    """The relation phrase that leads to an anchor starting at `anchor_start`, or None.

    Words between the phrase and the anchor must read as a noun phrase (at most six
    words, none starting another clause).
    """
    head = text[:anchor_start]
    best: Relation | None = None
    for form in (_BOTH_SIDES, _AROUND, _SIDES, _ONE_SIDED):
        for match in form.finditer(head):
            if not _gap_ok(head[match.end() :]):
                continue
            relation = _relation(form, match)
            if relation is not None and (best is None or relation.start < best.start):
                best = relation
        if best is not None:
            return best
    return None


def _relation(form: re.Pattern[str], match: re.Match[str]) -> Relation | None:
    length = _amount(match, "a")
    if length is None:
        return None
    if form is _BOTH_SIDES:
        later = _amount(match, "b")
        return None if later is None else Relation("both", length, later, *match.span())
    if form in (_AROUND, _SIDES):
        return Relation("around", length, timedelta(0), *match.span())
    word = " ".join(match["rel"].lower().split())
    kind = next(k for k, words in _RELATION_WORDS.items() if word in words.split("|"))
    return Relation(kind, length, timedelta(0), *match.span())


def event_words_after(text: str, end: int) -> int:
    """Where the noun naming an anchor's event ends ("2012-07-23 CME"), or `end`."""
    tail = text[end:]
    words = list(_WORD.finditer(tail))[:3]
    for match in reversed(words):
        if match[0].strip(".,").lower() in EVENT_NOUNS and _gap_ok(tail[: match.end()]):
            return end + match.end()
    return end


def suffix_around(text: str, end: int) -> tuple[timedelta, int] | None:
    """A '± N' written after an anchor ending at `end`: the half-width and where it ends."""
    match = _SUFFIX.match(text, end)
    if match is None:
        return None
    half = _amount(match, "a")
    return None if half is None else (half, match.end())


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
# Days named relative to another time or to today, which no date came with ("last
# Tuesday", "the next morning", "to the end of the month", "this weekend").
_DAY_WORDS = (
    r"\b(?:(?:last|previous|next|following|coming|this|on)\s+)?"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)\b"
    r"|\b(?:next|following|previous|same|this)\s+(?:morning|afternoon|evening|night|day)\b"
    r"|\b(?:end|rest|remainder|start|beginning)\s+of\s+(?:the|this|that)\s+"
    r"(?:day|week|month|year)\b"
)
# Time words a request may hold that name no range on their own: a year, a day of year,
# a date without its year, a length measured from an event with no date ("18 h before
# shock arrival", "± 2 days around the CME").
_UNREAD = re.compile(
    r"\b(?:19[5-9]\d|20\d\d)\b|\bdoys?\s*\d|\bdays?\s+\d{1,3}\b"
    rf"|\b{_MONTH}\s+[0-3]?\d(?:st|nd|rd|th)?\b|\b[0-3]?\d(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?!\w)"
    rf"|{_PLUS_MINUS_SIGN}\s*{_length('a')}"
    rf"|\b{_length('b')}\s+(?:{'|'.join(_RELATION_WORDS.values())}|{_AROUND_WORDS})\s+"
    rf"(?:the\s+)?(?:[a-z][\w-]*\s+){{0,3}}?(?:{_alternatives(EVENT_NOUNS)})\b"
    rf"|{_DAY_WORDS}",
    re.I,
)


def unread_time_words(text: str) -> str | None:
    """Time words in `text` (what the time range did not use) that name no range alone."""
    match = _UNREAD.search(text)
    return None if match is None else match[0]
