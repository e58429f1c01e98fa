"""Names to ask about before fetching, never to replace with another spacecraft.

A probe a mission does not have ("MMS7", "THEMIS Z", "STEREO C") and a name close to a
known mission ("Parkr Solar Probe", "Windd") are asked about.

Both would otherwise fall back to another spacecraft or to OMNI, which is a wrong answer
dressed as a right one. The probes of every mission and its shorthands come from the one
vocabulary. Imports `catalog.aliases`, `vocabulary` and nothing else from xhelio.
"""

from __future__ import annotations

import difflib
import re

from xhelio.catalog.aliases import AliasTable, normalize_name, word_spans
from xhelio.language.ratios import ratio_spans
from xhelio.vocabulary import MissionEntry, load_vocabulary

__all__ = ["find_doubts"]

# Words that look like mission names to a fuzzy matcher but are English or physics.
_NOT_TYPOS = frozenset(
    (
        "solar",
        "probe",
        "probes",
        "field",
        "fields",
        "wind",
        "winds",
        "plasma",
        "magnetic",
        "proton",
        "protons",
        "speed",
        "data",
        "show",
        "plot",
        "compare",
        "versus",
        "overlay",
        "density",
        "storm",
        "event",
        "march",
        "may",
        "june",
        "july",
        "august",
        "april",
        "january",
        "february",
        "september",
        "october",
        "november",
        "december",
        "orbit",
        "orbiter",
        "between",
        "polar",
        "cluster",
        "image",
        "fast",
        "storm",
        "same",
        "then",
        "also",
        "with",
        "from",
        "during",
        "helium",
        "alpha",
        "alphas",
        "electron",
        "electrons",
        "omni",
        "energy",
        "energetic",
        "spectrum",
        "spectra",
        "radio",
        "waves",
        "wave",
        "index",
        "sum",
        "mean",
        "average",
        "and",
        "the",
        "for",
        "near",
        "flux",
        "time",
        "times",
        "range",
        "hour",
        "hours",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "year",
        "now",
        "next",
        "last",
        "first",
    )
)


def _probe_forms(entry: MissionEntry) -> list[tuple[re.Pattern[str], str]]:
    """Patterns of '<mission or its short prefix><probe>' for one mission."""
    bases = {n for n in entry.names if len(n) > 2}
    short: set[str] = set()
    for probe, shorthands in entry.probes.items():
        for s in shorthands:
            base = re.sub(rf"[- ]?{re.escape(probe)}$", "", s, flags=re.I)
            if base and base != s:
                (bases if len(base) > 2 else short).add(base)
    forms: list[tuple[re.Pattern[str], str]] = []
    for base in sorted(bases, key=len, reverse=True):
        body = re.escape(base).replace(r"\ ", r"[\s-]+")
        # A letter needs a separator ("THEMIS Z"), a number may follow at once ("MMS7").
        forms.append(
            (
                re.compile(
                    rf"(?<![\w-])(?i:{body})(?:[\s-]?(?P<p>\d{{1,2}})|[\s-](?P<q>[A-Za-z]))(?![\w-])"
                ),
                base,
            )
        )
    for base in sorted(short, key=len, reverse=True):
        forms.append(
            (re.compile(rf"(?<![\w-]){re.escape(base)}-?(?P<q>[A-Z]|\d{{1,2}})(?![\w-])"), base)
        )
    return forms


def _bad_probes(text: str) -> list[str]:
    doubts: list[str] = []
    ions = ratio_spans(text)  # "C6/C5" is a charge-state ratio, not Cluster 6 and 5
    for entry in load_vocabulary().missions.values():
        if not entry.probes:
            continue
        for form, base in _probe_forms(entry):
            for match in form.finditer(text):
                typed = match.groupdict().get("p") or match["q"]
                probe = typed.upper()
                if probe in entry.probes or any(a <= match.start() < b for a, b in ions):
                    continue
                if entry.probe_of(match[0]) is not None:
                    continue  # a listed shorthand ("Interball-1" is the Tail probe)
                if entry.probe_kind == "letter" and probe.isdigit() and len(base) > 2:
                    continue  # "THEMIS 2009-..." is a date, not a probe
                if entry.probe_kind == "number" and probe.isalpha() and len(base) > 2:
                    if typed.islower():
                        continue
                    if probe not in "ABCDEFGH":
                        continue
                have = ", ".join(entry.probes)
                doubts.append(
                    f"which spacecraft you mean by '{match[0]}' ({entry.names[0]} has "
                    f"spacecraft {have}; there is no {probe})"
                )
    return list(dict.fromkeys(doubts))


def _typos(text: str, aliases: AliasTable, taken: list[tuple[int, int]]) -> list[str]:
    names = {k: v for k, v in aliases.names().items() if len(k) >= 4}
    words = word_spans(text)
    doubts: list[str] = []
    used: set[int] = set()
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            span = range(i, i + size)
            if any(j in used for j in span):
                continue
            start, end = words[i][1], words[i + size - 1][2]
            if any(not (end <= a or start >= b) for a, b in taken):
                continue
            piece = text[start:end]
            lowered = [w.lower() for w, _, _ in words[i : i + size]]
            if not piece[0].isupper() or all(w in _NOT_TYPOS for w in lowered):
                continue
            if not re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)*", piece) or aliases.resolve(words[i][0]):
                continue
            if aliases.resolve(piece):
                continue
            if piece.isupper() and len(piece) <= 6:
                continue  # an acronym (an instrument, "ISOIS"), not a misspelt name
            key = normalize_name(piece)
            close = difflib.get_close_matches(key, list(names), n=1, cutoff=0.85)
            if close and abs(len(close[0]) - len(key)) <= 2:
                mission = names[close[0]].upper()
                doubts.append(f"whether '{piece}' means {_display(close[0])} ({mission})")
                used.update(span)
    return doubts


def _unfinished(text: str, aliases: AliasTable) -> list[str]:
    """A known name followed by words that nearly spell a longer name of the same mission.

    "Parker Solr Probe" finds "Parker" (PSP), but "Solr Probe" is a misspelt rest of
    "Parker Solar Probe": ask, rather than read half a name and guess the rest.
    """
    words = word_spans(text)
    names = aliases.names()
    doubts: list[str] = []
    for mention in aliases.find_mentions(text):
        said = normalize_name(mention.text)
        # Longer names of this mission that start with what was typed, and their rest.
        rests = {
            k[len(said) :].strip(): k
            for k, v in names.items()
            if v == mention.mission_id and k.startswith(f"{said} ")
        }
        for extra in (1, 2, 3):
            end = mention.end_word + extra
            if end > len(words):
                break
            added = words[end - 1][0]
            if not re.fullmatch(r"[A-Za-z]{3,}", added) or aliases.resolve(added):
                break  # "Cluster C1", "Parker 2021", "ACE and Wind": no rest of a name
            piece = text[words[mention.first_word][1] : words[end - 1][2]]
            if normalize_name(piece) in names:
                break  # the longer name spelt right
            rest = normalize_name(text[words[mention.end_word][1] : words[end - 1][2]])
            close = difflib.get_close_matches(rest, list(rests), n=1, cutoff=0.8)
            if close:
                name = _display(rests[close[0]])
                doubts.append(f"whether '{piece}' means {name} ({mention.mission_id.upper()})")
                break
    return doubts


def _display(key: str) -> str:
    return " ".join(w.upper() if len(w) <= 4 else w.capitalize() for w in key.split())


def find_doubts(text: str, aliases: AliasTable, taken: list[tuple[int, int]]) -> tuple[str, ...]:
    """Questions to ask about names in `text` (outside the `taken` spans)."""
    probes = _bad_probes(text)
    return tuple(probes or _unfinished(text, aliases) or _typos(text, aliases, taken))
