"""A named event beside a window written out: which of the two is the request's time.

An explicit window wins over an event that only labels it ("the week starting 2015-07-13
(Pluto flyby)" is the week, not the three days of the flyby). The event wins only when the
time written is a calendar period that merely places it ("the storm of March 2015", "the
2003 Halloween storm", "Halloween storm (October 2003)"). When the window wins and the
event's dates fall wholly or partly outside it, the words of the range say so.
Imports only `timerange.grammar`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from xhelio.timerange.grammar import TimeRange

__all__ = ["Named", "window_words"]

# Between an event's name and the calendar period after it that places it:
# "storm of March 2015", "storm in 2015", "storm (October 2003)", "storm, 2003".
_PLACED_AFTER = re.compile(
    r"^\s*[,(\[]?\s*(?:(?:of|in|on|during)\s+)?(?:the\s+)?(?:year\s+)?$", re.I
)
# Between a calendar period and the event's name after it: "the 2003 Halloween storm".
_PLACED_BEFORE = re.compile(r"^\s*(?:'s\s*)?$")
_A_MONTH = timedelta(days=28)


@dataclass(frozen=True)
class Named:
    """A time read from the request: its range, its words, and where they stand."""

    range: TimeRange
    words: str
    spans: tuple[tuple[int, int], ...]


def _calendar_period(r: TimeRange) -> bool:
    """A whole month, season, quarter or year (or several): a period that places an event."""
    starts_month = r.start.day == 1 and r.start.hour == r.start.minute == r.start.second == 0
    ends_month = r.end.day == 1 and r.end.hour == r.end.minute == r.end.second == 0
    return starts_month and ends_month and r.duration >= _A_MONTH


def _places(text: str, written: Named, event: Named) -> bool:
    """Whether the written period only says when the event was ("the storm of March 2015")."""
    if not _calendar_period(written.range):
        return False
    if not written.range.start <= event.range.start < written.range.end:
        return False  # the period places the event by when it began (October 2003)
    first, last = min(a for a, _ in written.spans), max(b for _, b in written.spans)
    event_first = min(a for a, _ in event.spans)
    event_last = max(b for _, b in event.spans)
    if first >= event_last:
        return _PLACED_AFTER.match(text[event_last:first]) is not None
    return last <= event_first and _PLACED_BEFORE.match(text[last:event_first]) is not None


def window_words(text: str, written: Named, event: Named) -> str | None:
    """The words of the written window when it wins over the event, or None.

    None means the event is the time: the written period only places it.
    """
    if _places(text, written, event):
        return None
    w, e = written.range, event.range
    if (w.start <= e.start and e.end <= w.end) or (e.start <= w.start and w.end <= e.end):
        return written.words  # the window holds the event, or is a part of it
    missed = e.end <= w.start or w.end <= e.start
    where = "falls outside it" if missed else "falls partly outside it"
    return f"{written.words}, as written; the event named, {event.words}, {where}"
