"""Follow-ups that change the time of what is shown, read against the range loaded.

"extend it through 16 July", "start it two days earlier", "the next 3 days", "the day
before", "and the 6 hours after that", "go back two days", "add 6 more hours", "zoom to
06:00-12:00", "zoom to the 17th", "now the density for the same day". The words come from
the `[followup_time]` table of `vocabulary/request_words.toml`; dates and clocks are read by
the one time grammar (`timerange`), a date without its year taking the loaded range's.
A phrase that the grammar alone reads against now ("next 3 days", "the previous 2 days")
is read against the range loaded instead. Every change is said in a note.
Imports only `language`, `timerange` and `vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from xhelio.language.intent import RequestIntent
from xhelio.language.wishes import format_seconds
from xhelio.timerange import TimeRange, clock_range_on, find_time, find_time_near
from xhelio.timerange.words import NUMBER_WORDS, UNIT_WORDS, alternatives, count, unit
from xhelio.vocabulary import read_table

__all__ = ["FollowedTime", "follow_time", "moves_time", "time_words", "zoom_clock"]

_COUNT = rf"(?:\d+(?:\.\d+)?|{alternatives(NUMBER_WORDS)})"
_UNIT = alternatives(UNIT_WORDS)


@dataclass(frozen=True)
class _Words:
    """The `[followup_time]` table as patterns."""

    extend: re.Pattern[str]
    include: re.Pattern[str]
    shift: re.Pattern[str]
    later: re.Pattern[str]
    earlier: re.Pattern[str]
    edge: re.Pattern[str]
    beside: re.Pattern[str]
    same: re.Pattern[str]
    whole: re.Pattern[str]
    calendar: re.Pattern[str]


def _any(words: list[str]) -> str:
    return rf"\b(?:{alternatives(words)})\b"


@cache
def _words() -> _Words:
    table: dict[str, list[str]] = read_table("request_words.toml")["followup_time"]
    length = rf"(?:(?P<n>{_COUNT})[\s-]*)?(?P<u>{_UNIT})\b"
    # "the next 3 days", "the following week"; "the day before", "the 6 hours after that".
    beside = (
        rf"\b(?:the\s+)?(?:(?P<next>{alternatives(table['next'])})"
        rf"|(?P<previous>{alternatives(table['previous'])}))\s+{length}"
        rf"|\b(?:the\s+)?{length.replace('<n>', '<n2>').replace('<u>', '<u2>')}\s+"
        rf"(?:(?P<after>{alternatives(table['after'])})|(?P<before>{alternatives(table['before'])}))"
        r"(?!\s+\d)\b"
    )
    return _Words(
        extend=re.compile(_any(table["extend"]), re.I),
        include=re.compile(_any(table["include"]), re.I),
        shift=re.compile(_any(table["shift"]), re.I),
        later=re.compile(_any(table["later"]), re.I),
        earlier=re.compile(_any(table["earlier"]), re.I),
        edge=re.compile(
            rf"\b(?:(?P<s>{alternatives(table['start'])})|(?P<e>{alternatives(table['end'])}))\b",
            re.I,
        ),
        beside=re.compile(beside, re.I),
        same=re.compile(
            rf"\b(?:{alternatives(table['same'])})\s+(?:{alternatives(table['period'])})\b", re.I
        ),
        whole=re.compile(
            rf"\b(?:{alternatives(table['whole'])})\s+(?:{alternatives(table['period'])})\b"
            rf"|{_any(table['unzoom'])}",
            re.I,
        ),
        calendar=re.compile(
            rf"\b(?:{alternatives(table['whole'])})\s+(?P<u>{alternatives(table['calendar'])})\b",
            re.I,
        ),
    )


# "add 6 more hours", "another day", "two extra days": that much more time.
_MORE_TIME = re.compile(
    rf"\b(?:(?P<n>{_COUNT})\s+(?:more|extra|additional)"
    rf"|(?P<one>another|one more|an extra|an additional))\s+(?P<u>{_UNIT})\b",
    re.I,
)
# "two days", "6 hours", "a week": the length of a move or a growth.
_STEP = re.compile(rf"\b(?P<n>{_COUNT})[\s-]*(?P<u>{_UNIT})\b", re.I)
_DAY_OF_MONTH = re.compile(r"\b(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)\b", re.I)


@dataclass(frozen=True)
class _Beside:
    """A span of `length` next to the loaded one, after it (`later`) or before it."""

    length: timedelta
    later: bool


def _beside(text: str) -> _Beside | None:
    match = _words().beside.search(text)
    if match is None:
        return None
    n, u = (match["n"], match["u"]) if match["u"] else (match["n2"], match["u2"])
    later = bool(match["next"] or match["after"])
    return _Beside((count(n) if n else 1) * unit(u), later)


def _more_time(text: str) -> timedelta | None:
    match = _MORE_TIME.search(text)
    if match is None:
        return None
    return (1 if match["one"] else count(match["n"])) * unit(match["u"])


def _step(text: str) -> timedelta | None:
    match = _STEP.search(text)
    return None if match is None else count(match["n"]) * unit(match["u"])


def _sign(text: str) -> int:
    """+1 for "later", -1 for "earlier", 0 when the text says neither."""
    words = _words()
    return 1 if words.later.search(text) else -1 if words.earlier.search(text) else 0


def moves_time(text: str) -> bool:
    """Whether a request changes the time of what is shown ("the following week")."""
    words = _words()
    return bool(
        words.whole.search(text)
        or words.calendar.search(text)
        or words.extend.search(text)
        or words.shift.search(text)
        or words.beside.search(text)
        or words.same.search(text)
        or _MORE_TIME.search(text)
        or (_sign(text) and _STEP.search(text))
    )


def time_words(intent: RequestIntent) -> str:
    """The request with the spacecraft and dataset names blanked: "GOES 11" is no time."""
    text = " ".join(intent.text.split())  # the text the slots were found in
    for slot in intent.slots.slots:
        if slot.kind in ("mission", "dataset"):
            text = text[: slot.start] + " " * (slot.end - slot.start) + text[slot.end :]
    return text


# A clock written as people type it in a zoom ("3am", "9 pm", "0900 UT"), as hh:mm.
_AM_PM = re.compile(
    r"(?<![\w:])(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))?\s*(?P<p>[ap])\.?m\b\.?", re.I
)
_FOUR_DIGITS = re.compile(
    r"(?<![\w:.-])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)(?=\s*(?:UTC?\b|Z\b|h\b|-|\u2013|to\b|and\b"
    r"|until\b|till\b|$))",
    re.I,
)
# "zoom to 6 to 12", "narrow to 14-18h": whole hours, read as clocks only after such a verb.
_ZOOM_WORD = re.compile(r"\b(?:zoom|narrow|restrict|focus|crop|limit)\w*\b", re.I)
_BARE_HOURS = re.compile(
    r"(?<![\w:.-])(?P<a>[01]?\d|2[0-4])\s*(?:-|\u2013|to|until)\s*(?P<b>[01]?\d|2[0-4])"
    r"(?:\s*(?:h|hrs|UTC?|Z)\b)?(?![\w:.-])",
    re.I,
)
# "0300-0700 UT", "1400 to 1600Z": two 4-digit clocks joined, read as one clock range.
_FOUR_DIGIT_PAIR = re.compile(
    r"(?<![\w:.-])(?P<a>[01]\d|2[0-3])(?P<am>[0-5]\d)(?P<mid>\s*(?:-|\u2013|to|until|till)\s*)"
    r"(?P<b>[01]\d|2[0-3])(?P<bm>[0-5]\d)(?=\s*(?:UTC?|Z|GMT|h)\b|[^\w:.-]|$)(?!\s*-)",
    re.I,
)
_ANY_DAY = TimeRange(datetime(2000, 1, 1, tzinfo=UTC), datetime(2000, 1, 2, tzinfo=UTC))


def _clock_forms(text: str) -> str:
    def am_pm(m: re.Match[str]) -> str:
        hour = int(m["h"]) % 12 + (12 if m["p"].lower() == "p" else 0)
        return f"{hour:02d}:{m['m'] or '00'}"

    text = _AM_PM.sub(am_pm, text)
    text = _FOUR_DIGIT_PAIR.sub(lambda m: f"{m['a']}:{m['am']}{m['mid']}{m['b']}:{m['bm']}", text)
    text = _FOUR_DIGITS.sub(lambda m: f"{m['h']}:{m['m']}", text)
    if _ZOOM_WORD.search(text):
        text = _BARE_HOURS.sub(lambda m: f"{int(m['a']):02d}:00 to {int(m['b']):02d}:00", text)
    return text


def zoom_clock(text: str, span: TimeRange = _ANY_DAY) -> TimeRange | None:
    """A clock range with no date ("06:00 to 12:00", "3am-9am", "0900 to 1030 UT") on `span`."""
    return clock_range_on(_clock_forms(text), span)


def _zoom_note(loaded: TimeRange, zoom: TimeRange) -> str:
    """What a zoom to clock times did: inside the data loaded, or outside it (said)."""
    if loaded.start <= zoom.start and zoom.end <= loaded.end:
        several = loaded.duration > timedelta(days=1)
        day = " (the first day loaded; give a date to zoom into another)" if several else ""
        return f"Zoomed to {zoom.readable()} on the day already loaded{day}."
    return (
        f"Zoomed to {zoom.readable()}, which lies outside the data already loaded "
        f"({loaded.readable()}): that time was fetched on the same day, not cut from the view."
    )


def _day_of_month(loaded: TimeRange, text: str, notes: list[str]) -> TimeRange | None:
    """That day of the loaded range ("zoom to the 17th"), or None."""
    day = _DAY_OF_MONTH.search(text)
    if day is None:
        return None
    try:
        start = loaded.start.replace(day=int(day["d"]), hour=0, minute=0, second=0)
    except ValueError:
        return None
    if not loaded.start <= start < loaded.end:
        return None
    notes.append(f"Zoomed to day {int(day['d'])} of the loaded time range.")
    return TimeRange(start, min(start + timedelta(days=1), loaded.end))


def _edge_moved(loaded: TimeRange, text: str, notes: list[str]) -> TimeRange | None:
    """One edge moved by a length ("start it two days earlier", "end it a day later")."""
    edge, step, sign = _words().edge.search(text), _step(text), _sign(text)
    if edge is None or step is None or not sign or _words().extend.search(text):
        return None
    start = loaded.start + sign * step if edge["s"] else loaded.start
    end = loaded.end if edge["s"] else loaded.end + sign * step
    if start >= end:
        return None
    notes.append(
        f"Moved the {'start' if edge['s'] else 'end'} of the time range "
        f"{format_seconds(step.total_seconds())} {'later' if sign > 0 else 'earlier'}."
    )
    return TimeRange(start, end)


def _grown(loaded: TimeRange, length: timedelta, later: bool, notes: list[str]) -> TimeRange:
    if later:
        notes.append(f"Extended the time range by {format_seconds(length.total_seconds())}.")
        return TimeRange(loaded.start, loaded.end + length)
    notes.append(f"Extended the time range {format_seconds(length.total_seconds())} earlier.")
    return TimeRange(loaded.start - length, loaded.end)


def _shifted(loaded: TimeRange, length: timedelta, later: bool, notes: list[str]) -> TimeRange:
    sign = 1 if later else -1
    notes.append(
        f"Shifted the time range {'forward' if later else 'back'} by "
        f"{format_seconds(length.total_seconds())}."
    )
    return TimeRange(loaded.start + sign * length, loaded.end + sign * length)


def _moved(loaded: TimeRange, text: str, notes: list[str]) -> TimeRange | None:
    """The loaded range moved, grown or stepped beside by words with no date of their own."""
    words = _words()
    moved = _day_of_month(loaded, text, notes) or _edge_moved(loaded, text, notes)
    if moved is not None:
        return moved
    beside, more = _beside(text), _more_time(text)
    extend = bool(words.extend.search(text))
    if beside is not None and not words.shift.search(text):
        if extend or words.include.search(text):
            return _grown(loaded, beside.length, beside.later, notes)
        span = (
            TimeRange(loaded.end, loaded.end + beside.length)
            if beside.later
            else TimeRange(loaded.start - beside.length, loaded.start)
        )
        notes.append(
            f"Showing the {format_seconds(beside.length.total_seconds())} "
            f"{'after' if beside.later else 'before'} the time range loaded before: "
            f"{span.readable()}."
        )
        return span
    if extend or more is not None:
        return _grown(loaded, more or _step(text) or loaded.duration, _sign(text) >= 0, notes)
    step, sign = _step(text), _sign(text)
    if beside is not None:
        return _shifted(loaded, step or beside.length, beside.later, notes)
    if words.shift.search(text) or (step is not None and sign):
        return _shifted(loaded, step or loaded.duration, sign >= 0, notes)
    return None


def _to_date(loaded: TimeRange, asked: TimeRange, text: str, notes: list[str]) -> TimeRange:
    """The range a date asked makes: an edge moved to it ("extend it to 16 July"), or it."""
    edge = _words().edge.search(text)
    if _words().extend.search(text):
        # "extend it through March" after 17 March: the end moves to the end of March, the
        # start stays; only a date wholly before the loaded end moves the start back.
        later = asked.end > loaded.end
        start = loaded.start if later else min(loaded.start, asked.start)
        moved = TimeRange(start, max(loaded.end, asked.end))
    elif edge is not None and edge["s"] and asked.start < loaded.end:
        moved = TimeRange(asked.start, loaded.end)
    elif edge is not None and edge["e"] and asked.end > loaded.start:
        moved = TimeRange(loaded.start, asked.end)
    else:
        return asked
    notes.append(f"Changed the time range to {moved.readable()} (it was {loaded.readable()}).")
    return moved


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def _read_against_now(text: str) -> bool:
    """Whether the time the request names is only a follow-up phrase ("next 3 days").

    The grammar alone reads such a phrase back from now; without the phrase no time is left.
    """
    words = _words()
    phrases = [m.span() for p in (words.beside, words.same, _MORE_TIME) for m in p.finditer(text)]
    return bool(phrases) and find_time(_masked(text, phrases)).range is None


@dataclass(frozen=True)
class FollowedTime:
    """The time range a follow-up shows, the words that named it, or what could not be read."""

    range: TimeRange | None
    text: str | None
    error: str | None = None


def _whole(loaded: TimeRange, before: TimeRange | None, notes: list[str]) -> TimeRange:
    """The span shown before the zooms, else the whole days around the loaded span."""
    if before is None or not (before.start <= loaded.start and loaded.end <= before.end):
        start = loaded.start.replace(hour=0, minute=0, second=0, microsecond=0)
        end = loaded.end.replace(hour=0, minute=0, second=0, microsecond=0)
        before = TimeRange(start, end if end == loaded.end else end + timedelta(days=1))
    notes.append(f"Showing the whole span again: {before.readable()} (was {loaded.readable()}).")
    return before


def _next_calendar(when: datetime, calendar: str) -> datetime:
    """The start of the calendar week, month or year after the one `when` starts."""
    if calendar == "week":
        return when + timedelta(weeks=1)
    if calendar == "month":
        return when.replace(year=when.year + when.month // 12, month=when.month % 12 + 1)
    return when.replace(year=when.year + 1)


def _calendar_whole(loaded: TimeRange, text: str, notes: list[str]) -> TimeRange | None:
    """The whole calendar week, month or year around the loaded span ("the whole week")."""
    match = _words().calendar.search(text)
    if match is None:
        return None
    calendar = match["u"].lower()
    day = loaded.start.replace(hour=0, minute=0, second=0, microsecond=0)
    start = (
        day - timedelta(days=day.weekday())
        if calendar == "week"
        else day.replace(day=1)
        if calendar == "month"
        else day.replace(month=1, day=1)
    )
    end = _next_calendar(start, calendar)
    while end < loaded.end:
        end = _next_calendar(end, calendar)
    whole = TimeRange(start, end)
    monday = " (Monday to Sunday)" if calendar == "week" else ""
    notes.append(
        f"Showing the whole calendar {calendar}{monday} around the time range loaded: "
        f"{whole.readable()} (was {loaded.readable()})."
    )
    return whole


def follow_time(
    loaded: TimeRange | None,
    new: RequestIntent,
    notes: list[str],
    unzoomed: TimeRange | None = None,
) -> FollowedTime:
    """The time a follow-up shows, read against the range `loaded`; notes say what moved.

    `unzoomed` is the span shown before the last zooms, which "the whole day again" or
    "zoom out" shows again.
    """
    if loaded is None:
        return FollowedTime(new.time_range, new.time_text, new.time_error)
    text = time_words(new)
    asked, error = new.time_range, new.time_error
    if (asked is None or error) and (calendar := _calendar_whole(loaded, text, notes)):
        return FollowedTime(calendar, calendar.readable())
    if asked is None and _words().whole.search(text):
        whole = _whole(loaded, unzoomed, notes)
        return FollowedTime(whole, whole.readable())
    zoom = zoom_clock(text, loaded)
    if zoom is not None and (asked is None or error):
        dated = find_time_near(_clock_forms(text), loaded)  # "zoom to 30 Oct 06-12": that day
        if dated.range is not None and dated.text is not None:
            notes.append(f"Zoomed to {dated.range.readable()} ({dated.text}).")
            return FollowedTime(dated.range, dated.text)
        notes.append(_zoom_note(loaded, zoom))
        return FollowedTime(zoom, zoom.readable())
    asked_text = new.time_text
    if _read_against_now(text):
        asked, error = None, None
    elif asked is None:
        near = find_time_near(text, loaded)
        if near.range is not None:
            asked, asked_text, error = near.range, near.text, None
    if asked is not None:
        shown = _to_date(loaded, asked, text, notes)
        return FollowedTime(shown, asked_text if shown is asked else shown.readable())
    moved = _moved(loaded, text, notes)
    if moved is not None:
        return FollowedTime(moved, moved.readable())
    same = _words().same.search(text)
    if same is not None:
        notes.append(
            f"Kept the time range of the data already loaded ({loaded.readable()}), "
            f"as '{same[0]}' asks."
        )
        return FollowedTime(loaded, loaded.readable())
    if error is None:
        notes.append(
            f"No time range was given, so I used the time range of the data already "
            f"loaded ({loaded.readable()})."
        )
    return FollowedTime(loaded, loaded.readable(), error)
