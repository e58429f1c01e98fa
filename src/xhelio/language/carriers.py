"""The mission an instrument's name implies when a request names no mission ("SPAN-I vs SPC").

An instrument name the vocabulary gives to one mission only names that mission; names that
several missions share ("EFW", "MAG") imply none unless together they point at one.
Imports `vocabulary` and `language.intent` only.
"""

from __future__ import annotations

import re

from xhelio.language.intent import MissionRef
from xhelio.vocabulary import load_vocabulary

__all__ = ["carrier_missions"]

# A long all-letter word ("magnetometer", "spectrometer") is a kind of instrument, not an
# instrument's name: names are acronyms ("SWEPAM", "SPAN-I", "SPC").
_A_NOUN = re.compile(r"[A-Za-z]{8,}")


def carrier_missions(
    text: str, names: dict[str, str]
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]]]:
    """The one mission carrying every instrument `text` names, as a mission mention, or ().

    With it, the span of a probe written after the instrument (the mission's own span is
    the instrument's, which its slot already holds).

    `names`: the catalog's display name of each mission id. The mention is written as the
    mission's first vocabulary name (or its probe's, "REPT A"), placed where the first
    instrument is named.
    """
    vocabulary = load_vocabulary()
    carriers: dict[str, set[str]] = {}
    first: re.Match[str] | None = None
    for inst in vocabulary.instruments:
        for match in inst.words.finditer(text):
            if _A_NOUN.fullmatch(match[0]):
                continue  # "magnetometer" is any spacecraft's, not a name of one
            carriers.setdefault(match[0].upper(), set()).add(inst.mission_id)
            first = match if first is None or match.start() < first.start() else first
    if first is None:
        return (), []
    common = set.intersection(*carriers.values())
    if len(common) != 1:
        return (), []
    mission_id = common.pop()
    entry = vocabulary.missions.get(mission_id)
    if entry is None or not entry.names or mission_id not in names:
        return (), []
    # "REPT A", "HOPE-B", "EFW on probe B": the probe written after the instrument.
    after = _PROBE_AFTER.match(text, first.end())
    probe = after["p"].upper() if after else ""
    typed = entry.probes.get(probe, entry.names)[0]
    spans = [after.span("p")] if after and probe in entry.probes else []
    return (MissionRef(mission_id, names[mission_id], typed, first.start()),), spans


_PROBE_AFTER = re.compile(r"(?:-| |\s+(?:on|from|of)\s+(?:probe\s+)?)(?P<p>[A-E]|\d)(?![\w-])")
