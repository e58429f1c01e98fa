"""Follow-ups: a request read against the session's last request.

"now smooth it", "add Wind", "same for Solar Orbiter", "shift to the next day", "zoom to
06:00-12:00", "put the density underneath", "remove the Wind trace", "log scale",
"export as PDF" and a request with no time range all complete the last request. "now
MMS3", "repeat for P2", "do it for B instead" name other probes of the last request's
constellation and keep its product (`RequestIntent.product_of`, `followup_probes`);
"extend it through 16 July", "the next 3 days", "the day before", "for the same day"
move or keep the loaded time range (`followup_time`).

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

from xhelio.agents.offline.followup_probes import (
    count_note,
    names_other_probes,
    other_probes,
    probes_shown,
    product_of,
    the_other_named,
    with_probes_shown,
    without_probe_word,
)
from xhelio.agents.offline.followup_remove import panel_edit, removal
from xhelio.agents.offline.followup_swap import swapped
from xhelio.agents.offline.followup_time import follow_time, moves_time, time_words, zoom_clock
from xhelio.language.frames import frames_named
from xhelio.language.intent import MissionRef, OperationWish, QuantityWish, RequestIntent
from xhelio.language.resolve import probe_wanted
from xhelio.language.slots import SlotKind
from xhelio.timerange import TimeRange, names_time_near
from xhelio.vocabulary import load_vocabulary
from xhelio.vocabulary.absent import absent_missions_named

__all__ = [
    "export_only",
    "following",
    "is_follow_up",
    "is_undo",
    "merge",
    "probes_not_listed",
    "replay",
    "without_last_instrument",
]

_FOLLOW_WORDS = re.compile(
    r"\b(?:it|its|them|this|that|these|those|now|same|add|also|too|instead|underneath|below"
    r"|beneath|under|zoom\w*|shift\w*|move|extend\w*|remove|drop|delete|without|change"
    r"|switch|swap|reverse|what about|how about|again|then|next day|previous day|forward"
    r"|ahead|later"
    r"|earlier|back|repeat\w*|redo|(?:day|week|hour)s? (?:before|after))\b",
    re.I,
)
_ADD = re.compile(r"\b(?:add|also|too|plus|as well|underneath|below|beneath|under|overlay)\b", re.I)
_REMOVE = re.compile(r"\b(?:remove|drop|delete|without|take out|hide)\b", re.I)
_BELOW = re.compile(r"\b(?:underneath|below|beneath|under(?! \d))\b", re.I)


def is_follow_up(intent: RequestIntent, has_base: bool) -> bool:
    """Whether a request builds on the last one rather than standing alone."""
    intent = probes_not_listed(intent, has_base)
    if not has_base or intent.discovery is not None or intent.doubts:
        return False
    served = bool(intent.missions or intent.dataset_ids)
    named = bool(intent.quantities) or served
    wishes = (
        zoom_clock(time_words(intent))
        or names_time_near(time_words(intent))
        or moves_time(intent.text)
        or names_other_probes(intent.text)
        or intent.operations
        or intent.plot.log_y
        or intent.plot.layout != "auto"
        or intent.plot.export_format
        or load_vocabulary().species_named(intent.text)
    )
    follows = _FOLLOW_WORDS.search(intent.text)
    if absent_missions_named(intent.text) and not served and not _ADD.search(intent.text):
        return False  # "sdo aia 171 on the 6th": a mission not held, never the last one's data
    if not (named or intent.time_range or wishes or follows):
        return False  # "hello there" names nothing to build on
    if not named or intent.time_range is None:
        return True  # something to show or a time is missing: the session supplies it
    # Quantities (or a mission) and a time: a request of its own unless it says otherwise.
    return bool(follows) and not (intent.compare and served)


def following(
    base: RequestIntent, intent: RequestIntent, held: dict[str, frozenset[str]]
) -> RequestIntent:
    """`intent` as a follow-up of `base` reads it, when it does follow up.

    A constellation named without a probe is the probe shown: "add the FPI ion density"
    after MMS1 data is MMS1's, not a question which MMS spacecraft is meant.
    """
    answered = with_probes_shown(base, intent, held)
    return answered if answered is not intent and is_follow_up(answered, True) else intent


def probes_not_listed(intent: RequestIntent, has_base: bool) -> RequestIntent:
    """`intent`, no catalog listing when it names other probes of the last request.

    "now show the other spacecraft", "all four spacecraft" after a plot ask for that plot
    from them, not for the list of spacecraft in the catalog.
    """
    if has_base and intent.discovery is not None and names_other_probes(intent.text):
        return replace(intent, discovery=None)
    return intent


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


def replay(
    requests: Sequence[tuple[str, RequestIntent]], held: dict[str, frozenset[str]] | None = None
) -> list[tuple[str, RequestIntent]]:
    """The states a session's requests built, oldest first, as (request, intent behind it).

    A follow-up is folded into the state before it; an undo takes the last state off (the
    first one stays); a request naming nothing to show leaves the states as they are.
    """
    states: list[tuple[str, RequestIntent]] = []
    for text, said in requests:
        intent = probes_not_listed(said, bool(states))
        if states and held is not None:
            intent = following(states[-1][1], intent, held)
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


# "and for C4?", "and what about Wind", "and C3?": the same request for it, not one more.
_AND_FOR = re.compile(r"^\s*and\s+(?:(?:for|what about|how about|with|now)\b|[^?]*\?\s*$)", re.I)


def _missions(base: RequestIntent, new: RequestIntent) -> tuple[MissionRef, ...]:
    unnumbered = all(probe_wanted(m.text) is None for m in new.missions)
    if not new.missions or (unnumbered and the_other_named(new.text)):
        other = other_probes(base, new)
        if other and _ADD.search(new.text):  # "now C too", "add probe E": beside those shown
            before = probes_shown(base)
            shown = {m.text.upper() for m in before}
            return (*before, *(m for m in other[0] if m.text.upper() not in shown))
        return other[0] if other else base.missions
    if (swap := swapped(base.missions, new.text, new.missions)) is not None:
        return swap  # "replace ACE with DSCOVR": one out, the other in
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


_COMPONENTS = re.compile(r"\bcomponents\b|\bvectors?\b|\ball three\b", re.I)
_MAGNITUDE = re.compile(r"\bmagnitudes?\b|\btotal\b|\bstrength\b", re.I)


def _with_form(base: tuple[QuantityWish, ...], new: RequestIntent) -> tuple[QuantityWish, ...]:
    """The last vectors in the frame or form a bare follow-up names ("same in GSM components")."""
    frame = next(iter(frames_named(new.text)), None)
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
            frame=frame or w.frame,
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
        or moves_time(intent.text)
    )


# Slots that say what to show; a follow-up with none of them only moves, adds or re-draws.
_WHAT: frozenset[SlotKind] = frozenset(
    {"dataset", "parameter", "instrument", "product", "quantity", "component", "species", "frame"}
)


def _names_what(intent: RequestIntent) -> bool:
    return any(s.kind in _WHAT for s in intent.slots.slots)


def _shows_the_same(
    base: RequestIntent, new: RequestIntent, missions: tuple[MissionRef, ...]
) -> bool:
    """Whether a follow-up keeps what is shown and changes only its time or its treatment."""
    return (
        missions == base.missions
        and not (new.quantities or new.dataset_ids or new.parameter_names)
        and not _names_what(new)
    )


def _without_derived(text: str) -> str:
    """`text` with its derived-quantity words blanked (same length, so spans hold).

    A follow-up naming new quantities replaces what was shown: the last request's
    "dynamic pressure" is not asked again.
    """
    for d in load_vocabulary().derived:
        text = d.words.sub(lambda m: " " * len(m.group()), text)
    return text


def _unzoomed(state: RequestIntent) -> TimeRange | None:
    """The widest span shown, by the states that showed the same, before `state`'s."""
    spans: list[TimeRange | None] = []
    before = state.shown_before
    while before is not None:
        spans.append(before.time_range)
        before = before.shown_before
    held = state.time_range
    wider: list[TimeRange] = [
        s
        for s in spans
        if s is not None and held is not None and s.start <= held.start and held.end <= s.end
    ]
    return max(wider, key=lambda s: s.end - s.start) if wider else None


def _without_probes_left(base: RequestIntent, missions: tuple[MissionRef, ...]) -> str:
    """The last request's text without the spacecraft it named that this one swaps out.

    "now F16" after "DMSP F18 SSJ electron total energy flux": F18's name no longer
    words the request (it would be read as a product word F16 lacks); the rest of the
    text (its instrument and quantity words) still holds. Blanked, so places hold.
    """
    text = base.text
    kept = {(m.mission_id, m.text.upper()) for m in missions}
    swapped = {m.mission_id for m in missions} & {m.mission_id for m in base.missions}
    for ref in base.missions:
        if ref.mission_id not in swapped or (ref.mission_id, ref.text.upper()) in kept:
            continue
        at = text.find(ref.text, ref.position)
        at = at if at >= 0 else text.find(ref.text)
        if at >= 0:
            text = text[:at] + " " * len(ref.text) + text[at + len(ref.text) :]
    return text


def merge(base: RequestIntent, new: RequestIntent) -> tuple[RequestIntent, list[str]]:
    """The new request completed from the last one, and notes saying what was kept."""
    notes: list[str] = []
    new = without_probe_word(base, probes_not_listed(new, True))
    replaced = bool(new.quantities) and not _ADD.search(new.text)
    # The merged text is the last request's, a newline, then this one's: where this one's
    # quantities are said moves by as much, so each reads its own clause's words.
    shift = len(base.text) + 1
    said = tuple(replace(w, position=w.position + shift) for w in new.quantities)
    away = removal(new)
    if away.quantities:
        gone = {w.quantity for w in away.quantities}
        kept = tuple(w for w in base.quantities if w.quantity not in gone)
        quantities = (*kept, *away.added(said, shift))
    elif away.operations and (added := away.added(said, shift)):
        quantities = (*base.quantities, *added)  # "drop the mean and add By below"
    elif new.quantities and not replaced:
        quantities = (*base.quantities, *said)
    else:
        quantities = said or _with_form(_with_species(base, new), new)
    time = follow_time(base.time_range, new, notes, _unzoomed(base))
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
    said_before = _without_probes_left(base, missions)
    if (edit := panel_edit(base, new)) is not None:
        missions, quantities, undone = edit
        notes += [undone] if undone else []
    if not new.missions and (counted := count_note(base, new)):
        notes.append(counted)
    operations = new.operations if replaced else _operations(base, new)
    if away.operations:
        operations = away.kept_operations(base.operations, new.operations)
    resample = next((op for op in operations if op.kind == "resample"), None)
    same = _shows_the_same(base, new, missions)
    if not new.quantities and not _names_what(new):
        # "now for the 15th", "extend it through 16 July": what to show is the last
        # request's, its product words too ("SOHO ERNE HED protons"); its slots keep their
        # places, since the merged text starts with it.
        new = replace(new, hints=base.hints, unplaced=base.unplaced, slots=base.slots)
    merged = replace(
        new,
        # The instruments, derived quantities and frames the last request named still hold.
        text=f"{_without_derived(said_before) if replaced else said_before}\n{new.text}",
        missions=missions,
        quantities=quantities,
        time_range=time.range,
        time_text=time.text,
        time_error=time.error,
        operations=operations,
        cadence_s=resample.window_s if resample else None,
        cadence_text=resample.text if resample else None,
        plot=plot,
        compare=len(missions) > 1 or base.compare,
        dataset_ids=new.dataset_ids or (base.dataset_ids if missions == base.missions else ()),
        parameter_names=new.parameter_names or base.parameter_names,
        hints=new.hints or base.hints,
        unknown_names=new.unknown_names,
        product_of=product_of(base, new, missions),
        shown_before=base if same else None,
    )
    kept = [
        p
        for p in ("missions", "quantities")
        if getattr(new, p) == () and getattr(base, p) and getattr(merged, p) == getattr(base, p)
    ]
    if kept:
        notes.insert(0, f"Follow-up: kept the {' and '.join(kept)} of the previous request.")
    return merged, notes


_INSTRUMENT_SLOTS: frozenset[SlotKind] = frozenset({"instrument", "product"})


def without_last_instrument(
    merged: RequestIntent, base: RequestIntent
) -> tuple[RequestIntent, str] | None:
    """`merged` without the instrument words the last request named, and a note saying so.

    "now the electrons" after "PSP SPAN-I proton density": SPAN-I measures no electrons,
    so when nothing holds the new wish with them the last request's instrument words are
    let go (and said). None when the last request named no instrument.
    """
    named = [s for s in base.slots.slots if s.kind in _INSTRUMENT_SLOTS]
    if not named or not merged.text.startswith(base.text[: min(s.start for s in named)]):
        return None
    text = merged.text
    for s in named:
        text = text[: s.start] + " " * (s.end - s.start) + text[s.end :]
    words = {base.text[s.start : s.end].lower() for s in named}
    kept = tuple(
        s
        for s in merged.slots.slots
        if not (s.kind in _INSTRUMENT_SLOTS and s.end <= len(base.text))
    )
    loose = replace(
        merged,
        text=text,
        slots=replace(merged.slots, slots=kept),
        hints=tuple(h for h in merged.hints if h.lower() not in words),
        unplaced=tuple(u for u in merged.unplaced if u.lower() not in words),
        product_of=None,
    )
    said = ", ".join(sorted({base.text[s.start : s.end] for s in named}))
    return loose, f"Not kept from the previous request: {said}, which holds none of this."
