"""Detector channels named by a range or list ("LEMS P1-P8", "E1 to E4", "channels 1-4").

A particle instrument often keeps each channel as its own parameter (ACE EPAM's P1..P8,
GOES EPS's E1..E3). A request naming several of them by range or list is served those
parameters of the mission's dataset that holds the most of them (of the instrument named,
covering the time asked), as the catalog spells them. Nothing here is per mission: the
names come from the request, the parameters from the catalog.
Imports `catalog`, `timerange`, `vocabulary`, `language.intent` and `language.resolve`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xhelio.catalog.index import Catalog
from xhelio.catalog.model import DatasetInfo
from xhelio.language.intent import MissionRef
from xhelio.language.resolve import probe_of_dataset, probe_wanted
from xhelio.timerange import TimeRange
from xhelio.vocabulary import load_vocabulary

__all__ = ["NamedChannels", "channel_names_not_missions", "channel_words", "named_channels"]

_TO = r"\s*(?:-|\u2013|\.\.|to|through|thru)\s*"
# "P1-P8", "P5 to P7", "E1-4": a letter prefix, a first and a last number.
_RANGE = re.compile(rf"(?<![\w-])([A-Za-z]{{1,3}})(\d{{1,2}}){_TO}(?:\1)?(\d{{1,2}})(?![\w-])")
# "channels 1-4", "channels 2 to 5": numbers only.
_BARE = re.compile(rf"\bchannels?\s+(\d{{1,2}}){_TO}(\d{{1,2}})\b", re.I)
# "P1, P2 and P4": a list of two or more names of one prefix.
_LISTED = re.compile(r"(?<![\w-])([A-Za-z]{1,3})(\d{1,2})(?![\w-])")
_MOST = 32


@dataclass(frozen=True)
class NamedChannels:
    """The dataset serving the channels named, the parameters of them it has, and the rest."""

    dataset_id: str
    parameters: tuple[str, ...]
    missing: tuple[str, ...]


def channel_words(text: str) -> list[str]:
    """The channel names a range or list in `text` spells out ("P1-P3": P1, P2, P3).

    Numbers alone ("channels 1-4") come back as numbers; a list counts with two or more
    names of one prefix.
    """
    words: list[str] = []
    for m in _RANGE.finditer(text):
        first, last = int(m[2]), int(m[3])
        if first < last <= first + _MOST:
            words += [f"{m[1]}{n}" for n in range(first, last + 1)]
    for m in _BARE.finditer(text):
        first, last = int(m[1]), int(m[2])
        if first < last <= first + _MOST:
            words += [str(n) for n in range(first, last + 1)]
    if not words:
        listed = [(m[1].upper(), m[0]) for m in _LISTED.finditer(text)]
        prefixes = {p for p, _ in listed}
        if len(listed) >= 2 and len(prefixes) == 1:
            words = [w for _, w in listed]
    return list(dict.fromkeys(words))


def _covers(info: DatasetInfo, span: TimeRange | None) -> bool:
    if span is None:
        return True
    return (info.start is None or info.start < span.end) and (
        info.stop is None or info.stop > span.start
    )


def _held(info: DatasetInfo, words: Sequence[str]) -> list[str]:
    """The parameters of `info` the channel words name, as the catalog spells them."""
    names = [p.name for p in info.data_parameters]
    out: list[str] = []
    for word in words:
        if word.isdigit():  # "channel 3": a short name ending in that number ("P3", "E3")
            found = [n for n in names if re.fullmatch(rf"[A-Za-z]{{1,3}}{word}", n)]
            out += found[:1]
        else:
            out += [n for n in names if n.lower() == word.lower()][:1]
    return list(dict.fromkeys(out))


def named_channels(
    catalog: Catalog, missions: Sequence[MissionRef], text: str, span: TimeRange | None
) -> NamedChannels | None:
    """The dataset of the named mission holding most of the channels `text` names, or None."""
    words = channel_words(text)
    if not words or len({m.mission_id for m in missions}) != 1:
        return None
    mission_id = missions[0].mission_id
    try:
        datasets = catalog.browse(mission_id)
    except Exception:  # a mission the catalog does not list: nothing to serve
        return None
    said = [i for i in load_vocabulary().instruments_of(mission_id) if i.words.search(text)]
    if said:
        datasets = [d for d in datasets if any(i.datasets.search(d.id) for i in said)]
    if (probe := probe_wanted(missions[0].text)) is not None:
        datasets = [d for d in datasets if probe_of_dataset(d.id) == probe]
    ranked = sorted(
        ((held, d) for d in datasets if _covers(d, span) and (held := _held(d, words))),
        key=lambda hd: -len(hd[0]),
    )
    if not ranked:
        return None
    held, best = ranked[0]
    digits = all(w.isdigit() for w in words)
    missing = () if digits else tuple(w for w in words if w.lower() not in map(str.lower, held))
    return NamedChannels(best.id, tuple(held), missing)


def channel_names_not_missions(
    catalog: Catalog, text: str, refs: Sequence[MissionRef], spans: list[tuple[int, int]]
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]]]:
    """`refs` and `spans` without the mission words that are channels of another's dataset.

    "ace epam deflected electrons DE1-DE4": "DE1" spells a mission (Dynamics Explorer 1)
    and, in a channel range, ACE EPAM's DE1 parameter. The catalog decides: a mission word
    the range or list names is a channel when a dataset of another mission named holds a
    parameter of that name.
    """
    words = {w.upper() for w in channel_words(text)}
    suspects = [r for r in refs if r.text.strip().upper() in words]
    others = {r.mission_id for r in refs} - {r.mission_id for r in suspects}
    if not suspects or not others:
        return tuple(refs), spans
    held: set[str] = set()
    for mission_id in others:
        try:
            datasets = catalog.browse(mission_id)
        except Exception:  # a mission the catalog does not list holds no channel
            continue
        held |= {p.name.upper() for d in datasets for p in d.data_parameters}
    dropped = [r for r in suspects if r.text.strip().upper() in held]
    if not dropped:
        return tuple(refs), spans
    starts = {r.position for r in dropped}
    return (
        tuple(r for r in refs if r not in dropped),
        [s for s in spans if s[0] not in starts],
    )
