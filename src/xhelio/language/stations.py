"""Ground stations named by place or code: "at Gillam", "Fort Smith", "GILL", "KEV station".

The catalog holds one dataset per ground magnetometer station, and its title says where
the station is ("Ground-based Vector Magnetic Field at Gillam, Canada, ..."); the id's
last part is the station code (THG_L2_MAG_GILL). A place written with its capital
("Gillam", "Ny Alesund") or a code written in capitals ("GILL") names that station's
dataset. A three-letter code ("KEV", "TRO") or a short place ("Hov", "Nord") reads so only
beside a ground-station word ("magnetometer", "station", "GMAG"), since short capitalised
words are often something else; a place written in capitals ("NASA") is no place.
Imports `catalog` and `vocabulary` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from xhelio.catalog.index import Catalog
from xhelio.vocabulary import load_vocabulary

__all__ = ["GroundStation", "ground_stations", "lettered_components", "named_stations"]

# What a ground magnetometer station's dataset title says, and the place it names.
_STATION_TITLE = re.compile(
    r"ground[- ]based\b[^,]*\bmagnetic field at\s+(?P<place>[A-Z][\w.' -]*?)\s*(?:,|\(|\s\d|$)",
    re.I,
)
_GROUND_WORDS = re.compile(
    r"\b(?:g?mags?|magnetometers?|stations?|ground|observator(?:y|ies))\b", re.I
)
_SHORT_CODE = 3
_SHORT_PLACE = 4


@dataclass(frozen=True)
class GroundStation:
    """One station's dataset, its place name as the title writes it, and its code."""

    dataset_id: str
    place: str
    code: str


_READ: dict[tuple[str, int], tuple[GroundStation, ...]] = {}


def ground_stations(catalog: Catalog) -> tuple[GroundStation, ...]:
    """Every ground magnetometer station dataset of the catalog, by its title.

    Read once per catalog file (each session opens its own `Catalog` of the same file).
    """
    key = (str(catalog.path), catalog.path.stat().st_mtime_ns)
    if key not in _READ:
        _READ[key] = _stations_of(catalog)
    return _READ[key]


def _stations_of(catalog: Catalog) -> tuple[GroundStation, ...]:
    found: list[GroundStation] = []
    for mission in catalog.missions():
        for info in catalog.browse(mission.id):
            title = _STATION_TITLE.search(info.title)
            if title is None:
                continue
            code = re.split(r"[_-]", info.id)[-1].upper()
            found.append(GroundStation(info.id, " ".join(title["place"].split()), code))
    return tuple(found)


def _place_pattern(place: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[\s.]+", place) if w]
    return re.compile(r"(?<![\w-])" + r"[\s.-]*".join(words) + r"(?![\w-])")


@cache
def _instrument_name(code: str) -> bool:
    """Whether a station code is also a spacecraft instrument's name.

    "SEPT" is STEREO's electron telescope as well as the Sept-Iles station: such a code
    names the station only beside a ground-station word.
    """
    return any(i.words.fullmatch(code) for i in load_vocabulary().instruments)


def named_stations(catalog: Catalog, text: str) -> Iterator[tuple[str, tuple[int, int]]]:
    """The station datasets `text` names, with the span of the name, in text order."""
    ground = bool(_GROUND_WORDS.search(text))
    hits: list[tuple[int, int, str]] = []
    for station in ground_stations(catalog):
        if not station.place.isupper() and (len(station.place) > _SHORT_PLACE or ground):
            for match in _place_pattern(station.place).finditer(text):
                hits.append((*match.span(), station.dataset_id))
        if (len(station.code) > _SHORT_CODE and not _instrument_name(station.code)) or ground:
            for match in re.finditer(rf"(?<![\w-]){station.code}(?![\w-])", text):
                hits.append((*match.span(), station.dataset_id))
    taken: list[tuple[int, int]] = []
    for start, end, dataset_id in sorted(hits, key=lambda h: (h[0], -h[1])):
        if any(s < end and start < e for s, e in taken):
            continue
        taken.append((start, end))
        yield dataset_id, (start, end)


# "H component", "the Z-component", "dH/dt": one letter naming a component; "the north
# component", "vertical component": a word the parameter's description uses for it.
_LETTER = re.compile(
    r"(?<![\w|-])(?P<l>[A-Z](?:\s*(?:,|/|&|and)\s*[A-Z])*)[- ]?comp(?:onent)?s?\b"
    r"|(?<![\w|])d(?P<d>[A-Z])\s*/\s*dt\b"
    r"|\b(?P<w>(?i:[a-z]{4,}))[- ](?i:comp(?:onent)?s?)\b"
)
# The letters of geomagnetism's HEZ components, for descriptions that give only the
# letter: H is the horizontal (local magnetic north) one, E east, Z vertical.
_WORD_LETTERS = {"horizontal": "H", "north": "H", "east": "E", "vertical": "Z"}


def _lettered(description: str, letter: str) -> bool:
    """Whether a parameter's description opens with the letter of its component.

    Ground magnetometer components are described "---> H - Local magnetic North
    component of B": the letter, then a dash or the word "component".
    """
    return re.match(rf"\W*{letter}(?:\s+-|\s+component\b)", description) is not None


def _worded(description: str, word: str) -> bool:
    """Whether the description names the component by `word`.

    "Local magnetic North component" names it "north"; a description giving only the
    letter ("---> E component of B") names it by the HEZ letter of the word.
    """
    if re.search(rf"\b{word}\b[\w ]{{0,12}}\bcomponent\b", description, re.I):
        return True
    letter = _WORD_LETTERS.get(word.lower())
    return letter is not None and _lettered(description, letter)


def lettered_components(
    catalog: Catalog, dataset_ids: list[str], text: str
) -> list[tuple[str, tuple[int, int]]]:
    """The parameters of `dataset_ids` a one-letter component names, with the letter's span.

    A letter (or a word: "north", "vertical", "horizontal") reads so only when the
    dataset's own descriptions name a component by it (H, D, E, Z of a ground
    magnetometer); the span is "H component" whole, or the letter alone in "dH/dt",
    whose notation stays a derivative's.
    """
    found: list[tuple[str, tuple[int, int]]] = []
    for match in _LETTER.finditer(text):
        group = "l" if match["l"] else "d" if match["d"] else "w"
        named = _worded if group == "w" else _lettered
        span = match.span(group) if group == "d" else match.span()
        words = re.findall(r"[A-Z]", match["l"]) if group == "l" else [match[group]]
        for word in words:
            for dataset_id in dataset_ids:
                for p in catalog.dataset(dataset_id).data_parameters:
                    if named(p.description, word):
                        found.append((p.name, span))
    return found
