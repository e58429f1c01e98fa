"""Days named instead of a date: "Christmas Day 2006", "the vernal equinox of 2012".

The days and their dates are data (`[[day]]` of the vocabulary's domain.toml); the year
is the one written beside the name. A listed event wins in its own year ("Halloween
2003" is the Halloween storms, "Halloween 2005" is 31 October 2005). A day with no year
beside it, a day whose date moves from year to year (Easter), and a capitalised "X Day"
that is not listed are questions, never a silent guess or the whole year around them.
Imports only `timerange.grammar` and `vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from xhelio.timerange.grammar import TimeRange, parse_time_range
from xhelio.vocabulary import NamedDay, load_vocabulary

__all__ = ["DayFound", "named_day"]

_YEAR_AFTER = re.compile(
    r"\s*,?\s*(?:(?:of|in)\s+(?:the\s+year\s+)?)?(?P<y>(?:1[6-9]|2[0-2])\d\d)(?![\w-])", re.I
)
_YEAR_BEFORE = re.compile(
    r"(?<![\w-])(?P<y>(?:1[6-9]|2[0-2])\d\d)(?:'s)?\s*,?\s*(?:the\s+)?$", re.I
)
# A day named like a holiday ("Groundhog Day", "Founders' Day", "Midsummer Eve") that no
# row of the vocabulary lists. Written with capitals, as names are; "Day 75" is a number.
_LIKE_A_DAY = re.compile(
    r"\b(?P<name>(?:[A-Z][\w'\u2019.]*\s+){1,3}(?:Day|Eve|Night))\b(?!\s*\d{1,3}(?!\d))"
)
_NOT_A_DAY_NAME = re.compile(
    r"^(?:the|this|that|next|same|each|every|one|whole|previous|following|first|last"
    r"|a|on|of|per|any|quiet|storm|disturbed|plot|show|for|from|to|in)$",
    re.I,
)


@dataclass(frozen=True)
class DayFound:
    """A named day read: its range and words, or the question to ask instead."""

    range: TimeRange | None
    words: str
    span: tuple[int, int]
    question: str | None = None


def named_day(text: str, now: datetime | None = None) -> DayFound | None:
    """The day a request names ("Christmas 2006"), a question about it, or None."""
    vocab = load_vocabulary()
    for day in vocab.days:
        match = day.words.search(text)
        if match is not None:
            return _read(text, day, match, now)
    return _unlisted(text)


def _read(text: str, day: NamedDay, match: re.Match[str], now: datetime | None) -> DayFound | None:
    after = _YEAR_AFTER.match(text, match.end())
    before = _YEAR_BEFORE.search(text[: match.start()])
    year = after["y"] if after else before["y"] if before else None
    event = _event_year(text)
    if event is not None and year in (None, event):
        return None  # "the Halloween storm", "St Patrick's Day 2015": the listed event
    start = before.start() if before and not after else match.start()
    end = after.end() if after else match.end()
    words = text[start:end].strip()
    if not day.date:
        return DayFound(
            None,
            words,
            (start, end),
            f"{day.name} falls on a different date each year; please give the date "
            "(for example 2012-04-08)",
        )
    if year is None:
        return DayFound(
            None,
            words,
            (start, end),
            f"Which year's {day.name} do you mean? Please give the year or the date "
            f"(for example {day.name} 2006)",
        )
    iso = f"{year}-{day.date}"
    note = f"; {day.note}" if day.note else ""
    return DayFound(parse_time_range(iso, now), f"{words} taken as {iso}{note}", (start, end))


def _event_year(text: str) -> str | None:
    """The year of a listed event the text names, or None."""
    for event in load_vocabulary().events:
        if event.words.search(text) and (event.spacecraft is None or event.spacecraft.search(text)):
            return event.range[:4]
    return None


def _unlisted(text: str) -> DayFound | None:
    for match in _LIKE_A_DAY.finditer(text):
        words = match["name"].split()
        if _NOT_A_DAY_NAME.match(words[0]) and len(words) == 2:
            continue
        name = " ".join(w for w in words if not _NOT_A_DAY_NAME.match(w))
        if not name or name in ("Day", "Eve", "Night"):
            continue
        return DayFound(
            None,
            name,
            match.span(),
            f"I do not know the date of '{name}'; please give the date (for example 2012-02-02)",
        )
    return None
