"""Follow-ups: a request read against the session's last request.

"now smooth it", "add Wind", "same for Solar Orbiter", "shift to the next day", "zoom to
06:00-12:00", "put the density underneath", "remove the Wind trace", "log scale",
"export as PDF" and a request with no time range all complete the last request. "now
MMS3", "repeat for P2", "do it for B instead" name other probes of the last request's
constellation and keep its product (`RequestIntent.product_of`); "extend it to DATE",
"start it two days earlier", "the day before" move the loaded time range.

`replay` turns the session's earlier user requests (the REPL's memory, or the history a
resumed `ask --session` loaded) into the states they built, the last one the intent behind
the current data; "undo", "go back" and "revert that" take the last state off. `merge`
folds a new request into the last state. The result is a complete `RequestIntent`, so the
usual plan runs again (fetches come from the cache) and the answer says what was kept.
Imports only `language`, `timerange` and `vocabulary`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from xhelio.language.intent import MissionRef, OperationWish, QuantityWish, RequestIntent
from xhelio.language.probes import probe_swapped
from xhelio.language.resolve import probe_wanted
from xhelio.language.wishes import find_durations, format_seconds
from xhelio.timerange import TimeRange, clock_range_on
from xhelio.timerange.words import (
    NUMBER_WORDS,
    UNIT_WORDS,
    WHOLE_NUMBER_WORDS,
    alternatives,
    count,
    unit,
)
from xhelio.vocabulary import load_vocabulary

__all__ = ["export_only", "is_follow_up", "is_undo", "merge", "replay"]

_FOLLOW_WORDS = re.compile(
    r"\b(?:it|its|them|this|that|these|those|now|same|add|also|too|instead|underneath|below"
    r"|beneath|under|zoom\w*|shift\w*|move|extend\w*|remove|drop|delete|without|change"
    r"|switch|what about|how about|again|then|next day|previous day|forward|ahead|later"
    r"|earlier|back|repeat\w*|redo|(?:day|week|hour)s? (?:before|after))\b",
    re.I,
)
_ADD = re.compile(r"\b(?:add|also|too|plus|as well|underneath|below|beneath|under|overlay)\b", re.I)
_REMOVE = re.compile(r"\b(?:remove|drop|delete|without|take out|hide)\b", re.I)
_BELOW = re.compile(r"\b(?:underneath|below|beneath|under(?! \d))\b", re.I)
_SHIFT = re.compile(
    r"\b(?:shift|move|step|slide)\w*\b|\bgo(?:ing)? (?:back|forward|ahead|earlier|later)\b", re.I
)
_BACK = re.compile(r"\b(?:back\w*|earlier|previous|before|prior)\b", re.I)
# "add the next day", "include the previous day too": the day joins the span.
_ADD_TIME = re.compile(r"\b(?:add|include|plus|also|too|as well)\b", re.I)
_EXTEND = re.compile(r"\b(?:extend\w*|widen\w*|lengthen\w*)\b", re.I)
_DAY_WORD = re.compile(r"\b(?:next|previous|following|prior) (?P<u>day|week|hour)\b", re.I)
# "the day before", "the week after": the span of that length next to the one loaded.
_NEXT_TO = re.compile(r"\b(?P<u>day|week|hour)s? (?P<w>before|after)\b", re.I)
# "start it two days earlier", "end it on the 20th": one edge of the span moves.
_EDGE = re.compile(r"\b(?:(?P<s>start|begin)|(?P<e>end|stop|finish))(?:s|ing)?\b", re.I)
_LATER = re.compile(r"\b(?:later|after|forward|ahead)\b", re.I)
_DAY_OF_MONTH = re.compile(r"\b(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)\b", re.I)
_UNIT = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(days=7)}
# "add 6 more hours", "another day", "two extra days": that much more time.
_MORE_TIME = re.compile(
    rf"\b(?:(?P<n>\d+(?:\.\d+)?|{alternatives(NUMBER_WORDS)})\s+(?:more|extra|additional)"
    rf"|(?P<one>another|one more|an extra|an additional))\s+(?P<u>{alternatives(UNIT_WORDS)})\b",
    re.I,
)


def _more_time(text: str) -> timedelta | None:
    """How much more time "add 6 more hours" or "another day" asks for, or None."""
    match = _MORE_TIME.search(text)
    if match is None:
        return None
    return (1 if match["one"] else count(match["n"])) * unit(match["u"])


def _time_words(intent: RequestIntent) -> str:
    """The request with the spacecraft and dataset names blanked: "GOES 11" is no time."""
    text = " ".join(intent.text.split())  # the text the slots were found in
    for slot in intent.slots.slots:
        if slot.kind in ("mission", "dataset"):
            text = text[: slot.start] + " " * (slot.end - slot.start) + text[slot.end :]
    return text


def is_follow_up(intent: RequestIntent, has_base: bool) -> bool:
    """Whether a request builds on the last one rather than standing alone."""
    if not has_base or intent.discovery is not None or intent.doubts:
        return False
    served = bool(intent.missions or intent.dataset_ids)
    named = bool(intent.quantities) or served
    wishes = (
        _zoom_clock(_time_words(intent), TimeRange(_ANY_DAY, _ANY_DAY + timedelta(days=1)))
        or _MORE_TIME.search(intent.text)
        or _ALL_PROBES.search(intent.text)
        or _OTHER_PROBE.search(intent.text)
        or _THE_OTHER.search(intent.text)
        or intent.operations
        or intent.plot.log_y
        or intent.plot.layout != "auto"
        or intent.plot.export_format
        or load_vocabulary().species_named(intent.text)
    )
    if not (named or intent.time_range or wishes or _FOLLOW_WORDS.search(intent.text)):
        return False  # "hello there" names nothing to build on
    if not named or intent.time_range is None:
        return True  # something to show or a time is missing: the session supplies it
    # Quantities (or a mission) and a time: a request of its own unless it says otherwise.
    return bool(_FOLLOW_WORDS.search(intent.text)) and not (intent.compare and served)


# "same for probe E", "now all four spacecraft", "repeat for P2", "do it for B instead":
# the last request's constellation, other probes.
_OTHER_PROBE = re.compile(
    r"\b(?:probes?|spacecraft|satellites?|s/c)\s+(?P<p>(?:[A-E]|\d{1,2})(?:\s*(?:,|and|&|/)\s*"
    r"(?:and\s+)?(?:[A-E]|\d{1,2}))*)\b",
    re.I,
)
_LIST_GLUE = re.compile(r"\s*(?:,|\band\b|&|/)\s*", re.I)
_BARE_PROBE = re.compile(
    r"(?:^|\b(?:for|to|now|with|on|at|about|try)\s+)-?(?P<p>(?i:[a-z]{1,2}\d{1,2}|\d{1,2})|[A-E])"
    r"(?=\s*(?:(?i:instead|too|as well|please|now|then))?\s*[?.!]*\s*$)"
)
_THE_OTHER = re.compile(
    r"\bthe other (?:[\w-]+\s+){0,2}?(?:probe|spacecraft|satellite|one)\b", re.I
)
_SMALL_COUNT = rf"{alternatives(WHOLE_NUMBER_WORDS)}|\d{{1,2}}"
_ALL_PROBES = re.compile(
    rf"\b(?:all(?:\s+(?:the\s+)?(?P<n>{_SMALL_COUNT}))?|both|each|every)\s+"
    r"(?:of\s+the\s+)?(?:probes?|spacecraft|satellites?|s/c|ones?)\b"
    rf"|\ball\s+(?:the\s+)?(?P<m>{_SMALL_COUNT})\b"
    r"|\b(?:all|both|each)\s+of\s+them\b",
    re.I,
)


def _count_said(every: re.Match[str]) -> int | None:
    """How many spacecraft "all four", "all 3" or "both" says (None when no number)."""
    said = every["n"] or every["m"] or ("two" if every[0].lower().startswith("both") else "")
    said = said.lower()
    return WHOLE_NUMBER_WORDS.get(said, int(said) if said.isdigit() else None)


def _count_note(base: RequestIntent, new: RequestIntent) -> str | None:
    """What a count that does not fit the constellation was read as ("all four" THEMIS)."""
    every = _ALL_PROBES.search(new.text)
    other = _other_probes(base, new) if every else None
    said = _count_said(every) if every else None
    if other is None or said is None or said == len(other[0]):
        return None
    names = ", ".join(m.text for m in other[0])
    return (
        f"Differs from the request: '{every[0] if every else ''}' was written, and "
        f"{other[0][0].name} has {len(other[0])} spacecraft; showing all of them ({names})."
    )


def _other_probes(
    base: RequestIntent, new: RequestIntent
) -> tuple[tuple[MissionRef, ...], str] | None:
    """The last request's constellation with the probe(s) this one names, or None.

    With the words that named them when a bare shorthand did ("B", "P2"): they are no
    quantity ("B") and no unknown spacecraft ("P2").
    """
    vocab = load_vocabulary()
    multi = [m for m in base.missions if vocab.probe_names(m.mission_id) or probe_wanted(m.text)]
    multi = multi or _probes_of_datasets(base.dataset_ids)
    if not multi:
        return None
    first = multi[0]
    if (every := _ALL_PROBES.search(new.text)) is not None:
        names = vocab.probe_names(first.mission_id, first.text)
        if not names:
            return None  # no table of this fleet's members: "all" is not a list
        whole = vocab.probe_names(first.mission_id)
        if _count_said(every) == len(whole):
            names = whole  # "all five" after ARTEMIS P1: every THEMIS probe
        refs = [MissionRef(first.mission_id, first.name, n, first.position) for n in names]
        return tuple(refs), ""
    if _THE_OTHER.search(new.text):
        shown = {probe_wanted(m.text) for m in multi}
        names = vocab.probe_names(first.mission_id, first.text)
        rest = [n for n in names if probe_wanted(n) not in shown]
        if len(rest) != 1:
            return None  # "the other one" of more than two: which one is not said
        return (MissionRef(first.mission_id, first.name, rest[0], first.position),), ""
    if (other := _OTHER_PROBE.search(new.text)) is not None:
        wanted = [_probe_named(first, t) for t in _LIST_GLUE.split(other["p"]) if t]
        refs = [MissionRef(first.mission_id, first.name, n, first.position) for n in wanted if n]
        said = other["p"] if len(wanted) == 1 else ""  # "probe B": no field wish
        return (tuple(refs), said) if refs and len(refs) == len(wanted) else None
    bare = _BARE_PROBE.search(new.text)
    named = probe_swapped(first.mission_id, first.text, bare["p"]) if bare else None
    if bare is None or named is None:
        return None
    return (MissionRef(first.mission_id, first.name, named, first.position),), bare["p"]


def _probes_of_datasets(dataset_ids: Sequence[str]) -> list[MissionRef]:
    """The spacecraft datasets named by id are of ("THA_L2_FGM": THEMIS, "THA")."""
    refs: list[MissionRef] = []
    for dataset_id in dataset_ids:
        craft = re.split(r"_", dataset_id, maxsplit=1)[0]
        for entry in load_vocabulary().missions.values():
            if entry.probes and entry.probe_of(craft) is not None:
                refs.append(MissionRef(entry.mission_id, entry.names[0], craft, 0))
                break
    return refs


def _probe_named(ref: MissionRef, token: str) -> str | None:
    """How spacecraft `token` of `ref`'s constellation is written ("THA", "D" -> "THD")."""
    if token.upper() == probe_wanted(ref.text):
        return ref.text
    named = probe_swapped(ref.mission_id, ref.text, token)
    if named is None and probe_wanted(ref.text) is None:
        entry = load_vocabulary().missions.get(ref.mission_id)
        named = next(iter(entry.probes.get(token.upper(), ())), None) if entry else None
    return named


_UNDO = re.compile(
    r"^\W*(?:please\s+)?(?:(?:undo|revert|roll back|take (?:that|it) back)"
    r"(?:\s+(?:that|it|this|the|last|previous|my|change|step|one|request|zoom|shift"
    r"|smoothing|filter|plot))*|(?:go\s+)?back)"
    r"(?:\s+to (?:the )?(?:previous|last|earlier|original|old) (?:plot|figure|one|version|state"
    r"|view|window|range|time range))?"
    r"(?:\s*,?\s*please)?\W*$",
    re.I,
)


def is_undo(text: str) -> bool:
    """Whether the request only takes back the last change ("undo", "go back", "revert that")."""
    return _UNDO.match(text) is not None


def replay(requests: Sequence[tuple[str, RequestIntent]]) -> list[tuple[str, RequestIntent]]:
    """The states a session's requests built, oldest first, as (request, intent behind it).

    A follow-up is folded into the state before it; an undo takes the last state off (the
    first one stays); a request naming nothing to show leaves the states as they are.
    """
    states: list[tuple[str, RequestIntent]] = []
    for text, intent in requests:
        if is_undo(text):
            if len(states) > 1:
                states.pop()
            continue
        if intent.discovery is not None or intent.doubts:
            continue
        if states and is_follow_up(intent, True):
            merged, _ = merge(states[-1][1], intent)
            if merged.time_error is None:
                states.append((text, merged))
        elif intent.time_error is None and (
            intent.quantities or intent.missions or intent.dataset_ids
        ):
            states.append((text, intent))
    return states


# A clock written as people type it in a zoom ("3am", "9 pm", "0900 UT"), as hh:mm.
_AM_PM = re.compile(
    r"(?<![\w:])(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))?\s*(?P<p>[ap])\.?m\b\.?", re.I
)
_FOUR_DIGITS = re.compile(
    r"(?<![\w:.-])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)(?=\s*(?:UTC?\b|Z\b|h\b|-|\u2013|to\b|and\b"
    r"|until\b|till\b|$))",
    re.I,
)
_ANY_DAY = datetime(2000, 1, 1, tzinfo=UTC)
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


def _zoom_clock(text: str, span: TimeRange) -> TimeRange | None:
    """A clock range with no date ("06:00 to 12:00", "3am-9am", "0900 to 1030 UT") on `span`."""
    return clock_range_on(_clock_forms(text), span)


def _zoom_note(loaded: TimeRange | None, zoom: TimeRange) -> str:
    """What a zoom to clock times did: inside the data loaded, or outside it (said)."""
    if loaded is None or (loaded.start <= zoom.start and zoom.end <= loaded.end):
        several = loaded is not None and loaded.duration > timedelta(days=1)
        day = " (the first day loaded; give a date to zoom into another)" if several else ""
        return f"Zoomed to {zoom.readable()} on the day already loaded{day}."
    return (
        f"Zoomed to {zoom.readable()}, which lies outside the data already loaded "
        f"({loaded.readable()}): that time was fetched on the same day, not cut from the view."
    )


# "and for C4?", "and what about Wind": the same request for it, not one more.
_AND_FOR = re.compile(r"^\s*and\s+(?:for|what about|how about|with|now)\b", re.I)


def _missions(base: RequestIntent, new: RequestIntent) -> tuple[MissionRef, ...]:
    unnumbered = all(probe_wanted(m.text) is None for m in new.missions)
    if not new.missions or (unnumbered and _THE_OTHER.search(new.text)):
        other = _other_probes(base, new)
        return other[0] if other else base.missions
    if _REMOVE.search(new.text):
        gone = {m.mission_id for m in new.missions}
        return tuple(m for m in base.missions if m.mission_id not in gone)
    and_more = new.text.strip().lower().startswith("and ") and not _AND_FOR.match(new.text)
    if _ADD.search(new.text) or and_more:
        known = {(m.mission_id, m.text.upper()) for m in base.missions}
        extra = [m for m in new.missions if (m.mission_id, m.text.upper()) not in known]
        return (*base.missions, *extra)
    return new.missions


def _operations(base: RequestIntent, new: RequestIntent) -> tuple[OperationWish, ...]:
    kinds = {op.kind for op in new.operations}
    return (*(op for op in base.operations if op.kind not in kinds), *new.operations)


def _shifted(base: TimeRange, new: RequestIntent, notes: list[str]) -> TimeRange | None:
    text = _time_words(new)
    durations = find_durations(text)
    step: timedelta | None = timedelta(seconds=durations[0].seconds) if durations else None
    word = _DAY_WORD.search(text)
    if step is None and word is not None:
        step = _UNIT[word["u"].lower()]
    day = _DAY_OF_MONTH.search(text)
    if day is not None:
        try:
            start = base.start.replace(day=int(day["d"]), hour=0, minute=0, second=0)
        except ValueError:
            return None
        if base.start <= start < base.end:
            notes.append(f"Zoomed to day {int(day['d'])} of the loaded time range.")
            return TimeRange(start, min(start + timedelta(days=1), base.end))
        return None
    edge = _EDGE.search(text)
    sign = 1 if _LATER.search(text) else -1 if _BACK.search(text) else 0
    if edge is not None and step is not None and sign and not _EXTEND.search(text):
        start = base.start + sign * step if edge["s"] else base.start
        end = base.end if edge["s"] else base.end + sign * step
        if start < end:
            notes.append(
                f"Moved the {'start' if edge['s'] else 'end'} of the time range "
                f"{format_seconds(step.total_seconds())} {'later' if sign > 0 else 'earlier'}."
            )
            return TimeRange(start, end)
    near = _NEXT_TO.search(text)
    if near is not None and not _SHIFT.search(text):
        unit = step or _UNIT[near["u"].lower()]  # "the day before", "the 3 days after"
        before = near["w"].lower() == "before"
        span = (
            TimeRange(base.start - unit, base.start)
            if before
            else TimeRange(base.end, base.end + unit)
        )
        notes.append(
            f"Showing the {format_seconds(unit.total_seconds())} {near['w'].lower()} the time "
            f"range loaded before: {span.readable()}."
        )
        return span
    more = _more_time(text)
    if _EXTEND.search(text) or more is not None or (word and _ADD_TIME.search(text)):
        step = more or step or base.duration
        if _BACK.search(text):
            notes.append(f"Extended the time range {format_seconds(step.total_seconds())} earlier.")
            return TimeRange(base.start - step, base.end)
        notes.append(f"Extended the time range by {format_seconds(step.total_seconds())}.")
        return TimeRange(base.start, base.end + step)
    if _SHIFT.search(text) or word is not None or (step is not None and sign):
        step = step or base.duration
        sign = (
            -1
            if _BACK.search(text) or (word and word[0].lower().startswith(("prev", "prior")))
            else 1
        )
        notes.append(
            f"Shifted the time range {'back' if sign < 0 else 'forward'} by "
            f"{format_seconds(step.total_seconds())}."
        )
        return TimeRange(base.start + sign * step, base.end + sign * step)
    return None


_SPECIES_KINDS = ("density", "temperature", "velocity", "particle_flux", "spectrogram")


def _with_species(base: RequestIntent, new: RequestIntent) -> tuple[QuantityWish, ...]:
    """The last quantities, for the species a bare follow-up names ("now the electrons")."""
    named = load_vocabulary().species_named(new.text)
    if not named:
        return base.quantities
    species = named[0][0]
    return tuple(
        replace(w, species=species) if w.quantity in _SPECIES_KINDS else w for w in base.quantities
    )


_FRAME_WORD = load_vocabulary().frame_words
_COMPONENTS = re.compile(r"\bcomponents\b|\bvectors?\b|\ball three\b", re.I)
_MAGNITUDE = re.compile(r"\bmagnitudes?\b|\btotal\b|\bstrength\b", re.I)


def _with_form(base: tuple[QuantityWish, ...], new: RequestIntent) -> tuple[QuantityWish, ...]:
    """The last vectors in the frame or form a bare follow-up names ("same in GSM components")."""
    frame = _FRAME_WORD.search(new.text)
    component = (
        "vector"
        if _COMPONENTS.search(new.text)
        else "magnitude"
        if _MAGNITUDE.search(new.text)
        else None
    )
    if frame is None and component is None:
        return base
    vectors = ("magnetic_field", "velocity", "electric_field")
    return tuple(
        replace(
            w,
            frame=frame[1].upper() if frame else w.frame,
            component=component or (None if w.component == "magnitude" and frame else w.component),
        )
        if w.quantity in vectors
        else w
        for w in base
    )


def export_only(intent: RequestIntent) -> bool:
    """Whether a request only asks to export the current figure ("export it as PDF")."""
    return bool(intent.plot.export_format) and not (
        intent.missions
        or intent.quantities
        or intent.dataset_ids
        or intent.time_range
        or intent.operations
        or intent.plot.log_y
        or intent.plot.layout != "auto"
        or _SHIFT.search(intent.text)
        or _EXTEND.search(intent.text)
    )


def _without_probe_word(base: RequestIntent, new: RequestIntent) -> RequestIntent:
    """The request without the bare probe shorthand it names ("for B": no field wish)."""
    other = None if new.missions else _other_probes(base, new)
    word = other[1] if other else ""
    if not word:
        return new
    return replace(
        new,
        quantities=tuple(w for w in new.quantities if w.text != word),
        unknown_names=tuple(n for n in new.unknown_names if n.upper() != word.upper()),
    )


def _product_of(
    base: RequestIntent, new: RequestIntent, missions: tuple[MissionRef, ...]
) -> RequestIntent | None:
    """The request whose products the merged one keeps.

    The last one when this names other probes for the same quantities ("now MMS3"), else
    the one the last one kept ("smooth it" after "now MMS3").
    """
    if new.quantities:
        return None
    if missions == base.missions:
        return base.product_of
    return base if any(probe_wanted(m.text) for m in missions) else None


def _time_edges(base: TimeRange, asked: TimeRange, text: str, notes: list[str]) -> TimeRange | None:
    """The loaded span with an edge moved to a date asked ("extend it to 2003-10-31")."""
    edge = _EDGE.search(text)
    if _EXTEND.search(text):
        moved = TimeRange(min(base.start, asked.start), max(base.end, asked.end))
    elif edge is not None and edge["s"] and asked.start < base.end:
        moved = TimeRange(asked.start, base.end)
    elif edge is not None and edge["e"] and asked.end > base.start:
        moved = TimeRange(base.start, asked.end)
    else:
        return None
    notes.append(f"Changed the time range from {base.readable()} to {moved.readable()}.")
    return moved


def merge(base: RequestIntent, new: RequestIntent) -> tuple[RequestIntent, list[str]]:
    """The new request completed from the last one, and notes saying what was kept."""
    notes: list[str] = []
    new = _without_probe_word(base, new)
    replaced = bool(new.quantities) and not _ADD.search(new.text)
    if new.quantities and _REMOVE.search(new.text):
        gone = {w.quantity for w in new.quantities}
        quantities = tuple(w for w in base.quantities if w.quantity not in gone)
    elif new.quantities and not replaced:
        quantities = (*base.quantities, *new.quantities)
    else:
        quantities = new.quantities or _with_form(_with_species(base, new), new)
    time_range, time_text = new.time_range, new.time_text
    if _DAY_WORD.search(time_text or "") and base.time_range is not None:
        time_range = time_text = None  # "add the previous day": the one before the data's
    zoom = _zoom_clock(_time_words(new), base.time_range) if base.time_range else None
    time_error = new.time_error
    if zoom is not None and (time_range is None or time_error):
        time_range, time_text, time_error = zoom, zoom.readable(), None
        notes.append(_zoom_note(base.time_range, zoom))
    elif time_range is not None and base.time_range is not None:
        moved = _time_edges(base.time_range, time_range, _time_words(new), notes)
        if moved is not None:
            time_range, time_text = moved, moved.readable()
    if time_range is None and base.time_range is not None:
        shifted = _shifted(base.time_range, new, notes)
        time_range = shifted or base.time_range
        time_text = time_range.readable()
        if shifted is None:
            notes.append(
                f"No time range was given, so I used the time range of the data already "
                f"loaded ({base.time_range.readable()})."
            )
    layout = new.plot.layout
    if layout == "auto":
        layout = "separate" if _BELOW.search(new.text) else base.plot.layout
    plot = replace(
        base.plot,
        log_y=base.plot.log_y or new.plot.log_y,
        layout=layout,
        title=new.plot.title or base.plot.title,
        colours=new.plot.colours or base.plot.colours,
        export_format=new.plot.export_format,
        export_filename=new.plot.export_filename,
        wanted=new.plot.wanted,
    )
    missions = _missions(base, new)
    if not new.missions and (counted := _count_note(base, new)):
        notes.append(counted)
    operations = new.operations if replaced else _operations(base, new)
    resample = next((op for op in operations if op.kind == "resample"), None)
    merged = replace(
        new,
        # The instruments, derived quantities and frames the last request named still hold.
        text=f"{base.text}\n{new.text}",
        missions=missions,
        quantities=quantities,
        time_range=time_range,
        time_text=time_text,
        time_error=time_error,
        operations=operations,
        cadence_s=resample.window_s if resample else None,
        cadence_text=resample.text if resample else None,
        plot=plot,
        compare=len(missions) > 1 or base.compare,
        dataset_ids=new.dataset_ids or (base.dataset_ids if missions == base.missions else ()),
        parameter_names=new.parameter_names or base.parameter_names,
        hints=new.hints or base.hints,
        unknown_names=new.unknown_names,
        product_of=_product_of(base, new, missions),
    )
    kept = [
        p
        for p in ("missions", "quantities")
        if getattr(new, p) == () and getattr(base, p) and getattr(merged, p) == getattr(base, p)
    ]
    if kept:
        notes.insert(0, f"Follow-up: kept the {' and '.join(kept)} of the previous request.")
    return merged, notes
