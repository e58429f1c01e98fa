"""Follow-ups that name other probes of the last request's constellation.

"now MMS3", "repeat for P2", "do it for B instead", "the other one", "now all four
spacecraft": the probes of the constellation the last request showed, and the bare
shorthand ("B", "P2") that named them, which is no quantity and no unknown spacecraft.
Imports only `language`, `timerange` and `vocabulary`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from xhelio.language.intent import MissionRef, RequestIntent
from xhelio.language.probes import probe_doubts, probe_swapped
from xhelio.language.resolve import probe_wanted
from xhelio.timerange.words import WHOLE_NUMBER_WORDS, alternatives
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "count_note",
    "names_other_probes",
    "other_probes",
    "probes_shown",
    "product_of",
    "the_other_named",
    "with_probes_shown",
    "without_probe_word",
]

# "same for probe E", "now all four spacecraft", "repeat for P2", "do it for B instead":
# the last request's constellation, other probes.
_OTHER_PROBE = re.compile(
    r"\b(?:probes?|spacecraft|satellites?|s/c)\s+(?P<p>(?:[A-E]|\d{1,2})(?:\s*(?:,|and|&|/)\s*"
    r"(?:and\s+)?(?:[A-E]|\d{1,2}))*)\b",
    re.I,
)
_LIST_GLUE = re.compile(r"\s*(?:,|\band\b|&|/)\s*", re.I)
# "for B", "now P2", "same for d and e": shorthands ending the message, one or a list. A
# lower-case letter counts here only, where nothing else can follow it.
_BARE_ONE = r"(?:[a-z]{1,2}\d{1,2}|\d{1,2}|[a-e])"
_BARE_PROBE = re.compile(
    r"(?:^|\b(?:for|to|now|with|on|at|about|try|show|plot|add|also|and)\s+)-?"
    rf"(?P<p>{_BARE_ONE}(?:\s*(?:,|\band\b|&|/)\s*(?:and\s+)?{_BARE_ONE})*)"
    r"(?=\s*(?:instead|too|as well|please|now|then)?\s*[?.!]*\s*$)",
    re.I,
)
_THE_OTHER = re.compile(
    r"\bthe other (?:[\w-]+\s+){0,2}?(?:probe|spacecraft|satellite|one)(?P<many>s)?\b"
    r"|\bthe other (?P<mission>[A-Za-z][\w-]*)\b",
    re.I,
)
# "the B probe", "the C spacecraft": a probe letter before the noun.
_LETTER_PROBE = re.compile(r"\bthe\s+(?P<p>[A-E])\s+(?:probe|spacecraft|satellite|s/c)\b")
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


def count_note(base: RequestIntent, new: RequestIntent) -> str | None:
    """What a count that does not fit the constellation was read as ("all four" THEMIS)."""
    every = _ALL_PROBES.search(new.text)
    other = other_probes(base, new) if every else None
    said = _count_said(every) if every else None
    if other is None or said is None or said == len(other[0]):
        return None
    names = ", ".join(m.text for m in other[0])
    return (
        f"Differs from the request: '{every[0] if every else ''}' was written, and "
        f"{other[0][0].name} has {len(other[0])} spacecraft; showing all of them ({names})."
    )


def other_probes(
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
    if (other := _the_other(new.text)) is not None:
        shown = {probe_wanted(m.text) for m in multi}
        names = vocab.probe_names(first.mission_id, first.text)
        rest = [n for n in names if probe_wanted(n) not in shown]
        if not rest or (len(rest) > 1 and not other["many"]):
            return None  # "the other one" of more than two: which one is not said
        refs = [MissionRef(first.mission_id, first.name, n, first.position) for n in rest]
        return tuple(refs), ""  # "the other probes": all the rest
    if (other := _OTHER_PROBE.search(new.text) or _LETTER_PROBE.search(new.text)) is not None:
        wanted = [_probe_named(first, t) for t in _LIST_GLUE.split(other["p"]) if t]
        refs = [MissionRef(first.mission_id, first.name, n, first.position) for n in wanted if n]
        said = other["p"] if len(wanted) == 1 else ""  # "probe B": no field wish
        return (tuple(refs), said) if refs and len(refs) == len(wanted) else None
    bare = _BARE_PROBE.search(new.text)
    tokens = [t for t in _LIST_GLUE.split(bare["p"]) if t] if bare else []
    named = [probe_swapped(first.mission_id, first.text, t) for t in tokens]
    if bare is None or None in named:
        return None
    refs = [MissionRef(first.mission_id, first.name, n, first.position) for n in named if n]
    return tuple(refs), bare["p"]


def with_probes_shown(
    base: RequestIntent, intent: RequestIntent, held: dict[str, frozenset[str]]
) -> RequestIntent:
    """`intent` with a constellation named without a probe read as the probe(s) shown.

    "add the FPI ion density as another panel" after MMS1 data is MMS1's: the question
    "which MMS spacecraft?" is answered by the last request. Other doubts stay.
    """
    if _the_other(intent.text) is not None:
        return intent  # "the other STEREO": not the one shown (`other_probes`)
    shown = [m for m in base.missions if probe_wanted(m.text)]
    shown = shown or _probes_of_datasets(base.dataset_ids)
    missions: list[MissionRef] = []
    for ref in intent.missions:
        same = [m for m in shown if m.mission_id == ref.mission_id]
        if probe_wanted(ref.text) is None and same:
            missions += [replace(m, position=ref.position) for m in same]
        else:
            missions.append(ref)
    if tuple(missions) == intent.missions:
        return intent
    datasets = bool(intent.dataset_ids)
    asked = set(probe_doubts(held, intent.text, intent.missions, datasets))
    kept = tuple(d for d in intent.doubts if d not in asked)
    doubts = (*kept, *probe_doubts(held, intent.text, missions, datasets))
    return replace(intent, missions=tuple(dict.fromkeys(missions)), doubts=doubts)


def probes_shown(base: RequestIntent) -> tuple[MissionRef, ...]:
    """The spacecraft the last request showed: its missions, else those of its dataset ids."""
    return base.missions or tuple(_probes_of_datasets(base.dataset_ids))


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


def without_probe_word(base: RequestIntent, new: RequestIntent) -> RequestIntent:
    """The request without the bare probe shorthand it names ("for B": no field wish)."""
    other = None if new.missions else other_probes(base, new)
    words = {w.upper() for w in _LIST_GLUE.split(other[1]) if w} if other else set[str]()
    if not words:
        return new
    return replace(
        new,
        quantities=tuple(w for w in new.quantities if w.text.upper() not in words),
        unknown_names=tuple(n for n in new.unknown_names if n.upper() not in words),
    )


def product_of(
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


def _the_other(text: str) -> re.Match[str] | None:
    """The "the other probe(s)", "the other one" or "the other STEREO" said, if any."""
    for match in _THE_OTHER.finditer(text):
        name = match["mission"]
        if name is None or any(
            name.lower() == n.lower() for m in load_vocabulary().missions.values() for n in m.names
        ):
            return match
    return None


def names_other_probes(text: str) -> bool:
    """Whether a request names probes by count or letter ("all four", "probe B", "and e?")."""
    return bool(
        _ALL_PROBES.search(text)
        or _OTHER_PROBE.search(text)
        or _BARE_PROBE.search(text)
        or _LETTER_PROBE.search(text)
        or _the_other(text)
    )


def the_other_named(text: str) -> bool:
    """Whether a request asks for "the other" probe of a pair ("the other STEREO")."""
    return _the_other(text) is not None
